"""Rows that check paper 000's Theorems 1 and 2 (reproduction/spot/theorems.py)."""

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorithms.common.policy_selection import exponentiated_gradient
from reproduction.experiment import Check
from reproduction.spot import theorems as th

RUNS = Path(os.environ.get("SPOT_RUNS", Path(__file__).resolve().parents[2] / "multirun" / "reproduce" / "spot"))


# ---- Theorem 2 --------------------------------------------------------------------------------
def test_regret_is_the_expected_utility_under_the_weights_by_hand():
    # K = 2, M = 2, z = [[1, 0], [0, 1]]: eta = sqrt(2 ln 2 / 2) = sqrt(ln 2); w_1 = (1/2, 1/2) earns
    # 1/2, w_2 = (e^eta, 1) / (e^eta + 1) earns 1 / (e^eta + 1) on job 2; the best fixed policy earns 1.
    eta = math.sqrt(math.log(2))
    w2 = 1 / (math.exp(eta) + 1)
    expected = 1 - 0.5 - w2
    weights = np.array([[0.5, 0.5], [1 - w2, w2]])
    z = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert th.expected_utility_regret(weights, z) == pytest.approx([0.5, expected])
    # the same from utilities in their own units, normalised job by job (job_minmax)
    r = th.theorem2_cell(np.array([[10.0, 0.0], [5.0, 15.0]]), np.array([0.0, 5.0]), np.array([10.0, 15.0]))
    assert r["K"] == 2 and r["M"] == 2
    assert r["eta"] == pytest.approx(eta) and r["eta_paper"] == pytest.approx(eta)
    assert r["regret"] == pytest.approx(expected)  # 0.1969
    assert r["bound"] == pytest.approx(math.sqrt(4 * math.log(2)))  # 1.6651
    assert r["max_prefix_regret"] == pytest.approx(0.5)
    assert (r["z_min"], r["z_max"]) == (0.0, 1.0)


def test_regret_matches_the_selectors_own_normalised_regret():
    rng = np.random.default_rng(3)
    u = rng.uniform(-5, 5, size=(200, 7))
    r = th.theorem2_cell(u, -5.0, 5.0)
    run = exponentiated_gradient(u, -5.0, 5.0)
    assert r["regret"] == pytest.approx(run.regret_normalised[-1])
    assert r["regret"] == pytest.approx(run.regret[-1] / 10.0)  # one bound for all jobs: divide by its width
    assert r["regret"] <= r["bound"] == pytest.approx(math.sqrt(2 * 200 * math.log(7)))


def _fig9_config(kind="fixed_uniform"):
    return {"noise": {"kind": kind, "level": 0.3}}


def test_theorem2_rows_one_check_and_one_ratio_per_cell_and_normalisation(monkeypatch):
    from algorithms.spot import family

    monkeypatch.setattr(family, "prepare", lambda config: config)
    monkeypatch.setattr(family, "utility_bounds", lambda prepared: (-10.0, 20.0))
    names = ["AHAP(w=1,v=1,sigma=0.5)", "AHAP(w=2,v=1,sigma=0.5)", "AHANP(sigma=0.5)", "OD-Only"]
    rows = []
    for cell in (0, 1):
        for r, utilities in enumerate([(10, 0, 5, 1), (5, 15, 5, 1), (12, 3, 4, 1)]):
            rows += [
                {"cell_index": cell, "replicate": r, "mechanism": n, "utility": float(x)}
                for n, x in zip(names, utilities)
            ]
    frame = pd.DataFrame(rows)
    out = th.theorem2_rows(frame, {"0": _fig9_config(), "1": _fig9_config("mag_dep_heavy")})
    assert len(out) == 2 * 2 * 2  # cells x normalisations x (check, ratio)
    assert all(Check(**row) for row in out)
    check, ratio = out[0], out[1]
    assert "fixed_uniform 0.3 (job_minmax" in check["check"] and "M=3" in check["check"] and "K=3" in check["check"]
    assert check["paper"] == pytest.approx(math.sqrt(2 * 3 * math.log(3)))
    assert check["holds"] is True and ratio["holds"] is None
    assert ratio["ours"] == pytest.approx(check["ours"] / check["paper"])
    # the pool excludes OD-Only: M = 3 policies, job_minmax maps job 1's (10, 0, 5) to (1, 0, 0.5)
    z = np.array([[1, 0, 0.5], [0, 1, 0], [1, 0, 1 / 9]])
    assert check["ours"] == pytest.approx(th.theorem2_cell(z, 0.0, 1.0)["regret"])
    worst = out[2]
    assert "worst_case" in worst["check"]
    # worst_case: every job mapped by the family's bounds [-10, 20]
    pool = np.array([[10, 0, 5], [5, 15, 5], [12, 3, 4]], dtype=float)
    assert worst["ours"] == pytest.approx(th.theorem2_cell((pool + 10) / 30, 0.0, 1.0)["regret"])


