"""Fig. 5 of paper 002 (reproduction/core/prediction.py): the remaining-data predictions of WLS, LS,
M4 and the power law with a floor (ours), exact on noise-free curves of their own form; threads
left out; Engression's seeds and pools; the report's files, columns and determinism (whatever
the number of worker processes); the checks; the WLS window table; the experiment entry."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from algorithms.core.remaining_data import remaining_data
from algorithms.core.weighted_rls import WeightedRLS
from market.core.parametric import ParametricCurve, PowerLaw
from market.core.threads import Bundle, Thread
from reproduction.core import prediction as cp
from reproduction.experiment import Check, Experiment

FAST = ("WLS", "LS", "M4", cp.FLOOR)  # every method but Engression (0.2-0.5 s a fit)


def bundle_of(laws, budget=50.0, deadline=400, thresholds=(0.05,), noise=0.0):
    threads = tuple(Thread(0, deadline, budget, eps, f"t{j}") for j, eps in enumerate(thresholds))
    rng = np.random.default_rng(3)
    return Bundle(threads, tuple(ParametricCurve(law, noise, 1.0, rng) for law in laws))


def test_observation_design():
    curve = ParametricCurve(PowerLaw(4.0, 0.5))
    s, loss = cp.observations(curve, 60.0, 3, 4)
    np.testing.assert_allclose(s, [20.0, 40.0, 60.0, 80.0])  # s_i = i N_k / K
    np.testing.assert_allclose(loss, 4.0 * s**-0.5)


def test_methods_are_labelled():
    assert cp.METHODS == ("WLS", "LS", "M4", "Engression", "floor fit (ours)")
    assert cp.PAPER_METHODS == cp.METHODS[:4] and cp.FLOOR not in cp.PAPER_METHODS


def test_fits_exact_on_a_noise_free_power_law():
    laws = [PowerLaw(5.0, 0.5), PowerLaw(20.0, 0.8)]
    bundle = bundle_of(laws, thresholds=(0.05, 0.02))
    rows = cp.bundle_predictions(bundle, points=(2, 3, 5, 10, 60, 200), methods=FAST)
    for row in rows:
        law = laws[row["thread"]]
        s_n = row["points"] * 50.0 / 2
        truth = law.data_to_reach(bundle.threads[row["thread"]].threshold) - s_n
        assert row["truth"] == pytest.approx(truth, rel=1e-12)
        assert truth > 0
        assert "Engression" not in row
        for method in ("WLS", "LS"):  # exact fit; eq. 3.6 rounds up: within one data unit
            assert abs(row[method] - truth) <= 1.0 + 1e-9 * truth, (method, row)
        if row["points"] >= 3:  # a power law is a floor law with c = 0
            assert abs(row[cp.FLOOR] - truth) <= 1.0 + 1e-6 * truth, row
        else:
            assert math.isnan(row[cp.FLOOR])
        if row["points"] >= 5:  # and an M4 curve with L_inf = 0, alpha = 0
            assert abs(row["M4"] - truth) <= 1.0 + 1e-6 * truth, row
        else:
            assert math.isnan(row["M4"])


def test_fitted_need_dispatch_and_unknown_methods():
    s = np.arange(1, 41) * 10.0
    loss = 3.0 * s**-0.4
    assert math.isnan(cp.fitted_need("M4", s[:4], loss[:4], 0.1))
    assert math.isnan(cp.fitted_need("Engression", s[:2], loss[:2], 0.1))
    with pytest.raises(ValueError, match="no fitted method"):
        cp.fitted_need("WLS", s, loss, 0.1)
    with pytest.raises(ValueError, match="unknown methods"):
        cp.bundle_predictions(bundle_of([PowerLaw(5.0, 0.5)]), points=(10,), methods=("M5",))


def test_engression_rows_use_their_seed():
    bundle = bundle_of([PowerLaw(5.0, 0.5)], thresholds=(0.05,), noise=0.01)
    rows = cp.bundle_predictions(bundle, points=(40,), methods=("Engression",), replicate=2)
    s, loss = cp.observations(bundle.curves[0], 50.0, 1, 40)
    expected = cp.fitted_need("Engression", s, loss, 0.05, cp.engression_seed(2, 0, 40))
    assert rows[0]["Engression"] == expected
    assert cp.engression_seed(2, 0, 40) == 2_000_040


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
    assert cp.floor_need((4.0, 0.5, 0.1), 0.1, 150.5) == math.inf  # eps <= c: never
    assert cp.floor_need((4.0, 0.5, 0.1), 0.3, 500.0) == 0.0  # the fit is past eps already
    assert cp.floor_need((4.0, 1e-3, 0.0), 1e-3, 1.0) == math.inf  # beyond floating point
    with pytest.raises(ValueError, match="three distinct"):
        cp.floor_fit([1.0, 2.0], [1.0, 0.5])


def test_unreachable_threads_are_left_out_and_counted():
    laws = [PowerLaw(5.0, 0.5), PowerLaw(5.0, 0.5, floor=0.1)]
    bundle = bundle_of(laws, thresholds=(0.05, 0.05))  # the second never goes below 0.1
    rows = cp.bundle_predictions(bundle, points=(60, 80), methods=FAST)
    left = [row for row in rows if row["thread"] == 1]
    assert all(math.isinf(row["truth"]) and all(math.isnan(row[m]) for m in FAST) for row in left)
    errors = pd.DataFrame(
        [
            {
                "bundle": "b",
                "replicate": 0,
                "thread": row["thread"],
                "points": row["points"],
                "method": m,
                "error": (abs(row[m] - row["truth"]) / row["truth"] if not math.isnan(row[m]) else math.nan),
            }
            for row in rows
            for m in FAST
        ]
    )
    table = cp.summarise(errors)
    assert list(table.columns) == cp.COLUMNS
    assert (table["threads_used"] == 1).all() and (table["threads_left_out"] == 1).all()
    assert (table["replicates"] == 1).all()
    assert (table["mean_error"] <= 1.0 / 8000).all()  # exact up to eq. 3.6's rounding up


def test_summarise_keeps_infinite_predictions_out_of_the_mean():
    errors = pd.DataFrame(
        {
            "bundle": "b",
            "replicate": [0, 0, 1, 1],
            "thread": [0, 1, 0, 1],
            "points": 60,
            "method": "WLS",
            "error": [0.1, 0.3, math.inf, math.nan],
        }
    )
    row = cp.summarise(errors).iloc[0]
    assert row["mean_error"] == pytest.approx(0.2)
    assert row["median_error"] == pytest.approx(0.3)  # over 0.1, 0.3, inf
    assert (row["threads_used"], row["threads_left_out"], row["infinite_predictions"]) == (3, 1, 1)
    assert row["replicates"] == 2


def test_prediction_table_pools_engression_replicates():
    rows = []
    for replicate in range(3):
        for method in ("WLS", "Engression") if replicate == 0 else ("WLS",):
            rows.append(
                {
                    "bundle": "table1",
                    "replicate": replicate,
                    "thread": 0,
                    "points": 60,
                    "method": method,
                    "error": 0.1 * (replicate + 1) if method == "WLS" else 5.0,
                }
            )
    table = cp.prediction_table(pd.DataFrame(rows))
    pools = {(m, r): e for m, r, e in table[["method", "replicates", "mean_error"]].itertuples(index=False)}
    assert pools == {("WLS", 3): pytest.approx(0.2), ("WLS", 1): pytest.approx(0.1), ("Engression", 1): 5.0}
    assert list(table["replicates"]) == [3, 1, 1]  # the widest pool first


def _paper_table(values: dict) -> pd.DataFrame:
    """A table whose mean error is `values[bundle][method]` at every n, all methods on 10 replicates
    and all again on Engression's 3."""
    rows = []
    for bundle, errors in values.items():
        for pool in (10, 3):
            for method, error in errors.items():
                if method == "Engression" and pool == 10:
                    continue
                rows += [
                    {
                        "bundle": bundle,
                        "method": method,
                        "points": n,
                        "replicates": pool,
                        "mean_error": error,
                        "median_error": error,
                        "threads_used": 5,
                        "threads_left_out": 0,
                        "infinite_predictions": 0,
                    }
                    for n in cp.POINTS
                ]
    return pd.DataFrame(rows, columns=cp.COLUMNS)


