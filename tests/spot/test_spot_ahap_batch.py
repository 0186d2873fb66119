"""The compiled AHAP pool (algorithms/spot/ahap_batch.py), the fast path of
`family.simulate_replicate`, against the reference: `simulate` with `AHAP` (paper 000,
Sec. IV-A, Alg. 1) one policy at a time. The outcomes must be the same bit for bit
(`repr` of every float), on the Fig. 9 cells and on edge cases: deadlines 1-2,
windows longer than the slots left, N_min > 1, reconfiguration overhead (mu < 1,
mu1 != mu2), beta != 0, spot dearer than on-demand, no availability, noisy forecasts."""

import dataclasses
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot import family, window_kernels as wk, window_problem as wp
from algorithms.spot.ahap import AHAP
from algorithms.spot.ahap_batch import AHAPPool, round9
from algorithms.spot.simulation import simulate
from algorithms.spot.window_problem import WindowSolver
from market.spot.finetune_job import FineTuneJob
from market.spot.forecast import SpotForecast, oracle_forecast
from market.spot.spot_market import SpotMarket, SyntheticMarketParams

PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FULL_POOL = [(w, v, s) for w in range(1, 6) for v in range(1, w + 1) for s in (0.3, 0.5, 0.7, 0.9)]


def fields(outcome):
    return (
        repr(outcome.utility),
        repr(outcome.cost),
        repr(outcome.spot_cost),
        repr(outcome.on_demand_cost),
        outcome.completion_time,
        repr(outcome.progress_at_deadline),
        outcome.met_deadline,
        outcome.reconfigurations,
        outcome.termination_slots,
        outcome.n_on_demand.tolist(),
        outcome.n_spot.tolist(),
        outcome.n_on_demand.dtype,
        outcome.n_spot.flags.writeable,
    )


def assert_same_as_reference(job, market, forecast, params, reading="ahead"):
    solver = WindowSolver()
    want = [simulate(job, market, AHAP(w, v, s, solver=solver, sigma_reading=reading), forecast) for w, v, s in params]
    result = AHAPPool(params, reading).run(job, market, forecast)
    got = result.outcomes()
    assert [fields(o) for o in got] == [fields(o) for o in want]
    for q, (o, (w, v, s)) in enumerate(zip(want, params)):
        name = f"AHAP(w={w},v={v},sigma={s:g})"
        assert repr(result.record(q, name)) == repr(o.record(name))


# --- Python's round(x, 9) -------------------------------------------------------


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        st.floats(0.0, 1e4),
        st.floats(-1e7, 1e7),
        st.integers(0, 2**40).map(lambda k: (k + 0.5) / 1e9),
        st.tuples(st.integers(0, 2**30), st.integers(0, 40)).map(lambda p: p[0] / 2.0 ** p[1]),
    )
)
def test_round9_is_pythons_round(x):
    for y in (x, float(np.nextafter(x, -np.inf)), float(np.nextafter(x, np.inf))):
        assert repr(round9(y)) == repr(round(y, 9))


def test_round9_halves_and_specials():
    for x in [
        0.0,
        -0.0,
        1 / 1024,
        3 / 1024,
        5 / 2048,
        0.5e-9,
        2.5e-9,
        1e-300,
        8388607.75,
        8388608.5,
        1e20,
        float("inf"),
        float("-inf"),
    ]:
        assert repr(round9(x)) == repr(round(x, 9))
    assert np.isnan(round9(float("nan")))


# --- the window's set-up --------------------------------------------------------


@PROPS
@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 3), st.data())
def test_window_arrays_match_the_python_set_up(length, n_min, extra, data):
    n_max = n_min + data.draw(st.integers(0, 12))
    job = FineTuneJob(
        workload=data.draw(st.floats(5.0, 150.0)),
        n_min=n_min,
        n_max=n_max,
        beta=data.draw(st.sampled_from([0.0, 0.5, -0.5 * n_min])),
        mu1=0.8,
        mu2=0.7,
    )
    p_o = data.draw(st.sampled_from([1.0, 0.7, 2.5]))
    price = [data.draw(st.floats(0.05, 3.0)) for _ in range(length)]
    avail = [data.draw(st.integers(0, n_max + extra)) for _ in range(length)]
    tables = wp._job_tables(job)
    want = wp._window_arrays(job, tables, {}, price, avail, p_o)
    tail = min(n * p_o / job.throughput(n) for n in range(job.n_min, job.n_max + 1))
    got = wk.window_arrays(
        np.array(price),
        np.array(avail, dtype=np.int64),
        p_o,
        tables.opts_np,
        np.array(tables.throughput),
        job.n_max,
        job.workload,
        tables.work_max,
        tail,
    )
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert [repr(x) for x in g.ravel().tolist()] == [repr(x) for x in w.ravel().tolist()]
        else:
            assert repr(float(g)) == repr(float(w))