# ---- Theorem 1 --------------------------------------------------------------------------------
A1 = "AHAP(w=1,v=1,sigma=0.5)"
A2 = "AHAP(w=2,v=2,sigma=0.5)"
A3 = "AHAP(w=2,v=1,sigma=0.3)"


def _availability():
    rows = []
    #           replicate, k, sigma, D
    for r, k, s, d in [
        (0, 1, 0.5, 2),
        (0, 2, 0.5, 4),
        (0, 1, 0.3, 0),
        (0, 2, 0.3, 0),
        (1, 1, 0.5, 0),
        (1, 2, 0.5, 1),
        (1, 1, 0.3, 0),
        (1, 2, 0.3, 0),
    ]:
        rows.append(
            {"replicate": r, "lookahead": k, "threshold": s, "D": float(d), "deadline": 10, "on_demand_price": 1.0}
        )
    return pd.DataFrame(rows)


def _gap_frame():
    #                 OPT   A1    A2    A3
    utilities = {0: (50.0, 45.0, 30.0, 50.0), 1: (40.0, 40.0, 39.0, 38.0)}
    return pd.DataFrame(
        [
            {"replicate": r, "mechanism": n, "utility": x}
            for r, us in utilities.items()
            for n, x in zip(["OPT", A1, A2, A3], us)
        ]
    )


def test_bound_12_by_hand():
    b = th.ahap_bounds(_availability(), [A1, A2, A3]).set_index(["replicate", "mechanism"])["bound"]
    # A1 (v=1, sigma=0.5): 0.5 * 1 * 10 / 1 * D_1 -> 10 and 0
    assert b[(0, A1)] == pytest.approx(10.0) and b[(1, A1)] == 0.0
    # A2 (v=2, sigma=0.5): 0.5 * 10 / 2 * (D_1 + D_2) -> 2.5 * 6 = 15 and 2.5 * 1 = 2.5
    assert b[(0, A2)] == pytest.approx(15.0) and b[(1, A2)] == pytest.approx(2.5)
    # A3: no slot below sigma = 0.3: the bound is 0
    assert b[(0, A3)] == 0.0 and b[(1, A3)] == 0.0
    budget = pd.DataFrame({"replicate": [0, 0, 1, 1], "lookahead": [1, 2, 1, 2], "G": [1.0, 3.0, 0.5, 0.5]})
    with_g = th.ahap_bounds(_availability(), [A2], budget).set_index("replicate")["bound"]
    assert with_g[0] == pytest.approx(15.0 + 2 / 2 * 4.0) and with_g[1] == pytest.approx(2.5 + 1.0)


def test_gap_table():
    gaps = th.ahap_gaps(_gap_frame())
    assert sorted(gaps.columns) == sorted([A1, A2, A3])
    assert gaps.loc[0, [A1, A2, A3]].tolist() == [5.0, 20.0, 0.0]
    assert gaps.loc[1, [A1, A2, A3]].tolist() == [0.0, 1.0, 2.0]


