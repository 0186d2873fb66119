"""The auction reproduction reports on small hand-made sweep dirs (no Ray)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorithms.auction import family
from reproduction import auction


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A results.parquet + tasks.parquet shaped like the engine's, two cells of two replicates."""
    out = tmp_path_factory.mktemp("run")
    rows, tasks = [], []
    for index, nodes in enumerate((3, 6)):
        config = {
            "cluster": {"nodes": nodes},
            "tasks": {"load": 2, "slots": 24},
            "mechanisms": [auction.PAPER_TUNED, auction.PDFTSP, auction.CALIBRATED, "EFT", "NTM"],
        }
        prepared = family.prepare(config)
        for replicate in range(2):
            for row in family.simulate_replicate(prepared, replicate, np.random.default_rng([index, replicate])):
                table = pd.DataFrame(row.pop("tables")["tasks"])
                tasks.append(
                    table.assign(cell=f"n{nodes}", cell_index=index, replicate=replicate, mechanism=row["mechanism"])
                )
                rows.append(
                    {"cell": f"n{nodes}", "cell_index": index, "cluster.nodes": nodes, "replicate": replicate, **row}
                )
    pd.DataFrame(rows).to_parquet(out / "results.parquet")
    pd.concat(tasks).to_parquet(out / "tasks.parquet")
    return out


def test_summary_and_improvements(run_dir, tmp_path):
    figure = auction.COMPARISONS[0]
    table = auction.comparison_report(run_dir, figure, tmp_path)
    assert (tmp_path / "fig4_nodes.csv").exists() and (tmp_path / "fig4_nodes.png").exists()
    assert set(table["mechanism"]) == {auction.PAPER_TUNED, auction.PDFTSP, auction.CALIBRATED, "EFT", "NTM"}
    results = pd.read_parquet(run_dir / "results.parquet")
    for nodes in (3, 6):
        mean = results[results["cluster.nodes"] == nodes].groupby("mechanism")["welfare"].mean()
        expected = 100 * (mean[auction.PDFTSP] / mean["EFT"] - 1)
        assert auction.improvement(table, "cluster.nodes", nodes, auction.PDFTSP, "EFT") == pytest.approx(expected)
    assert table.loc[table["mechanism"] == "EFT", "vs_EFT_pct"].isna().all()


def test_a_gain_over_a_baseline_below_zero_is_undefined(tmp_path):
    rows = [
        {
            "cluster.nodes": 5,
            "replicate": r,
            "mechanism": m,
            "welfare": w,
            "admission_rate": 0.5,
            "utilisation": 0.5,
            "provider_utility": 0.0,
            "users_utility": 0.0,
            "decision_ms_per_task": 0.1,
        }
        for r in range(2)
        for m, w in ((auction.PAPER_TUNED, 50.0), ("EFT", -10.0), ("NTM", 25.0))
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "results.parquet")
    table = auction.summary(tmp_path, "cluster.nodes").set_index("mechanism")
    assert np.isnan(table.loc[auction.PAPER_TUNED, "vs_EFT_pct"])
    assert table.loc[auction.PAPER_TUNED, "vs_NTM_pct"] == pytest.approx(100.0)


def test_payments_report_is_individually_rational(run_dir, tmp_path):
    table = auction.payments_report(run_dir, tmp_path, sample=5)
    assert 0 < len(table) <= 5 and (table["payment"] <= table["bid"]).all()
    assert set(table["mechanism"]) == {auction.PAPER_TUNED}
    assert table["max_payment_over_bid_all"].iloc[0] <= 1.0


def test_truthfulness_report_small_world(tmp_path):
    config = {"cluster": {"nodes": 3}, "tasks": {"load": 2, "slots": 12}, "mechanisms": ["pdFTSP"]}
    table = auction.truthfulness_report(tmp_path, config=config, tasks_to_probe=2)
    gap = auction.truthful_gap(table)
    assert gap["critical"] <= 1e-9
    assert (tmp_path / "fig10_truthfulness.png").exists()


