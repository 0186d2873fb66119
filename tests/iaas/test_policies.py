"""Policies on a job stream (algorithms/iaas/policies.py): Sec. V-A's grids, the average unit
cost alpha by hand, and self-owned instances taking their share of the work."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.iaas.policies import BETAS, BIDS, THETAS, Policy, dynalloc_grid, stream_cost, theta_grid
from market.iaas.jobs import JobStream


def stream(arrival, size, deadline, parallelism):
    return JobStream(np.array(arrival), np.array(size, dtype=float), np.array(deadline), np.array(parallelism))


def test_the_paper_grids():
    assert len(BETAS) == 13 and BETAS[1] == pytest.approx(1 / 12) and BETAS[-1] == 0.9999
    assert BIDS == (0.10, 0.13, 0.16, 0.19, 0.22, 0.25, 0.28) and THETAS[-1] == 1.0 and len(THETAS) == 11
    grid = dynalloc_grid()
    assert len(grid) == 91 and grid[0].bid == 0.10 and grid[12].beta == 0.9999 and grid[13].bid == 0.13
    assert len(theta_grid()) == 77
    assert len({p.name for p in grid + theta_grid()}) == 168


def test_unit_cost_by_hand():
    # one job, 30 units at parallelism 2, all on-demand: 2 instances x 2 started hours x 0.25
    # = 1.0 for 30 instance-slots of work = 2.5 instance-hours: alpha = 0.4 per instance-hour
    jobs = stream([1], [30.0], [20], [2])
    cost = stream_cost(jobs, np.full(25, 0.1), Policy("theta", 0.2, theta=0.0))
    assert cost.cost.tolist() == [1.0] and cost.unit_cost == pytest.approx(0.4)
    # all spot at 0.1 for 15 slots: one hour (paid in full, the tenant ends it) and a second,
    # also ended by the tenant: 2 x 0.1 x 2 = 0.4 for the same work
    spot = stream_cost(jobs, np.full(25, 0.1), Policy("theta", 0.2, theta=1.0))
    assert spot.cost.tolist() == [pytest.approx(0.4)] and spot.unit_cost == pytest.approx(0.16)


def test_self_owned_instances_take_their_share():
    # 4 self-owned instances, beta0 = 0: job 1 gets ceil(48 / 24) = 2 of its 4, which do 48
    # units: nothing left for spot or on-demand
    jobs = stream([1, 1], [48.0, 96.0], [24, 24], [4, 4])
    cost = stream_cost(jobs, np.full(30, 0.1), Policy("dynalloc", 0.2, beta=0.5, beta0=0.0), instances=4)
    assert cost.self_owned.tolist() == [2, 2]
    assert cost.self_owned_work.tolist() == [48.0, 48.0]
    assert cost.cost[0] == 0.0 and cost.spot_work[1] + cost.on_demand_work[1] == pytest.approx(48.0)
    assert cost.utilisation == pytest.approx(1.0) and (cost.finish > 0).all()


def test_a_short_price_path_is_an_error():
    with pytest.raises(ValueError, match="price path covers 10 slots, the jobs need 20"):
        stream_cost(stream([1], [30.0], [20], [2]), np.full(10, 0.1), Policy("theta", 0.2))
