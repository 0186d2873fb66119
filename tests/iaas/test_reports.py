"""The IaaS reproduction's rho (reproduction/iaas/__init__.py): a ratio of means with a paired interval,
and undefined where the baseline pays almost nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reproduction import iaas
from tests.sweep_dirs import write_cell_config


def test_rho_is_one_minus_a_ratio_of_means_not_a_mean_of_ratios():
    wide = pd.DataFrame({"ours": [0.5, 1.5, 1.0], "theirs": [1.8, 2.2, 2.0]})
    rho, ci95, note = iaas._rho(wide, "ours", "theirs", reference=None)
    assert rho == pytest.approx(50.0) and note == ""
    assert 100 * (1 - wide["ours"] / wide["theirs"]).mean() == pytest.approx(51.3, abs=0.1)  # not this
    assert ci95 > 0


def test_rho_is_undefined_where_the_baseline_pays_almost_nothing():
    wide = pd.DataFrame({"ours": [0.001, 0.002], "theirs": [0.0005, 0.0001]})
    rho, ci95, note = iaas._rho(wide, "ours", "theirs", reference=0.3)
    assert np.isnan(rho) and np.isnan(ci95) and "under 1% of its R = 0 cost" in note


def test_ratio_rows_judge_each_cell_against_its_own_r0_baseline():
    rows = []
    for r, (ours, theirs) in {0: (0.10, 0.20), 400: (0.010, 0.020), 600: (0.0001, 0.0002)}.items():
        for rep in range(3):
            for mechanism, cost in (("A", ours * (1 + 0.01 * rep)), ("B", theirs)):
                rows.append(
                    {
                        "x": 3.0,
                        "self_owned.instances": r,
                        "replicate": rep,
                        "mechanism": mechanism,
                        "unit_cost": cost,
                        "self_owned_utilisation": 0.5,
                        "policy": "p",
                    }
                )
    table = iaas._ratio_rows(pd.DataFrame(rows), ["x", "self_owned.instances"], "A", "B", ("A", "B"))
    by_r = table.set_index("self_owned.instances")
    assert by_r.loc[400, "rho_percent"] == pytest.approx(100 * (1 - 0.0101 / 0.02))
    assert np.isnan(by_r.loc[600, "rho_percent"]) and "R = 0" in by_r.loc[600, "rho_note"]
    check = iaas._rho_check("table3", "x", by_r.loc[600, "rho_percent"], 30.0)
    assert check.holds is False


def test_demand_per_slot_is_eq2_over_each_jobs_window():
    from market.iaas.jobs import JobStream

    # job 1: slots 1-4, wants ceil(10 / 4) = 3; job 2: slots 3-4, wants ceil(7 / 2) = 4 (delta 20)
    jobs = JobStream(np.array([1, 3]), np.array([10.0, 7.0]), np.array([4, 2]), np.array([20, 20]))
    assert list(iaas.demand_per_slot(jobs)) == [3, 3, 7, 7]


def test_load_report_reads_the_rate_both_ways(tmp_path):
    from reproduction.experiment import Context

    table = iaas.load_report(Context(tmp_path, tmp_path))
    assert (tmp_path / "load.csv").exists()
    by = table.set_index(["jobs.slackness_max", "jobs.arrival_rate"])
    assert by.loc[(3.0, 5.0), "work_per_slot"] == pytest.approx(5 * by.loc[(3.0, 1.0), "work_per_slot"], rel=0.05)
    assert (by["demand_max"] >= by["demand_p90"]).all() and (by["demand_p90"] >= 0).all()


def test_the_five_per_slot_tables_differ_from_the_literal_ones_only_in_the_load():
    from omegaconf import OmegaConf

    from sweep.api import CONF_DIR

    for name, base in (("table3_rate5", "table3"), ("table4_rate5", "table4")):
        text = (CONF_DIR / "experiment" / "iaas" / f"{name}.yaml").read_text()
        ours = OmegaConf.create(text)
        assert ours["defaults"][0] == f"iaas/{base}" and ours["jobs"]["arrival_rate"] == 5.0
        assert {e.name for e in iaas.EXPERIMENTS} >= {name, base}


def test_fig4_check_finds_an_interior_beta_only_where_there_is_one(tmp_path):
    rows = []
    for bid, costs in ((0.1, {0.0: 3.0, 0.5: 2.0, 0.9999: 2.5}), (0.2, {0.0: 3.0, 0.5: 2.0, 0.9999: 1.0})):
        for beta, cost in costs.items():
            rows.append(
                {"jobs.slackness_max": 3.0, "mechanism": "BestDynalloc", "bid": bid, "beta": beta, "unit_cost": cost}
            )
    pd.DataFrame(rows).to_parquet(tmp_path / "policies.parquet")
    best = iaas.best_beta_per_bid(tmp_path).set_index("bid")
    assert best.loc[0.1, "beta"] == 0.5 and bool(best.loc[0.1, "interior"])
    assert best.loc[0.2, "beta"] == 0.9999 and not bool(best.loc[0.2, "interior"])


def test_theta_reading_is_read_from_the_runs_config(tmp_path):
    write_cell_config(tmp_path, {"policies": {"theta_reading": "rebid"}})
    assert iaas.theta_reading(tmp_path) == "rebid"


def test_proposition6_row_states_the_bound_at_the_runs_n_d_and_jobs():
    rows = []
    for norm in ("bound", "none"):
        for rep, (lag, jobs) in enumerate(((276, 6000), (280, 6010))):
            rows.append(
                {
                    "mechanism": "OptiLearning",
                    "learning.normalisation": norm,
                    "self_owned.instances": 0,
                    "replicate": rep,
                    "learning_policies": 91,
                    "learning_lag": lag,
                    "learning_jobs": jobs,
                }
            )
        rows.append({"mechanism": "BestDynalloc", "learning.normalisation": norm, "self_owned.instances": 0})
    table = iaas.proposition6_table(pd.DataFrame(rows))
    assert len(table) == 2 and (table["learning_lag"] == 280).all() and (table["learning_jobs"] == 6010).all()
    # 9 sqrt(2 d ln(n / delta) / N') by hand
    assert table["proposition6_bound"].iloc[0] == pytest.approx(9 * np.sqrt(2 * 280 * np.log(91 / 0.05) / 6010))
    check = iaas._proposition6_check("table4", table)
    assert check.holds is None and "n = 91, d = 280, N' = 6,010" in check.check and "vacuous" in check.check
