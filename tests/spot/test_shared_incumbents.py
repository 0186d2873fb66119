"""Problem (10) of paper 000 (Sec. IV-A, Alg. 1 line 13) solved with shared incumbents
(algorithms/spot/shared_incumbents.py) and the AHAP pool's shared search
(`AHAPPool(search="shared")`, algorithms/spot/ahap_batch.py: incumbents, the window's
set-up once per slot and length, and the reuse of a plan across the forced slots of the
`line` reading) against the reference path (`window_kernels.solve`,
`AHAPPool(search="reference")`): the same plans and objectives bit for bit, on small
windows (also with exact float ties), on windows of the paper's size, on random worlds
under both readings of sigma and on Fig. 9 worlds."""

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from algorithms.spot import shared_incumbents as si, window_kernels as wk, window_problem as wp
from algorithms.spot.ahap_batch import AHAPPool
from market.spot.finetune_job import FineTuneJob
from market.spot.forecast import SpotForecast
from market.spot.spot_market import SpotMarket
from tests.spot.test_spot_ahap_batch import FULL_POOL, fig9_prepared
from tests.spot.test_spot_window_dp import kernel_args, paper_size_case
from tests.spot.test_spot_window_problem import brute_force, window_cases

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIGMAS = [None, 0.3, 0.6, 0.9, 1.2]


def index_of(job):
    tables = wp._job_tables(job)
    return si.total_index(tables.opts_np, job.n_max)


def incumbent_rows(plans, length):
    """The plans (lists of totals) as rows of `length` totals (the last one repeated)."""
    rows = np.zeros((max(1, len(plans)), length), dtype=np.int64)
    for r, plan in enumerate(plans):
        for k in range(length):
            rows[r, k] = plan[min(k, len(plan) - 1)]
    return rows


def assert_same_with_incumbents(job, args, plans):
    """solve_with_incumbents with `plans` gives solve's plan and objective bit for bit; the
    best objective it reports is at least the plan's, and plan_value of the plan is its
    objective (the DP's float operations)."""
    seq, obj = wk.solve(*args)
    length = args[1].shape[0]
    rows = incumbent_rows(plans, length)
    got, got_obj, top = si.solve_with_incumbents(*args, index_of(job), rows, len(plans))
    assert got.tolist() == seq.tolist()
    assert repr(float(got_obj)) == repr(float(obj))
    if seq.size:
        assert top >= got_obj
        value = si.plan_value(
            args[0],
            args[1],
            args[2],
            index_of(job),
            seq,
            *args[5:9],
            *args[16:26],
        )
        assert repr(float(value)) == repr(float(obj))
    return seq, obj, top


def plans_strategy(job, length):
    totals = st.sampled_from([0, *range(job.n_min, job.n_max + 1), job.n_max + 1, -1])
    return st.lists(st.lists(totals, min_size=1, max_size=length), max_size=4)


@PROPS
@given(window_cases(), st.sampled_from(SIGMAS), st.data())
def test_incumbents_leave_the_plan_unchanged(case, sigma, data):
    job, t, z, n_prev, prices, avails = case
    if job.is_complete(z):
        return
    args = kernel_args(job, t, z, n_prev, prices, avails, 1.0, sigma)
    length = args[1].shape[0]
    seq, _ = wk.solve(*args)
    plans = data.draw(plans_strategy(job, length))
    # the optimum itself (the strongest bound), random plans, and plans with invalid totals
    if seq.size and data.draw(st.booleans()):
        plans.append(seq.tolist())
    assert_same_with_incumbents(job, args, plans)


@PROPS
@given(window_cases(dyadic=True), st.sampled_from(SIGMAS), st.data())
def test_incumbents_with_exact_ties(case, sigma, data):
    job, t, z, n_prev, prices, avails = case
    if job.is_complete(z):
        return
    args = kernel_args(job, t, z, n_prev, prices, avails, 1.0, sigma)
    length = args[1].shape[0]
    seq, _ = wk.solve(*args)
    plans = data.draw(plans_strategy(job, length))
    if seq.size:
        plans.append(seq.tolist())
    assert_same_with_incumbents(job, args, plans)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([(0.9, 0.9), (0.7, 0.9), (1.0, 0.6), (0.5, 0.5)]),
    st.booleans(),
    st.sampled_from(SIGMAS),
)
def test_paper_size_windows(seed, mu, dyadic, sigma):
    job, t, z, n_prev, prices, avails, rng = paper_size_case(seed, mu, dyadic)
    n_min, n_max = job.n_min, job.n_max
    args = kernel_args(job, t, z, n_prev, prices, avails, 1.0, sigma)
    seq, _ = wk.solve(*args)
    opts = [0, *range(n_min, n_max + 1)]
    plans = [rng.choice(opts, args[1].shape[0]).tolist() for _ in range(3)]
    if seq.size:
        plans.append(np.maximum(seq - 1, 0).tolist())
        plans.append(seq.tolist())
    assert_same_with_incumbents(job, args, plans)