def test_kappa_is_chosen_on_tuning_days_and_judged_on_held_out_ones(tmp_path):
    from reproduction.auction import kappa_report
    from reproduction.experiment import Context

    runs = tmp_path / "runs"
    (runs / "kappa").mkdir(parents=True)
    names = [
        "pdFTSP(kappa=1,schedule_space=fitting)",
        "pdFTSP(kappa=10,schedule_space=fitting)",
        "ZeroPrice",
        "EFT(admit=positive)",
    ]
    # kappa 1 wins light's tuning days only; kappa 10 wins high's by far, so across loads too
    welfare = {
        ("light", 1): [110.0, 105.0, 100.0, 80.0],
        ("light", 2): [99.0, 120.0, 100.0, 90.0],
        ("high", 1): [101.0, 130.0, 100.0, 80.0],
        ("high", 2): [100.0, 110.0, 100.0, 100.0],
    }
    rows = [
        {"seed": seed, "tasks.load": load, "replicate": 0, "mechanism": name, "welfare": w}
        for (load, seed), values in welfare.items()
        for name, w in zip(names, values)
    ]
    pd.DataFrame(rows).to_parquet(runs / "kappa" / "results.parquet")
    out = tmp_path / "out"
    out.mkdir()
    chosen = kappa_report(Context(runs, out))
    assert set(chosen["schedule_space"]) == {"fitting"}
    chosen = chosen.set_index(["choice", "tasks.load"])
    light = chosen.loc[("per load", "light")]
    assert light["kappa"] == 1.0  # chosen on seed 1, not on the held-out seed 2 where 10 is better
    assert light["held_out_lead_over_ZeroPrice"] == pytest.approx(-1.0)
    assert light["held_out_lead_over_EFT(admit=positive)"] == pytest.approx(100 * (99 / 90 - 1))
    assert light["held_out_welfare_over_best_kappa"] == pytest.approx(99 / 120)
    assert chosen.loc[("per load", "high"), "kappa"] == 10.0
    # across loads: mean tuning lead 5.5% for kappa 1 against 17.5% for kappa 10
    assert chosen.loc[("across loads", "light"), "kappa"] == chosen.loc[("across loads", "high"), "kappa"] == 10.0
    assert chosen.loc[("across loads", "light"), "held_out_lead_over_ZeroPrice"] == pytest.approx(20.0)
    assert (out / "kappa.png").exists() and (out / "kappa.csv").exists()


def test_kappa_is_chosen_per_schedule_space(tmp_path):
    from reproduction.experiment import Context

    runs = tmp_path / "runs"
    (runs / "kappa").mkdir(parents=True)
    # the paper's space prefers kappa 30, fitting schedules kappa 10: each space gets its own choice
    welfare = {
        "pdFTSP(kappa=10)": 70.0,
        "pdFTSP(kappa=30)": 80.0,
        "pdFTSP(kappa=10,schedule_space=fitting)": 120.0,
        "pdFTSP(kappa=30,schedule_space=fitting)": 95.0,
        "ZeroPrice": 100.0,
        "EFT(admit=positive)": 90.0,
    }
    rows = [
        {"seed": seed, "tasks.load": load, "replicate": 0, "mechanism": name, "welfare": w}
        for seed in (1, 2)
        for load in ("light", "high")
        for name, w in welfare.items()
    ]
    pd.DataFrame(rows).to_parquet(runs / "kappa" / "results.parquet")
    out = tmp_path / "out"
    out.mkdir()
    chosen = auction.kappa_report(Context(runs, out))
    across = chosen[chosen["choice"] == "across loads"].groupby("schedule_space")["kappa"].unique()
    assert list(across["paper"]) == [30.0] and list(across["fitting"]) == [10.0]
    paper = chosen[(chosen["schedule_space"] == "paper")].iloc[0]
    assert paper["held_out_lead_over_ZeroPrice"] == pytest.approx(-20.0)
    assert list(chosen["schedule_space"].drop_duplicates()) == ["paper", "fitting"]