def test_theorem1_oracle_rows():
    rows = th.theorem1_oracle_rows(_gap_frame(), _availability(), "fig5", "d=10 oracle")
    assert all(Check(**row) for row in rows)
    by_check = {row["check"]: row for row in rows}
    # omega = 1: A1 only (mean gap 2.5, mean bound 5; gaps 5 <= 10 but 0 <= 0 too)
    mean1 = next(r for r in rows if "omega=1: mean" in r["check"])
    assert (mean1["ours"], mean1["paper"], mean1["holds"]) == (2.5, 5.0, True)
    share1 = next(r for r in rows if "omega=1" in r["check"] and "share of worlds with" in r["check"])
    assert share1["ours"] == 1.0 and share1["holds"] is True
    # omega = 2: A3 has the higher mean utility (44 against 34.5); its gaps 0 and 2 against bounds 0 and 0
    mean2 = next(r for r in rows if "omega=2: mean" in r["check"])
    assert A3 in mean2["check"] and mean2["ours"] == 1.0 and mean2["paper"] == 0.0 and mean2["holds"] is False
    share2 = next(r for r in rows if "omega=2" in r["check"] and "share of worlds with" in r["check"])
    assert share2["ours"] == 0.5 and share2["holds"] is False
    equal2 = next(r for r in rows if "omega=2" in r["check"] and "equals OPT" in r["check"])
    assert equal2["ours"] == 0.5 and equal2["holds"] is None
    # every pair: A1 2/2, A2 (20 > 15, 1 <= 2.5) 1/2, A3 1/2 -> 4/6; worst: A2 on world 0, 20 - 15
    pairs = next(r for r in rows if "pairs" in r["check"])
    assert pairs["ours"] == pytest.approx(4 / 6) and pairs["holds"] is False
    worst = next(r for r in rows if "largest" in r["check"])
    assert worst["ours"] == pytest.approx(5.0) and A2 in worst["check"] and "world 0" in worst["check"]
    assert len(by_check) == len(rows) == 3 * 2 + 2


def test_theorem1_noise_rows_check_the_gap_against_the_level():
    rows = []
    rng = np.random.default_rng(0)
    for level, mean_gap in [(0.0, 1.0), (0.5, 3.0), (2.0, 2.5)]:
        for r in range(30):
            opt = 50 + rng.normal()
            gap = mean_gap + rng.normal(scale=0.5)
            rows += [
                {"noise.level": level, "replicate": r, "mechanism": "OPT", "utility": opt},
                {"noise.level": level, "replicate": r, "mechanism": A1, "utility": opt - gap},
                {"noise.level": level, "replicate": r, "mechanism": A3, "utility": opt - gap - 5},
            ]
    out = th.theorem1_noise_rows(pd.DataFrame(rows))
    assert all(Check(**row) for row in out)
    info = [r for r in out if r["holds"] is None]
    assert len(info) == 3 and all(A1 in r["check"] for r in info)
    assert [r["ours"] for r in info] == pytest.approx([1.0, 3.0, 2.5], abs=0.3)
    steps = [r for r in out if r["holds"] is not None]
    assert len(steps) == 2
    assert steps[0]["ours"] == pytest.approx(2.0, abs=0.4) and steps[0]["holds"] is True
    # 3.0 -> 2.5 falls by 0.5, more than the two CIs (about 0.19 each): fails
    assert steps[1]["ours"] == pytest.approx(-0.5, abs=0.4) and steps[1]["holds"] is False


def _compose_cell(overrides):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from sweep.api import CONF_DIR
    from sweep.cells import make_cell

    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    return make_cell(cfg, [o for o in overrides if not o.startswith(("experiment", "tracking"))], 0, "0")


def test_threshold_availability_reads_the_worlds_the_sweep_drew():
    from algorithms.spot import family
    from sweep.seeding import replicate_rng

    cell = _compose_cell(["experiment=spot/noise", "noise.level=0.0", "tracking=off"])
    table = th.threshold_availability(cell.world, cell.world_hash, [0, 1])
    assert set(table["lookahead"]) == {1, 2, 3, 4, 5} and set(table["threshold"]) == {0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}
    prepared = family.prepare(cell.world)
    world = family.draw_market(prepared, replicate_rng(cell.world_hash, 1))
    d = prepared.job.deadline
    job = world.window(prepared.forecast.history, d)
    for k, sigma in [(1, 0.9), (3, 0.5)]:
        cheap = job.price[k:] <= sigma * world.on_demand_price  # the oracle: predictions are the truth
        want = float(job.availability[k:][cheap].max()) if cheap.any() else 0.0
        got = table[(table.replicate == 1) & (table.lookahead == k) & (table.threshold == sigma)]["D"].item()
        assert got == want
    # D grows with sigma (more slots qualify) and shrinks with k (fewer target slots)
    d1 = table[table.replicate == 0].pivot(index="lookahead", columns="threshold", values="D")
    assert (np.diff(d1.to_numpy(), axis=1) >= 0).all() and (np.diff(d1.to_numpy(), axis=0) <= 0).all()


