"""The offline optimum of problem (5) (paper 000 Sec. III-D) against brute force and the baselines."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot.msu import MaximalSpotUtilization
from algorithms.spot.od_only import OnDemandOnly
from algorithms.spot.offline_optimum import (
    FixedPlan,
    cheapest_split,
    plan_totals_to_counts,
    solve_offline,
)
from algorithms.spot.simulation import simulate
from algorithms.spot.uniform_progress import UniformProgress
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket, SyntheticMarketParams


def brute_force_totals(job: FineTuneJob, market: SpotMarket) -> float:
    """Best utility over every sequence of totals (cheapest split), accounted by `simulate`."""
    totals = [0, *range(job.n_min, job.n_max + 1)]
    best = -np.inf
    for seq in itertools.product(totals, repeat=job.deadline):
        on_demand, spot = plan_totals_to_counts(seq, market)
        best = max(best, simulate(job, market, FixedPlan(on_demand, spot)).utility)
    return best


def brute_force_splits(job: FineTuneJob, market: SpotMarket) -> float:
    """Best utility over every sequence of (n_on_demand, n_spot) pairs allowed by (5b)-(5e)."""
    per_slot = []
    for t in range(job.deadline):
        pairs = [(0, 0)]
        for n in range(job.n_min, job.n_max + 1):
            pairs += [(n - s, s) for s in range(min(n, int(market.availability[t])) + 1)]
        per_slot.append(pairs)
    best = -np.inf
    for seq in itertools.product(*per_slot):
        plan = FixedPlan([o for o, _ in seq], [s for _, s in seq])
        best = max(best, simulate(job, market, plan).utility)
    return best


@st.composite
def tiny_worlds(draw):
    d = draw(st.integers(1, 4))
    n_max = draw(st.integers(1, 3))
    job = FineTuneJob(
        workload=draw(st.integers(1, 30)) / 2,
        deadline=d,
        n_min=draw(st.integers(1, n_max)),
        n_max=n_max,
        alpha=draw(st.sampled_from([0.5, 1.0, 2.0])),
        beta=draw(st.sampled_from([0.0, 0.5, 1.0])),
        mu1=draw(st.sampled_from([0.5, 0.7, 0.9, 1.0])),
        mu2=draw(st.sampled_from([0.5, 0.8, 0.9, 1.0])),
        value=draw(st.floats(1.0, 40.0)),
        gamma=draw(st.sampled_from([1.5, 2.0, 3.0])),
    )
    market = SpotMarket(
        draw(st.lists(st.floats(0.05, 2.0), min_size=d, max_size=d)),
        draw(st.lists(st.integers(0, 4), min_size=d, max_size=d)),
        on_demand_price=draw(st.sampled_from([1.0, 1.5])),
        capacity=4,
    )
    return job, market


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_worlds())
def test_matches_brute_force_over_totals(world):
    job, market = world
    plan = solve_offline(job, market)
    assert plan.status == "OPTIMAL"
    assert plan.utility == pytest.approx(brute_force_totals(job, market), abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_totals_lose_nothing_against_every_split(seed):
    rng = np.random.default_rng(seed)
    job = FineTuneJob(workload=7, deadline=3, n_min=1, n_max=3, mu1=0.5, mu2=0.8, value=12)
    market = SpotMarket(rng.uniform(0.2, 1.4, 3), rng.integers(0, 4, 3), capacity=3)
    assert solve_offline(job, market).utility == pytest.approx(brute_force_splits(job, market), abs=1e-6)


def test_at_least_every_baseline_on_default_worlds():
    job = FineTuneJob()
    params = SyntheticMarketParams()
    for seed in range(30):
        market = params.sample(np.random.default_rng(seed), job.deadline)
        plan = solve_offline(job, market)
        assert plan.status == "OPTIMAL"
        for policy in (OnDemandOnly(), MaximalSpotUtilization(), UniformProgress()):
            assert plan.utility >= simulate(job, market, policy).utility - 1e-9, (seed, policy.name)


def test_cheap_ample_spot_runs_spot_only():
    job = FineTuneJob()
    plan = solve_offline(job, SpotMarket(np.full(10, 0.1), np.full(10, 16)))
    # Any plan needs sum_t n_t - 0.1 * (n_t at each switch) >= 80 with a switch at the
    # start: at least 81 instance-slots (9 x 9 gives 8.1 + 8 * 9 = 80.1), cost 8.1 in spot.
    assert plan.n_on_demand.sum() == 0
    assert plan.n_spot.sum() == 81
    assert plan.cost == pytest.approx(8.1)
    assert plan.utility == pytest.approx(160 - 8.1)
    assert plan.completion_time <= 10


def test_expensive_spot_matches_od_only():
    job = FineTuneJob()
    plan = solve_offline(job, SpotMarket(np.full(10, 1.2), np.full(10, 16)))
    # Same 81 instance-slots, now on-demand at 1: utility 160 - 81 = 79, OD-Only's.
    assert plan.n_spot.sum() == 0
    assert plan.utility == pytest.approx(79.0)


def test_unfinishable_job_buys_all_cheap_spot_then_terminates():
    job = FineTuneJob(workload=100, deadline=3, n_max=4, mu1=1.0, mu2=1.0, value=50, gamma=3)
    plan = solve_offline(job, SpotMarket([0.1] * 3, [16] * 3))
    # 12 units of spot for 1.2 leave 88 = 22 termination slots of 4 on-demand (cost 88);
    # T = 25 >= gamma d = 9, so V = 0: utility -89.2. Idling would cost 100.
    assert plan.n_spot.tolist() == [4, 4, 4]
    assert plan.completion_time == 25
    assert plan.utility == pytest.approx(-89.2)


def test_idles_while_waiting_for_cheap_spot():
    job = FineTuneJob(workload=8, deadline=4, n_min=1, n_max=4, mu1=1.0, mu2=1.0, value=20)
    market = SpotMarket([0.9, 0.9, 0.1, 0.1], [4, 4, 4, 4])
    plan = solve_offline(job, market)
    assert (plan.n_on_demand + plan.n_spot).tolist() == [0, 0, 4, 4]
    assert plan.utility == pytest.approx(20 - 0.8)


def test_fixed_plan_and_split():
    assert FixedPlan([1], [2]).name == "OPT"
    assert cheapest_split(5, 0.3, 2, 1.0) == (3, 2)
    assert cheapest_split(5, 1.0, 9, 1.0) == (5, 0)
    with pytest.raises(ValueError, match="FixedPlan"):
        FixedPlan([1, 2], [0])


def test_rejects_short_market_and_bad_time_limit():
    job = FineTuneJob()
    with pytest.raises(ValueError, match="deadline needs 10"):
        solve_offline(job, SpotMarket([0.5] * 3, [1] * 3))
    with pytest.raises(ValueError, match="time_limit"):
        solve_offline(job, SpotMarket([0.5] * 10, [1] * 10), time_limit=0)
