"""The hindsight optimum of a job stream (algorithms/iaas/offline_optimum.py, paper 003 Sec.
III-A billing): costs computed by hand (on-demand hours, a spot hour the cloud ends for free, a
surviving spot hour at its first slot's price, self-owned instances shared by two jobs), the
lower bound on every policy of the family, the returned plan checked against the billing rules,
and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.iaas.offline_optimum import Block, independent_groups, offline_optimum, spot_block, start_blocks
from algorithms.iaas.policies import BIDS, dynalloc_grid, stream_cost, theta_grid
from market.iaas.jobs import LEN, JobStream

ON_DEMAND = 0.25
POLICIES = dynalloc_grid() + theta_grid(kind="theta_once") + theta_grid(kind="theta")


def stream(arrival, size, deadline, parallelism):
    return JobStream(np.array(arrival), np.array(size, dtype=float), np.array(deadline), np.array(parallelism))


def used(opt):
    return [(b, int(n)) for b, n in zip(opt.blocks, opt.counts) if n]


def test_prices_above_every_bid_leave_on_demand_hours_only():
    high = np.full(30, 0.5)
    # 30 units, delta 4, 24 slots: 3 instances for one hour (36 >= 30); 2 hours give only 24
    opt = offline_optimum(stream([1], [30.0], [24], [4]), high)
    assert opt.cost == pytest.approx(3 * ON_DEMAND) and opt.optimal
    assert all(b.kind == "on_demand" for b, _ in used(opt))
    # 30 units, delta 2, 15 slots: slots 1-3 need two blocks starting at slot 1, slots 13-15
    # two blocks ending at 15 (starting >= 4): 4 instance-hours, as job_execution's own case
    opt = offline_optimum(stream([1], [30.0], [15], [2]), high)
    assert opt.cost == pytest.approx(4 * ON_DEMAND)
    assert opt.unit_cost == pytest.approx(1.0 / 30 * LEN)


def test_work_comes_in_whole_instance_slots():
    # 12.5 units need 13 instance-slots: one instance-hour gives 12, so two; 12 + 1e-12 is 12
    high = np.full(12, 0.5)
    assert offline_optimum(stream([1], [12.5], [12], [2]), high).cost == pytest.approx(2 * ON_DEMAND)
    assert offline_optimum(stream([1], [12 + 1e-12], [12], [2]), high).cost == pytest.approx(ON_DEMAND)


def test_a_spot_hour_ended_by_the_cloud_gives_free_work():
    # the spike at slot 7 ends a spot hour launched at slot 1 after 6 slots: 2 x 6 = 12 free
    # units; the other 4 units in slots 8-12 need one instance for 4 slots: the paid spot hour
    # from slot 9 at 0.10 (slot 8 costs 0.13, slot 10 leaves 3 slots)
    prices = np.full(12, 0.10)
    prices[6], prices[7] = 1.0, 0.13
    opt = offline_optimum(stream([1], [16.0], [12], [2]), prices)
    assert opt.cost == pytest.approx(0.10) and opt.optimal
    assert used(opt) == [(Block(0, 1, 6, 0.10, True, 0.0), 2), (Block(0, 9, 12, 0.10, False, 0.10), 1)]
    # without the spike both hours survive: 16 units need two instance-hours at 0.10
    assert offline_optimum(stream([1], [16.0], [12], [2]), np.full(12, 0.10)).cost == pytest.approx(0.20)


def test_a_surviving_spot_hour_costs_its_first_slots_price():
    # 24 units, delta 2, 12 slots: both instances all hour. Bid 0.28 survives prices 0.25 and
    # pays slot 1's 0.10 per instance; with bid 0.22 the hour ends after slot 1 (free) and
    # slots 2-12 need two on-demand hours
    prices = np.full(12, 0.25)
    prices[0] = 0.10
    jobs = stream([1], [24.0], [12], [2])
    assert offline_optimum(jobs, prices).cost == pytest.approx(2 * 0.10)
    assert offline_optimum(jobs, prices, bids=(0.22,)).cost == pytest.approx(2 * ON_DEMAND)


def test_self_owned_instances_are_shared_by_overlapping_jobs():
    # job 0: 24 units, delta 2, slots 1-12; job 1: 12 units, delta 1, slots 7-18; on-demand only
    jobs = stream([1, 7], [24.0, 12.0], [12, 12], [2, 1])
    high = np.full(18, 0.5)
    # R = 1: 18 free units for 36 needed, >= 18 from the cloud, 2 hours: job 0 self-owned in 1-12
    # plus an hour, job 1 self-owned in 13-18 plus an hour. R = 2: 30 free units (slots 7-12
    # hold 2 of the 3 instances the jobs could use): one hour. R = 3: everything self-owned.
    costs = [offline_optimum(jobs, high, instances=r).cost for r in range(4)]
    assert costs == pytest.approx([3 * ON_DEMAND, 2 * ON_DEMAND, ON_DEMAND, 0.0])
    opt = offline_optimum(jobs, high, instances=2)
    assert opt.self_owned.sum(axis=0).max() <= 2


def test_spot_blocks_follow_the_billing_rules():
    prices = np.array([0.10, 0.12, 0.20, 0.10, 0.30, 0.10] + [0.10] * 12)
    assert spot_block(prices, 0, 1, 18, 0.09) is None
    assert spot_block(prices, 0, 1, 18, 0.10) == Block(0, 1, 1, 0.10, True, 0.0)
    assert spot_block(prices, 0, 1, 18, 0.19) == Block(0, 1, 2, 0.19, True, 0.0)
    assert spot_block(prices, 0, 1, 18, 0.28) == Block(0, 1, 4, 0.28, True, 0.0)
    assert spot_block(prices, 0, 1, 18, 0.30) == Block(0, 1, 12, 0.30, False, 0.10)
    # a price above the bid after the job's last slot: the tenant stops the hour, paid
    assert spot_block(prices, 0, 1, 4, 0.28) == Block(0, 1, 4, 0.28, False, 0.10)
    # at one start: the longest free block (bids 0.22-0.28 give the same one: the lowest is
    # kept) and the cheapest full hour, on-demand or a surviving spot hour
    assert start_blocks(prices, 0, 1, 18, BIDS, ON_DEMAND) == [
        Block(0, 1, 4, 0.22, True, 0.0),
        Block(0, 1, 12, None, False, ON_DEMAND),
    ]
    assert start_blocks(prices, 0, 1, 18, BIDS + (0.3,), ON_DEMAND) == [
        Block(0, 1, 4, 0.22, True, 0.0),
        Block(0, 1, 12, 0.3, False, 0.10),
    ]
    assert start_blocks(prices, 0, 6, 18, (0.1,), ON_DEMAND) == [Block(0, 6, 17, 0.1, False, 0.10)]
    assert start_blocks(prices, 0, 5, 18, BIDS, ON_DEMAND) == [Block(0, 5, 16, None, False, ON_DEMAND)]


def test_independent_groups():
    jobs = stream([1, 3, 20, 30, 31], [1.0] * 5, [10, 5, 11, 1, 2], [1] * 5)
    assert independent_groups(jobs, 0) == [[0], [1], [2], [3], [4]]
    assert independent_groups(jobs, 2) == [[0, 1], [2, 3], [4]]  # job 4 starts after slot 30


def check_plan(jobs, prices, instances, bids, opt):
    """The plan's blocks are the cloud's (recomputed from the prices), cover the work done, and
    meet every job's work within its parallelism and R; its cost is its blocks'."""
    cost = np.zeros(len(jobs))
    cover = np.zeros_like(opt.cloud_work)
    for block, n in used(opt):
        end = int(jobs.arrival[block.job] + jobs.deadline[block.job] - 1)
        if block.bid is None:
            assert (block.last, block.price) == (min(block.start + LEN - 1, end), ON_DEMAND)
        else:
            assert block.bid in bids and spot_block(prices, block.job, block.start, end, block.bid) == block
        assert int(jobs.arrival[block.job]) <= block.start and block.last <= end
        cover[block.job, block.start - 1 : block.last] += n
        cost[block.job] += n * block.price
    assert np.all(opt.cloud_work <= cover) and np.all(opt.cloud_work >= 0) and np.all(opt.self_owned >= 0)
    assert np.all(opt.cloud_work + opt.self_owned <= jobs.parallelism[:, None])
    assert np.all(opt.self_owned.sum(axis=0) <= instances)
    for j in range(len(jobs)):
        outside = np.ones(opt.cloud_work.shape[1], dtype=bool)
        outside[jobs.arrival[j] - 1 : jobs.arrival[j] + jobs.deadline[j] - 1] = False
        assert not (opt.cloud_work[j, outside].any() or opt.self_owned[j, outside].any())
        assert opt.cloud_work[j].sum() + opt.self_owned[j].sum() >= math.ceil(jobs.size[j] - 1e-9)
    assert opt.job_cost == pytest.approx(cost) and opt.cost == pytest.approx(cost.sum())
    assert opt.bound <= opt.cost + 1e-9


@st.composite
def worlds(draw):
    """1-3 small jobs and a price path with spikes above every bid (4-decimal prices: the
    model's money is then exact)."""
    k = draw(st.integers(1, 3))
    arrival = sorted(draw(st.lists(st.integers(1, 12), min_size=k, max_size=k)))
    deadline = draw(st.lists(st.integers(1, 30), min_size=k, max_size=k))
    parallelism = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    share = draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k))
    size = [round(s * d * p, 2) for s, d, p in zip(share, deadline, parallelism)]
    jobs = stream(arrival, size, deadline, parallelism)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    h = jobs.horizon()
    prices = np.where(rng.random(h) < 0.2, rng.uniform(0.29, 0.6, h), rng.exponential(0.11, h))
    return jobs, np.round(prices, 4), draw(st.integers(0, 3))


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_the_optimum_is_a_feasible_plan_no_policy_beats(world):
    jobs, prices, instances = world
    opt = offline_optimum(jobs, prices, instances=instances)
    assert opt.optimal
    check_plan(jobs, prices, instances, BIDS, opt)
    for policy in POLICIES:
        cost = stream_cost(jobs, prices, policy, instances, ON_DEMAND)
        assert (cost.finish > 0).all(), policy.name
        assert cost.cost.sum() >= opt.cost - 1e-6, policy.name


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_one_bid_bounds_the_policies_of_that_bid(world):
    jobs, prices, instances = world
    for bid in (0.10, 0.19, 0.28):
        opt = offline_optimum(jobs, prices, instances=instances, bids=(bid,))
        check_plan(jobs, prices, instances, (bid,), opt)
        policies = (
            dynalloc_grid(bids=(bid,))
            + theta_grid(bids=(bid,), kind="theta_once")
            + theta_grid(bids=(bid,), kind="theta")
        )
        cheapest = min(stream_cost(jobs, prices, p, instances, ON_DEMAND).cost.sum() for p in policies)
        assert cheapest >= opt.cost - 1e-6
        assert opt.cost >= offline_optimum(jobs, prices, instances=instances).cost - 1e-6