# ---- the real sweeps, when they exist -----------------------------------------------------------
def _finished(name):
    """The finished multirun of that experiment, written by this engine (its cells in store/)."""
    path = RUNS / name
    return path if (path / "results.parquet").is_file() and (path / "store").is_dir() else None


@pytest.mark.skipif(_finished("fig9") is None, reason="no finished fig9 multirun with a store/ (make reproduce-spot)")
def test_theorem2_on_the_fig9_sweep():
    rows = th.theorem2_from_dir(_finished("fig9"))
    checks = [r for r in rows if r["holds"] is not None]
    assert len(checks) == 8 and all(r["holds"] for r in checks)


@pytest.mark.skipif(_finished("fig5") is None, reason="no finished fig5 multirun with a store/ (make reproduce-spot)")
def test_theorem1_on_the_fig5_sweep():
    rows = th.theorem1_oracle_from_dir(_finished("fig5"))
    assert rows and all(Check(**r) for r in rows)
    means = [r for r in rows if ": mean U(OPT)" in r["check"]]
    assert means and all(r["ours"] >= -1e-6 and r["paper"] >= 0 for r in means)  # OPT is never beaten


@pytest.mark.skipif(_finished("noise") is None, reason="no finished noise multirun with a store/ (make reproduce-spot)")
def test_threshold_availability_redraws_the_noisy_forecasts_the_sweep_drew():
    """Replicate 0 of a noisy cell simulated again from the seeds `threshold_availability` uses
    gives the sweep's AHAP utilities: the world, the job and the forecast noise are the same."""
    from algorithms.spot import family
    from sweep.seeding import replicate_rng

    path = _finished("noise")
    frame = pd.read_parquet(path / "results.parquet")
    cell = frame[frame["noise.level"] == frame["noise.level"].max()]
    index = int(cell["cell_index"].iloc[0])
    names = ["OD-Only", A1, "AHAP(w=3,v=2,sigma=0.7)"]
    config = {**th.cell_configs(path)[str(index)], "mechanisms": names}
    rows = family.simulate_replicate(family.prepare(config), 0, replicate_rng(th.world_hash(path, index), 0))
    swept = cell[cell["replicate"] == 0].set_index("mechanism")["utility"]
    for row in rows:
        assert row["utility"] == pytest.approx(swept[row["mechanism"]], abs=1e-9)
    rows = th.theorem1_noise_from_dir(path)
    assert sum(r["holds"] is not None for r in rows) == frame["noise.level"].nunique() - 1


def test_tied_best_policies_are_judged_by_the_largest_bound():
    # A1 and AHAP(w=1,v=1,sigma=0.3) behave the same (equal utilities): the row takes the one
    # whose bound is larger (sigma = 0.5 here), and says how many tied
    a0 = "AHAP(w=1,v=1,sigma=0.3)"
    frame = pd.DataFrame(
        [
            {"replicate": r, "mechanism": n, "utility": x}
            for r, (opt, a) in enumerate([(50.0, 45.0), (40.0, 40.0)])
            for n, x in [("OPT", opt), (A1, a), (a0, a)]
        ]
    )
    rows = th.theorem1_oracle_rows(frame, _availability())
    mean = next(r for r in rows if ": mean" in r["check"])
    assert A1 in mean["check"] and "tied with 1 other" in mean["check"] and mean["paper"] == 5.0
    share = next(r for r in rows if "share of worlds with" in r["check"])
    assert share["holds"] is True
    pairs = next(r for r in rows if "pairs" in r["check"])
    assert pairs["ours"] == pytest.approx(3 / 4) and pairs["holds"] is False  # a0: gap 5 > bound 0 on world 0