def test_the_figures_kappas_are_the_committed_across_loads_choices():
    from pathlib import Path

    chosen = pd.read_csv(Path(auction.__file__).resolve().parents[2] / "reports" / "auction" / "kappa_chosen.csv")
    across = chosen[chosen["choice"] == "across loads"]
    for space, mechanism in (("paper", auction.PAPER_TUNED), ("fitting", auction.CALIBRATED)):
        assert set(across.loc[across["schedule_space"] == space, "kappa"]) == {auction._kappa_of(mechanism)}
    a40 = pd.read_csv(Path(auction.__file__).resolve().parents[2] / "reports" / "auction" / "kappa_a40_chosen.csv")
    a40 = a40[a40["choice"] == "across loads"]
    for space, mechanism in (("paper", auction.PAPER_TUNED_A40), ("fitting", auction.CALIBRATED_A40)):
        assert set(a40.loc[a40["schedule_space"] == space, "kappa"]) == {auction._kappa_of(mechanism)}
    assert "schedule_space" not in auction.PAPER_TUNED and "schedule_space=fitting" in auction.CALIBRATED


def test_the_figures_lead_with_the_papers_algorithm():
    from omegaconf import OmegaConf

    from sweep.api import CONF_DIR

    for name in ("fig4", "fig5", "fig6", "fig7", "fig8", "fig9", "fig12"):
        mechanisms = OmegaConf.load(CONF_DIR / "experiment" / "auction" / f"{name}.yaml")["mechanisms"]
        assert mechanisms[0] == auction.PAPER_TUNED, name
        if name == "fig6":
            assert {auction.PAPER_TUNED_A40, auction.CALIBRATED_A40} <= set(mechanisms)
        if name in ("fig4", "fig8"):
            assert {auction.LEMMA, auction.LEMMA_FITTING} <= set(mechanisms), name


def test_fitting_is_labelled_our_extension_wherever_it_is_shown():
    for mechanism, label in {**auction.SHORT, **auction.SHORT_PROJECT}.items():
        assert ("schedule_space=fitting" in mechanism) == (auction.FITTING in label), (mechanism, label)


def test_implied_baseline_ratios_from_the_papers_gains():
    ratios = auction.implied_baseline_ratios(auction.PAPER_HIGH_LOAD)
    assert ratios[("Titan", "EFT")] == pytest.approx(2.5157 / 1.4899)
    assert ratios[("EFT", "NTM")] == pytest.approx(2.8494 / 2.5157)


def _cell_runs(tmp_path, name, x, value, welfare, tasks=None):
    from reproduction.experiment import Context

    runs = tmp_path / "runs"
    (runs / name).mkdir(parents=True, exist_ok=True)
    rows = [
        {"cell": "c", "cell_index": 0, x: value, "replicate": r, "mechanism": m, "welfare": w[r], "admission_rate": 0.5}
        for m, w in welfare.items()
        for r in range(len(w))
    ]
    pd.DataFrame(rows).to_parquet(runs / name / "results.parquet")
    if tasks is not None:
        pd.DataFrame(tasks).to_parquet(runs / name / "tasks.parquet")
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return Context(runs, out)


def test_headline_ratios_are_ratios_of_means_and_the_fitting_share(tmp_path):
    welfare = {
        auction.PAPER_TUNED: [80.0, 100.0, 90.0],
        auction.CALIBRATED: [130.0, 141.0, 130.0],
        "Titan": [100.0, 120.0, 110.0],
        "EFT": [60.0, 70.0, 65.0],
        "NTM": [30.0, 40.0, 35.0],
    }
    context = _cell_runs(tmp_path, "fig8", "tasks.load", "high", welfare)
    table = auction.headline_report(context).set_index(["numerator", "denominator"])
    assert table.loc[(auction.PAPER_TUNED, "Titan"), "ratio"] == pytest.approx(270 / 330)
    assert table.loc[(auction.PAPER_TUNED, "Titan"), "paper_ratio"] == pytest.approx(1.4899)
    assert table.loc[("Titan", "EFT"), "ratio"] == pytest.approx(330 / 195)
    assert table.loc[("EFT", "NTM"), "paper_ratio"] == pytest.approx(2.8494 / 2.5157)
    share = table.loc[(f"{auction.CALIBRATED} - {auction.PAPER_TUNED}", f"{auction.CALIBRATED} - Titan"), "ratio"]
    assert share == pytest.approx((401 - 270) / (401 - 330))
    checks = auction.checks(type(context)(context.runs, context.out, reports={"headline": table.reset_index()}))
    rows = {c.check: c for c in checks}
    titan_eft = next(c for k, c in rows.items() if "Titan / EFT" in k)
    assert titan_eft.paper == pytest.approx(2.5157 / 1.4899) and titan_eft.holds is True  # 1.69 against 1.69
    eft_ntm = next(c for k, c in rows.items() if "EFT / NTM" in k)
    assert eft_ntm.holds is False  # 1.86 against 1.13: off by more than 25%