def test_cap_bound_is_no_bound_without_a_cap():
    job = FineTuneJob(workload=40.0, deadline=5, n_min=1, n_max=4)
    args = kernel_args(job, 1, 0.0, 0, [0.5, 0.7], [3, 3], 1.0)
    assert si.cap_bound(args[0], args[2], *args[16:26]) == (np.inf, 0.0)


def test_plan_value_of_a_finishing_plan_and_of_invalid_totals():
    """Hand-computed: L = 4, H(n) = n, mu = 1, p^o = 1, spot 0.5 with 2 available: the
    plan (2, 2) from Z = 0 finishes in slot 2 (4 >= L - tol) at cost 2 * 0.5 + 2 * 0.5 = 2,
    objective v - 2; a total outside {0} U [N_min, N_max] gives -inf."""
    job = FineTuneJob(workload=4.0, deadline=4, n_min=1, n_max=3, mu1=1.0, mu2=1.0, value=10.0)
    args = kernel_args(job, 1, 0.0, 0, [0.5, 0.5, 0.5], [2, 2, 2], 1.0)
    index = index_of(job)
    value = si.plan_value(args[0], args[1], args[2], index, np.array([2, 2, 3]), *args[5:9], *args[16:26])
    assert value == 8.0
    bad = si.plan_value(args[0], args[1], args[2], index, np.array([2, 5, 3]), *args[5:9], *args[16:26])
    assert bad == -np.inf


def forced(job, prices, avails, sigma, length):
    return [p <= sigma and a >= job.n_min for p, a in zip(prices[:length], avails[:length])]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(window_cases(), st.sampled_from([(0.3, 0.6), (0.3, 0.9), (0.6, 0.9), (0.5, 0.95)]))
def test_a_plan_at_the_top_is_the_plan_of_more_forced_slots(case, sigmas):
    """`ahap_batch._reusable`'s rule against brute force: the plan of the problem with the
    slots under sigma_1 p^o forced, if its objective is the best and it uses all spot of the
    slots sigma_2 > sigma_1 forces too (p < p^o there), is the brute-force winner of the
    problem under sigma_2."""
    job, t, z, n_prev, prices, avails = case
    if job.is_complete(z):
        return
    low, high = sigmas
    args = kernel_args(job, t, z, n_prev, prices, avails, 1.0, low)
    length = args[1].shape[0]
    seq, obj, top = si.solve_with_incumbents(*args, index_of(job), np.zeros((1, length), dtype=np.int64), 0)
    if not seq.size or obj != top:
        return
    more = forced(job, prices, avails, high, length)
    if any(f and n < min(a, job.n_max) for f, n, a in zip(more, seq.tolist(), avails)):
        return
    event("the plan under sigma_1 is checked under sigma_2")
    cap = args[25]
    _, _, winner = brute_force(job, t, z, n_prev, prices, avails, 1.0, high, cap)
    assert list(winner[4]) == seq.tolist()
    assert wk.solve(*kernel_args(job, t, z, n_prev, prices, avails, 1.0, high))[0].tolist() == seq.tolist()


# --- the pool ------------------------------------------------------------------------------


def assert_pool_same(job, market, forecast, params, reading):
    shared = AHAPPool(params, reading, "shared")
    reference = AHAPPool(params, reading, "reference")
    got = shared.run(job, market, forecast)
    want = reference.run(job, market, forecast)
    assert repr(got) == repr(want)
    assert shared.sweeps <= reference.sweeps
    return shared.sweeps, reference.sweeps


