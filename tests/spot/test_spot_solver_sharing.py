"""WindowSolver's per-world sharing (forecast rows as lists, job tokens in the memo key):
a performance device only, so AHAP's decisions (paper 000, Sec. IV-A, Alg. 1) must not
depend on it."""

import dataclasses

import numpy as np

from algorithms.spot.ahap import AHAP
from algorithms.spot.simulation import simulate
from algorithms.spot.window_problem import WindowSolver
from market.spot.finetune_job import FineTuneJob
from market.spot.forecast import SpotForecast, oracle_forecast
from market.spot.spot_market import SyntheticMarketParams


def read_only(forecast):
    price, avail = forecast.price.copy(), forecast.availability.copy()
    price.setflags(write=False)
    avail.setflags(write=False)
    return SpotForecast(price=price, availability=avail)


def test_forecast_row_matches_the_arrays_read_only_or_not():
    rng = np.random.default_rng(3)
    price = rng.uniform(0.1, 1.0, (6, 4))
    avail = rng.integers(-2, 9, (6, 4))
    writable = SpotForecast(price=price, availability=avail)
    frozen = read_only(writable)
    solver = WindowSolver()
    for t in range(1, 7):
        for length in range(1, 5):
            want = ([float(p) for p in price[t - 1, :length]], [max(0, int(a)) for a in avail[t - 1, :length]])
            assert solver.forecast_row(writable, t, length) == want
            got = solver.forecast_row(frozen, t, length)
            assert got == want
            got[0][0], got[1][0] = -1.0, -1  # callers get copies
    assert solver.forecast_row(frozen, 1, 4)[0][0] == float(price[0, 0])


def test_a_writable_forecast_is_read_anew():
    price, avail = np.full((3, 2), 0.5), np.full((3, 2), 4)
    forecast = SpotForecast(price=price, availability=avail)
    solver = WindowSolver()
    assert solver.forecast_row(forecast, 2, 2) == ([0.5, 0.5], [4, 4])
    price[1, 1], avail[1, 1] = 0.25, 7
    assert solver.forecast_row(forecast, 2, 2) == ([0.5, 0.25], [4, 7])


def test_read_only_forecasts_and_equal_jobs_change_no_decision():
    job = FineTuneJob()
    params = SyntheticMarketParams()
    for seed in range(5):
        market = params.sample(np.random.default_rng(seed), job.deadline + 3)
        forecast = oracle_forecast(market, rows=job.deadline, max_horizon=3)
        shared = WindowSolver()
        for window, commitment, sigma in ((1, 1, 0.5), (2, 2, 0.7), (3, 1, 0.9), (3, 3, 0.5)):
            a = simulate(job, market, AHAP(window, commitment, sigma), forecast=forecast)
            twin = dataclasses.replace(job)  # equal, not the same object: shares the memo
            b = simulate(twin, market, AHAP(window, commitment, sigma, shared), forecast=read_only(forecast))
            assert repr(a.record("x")) == repr(b.record("x"))
            assert a.n_on_demand.tolist() == b.n_on_demand.tolist()
            assert a.n_spot.tolist() == b.n_spot.tolist()