def test_headline_share_is_undefined_when_the_lead_is_within_its_interval(tmp_path):
    welfare = {
        auction.PAPER_TUNED: [80.0, 100.0, 90.0],
        auction.CALIBRATED: [130.0, 140.0, 120.0],
        "Titan": [100.0, 120.0, 110.0],
        "EFT": [60.0, 70.0, 65.0],
        "NTM": [30.0, 40.0, 35.0],
    }
    table = auction.headline_report(_cell_runs(tmp_path, "fig8", "tasks.load", "high", welfare))
    share = table[table["denominator"] == f"{auction.CALIBRATED} - Titan"].iloc[0]
    assert np.isnan(share["ratio"]) and "within its own 95% half-width" in share["note"]


def test_lemma2_equality_check_reads_every_day(tmp_path):
    welfare = {auction.LEMMA: [50.0, 60.0], auction.LEMMA_FITTING: [50.0, 61.0]}
    context = _cell_runs(tmp_path, "fig8", "tasks.load", "high", welfare)
    report = pd.DataFrame(
        {
            "tasks.load": ["high"] * 2,
            "mechanism": [auction.LEMMA, auction.LEMMA_FITTING],
            **{f"vs_{b}_pct": [np.nan] * 2 for b in auction.BASELINES},
        }
    )
    checks = auction.checks(type(context)(context.runs, context.out, reports={"fig8": report}))
    lemma = next(c for c in checks if "bbar >= 1" in c.check)
    assert lemma.ours == pytest.approx(1 / 60) and lemma.holds is False


def test_bid_law_report_counts_eft_admissions_below_cost(tmp_path):
    welfare = {m: [100.0, 110.0] for m in (auction.PAPER_TUNED, auction.CALIBRATED, "Titan", "EFT", "NTM")}
    tasks = {
        "cell_index": [0] * 4,
        "mechanism": ["EFT"] * 3 + ["NTM"],
        "admitted": [True, True, False, True],
        "bid": [5.0, 20.0, 1.0, 1.0],
        "operating_cost": [8.0, 5.0, 5.0, 5.0],
        "vendor_cost": [1.0, 1.0, 1.0, 1.0],
    }
    context = _cell_runs(tmp_path, "bid_law", "tasks.value_per_ksample", [1.0, 6.0], welfare, tasks)
    table = auction.bid_law_report(context, "bid_law")
    assert table["tasks.value_per_ksample"].iloc[0] == "U[1, 6]"
    assert table["eft_admitted_below_cost"].iloc[0] == pytest.approx(0.5)  # 1 of EFT's 2 admitted
    assert table["Titan / EFT"].iloc[0] == pytest.approx(1.0)
    assert (context.out / "bid_law.png").exists()


def test_doc_tables_print_from_the_committed_reports(capsys):
    from reproduction.auction import tables as auction_tables

    auction_tables.main(["--only", "fig8,kappa"])
    text = capsys.readouterr().out
    assert "### fig8" in text and "### kappa" in text and "fitting (ours)" in text


def test_committed_checks_lead_with_the_papers_algorithm_and_label_fitting():
    from pathlib import Path

    checks = pd.read_csv(Path(auction.__file__).resolve().parents[2] / "reports" / "auction" / "checks.csv")
    for cell, paper in (
        ("fig8 tasks.load=high", auction.PAPER_HIGH_LOAD),
        ("fig4 cluster.nodes=50", auction.PAPER_50_NODES),
    ):
        for base, gain in paper.items():
            row = checks[checks["check"] == f"{cell}: pdFTSP (paper schedule space, tuned kappa) over {base} (%)"]
            assert len(row) == 1 and row["paper"].iloc[0] == pytest.approx(gain), (cell, base)
        for pair in ("Titan / EFT", "EFT / NTM"):
            assert checks["check"].str.startswith(f"{cell.split()[0]} {cell.split()[1]}: {pair}").sum() == 1, (
                cell,
                pair,
            )
    fitting = checks[checks["check"].str.contains("fitting")]
    assert fitting["check"].str.contains(auction.FITTING, regex=False).all()