def test_the_optimum_is_deterministic_and_falls_with_r():
    rng = np.random.default_rng(3)
    jobs = stream([1, 2, 4, 9], [40.0, 31.5, 12.0, 50.0], [30, 20, 12, 25], [3, 2, 1, 3])
    prices = np.round(rng.exponential(0.2, jobs.horizon()), 4)
    costs = [offline_optimum(jobs, prices, instances=r).cost for r in range(5)]
    assert all(a >= b - 1e-9 for a, b in zip(costs, costs[1:]))
    assert offline_optimum(jobs, prices, instances=2).cost == costs[2]


def test_an_empty_stream_costs_nothing():
    opt = offline_optimum(stream([], [], [], []), np.zeros(0))
    assert opt.cost == 0.0 and opt.optimal and opt.unit_cost == 0.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"prices": np.full(10, 0.1)}, "prices covers 10 slots, the jobs need 20"),
        ({"prices": np.r_[np.full(19, 0.1), -0.1]}, "prices must be finite and >= 0"),
        ({"prices": np.r_[np.full(19, 0.1), np.nan]}, "prices must be finite and >= 0"),
        ({"bids": ()}, "bids must hold at least one bid"),
        ({"bids": (0.1, -0.2)}, "bids must be finite and >= 0"),
        ({"instances": -1}, r"instances \(R\) must be an integer >= 0"),
        ({"instances": 1.5}, r"instances \(R\) must be an integer >= 0"),
        ({"on_demand": -0.25}, "on_demand must be a finite price >= 0"),
        ({"time_limit": 0}, "time_limit must be > 0"),
    ],
)
def test_bad_input_is_rejected(kwargs, message):
    args = {"jobs": stream([1], [30.0], [20], [2]), "prices": np.full(20, 0.1)} | kwargs
    with pytest.raises(ValueError, match=message):
        offline_optimum(**args)


def test_a_job_that_cannot_finish_is_rejected():
    with pytest.raises(ValueError, match=r"jobs \[1\] cannot finish by their deadlines"):
        offline_optimum(stream([1, 1], [30.0, 41.0], [20, 20], [2, 2]), np.full(20, 0.1))
