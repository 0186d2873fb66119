"""The core reproduction's new reports and checks (reproduction/core/__init__.py), on made-up runs: the
tuning worlds' choice of H_k, the real-curve facts (exploration over the horizon, bundles unlike
UA's), Remark 2's UCB check and the starvation checks."""

from __future__ import annotations

import pandas as pd
import pytest

from reproduction import core
from reproduction.experiment import Context
from tests.sweep_dirs import write_cell_config


def write_run(run_dir, rows, threads=None, lara=None):
    run_dir.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(run_dir / "results.parquet")
    if threads is not None:
        pd.DataFrame(threads).to_parquet(run_dir / "threads.parquet")
    write_cell_config(run_dir, {"lara": lara or {}})


def row(mechanism, utility, replicate=0, end=float("nan"), **extra):
    return {
        "cell_index": 0,
        "replicate": replicate,
        "mechanism": mechanism,
        "utility": float(utility),
        "success_rate": utility / 10,
        "decision_ms": 0.01,
        "exploration_end": end,
        **extra,
    }


def test_tuning_picks_the_best_mean_and_the_smallest_h_on_a_tie(tmp_path):
    rows = [
        row("LARA(exploration=0)", 3),
        row("LARA(exploration=0)", 4, 1),
        row("LARA(exploration=800)", 4),
        row("LARA(exploration=800)", 3, 1),
        row("LARA(exploration=100)", 2),
        row("LARA(exploration=100)", 2, 1),
        row("UA", 5),
        row("UA", 5, 1),
    ]
    write_run(tmp_path / "real_tuning", rows)
    table = core.tuning("real_tuning")(Context(tmp_path, tmp_path))
    assert table.loc[table["chosen"], "mechanism"].tolist() == ["LARA(exploration=0)"]  # UA is not a candidate


def test_real_facts_and_the_h_k_check(tmp_path):
    rows = [row("LARA", 4, 0, end=20), row("LARA", 3, 1, end=30), row("UA", 4, 0), row("UA", 4, 1)]
    threads = [
        {"cell_index": 0, "replicate": r, "mechanism": m, "deadline": d}
        for r in (0, 1)
        for m in ("LARA", "UA")
        for d in (100, 200)
    ]
    write_run(tmp_path / "real", rows, threads, lara={"exploration": 800.0})
    facts = core.bundle_facts(tmp_path / "real").set_index("mechanism")
    assert facts.loc["LARA", "median_horizon"] == 200 and facts.loc["LARA", "exploration_share"] == pytest.approx(
        25 / 200
    )
    assert facts.loc["LARA", "bundles_differing_from_ua"] == 1
    tuned = pd.DataFrame({"mechanism": ["LARA(exploration=800)", "LARA(exploration=0)"], "chosen": [True, False]})
    context = Context(tmp_path, tmp_path, {"real_tuning": tuned, "real": facts.reset_index()})
    checks = {c.check.split(":")[1].strip()[:10]: c for c in core.tuning_checks(context)}
    assert all(c.holds for c in checks.values()), checks


def test_ucb_check_fails_where_a_bonus_beats_the_threshold():
    table = pd.DataFrame(
        {
            "bundle": ["table1"] * 3,
            "mechanism": ["LARA", "LARA(exploration=0)", "LARA(exploration=0,ucb_beta=100)"],
            "completed_mean": [3.85, 4.0, 4.0],
        }
    )
    ete, bonus = core.ucb_checks(table)
    assert ete.ours == pytest.approx(0.15) and ete.holds is False
    assert bonus.ours == 0 and bonus.holds is None


def test_starvation_is_a_rule_under_min_need_one_and_information_otherwise(tmp_path):
    table = pd.DataFrame({"-": ["-"] * 2, "mechanism": ["LARA", "LARA(min_need=1)"], "starved_by_fit": [3, 0]})
    checks = core.starvation_checks(Context(tmp_path, tmp_path, {"real": table}))
    assert [(c.ours, c.holds) for c in checks] == [(3.0, None), (0.0, True)]
