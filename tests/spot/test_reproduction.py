"""The spot family's reproduction reports (reproduction/spot/__init__.py) and pinned key numbers.

The pinned numbers are the first replicates of the Fig. 5 cell at d = 10 with oracle
forecasts, computed with the seeds the sweep engine gives that cell: they are the
same worlds as the first replicates of `make reproduce-spot`'s run, so a change in
any mechanism, the market or the seeding shows here.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reproduction import spot
from tests.sweep_dirs import write_cell_config

pytestmark = pytest.mark.sweeps


def _frame(rows):
    """Rows (cell, mechanism, utility, cost, met_deadline, reconfigurations), each mechanism's
    k-th row in world k."""
    frame = pd.DataFrame(rows, columns=["cell", "mechanism", "utility", "cost", "met_deadline", "reconfigurations"])
    return frame.assign(replicate=frame.groupby(["cell", "mechanism"]).cumcount())


def test_best_of_groups_picks_the_best_member_and_scales_by_opt():
    rows = []
    for replicate, (a1, a2, up, opt) in enumerate([(10, 12, 8, 20), (14, 12, 8, 20)]):
        rows += [
            ("c", "AHAP(w=1,v=1,sigma=0.5)", a1, 1, True, 1),
            ("c", "AHAP(w=2,v=1,sigma=0.5)", a2, 1, True, 2),
            ("c", "UP", up, 2, replicate == 0, 3),
            ("c", "OPT", opt, 0, True, 1),
        ]
    table = spot.best_of_groups(_frame(rows), ["cell"])
    assert list(table["group"]) == ["UP", "AHAP", "OPT"]
    ahap = table[table["group"] == "AHAP"].iloc[0]
    # means 12 and 12: the tie goes to the first member listed
    assert ahap["policy"] == "AHAP(w=1,v=1,sigma=0.5)"
    assert ahap["utility_mean"] == 12
    assert ahap["pct_of_opt"] == pytest.approx(60.0)
    # Student-t 95% half-width of (10, 14): t(0.975, 1) * 2.828 / sqrt(2) = 12.706 * 2
    assert ahap["utility_ci95"] == pytest.approx(12.7062 * 2, rel=1e-4)
    up = table[table["group"] == "UP"].iloc[0]
    assert up["met_deadline_rate"] == 0.5
    assert spot.improvement(table, "UP") == pytest.approx(50.0)


def test_best_of_groups_reports_cost_ratios_and_unproven_optima():
    costs = [(60, 40), (80, 50), (70, 45), (90, 60)]
    rows = [r for up, opt in costs for r in (("c", "UP", 100 - up, up, True, 1), ("c", "OPT", 100 - opt, opt, True, 1))]
    frame = _frame(rows).assign(opt_proven=[True, True, True, False, True, True, True, True])
    table = spot.best_of_groups(frame, ["cell"]).set_index("group")
    # mean costs 75 (UP) and 48.75 (OPT): a ratio of means (not a mean of ratios), which v does not move
    assert table.loc["UP", "cost_ratio_to_opt"] == pytest.approx(75 / 48.75)
    residual = np.array([up - 75 / 48.75 * opt for up, opt in costs])
    half = 3.18245 * residual.std(ddof=1) / 2 / 48.75  # t(0.975, 3) * s / sqrt(4) / mean(OPT)
    assert table.loc["UP", "cost_ratio_ci95"] == pytest.approx(half, rel=1e-4)
    assert table.loc["OPT", "cost_ratio_to_opt"] == pytest.approx(1.0)
    assert table.loc["UP", "label"] == spot.label("UP") == "UP-CBL (Can't Be Late's UP)"
    assert table.loc["OPT", "opt_unproven_worlds"] == 1 and np.isnan(table.loc["UP", "opt_unproven_worlds"])
    assert np.isnan(spot.best_of_groups(_frame(rows), ["cell"]).set_index("group").loc["OPT", "opt_unproven_worlds"])
    # one cell, no keys: the same numbers
    alone = spot.best_of_groups(frame.drop(columns="cell"), []).set_index("group")
    assert alone.loc["UP", "cost_ratio_to_opt"] == table.loc["UP", "cost_ratio_to_opt"]


def test_readings_are_groups_of_their_own():
    assert [
        spot.group_of(n)
        for n in (
            "AHAP(w=2,v=1,sigma=0.5)",
            "AHANP(sigma=0.5)",
            "AHANP(sigma=0.5,start=fresh)",
            "MSU",
            "MSU(switch=time)",
            "UP-track",
        )
    ] == ["AHAP", "AHANP", "AHANP(start=fresh)", "MSU", "MSU(switch=time)", "UP-track"]


def test_gain_is_a_ratio_of_paired_means_and_undefined_near_zero():
    rows = [("c", "A", a, 0, True, 0) for a in (10, 12, 14, 16)] + [("c", "B", b, 0, True, 0) for b in (5, 8, 7, 4)]
    value, half, why = spot.gain(_frame(rows), over="B", of="A")
    assert value == pytest.approx(100 * (13 / 6 - 1)) and half > 0 and why == ""
    rows = [("c", "A", a, 0, True, 0) for a in (10, 12, 14, 16)] + [("c", "B", b, 0, True, 0) for b in (5, -6, 3, -1)]
    value, half, why = spot.gain(_frame(rows), over="B", of="A")
    assert np.isnan(value) and "half-width" in why


def test_value_for_gain_interpolates_between_swept_values():
    rows = []
    for v, od, ahap in ((100.0, 19.0, 40.0), (130.0, 49.0, 70.0)):  # gains 110.5% and 42.9%
        rows += [
            {"market": "m", "job.value": v, "group": "OD-Only", "utility_mean": od},
            {"market": "m", "job.value": v, "group": "AHAP", "utility_mean": ahap},
        ]
    got = spot.value_for_gain(pd.DataFrame(rows), target=49.0)["m"]
    g1, g2 = 100 * 21 / 19, 100 * 21 / 49
    assert got == pytest.approx(100 + (49 - g1) * 30 / (g2 - g1))
    assert np.isnan(spot.value_for_gain(pd.DataFrame(rows), target=10.0)["m"])


def test_improvement_uses_the_absolute_value_of_a_negative_baseline():
    table = pd.DataFrame({"group": ["UP", "AHAP"], "utility_mean": [-10.0, 5.0]})
    assert spot.improvement(table, "UP") == pytest.approx(150.0)


def _fig5_slice(replicates: int) -> pd.DataFrame:
    from hydra import compose, initialize_config_dir

    from algorithms.spot import family
    from sweep.api import CONF_DIR
    from sweep.cells import make_cell
    from sweep.seeding import replicate_rng

    overrides = ["experiment=spot/fig5", "market=vast_like", "job.deadline=10", "forecast.kind=oracle", "tracking=off"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    cell = make_cell(cfg, overrides[1:4], 0, "0")
    prepared = family.prepare(cell.world)
    rows = []
    for r in range(replicates):
        for row in family.simulate_replicate(prepared, r, replicate_rng(cell.world_hash, r)):
            rows.append({"cell": cell.name, "replicate": r, **row})
    return pd.DataFrame(rows)


# Mean utility of the best member of each group (reading) over replicates 0..11 of the Fig. 5
# cell (market=vast_like, d = 10, oracle) under the experiment's defaults (v = 110, sigma read
# as ahead, AHANP's three starts); docs/spot/reproduction.md.
PINNED = {
    "OD-Only": 29.0,
    "MSU": 62.1662,
    "MSU(switch=time)": 33.2038,
    "UP-track": 65.7237,
    "UP": 42.3525,
    "AHANP": 55.7273,
    "AHANP(start=fresh)": 56.8095,
    "AHANP(start=cold)": 55.7273,
    "AHAP": 65.3779,
    "OPT": 67.0793,
}
PINNED_POLICIES = {
    "AHANP": "AHANP(sigma=0.9)",
    "AHANP(start=fresh)": "AHANP(sigma=0.3,start=fresh)",
    "AHAP": "AHAP(w=5,v=1,sigma=0.3)",
}


def test_pinned_fig5_numbers_at_d10():
    frame = _fig5_slice(12)
    table = spot.best_of_groups(frame, ["cell"]).set_index("group")
    got = {group: round(float(table.loc[group, "utility_mean"]), 4) for group in PINNED}
    assert got == pytest.approx(PINNED, abs=1e-3)
    assert {g: table.loc[g, "policy"] for g in PINNED_POLICIES} == PINNED_POLICIES
    # and the claims that must hold on them: AHAP above OD-Only, MSU and Can't Be Late's UP, OPT never beaten
    assert table.loc["AHAP", "utility_mean"] > max(table.loc[g, "utility_mean"] for g in ("OD-Only", "MSU", "UP"))
    assert frame.loc[frame["mechanism"] != "OPT", "regret_vs_opt"].min() >= -1e-6


@pytest.mark.slow
def test_reproduce_runs_a_grid_and_writes_its_report(tmp_path):
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    command = [
        sys.executable,
        "-m",
        "reproduction",
        "spot",
        "--only",
        "fig6",
        "--replicates",
        "2",
        "--runs",
        str(tmp_path / "runs"),
        "--out",
        str(tmp_path / "out"),
        "tracking=off",
        "runner.progress=false",
        "runner.num_workers=2",
        "pool.window=[1,2]",
        "pool.threshold=[0.5]",
    ]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    table = pd.read_csv(tmp_path / "out" / "fig6_reconfiguration.csv")
    assert sorted(table["job.mu1"].unique()) == [0.2, 0.6, 0.8, 0.9]
    assert set(table["group"]) == set(spot.GROUPS)
    assert (table["n"] == 2).all()
    assert (tmp_path / "out" / "fig6_reconfiguration.png").stat().st_size > 10_000
    checks = pd.read_csv(tmp_path / "out" / "checks.csv")
    opt_row = checks[checks["check"].str.startswith("fig6: min over jobs")]
    assert opt_row["holds"].all()


def test_headline_checks_are_judged_against_the_papers_value():
    """A margin of +2% against the paper's +33.4% fails; +30% holds (factor 1.5)."""
    assert not spot.within_factor(2.0, 33.4, 1.5)
    assert spot.within_factor(30.0, 33.4, 1.5) and spot.within_factor(50.0, 33.4, 1.5)
    assert not spot.within_factor(50.2, 33.4, 1.5)
    assert not spot.within_factor(-10.0, 33.4, 1.5)