def test_checks_hold_on_the_papers_ordering_and_fail_otherwise():
    pure = {"WLS": 0.05, "LS": 0.2, "M4": 0.08, "Engression": 0.07, cp.FLOOR: 0.06}
    mixed = {"WLS": 0.08, "LS": 0.3, "M4": 0.07, "Engression": 0.05, cp.FLOOR: 0.06}
    table = _paper_table({"table1": pure, "table2 eps1": mixed, "table2 eps2": mixed})
    table.attrs["timing"] = pd.DataFrame(
        {"method": list(cp.METHODS), "points": 200, "median_us": [10.0, 10.0, 5000.0, 2e5, 800.0]}
    )
    checks = cp.prediction_checks(table)
    ruled = [c for c in checks if c.holds is not None]
    assert len(ruled) == 4 + 2 * 4 + 2  # table1: M4, Engression, LS worst, Fig. 8(b); 4 per mixed; 2 times
    assert all(c.holds for c in ruled if "Fig. 8(b)" not in c.check)
    assert all(
        c.experiment == "fig5" and c.paper is None and "paper:" in c.check for c in ruled if "Fig. 8(b)" not in c.check
    )
    floor_rows = [c for c in checks if cp.FLOOR in c.check]
    assert floor_rows and all(c.holds is None for c in floor_rows)
    # the other way round: every ordering check fails
    flipped = _paper_table(
        {"table1": mixed | {"LS": 0.01}, "table2 eps1": pure | {"LS": 0.01}, "table2 eps2": pure | {"LS": 0.01}}
    )
    flipped.attrs["timing"] = table.attrs["timing"].assign(median_us=[1e6, 1e6, 10.0, 10.0, 10.0])
    assert not any(c.holds for c in cp.prediction_checks(flipped) if c.holds is not None and "Fig. 8(b)" not in c.check)
    # without Engression the Engression checks are left out, the others stay
    others = table[table["method"] != "Engression"]
    texts = [c.check for c in cp.prediction_checks(others)]
    assert not any("Engression" in text for text in texts if "Fig. 5(c)" not in text)
    assert any("M4" in text for text in texts)


