"""Fig. 5 of paper 002 (reproduction/core_prediction.py): the remaining-data predictions of WLS, LS
and the power law with a floor, exact on noise-free curves of their own form; threads left out;
the report's files, columns and determinism; the checks and the experiment entry."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorithms.core.remaining_data import remaining_data
from algorithms.core.weighted_rls import WeightedRLS
from market.core.parametric import ParametricCurve, PowerLaw
from market.core.threads import Bundle, Thread
from reproduction import core_prediction as cp
from reproduction.experiment import Check, Experiment


def bundle_of(laws, budget=50.0, deadline=400, thresholds=(0.05,), noise=0.0):
    threads = tuple(Thread(0, deadline, budget, eps, f"t{j}") for j, eps in enumerate(thresholds))
    rng = np.random.default_rng(3)
    return Bundle(threads, tuple(ParametricCurve(law, noise, 1.0, rng) for law in laws))


def test_observation_design():
    curve = ParametricCurve(PowerLaw(4.0, 0.5))
    s, loss = cp.observations(curve, 60.0, 3, 4)
    np.testing.assert_allclose(s, [20.0, 40.0, 60.0, 80.0])      # s_i = i N_k / K
    np.testing.assert_allclose(loss, 4.0 * s ** -0.5)


def test_wls_and_ls_exact_on_a_noise_free_power_law():
    laws = [PowerLaw(5.0, 0.5), PowerLaw(20.0, 0.8)]
    bundle = bundle_of(laws, thresholds=(0.05, 0.02))
    rows = cp.bundle_predictions(bundle, points=(2, 3, 10, 60, 200))
    for row in rows:
        law = laws[row["thread"]]
        s_n = row["points"] * 50.0 / 2
        truth = law.data_to_reach(bundle.threads[row["thread"]].threshold) - s_n
        assert row["truth"] == pytest.approx(truth, rel=1e-12)
        assert truth > 0
        for method in ("WLS", "LS"):     # exact fit; eq. 3.6 rounds up: within one data unit
            assert abs(row[method] - truth) <= 1.0 + 1e-9 * truth, (method, row)
        if row["points"] >= 3:           # a power law is a floor law with c = 0
            assert abs(row["floor fit"] - truth) <= 1.0 + 1e-6 * truth, row
        else:
            assert math.isnan(row["floor fit"])


def test_bank_agrees_with_the_scalar_reference():
    curve = ParametricCurve(PowerLaw(3.0, 0.4, floor=0.05), 0.02, 1.0, np.random.default_rng(1))
    s, loss = cp.observations(curve, 80.0, 4, 120)
    points = (20, 60, 120)
    bank = cp.rls_needs(s[None, :], loss[None, :], np.array([0.1]), 0.9, points)
    fit = WeightedRLS(0.9)
    for i in range(120):
        fit.update(s[i], loss[i])
        if i + 1 in points:
            reference = float(remaining_data(fit.theta, 0.1, fit.last_s))
            assert abs(bank[i + 1][0] - reference) <= 1.0 + 1e-6 * reference


def test_floor_fit_recovers_a_floor_curve():
    law = PowerLaw(10.0, 0.6, floor=0.2)
    s = np.arange(1, 101) * 12.5
    a, b, c = cp.floor_fit(s, law.values(s))
    assert a == pytest.approx(10.0, rel=1e-4)
    assert b == pytest.approx(0.6, rel=1e-4)
    assert c == pytest.approx(0.2, rel=1e-4)
    eps = 0.21
    truth = law.data_to_reach(eps) - s[-1]
    assert cp.floor_need((a, b, c), eps, s[-1]) == pytest.approx(truth, rel=1e-3)
    # with 1% noise the floor is still found, roughly
    noisy = ParametricCurve(law, 0.01, 1.0, np.random.default_rng(5))
    loss = np.array([noisy.loss(x) for x in s])
    _, b_noisy, c_noisy = cp.floor_fit(s, loss)
    assert c_noisy == pytest.approx(0.2, rel=0.15)
    assert b_noisy == pytest.approx(0.6, rel=0.15)


def test_floor_need_cases():
    # a = 4, b = 0.5, c = 0.1, eps = 0.3: s* = (4 / 0.2)^2 = 400; s_n = 150.5 -> ceil(249.5) = 250
    assert cp.floor_need((4.0, 0.5, 0.1), 0.3, 150.5) == 250.0
    assert cp.floor_need((4.0, 0.5, 0.1), 0.1, 150.5) == math.inf      # eps <= c: never
    assert cp.floor_need((4.0, 0.5, 0.1), 0.3, 500.0) == 0.0           # the fit is past eps already
    assert cp.floor_need((4.0, 1e-3, 0.0), 1e-3, 1.0) == math.inf      # beyond floating point
    with pytest.raises(ValueError, match="three distinct"):
        cp.floor_fit([1.0, 2.0], [1.0, 0.5])


def test_unreachable_threads_are_left_out_and_counted():
    laws = [PowerLaw(5.0, 0.5), PowerLaw(5.0, 0.5, floor=0.1)]
    bundle = bundle_of(laws, thresholds=(0.05, 0.05))     # the second never goes below 0.1
    rows = cp.bundle_predictions(bundle, points=(60, 80))
    left = [row for row in rows if row["thread"] == 1]
    assert all(math.isinf(row["truth"]) and all(math.isnan(row[m]) for m in cp.METHODS) for row in left)
    errors = pd.DataFrame([{"bundle": "b", "replicate": 0, "thread": row["thread"], "points": row["points"],
                            "method": m, "error": (abs(row[m] - row["truth"]) / row["truth"]
                                                   if not math.isnan(row[m]) else math.nan)}
                           for row in rows for m in cp.METHODS])
    table = cp.summarise(errors)
    assert list(table.columns) == cp.COLUMNS
    assert (table["threads_used"] == 1).all() and (table["threads_left_out"] == 1).all()
    assert (table["mean_error"] <= 1.0 / 8000).all()    # exact up to eq. 3.6's rounding up


def test_summarise_keeps_infinite_predictions_out_of_the_mean():
    errors = pd.DataFrame({"bundle": "b", "replicate": 0, "thread": [0, 1, 2, 3], "points": 60, "method": "WLS",
                           "error": [0.1, 0.3, math.inf, math.nan]})
    row = cp.summarise(errors).iloc[0]
    assert row["mean_error"] == pytest.approx(0.2)
    assert row["median_error"] == pytest.approx(0.3)              # over 0.1, 0.3, inf
    assert (row["threads_used"], row["threads_left_out"], row["infinite_predictions"]) == (3, 1, 1)


def test_report_files_columns_and_determinism(tmp_path):
    quick = {"WLS": 3, "LS": 3, "floor fit": 1}
    first = cp.prediction_report(tmp_path / "a", replicates=1, timing_repeats=quick)
    second = cp.prediction_report(tmp_path / "b", replicates=1, timing_repeats=quick)
    for name in ("fig5_prediction.csv", "fig5_prediction.png", "fig5_timing.csv"):
        assert (tmp_path / "a" / name).stat().st_size > 0
    text = (tmp_path / "a" / "fig5_prediction.csv").read_text()
    assert text == (tmp_path / "b" / "fig5_prediction.csv").read_text()
    table = pd.read_csv(tmp_path / "a" / "fig5_prediction.csv")
    assert list(table.columns) == cp.COLUMNS
    assert list(dict.fromkeys(table["bundle"])) == list(cp.BUNDLES)
    assert set(table["method"]) == set(cp.METHODS)
    assert sorted(set(table["points"])) == list(cp.POINTS)
    assert len(table) == len(cp.BUNDLES) * len(cp.METHODS) * len(cp.POINTS)
    assert (table["threads_used"] + table["threads_left_out"]).groupby(table["bundle"]).nunique().eq(1).all()
    pd.testing.assert_frame_equal(first, second)
    timing = pd.read_csv(tmp_path / "a" / "fig5_timing.csv")
    assert list(timing.columns) == ["method", "points", "median_us", "threads", "repeats"]
    assert (timing["median_us"] > 0).all()

    checks = cp.prediction_checks(first)
    assert checks and all(isinstance(c, Check) and c.experiment == "fig5" for c in checks)
    assert all(c.holds in (True, False, None) for c in checks)
    assert any(c.holds is not None for c in checks) and any(c.holds is None for c in checks)
    assert any("Fig. 5(c)" in c.check for c in checks)
    assert cp.prediction_checks(None) == []


def test_experiment_entry():
    assert isinstance(cp.EXPERIMENT, Experiment)
    assert cp.EXPERIMENT.name == "fig5" and cp.EXPERIMENT.experiment is None