# --- whole runs against the reference -------------------------------------------


def fig9_prepared(kind):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=os.path.abspath("conf"), version_base=None):
        cfg = compose("config", overrides=["experiment=spot/fig9", f"noise.kind={kind}"])
    config = OmegaConf.to_container(cfg, resolve=True)
    config.pop("hydra", None)
    return family.prepare(config)


def reference_rows(prepared, replicate):
    """family.simulate_replicate as it was before the fast path: every mechanism through
    `simulate`, the AHAP policies sharing one WindowSolver."""
    rng = np.random.default_rng(replicate)
    world = family.draw_market(prepared, rng)
    job = family.draw_job(prepared, rng)
    forecast = family.make_forecast(prepared, world, job, replicate, rng) if prepared.predictive else None
    job_market = world.window(prepared.forecast.history, job.deadline + prepared.forecast.horizon)
    solver = WindowSolver()
    rows = []
    for name in prepared.mechanisms:
        outcome = simulate(job, job_market, family.make_policy(name, solver, prepared.sigma_reading), forecast)
        rows.append(outcome.record(name))
    if prepared.job_sampling.active:
        for row in rows:
            row.update(job_workload=job.workload, job_n_min=job.n_min, job_n_max=job.n_max)
    return rows


@pytest.mark.parametrize("kind", ["mag_dep_uniform", "fixed_uniform", "mag_dep_heavy", "fixed_heavy"])
def test_simulate_replicate_rows_equal_the_reference_on_fig9_cells(kind):
    prepared = fig9_prepared(kind)
    for replicate in range(3):
        got = family.simulate_replicate(prepared, replicate, np.random.default_rng(replicate))
        assert repr(got) == repr(reference_rows(prepared, replicate))


@pytest.mark.parametrize("reading", ["ahead", "line"])
def test_fig9_worlds_outcomes_equal_the_reference(reading):
    prepared = fig9_prepared("fixed_heavy")
    for replicate in (5, 6):
        rng = np.random.default_rng(replicate)
        world = family.draw_market(prepared, rng)
        job = family.draw_job(prepared, rng)
        forecast = family.make_forecast(prepared, world, job, replicate, rng)
        market = world.window(prepared.forecast.history, job.deadline + prepared.forecast.horizon)
        assert_same_as_reference(job, market, forecast, FULL_POOL, reading)


@pytest.mark.parametrize(
    "job",
    [
        FineTuneJob(workload=4.0, deadline=1, n_max=4),
        FineTuneJob(workload=7.0, deadline=1, n_min=2, n_max=6),
        FineTuneJob(workload=9.0, deadline=2, n_min=2, n_max=6, mu1=0.6, mu2=0.8),
        FineTuneJob(workload=30.0, deadline=3, n_min=3, n_max=8, mu1=0.5, mu2=0.5),
        FineTuneJob(workload=80.0, deadline=10, n_min=4, n_max=12, mu1=0.7, mu2=0.9),
        FineTuneJob(workload=95.0, deadline=10, n_min=1, n_max=16, beta=0.5, mu1=0.9, mu2=0.6),
        FineTuneJob(workload=200.0, deadline=8, n_min=2, n_max=12, mu1=0.8, mu2=0.8, gamma=1.5),
    ],
)
def test_edge_case_jobs_on_synthetic_worlds(job):
    for seed, reading in [(0, "ahead"), (1, "ahead"), (2, "ahead"), (0, "line"), (3, "line")]:
        rng = np.random.default_rng(seed)
        world = SyntheticMarketParams().sample(rng, job.deadline + 5)
        forecast = oracle_forecast(world, job.deadline, min(5, job.deadline - 1))
        horizon = forecast.max_horizon
        params = [p for p in FULL_POOL if min(p[0], job.deadline - 1) <= horizon]
        assert_same_as_reference(job, world, forecast, params, reading)