def random_world(data, deadline, n_min, dyadic):
    n_max = n_min + data.draw(st.integers(0, 8))
    if dyadic:
        job = FineTuneJob(
            workload=data.draw(st.sampled_from([4.0, 8.0, 16.0, 32.0, 48.0])),
            deadline=deadline,
            n_min=n_min,
            n_max=n_max,
            mu1=data.draw(st.sampled_from([1.0, 0.5, 0.75])),
            mu2=data.draw(st.sampled_from([1.0, 0.5])),
            value=data.draw(st.sampled_from([16.0, 64.0, 128.0])),
        )
    else:
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
    p_o = 1.0 if dyadic else data.draw(st.sampled_from([1.0, 0.6]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    if dyadic:
        price = rng.choice([0.25, 0.5, 0.75, 1.0], slots)
    else:
        price = rng.uniform(0.1, 1.5, slots)
    avail = rng.integers(0, n_max + 2, slots)
    market = SpotMarket(price, avail, on_demand_price=p_o, capacity=int(avail.max()))
    horizon = 5
    f_price = np.empty((deadline, horizon + 1))
    f_avail = np.empty((deadline, horizon + 1), dtype=np.int64)
    for t in range(deadline):
        if dyadic:
            f_price[t] = price[t : t + horizon + 1]
            f_avail[t] = avail[t : t + horizon + 1]
        else:
            f_price[t] = price[t : t + horizon + 1] * rng.uniform(0.5, 1.5, horizon + 1)
            f_avail[t] = avail[t : t + horizon + 1] + rng.integers(-3, 3, horizon + 1)
        f_price[t, 0], f_avail[t, 0] = price[t], avail[t]
    return job, market, SpotForecast(price=f_price, availability=f_avail)


@PROPS
@given(st.integers(1, 7), st.integers(1, 3), st.booleans(), st.sampled_from(["ahead", "line"]), st.data())
def test_random_worlds(deadline, n_min, dyadic, reading, data):
    job, market, forecast = random_world(data, deadline, n_min, dyadic)
    pool = FULL_POOL + [(w, v, s) for w in (1, 3, 5) for v in (1,) for s in (0.3, 0.4, 0.6, 0.8, 1.2)]
    params = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=30, unique=True))
    shared, reference = assert_pool_same(job, market, forecast, params, reading)
    if shared < reference:
        event("plans reused across forced slots")


def test_the_line_reading_reuses_plans_on_a_hand_made_world():
    """Spot at 0.3-0.5 p^o in every slot, thresholds 0.4-0.9: the policies with larger sigma
    force more slots, and their plans come from those of smaller sigma without a DP."""
    job = FineTuneJob(workload=60.0, deadline=6, n_min=1, n_max=8, mu1=0.9, mu2=0.9)
    price = np.array([0.45, 0.3, 0.5, 0.35, 0.4, 0.45, 0.3, 0.5, 0.35, 0.4, 0.45])
    avail = np.array([4, 6, 3, 8, 5, 2, 6, 3, 8, 5, 4])
    market = SpotMarket(price, avail, on_demand_price=1.0, capacity=8)
    f_price = np.array([price[t : t + 6] for t in range(6)])
    f_avail = np.array([avail[t : t + 6] for t in range(6)])
    forecast = SpotForecast(price=f_price, availability=f_avail)
    params = [(w, 1, s) for w in (2, 4) for s in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]
    shared_sweeps, reference_sweeps = assert_pool_same(job, market, forecast, params, "line")
    assert shared_sweeps < reference_sweeps
    assert shared_sweeps > 0


def test_search_is_checked():
    with pytest.raises(ValueError, match="search"):
        AHAPPool([(1, 1, 0.5)], "ahead", "progress-free")


@pytest.mark.parametrize("reading", ["ahead", "line"])
@pytest.mark.parametrize("kind", ["mag_dep_uniform", "fixed_heavy"])
def test_fig9_worlds(reading, kind):
    from algorithms.spot import family

    prepared = fig9_prepared(kind)
    for replicate in range(8):
        rng = np.random.default_rng(replicate)
        world = family.draw_market(prepared, rng)
        job = family.draw_job(prepared, rng)
        forecast = family.make_forecast(prepared, world, job, replicate, rng)
        market = world.window(prepared.forecast.history, job.deadline + prepared.forecast.horizon)
        params = [(w, v, s) for w in range(1, 6) for v in range(1, w + 1) for s in (0.3, 0.5, 0.7, 0.9)]
        assert_pool_same(job, market, forecast, params, reading)