def test_wls_window_table():
    window = cp.wls_window(replicates=1)
    assert list(window["gamma"].unique()) == list(cp.WINDOW_GAMMAS)
    assert list(window["points"].unique()) == list(cp.WINDOW_POINTS)
    wls = window[window["gamma"] == 0.9].set_index("points")
    assert wls["effective_points"].to_numpy() == pytest.approx(10.0, rel=0.01)  # sum 0.9^i
    assert (wls["window_points_90"] == 22).all()  # 0.9^22 < 0.1
    assert wls.loc[60, "window_span_ln_s"] == pytest.approx(math.log(60 / 39))
    assert wls["window_span_ln_s"].is_monotonic_decreasing
    assert wls["slope_sd_per_noise"].is_monotonic_increasing
    ls = window[window["gamma"] == 1.0].set_index("points")
    assert ls["effective_points"].to_numpy() == pytest.approx(list(cp.WINDOW_POINTS))
    assert ls["slope_sd_per_noise"].is_monotonic_decreasing
    assert np.isfinite(window.filter(like="mean_error").to_numpy()).all()


@pytest.mark.slow
def test_report_files_columns_and_determinism(tmp_path):
    quick = {"WLS": 3, "LS": 3, "M4": 1, "Engression": 1, cp.FLOOR: 1}
    small = {
        "replicates": 1,
        "timing_repeats": quick,
        "engression_bundles": ("table1",),
        "points": (60, 200),
        "timing_points": (60,),
    }
    first = cp.prediction_report(tmp_path / "a", workers=1, **small)
    second = cp.prediction_report(tmp_path / "b", workers=2, **small)
    for name in ("fig5_prediction.csv", "fig5_prediction.png", "fig5_timing.csv", "fig5_wls_window.csv"):
        assert (tmp_path / "a" / name).stat().st_size > 0
    text = (tmp_path / "a" / "fig5_prediction.csv").read_text()
    assert text == (tmp_path / "b" / "fig5_prediction.csv").read_text()
    assert (tmp_path / "a" / "fig5_wls_window.csv").read_text() == (tmp_path / "b" / "fig5_wls_window.csv").read_text()
    table = pd.read_csv(tmp_path / "a" / "fig5_prediction.csv")
    assert list(table.columns) == cp.COLUMNS
    assert list(dict.fromkeys(table["bundle"])) == list(cp.BUNDLES)
    assert set(table["method"]) == set(cp.METHODS)
    assert set(table.loc[table["method"] == "Engression", "bundle"]) == {"table1"}
    assert sorted(set(table["points"])) == [60, 200]
    assert len(table) == len(cp.BUNDLES) * (len(cp.METHODS) - 1) * 2 + 2  # Engression: table1 only
    assert (table["threads_used"] + table["threads_left_out"]).groupby(table["bundle"]).nunique().eq(1).all()
    pd.testing.assert_frame_equal(first, second)
    timing = pd.read_csv(tmp_path / "a" / "fig5_timing.csv")
    assert list(timing.columns) == ["method", "points", "median_us", "threads", "repeats"]
    assert list(timing["method"]) == list(cp.METHODS)
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