@PROPS
@given(st.integers(1, 6), st.integers(1, 3), st.data())
def test_random_worlds_with_noisy_forecasts(deadline, n_min, data):
    n_max = n_min + data.draw(st.integers(0, 8))
    job = FineTuneJob(
        workload=data.draw(st.floats(1.0, 12.0 * deadline)),
        deadline=deadline,
        n_min=n_min,
        n_max=n_max,
        mu1=data.draw(st.sampled_from([1.0, 0.9, 0.6])),
        mu2=data.draw(st.sampled_from([1.0, 0.8])),
        beta=data.draw(st.sampled_from([0.0, 0.25])),
    )
    slots = deadline + 5
    p_o = data.draw(st.sampled_from([1.0, 0.6]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    price = rng.uniform(0.1, 1.5, slots)
    avail = rng.integers(0, n_max + 2, slots)
    market = SpotMarket(price, avail, on_demand_price=p_o, capacity=int(avail.max()))
    horizon = 5
    f_price = np.empty((deadline, horizon + 1))
    f_avail = np.empty((deadline, horizon + 1), dtype=float if data.draw(st.booleans()) else np.int64)
    for t in range(deadline):
        f_price[t] = price[t : t + horizon + 1] * rng.uniform(0.5, 1.5, horizon + 1)
        f_avail[t] = avail[t : t + horizon + 1] + rng.integers(-3, 3, horizon + 1)
        f_price[t, 0], f_avail[t, 0] = price[t], avail[t]
    forecast = SpotForecast(price=f_price, availability=f_avail)
    params = data.draw(
        st.lists(st.sampled_from(FULL_POOL + [(2, 1, 1.2), (3, 2, 1.0)]), min_size=1, max_size=12, unique=True)
    )
    assert_same_as_reference(job, market, forecast, params, data.draw(st.sampled_from(["ahead", "line"])))


def test_checks_are_the_references():
    job = FineTuneJob()
    market = SpotMarket(np.full(15, 0.5), np.full(15, 8))
    pool = AHAPPool([(3, 1, 0.5)])
    with pytest.raises(ValueError, match="needs forecasts"):
        pool.run(job, market, None)
    with pytest.raises(ValueError, match="max_horizon is 2, the window needs 3"):
        pool.run(job, market, oracle_forecast(market, 10, 2))
    with pytest.raises(ValueError, match="has 9 rows"):
        pool.run(job, market, oracle_forecast(market, 9, 3))
    with pytest.raises(ValueError, match="the job's deadline needs 10"):
        pool.run(job, market.window(0, 9), oracle_forecast(market, 10, 3))
    with pytest.raises(ValueError, match="must not exceed"):
        AHAPPool([(2, 3, 0.5)])
    assert AHAPPool([]).run(job, market, oracle_forecast(market, 10, 3)).outcomes() == []


def test_the_pool_does_not_change_the_forecast_or_market():
    job = dataclasses.replace(FineTuneJob(), n_min=2)
    market = SyntheticMarketParams().sample(np.random.default_rng(1), 15)
    forecast = oracle_forecast(market, 10, 5)
    before = (forecast.price.copy(), forecast.availability.copy())
    AHAPPool(FULL_POOL[:10]).run(job, market, forecast)
    assert np.array_equal(before[0], forecast.price) and np.array_equal(before[1], forecast.availability)


def test_the_first_failing_policy_names_the_error():
    job = FineTuneJob()
    market = SpotMarket(np.full(15, 0.5), np.full(15, 8))
    params = [(2, 1, 0.5), (4, 1, 0.5), (3, 2, 0.5)]
    for forecast in (
        oracle_forecast(market, 10, 2),
        oracle_forecast(market, 10, 3),
        oracle_forecast(market, 9, 3),
        oracle_forecast(market, 9, 1),
    ):
        for order in (params, params[::-1]):
            errors = []
            for pool_run, one_by_one in (
                (lambda: AHAPPool(order).run(job, market, forecast), None),
                (None, lambda: [simulate(job, market, AHAP(*p), forecast) for p in order]),
            ):
                try:
                    (pool_run or one_by_one)()
                    errors.append(None)
                except ValueError as e:
                    errors.append(str(e))
            assert errors[0] == errors[1]
