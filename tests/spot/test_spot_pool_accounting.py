"""The compiled accounting the AHAP and AHANP pools share (algorithms/spot/pool_accounting.py)
against `simulate` (paper 000, Sec. III and III-E2) directly: scripted decisions, valid or
not, for several policies side by side, give the same outcomes bit for bit, and a decision
simulate rejects (5b, 5c-5d) sets the matching error and stops only that policy."""

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot.pool_accounting import (
    AVAILABILITY_ERROR,
    BOUNDS_ERROR,
    SLOT_ERRORS,
    PoolResult,
    account_slot,
    finish,
    open_accounts,
)
from algorithms.spot.simulation import PolicyError, SpotPolicy, simulate
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket
from tests.spot.test_spot_ahap_batch import fields

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Scripted(SpotPolicy):
    name = "scripted"

    def __init__(self, decisions):
        self.decisions = decisions

    def decide(self, t, state):
        return self.decisions[t - 1]


def run_accounts(job, market, scripts):
    """The pools' use of the accounting: every script (one per policy) slot by slot."""
    d = job.deadline
    p_o = float(market.on_demand_price)
    tol = 1e-9 * max(1.0, job.workload)  # as the pools compute it
    done_at = job.workload - tol
    (progress, n_prev, running, spot_cost, od_cost, reconf, completion, error, n_od, n_sp) = open_accounts(
        len(scripts), d
    )
    for t in range(1, d + 1):
        price, avail = float(market.price[t - 1]), int(market.availability[t - 1])
        on_demand = np.array([script[t - 1][0] for script in scripts], dtype=np.int64)
        spot = np.array([script[t - 1][1] for script in scripts], dtype=np.int64)
        account_slot(
            t,
            on_demand,
            spot,
            price,
            avail,
            job.n_min,
            job.n_max,
            job.alpha,
            job.beta,
            job.mu1,
            job.mu2,
            p_o,
            done_at,
            progress,
            n_prev,
            running,
            spot_cost,
            od_cost,
            reconf,
            completion,
            error,
            n_od,
            n_sp,
        )
    utility, cost, extra = finish(
        progress,
        n_prev,
        completion,
        od_cost,
        spot_cost,
        reconf,
        error,
        d,
        job.workload,
        tol,
        job.n_max,
        job.alpha,
        job.beta,
        job.mu1,
        job.mu2,
        p_o,
        job.value,
        job.gamma,
    )
    result = PoolResult.of(d, n_od, n_sp, utility, cost, spot_cost, od_cost, completion, progress, reconf, extra)
    return result, error, running


@st.composite
def worlds(draw):
    deadline = draw(st.integers(1, 8))
    n_min = draw(st.integers(1, 3))
    n_max = n_min + draw(st.integers(0, 6))
    job = FineTuneJob(
        workload=draw(st.floats(1.0, 10.0 * deadline)),
        deadline=deadline,
        n_min=n_min,
        n_max=n_max,
        mu1=draw(st.sampled_from([1.0, 0.9, 0.6])),
        mu2=draw(st.sampled_from([1.0, 0.8, 0.7])),
        beta=draw(st.sampled_from([0.0, 0.25])),
        gamma=draw(st.sampled_from([2.0, 1.5])),
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    price = rng.uniform(0.1, 1.5, deadline)
    avail = rng.integers(0, n_max + 3, deadline) * rng.integers(0, 2, deadline)
    p_o = draw(st.sampled_from([1.0, 0.6]))
    market = SpotMarket(price, avail, on_demand_price=p_o, capacity=int(avail.max()))
    invalid = draw(st.booleans())
    scripts = []
    for _ in range(draw(st.integers(1, 4))):
        script = []
        for t in range(deadline):
            a = int(avail[t])
            if invalid and draw(st.integers(0, 5)) == 0:  # sometimes (5b) or (5c-5d) broken
                n = draw(st.sampled_from([n_max + 1, n_min - 1, n_max + 2]))
                spot = draw(st.integers(0, max(0, n)))
            else:
                n = draw(st.sampled_from([0, *range(n_min, n_max + 1)]))
                spot = draw(st.integers(0, min(a, n)))
            script.append((max(0, n - spot), spot))
        scripts.append(script)
    return job, market, scripts


@PROPS
@given(worlds())
def test_accounts_equal_simulate(world):
    job, market, scripts = world
    result, error, running = run_accounts(job, market, scripts)
    outcomes = result.outcomes()
    for q, script in enumerate(scripts):
        try:
            want = simulate(job, market, Scripted(script))
        except PolicyError as e:
            assert error[q] in (AVAILABILITY_ERROR, BOUNDS_ERROR) and not running[q]
            tag = "(5b)" if error[q] == AVAILABILITY_ERROR else "(5c-5d)"
            assert str(e).endswith(tag) and SLOT_ERRORS[int(error[q])].endswith(tag)
            continue
        assert error[q] == 0
        assert fields(outcomes[q]) == fields(want)
        assert repr(result.record(q, "m")) == repr(want.record("m"))


def test_a_rejected_decision_stops_only_its_policy():
    job = FineTuneJob(workload=20.0, deadline=3, n_min=2, n_max=6)
    market = SpotMarket(np.full(3, 0.5), np.full(3, 4), on_demand_price=1.0, capacity=4)
    good = [(2, 4)] * 3
    scripts = [good, [(0, 5)] * 3, [(1, 0)] * 3, [(7, 0)] * 3, good]
    result, error, running = run_accounts(job, market, scripts)
    assert error.tolist() == [0, AVAILABILITY_ERROR, BOUNDS_ERROR, BOUNDS_ERROR, 0]
    assert fields(result.outcomes()[0]) == fields(simulate(job, market, Scripted(good)))
    assert fields(result.outcomes()[4]) == fields(result.outcomes()[0])