def test_sigma_report_counts_distinct_policies_for_both_readings(tmp_path):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from sweep.api import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "experiment=spot/fig5",
                "job.deadline=10",
                "forecast.kind=oracle",
                "pool.window=[2,3]",
                "pool.threshold=[0.3,0.6,0.9]",
            ],
        )
    config = OmegaConf.to_container(cfg, resolve=True)
    config.pop("hydra", None)
    write_cell_config(tmp_path / "fig5", config)
    pd.DataFrame([{"cell_index": 0, "market": "vast_like", "job.deadline": 10, "forecast.kind": "oracle"}]).to_parquet(
        tmp_path / "fig5" / "results.parquet"
    )
    table = spot.sigma_report(tmp_path / "fig5", tmp_path, worlds=6).set_index("sigma_reading")
    assert list(table.index) == ["ahead", "line"]
    assert (table["ahap_policies"] == 15).all() and (table["worlds"] == 6).all()
    assert table.loc["line", "distinct_policies"] > table.loc["ahead", "distinct_policies"]
    assert table.loc["line", "distinct_policies"] <= 15
    assert (tmp_path / "sigma_readings.csv").exists()


def test_selection_runs_normalise_job_by_job():
    """job_minmax maps each job's best policy to 1 and its worst to 0, whatever the job's scale."""
    from algorithms.common.policy_selection import exponentiated_gradient

    config = {
        "job": {},
        "market": {"kind": "synthetic"},
        "mechanisms": ["AHAP", "AHANP"],
        "pool": {"window": [1], "threshold": [0.5, 0.9]},
    }
    names = ["AHAP(w=1,v=1,sigma=0.5)", "AHAP(w=1,v=1,sigma=0.9)", "AHANP(sigma=0.5)", "AHANP(sigma=0.9)"]
    rng = np.random.default_rng(3)
    utilities = rng.uniform(0, 100, (50, 4))
    frame = pd.DataFrame(
        [{"replicate": k, "mechanism": n, "utility": utilities[k, i]} for k in range(50) for i, n in enumerate(names)]
    )
    run = spot.selection_runs(frame, config, normalisation="job_minmax")["full pool (105 AHAP + 7 AHANP)"][1]
    ordered = utilities[:, np.argsort(names)]  # the pivot's column order
    lo, hi = ordered.min(axis=1), ordered.max(axis=1)
    want = exponentiated_gradient(ordered, lo, hi)
    np.testing.assert_array_equal(run.weights, want.weights)
    worst = spot.selection_runs(frame, config)["full pool (105 AHAP + 7 AHANP)"][1]
    assert not np.array_equal(worst.weights, run.weights)
