"""The arena's one accounting, by hand (docs/arena.md, "One accounting"): paper 000's policies
billed by paper 003's hourly rules, the safety net, and paper 003's kernel on the arena's
units and market."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.iaas.policies import Policy
from algorithms.spot.simulation import SpotPolicy
from arena.hourly_billing import run_hourly
from arena.iaas_policies import run_iaas_policy
from arena.spot_policies import finetune_view, persistence_forecast, run_spot_policy, run_spot_stream
from arena.world import World
from market.iaas.jobs import JobStream


def world(size, deadline, parallelism, price, up=None, arrival=1) -> World:
    price = np.asarray(price, dtype=float)
    up = np.ones(price.size, dtype=bool) if up is None else np.asarray(up, dtype=bool)
    return World(
        JobStream(arrival=[arrival], size=[float(size)], deadline=[deadline], parallelism=[parallelism]), price, up
    )


def test_the_job_as_paper_000_sees_it():
    job = finetune_view(30.0, 36, 20)
    assert (job.workload, job.deadline, job.n_min, job.n_max, job.mu1, job.mu2) == (2.5, 3, 1, 20, 1.0, 1.0)
    assert finetune_view(30.0, 8, 20).deadline == 1  # less than an hour: one (short) hour
    assert finetune_view(30.0, 47, 20).deadline == 3  # the partial fourth hour is not the policy's


def test_od_only_pays_every_started_hour():
    """z = 30 instance-slots (2.5 instance-hours), d = 36 slots (3 hours), delta = 20: OD-Only
    runs one on-demand instance in each of the 3 hours (1 x 3 >= 2.5); the third hour's work
    ends after 6 slots (at slot 30) and is paid in full: cost 3, alpha = 3 / 30 x 12 = 1.2."""
    out = run_spot_stream("OD-Only", {}, world(30, 36, 20, np.full(36, 0.3)), bid=1.0)
    assert out.on_demand_cost.tolist() == [3.0] and out.spot_cost.tolist() == [0.0]
    assert out.finish.tolist() == [30] and out.fell_back.tolist() == [0]
    assert out.unit_cost() == pytest.approx(1.2)


def test_msu_lost_spot_hour_is_free_and_tenant_ended_hour_is_paid():
    """delta = 2, z = 24, d = 24 (2 hours), spot 0.5 bid at 1.0 except 1.5 in slot 7. Hour 1:
    MSU takes 2 spot instances; they work in slots 1-6 (12 units) and the cloud ends them in
    slot 7 (price above the bid): the hour is free. Hour 2: 2 spot instances again, the job is
    done in slot 18 and the tenant ends the hour: paid in full, 2 x 0.5 (its first price).
    Cost 1.0, all of it spot, alpha = 1.0 / 24 x 12 = 0.5."""
    price = np.full(24, 0.5)
    price[6] = 1.5
    out = run_spot_stream("MSU", {}, world(24, 24, 2, price), bid=1.0)
    assert out.spot_cost.tolist() == [1.0] and out.on_demand_cost.tolist() == [0.0]
    assert out.spot_work.tolist() == [24.0] and out.finish.tolist() == [18]
    assert out.unit_cost() == pytest.approx(0.5)


def test_a_down_market_ends_spot_like_a_price_above_the_bid():
    """The same job with the market down in slot 7 instead (price 0.5 throughout): the same
    outcome; with spot down at the start of hour 1 MSU sees no availability and idles."""
    up = np.ones(24, dtype=bool)
    up[6] = False
    out = run_spot_stream("MSU", {}, world(24, 24, 2, np.full(24, 0.5), up), bid=1.0)
    assert (out.spot_cost.tolist(), out.finish.tolist()) == ([1.0], [18])
    up = np.ones(24, dtype=bool)
    up[:12] = False
    out = run_spot_stream("MSU", {}, world(24, 24, 2, np.full(24, 0.5), up), bid=1.0)
    # hour 1 idle, hour 2: 2 spot for 12 slots = 24 units, done in slot 24, a full hour: 2 x 0.5
    assert (out.spot_cost.tolist(), out.on_demand_cost.tolist(), out.finish.tolist()) == ([1.0], [0.0], [24])


def test_the_safety_net_keeps_the_hard_deadline():
    """A plan that never runs anything: z = 24, d = 24, delta = 2. In slot t the job would no
    longer fit once 24 > 2 (24 - t), from t = 13: 2 on-demand instances for the last hour,
    done in slot 24, cost 2 (one hour each)."""
    out = run_hourly(1, 24, 24.0, 2, np.full(24, 0.5), np.ones(24, dtype=bool), lambda hour, done: (0, 0), bid=1.0)
    assert (out.fell_back, out.finish, out.on_demand_cost, out.spot_cost) == (13, 24, 2.0, 0.0)


def test_the_safety_net_keeps_running_spot_and_tops_up_with_on_demand():
    """One spot instance bid at 1.0 in hour 1 of a job that needs both: z = 24, d = 12,
    delta = 2. Slot 1 already needs 2 instances (24 > 2 x 11 after 1 unit): the spot
    instance runs on (12 units, its hour paid at 0.5 as the job ends it in slot 12) beside one
    on-demand instance (cost 1)."""
    out = run_hourly(1, 12, 24.0, 2, np.full(12, 0.5), np.ones(12, dtype=bool), lambda hour, done: (0, 1), bid=1.0)
    assert (out.fell_back, out.finish, out.spot_cost, out.on_demand_cost) == (1, 12, 0.5, 1.0)
    assert (out.spot_work, out.on_demand_work) == (12.0, 12.0)


def test_paper_003_kernel_on_the_arena_units():
    """Theta(theta=0): delta = 20 on-demand instances at once, one started hour each (cost 20)
    for 30 units done in slot 2: alpha = 20 / 30 x 12 = 8. Dynalloc with the market down in
    every slot loses its spot at once (free) and falls back to on-demand."""
    w = world(30, 36, 20, np.full(48, 0.3))
    out = run_iaas_policy(Policy("theta_once", 1.0, theta=0.0), w)
    assert (out.on_demand_cost.tolist(), out.finish.tolist()) == ([20.0], [2])
    assert out.unit_cost() == pytest.approx(8.0)
    down = world(30, 36, 20, np.full(48, 0.3), np.zeros(48, dtype=bool))
    out = run_iaas_policy(Policy("dynalloc", 1.0, beta=0.5), down)
    assert out.spot_cost.tolist() == [0.0] and out.spot_work.tolist() == [0.0]
    assert out.finish.tolist()[0] > 0 and out.fell_back.tolist()[0] > 0


def test_spot_policies_keep_every_deadline_on_random_worlds():
    """Under any prices and outages, every paper-000 policy finishes every job by its deadline
    with all its work accounted for (the safety net), and pays no more than the meta-learner's
    bound delta ceil(d / Len) (p_o + bid)."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        delta = int(rng.integers(1, 6))
        deadline = int(rng.integers(6, 60))
        size = float(rng.uniform(1, delta * deadline))
        price = rng.uniform(0.1, 1.5, deadline)
        up = rng.random(deadline) > 0.3
        w = world(size, deadline, delta, price, up)
        for kind, params in (
            ("OD-Only", {}),
            ("MSU", {}),
            ("UP", {}),
            ("AHANP", {"threshold": 0.7}),
            ("AHAP", {"window": 2, "commitment": 1, "threshold": 0.7}),
        ):
            out = run_spot_stream(kind, params, w, bid=1.0)
            assert 1 <= out.finish[0] <= deadline, kind
            assert out.work[0] == pytest.approx(size), kind
            assert out.cost[0] <= delta * -(-deadline // 12) * 2.0 + 1e-9, kind


class AllOnDemand(SpotPolicy):
    """A paper-000-style policy that runs N_max on-demand instances every hour: the plan of
    paper 003's Theta(theta=0)."""

    name = "all-on-demand"

    def decide(self, t, state):
        return state.job.n_max, 0


def test_both_adapters_bill_the_same_all_on_demand_plan_identically():
    """The arena's two accountings agree to the bit on one plan: delta on-demand instances from
    arrival to completion, through paper 000's adapter (the hourly view, the billing of
    arena/hourly_billing.py, the safety net) and through paper 003's kernel (Theta(theta=0)), on
    random jobs and markets. So the OD-Only / Theta(theta=0) gap of reports/arena/wins.csv is the
    two policies' instance counts, not the adapters."""
    rng = np.random.default_rng(11)
    for _ in range(30):
        delta = int(rng.integers(1, 8))
        deadline = int(rng.integers(6, 80))
        size = float(rng.uniform(1, delta * deadline))
        price = rng.uniform(0.1, 1.5, deadline + 5)
        up = rng.random(deadline + 5) > 0.3
        w = world(size, deadline, delta, price, up)
        ours = run_spot_policy(AllOnDemand(), 0, w, 0, 1.0)
        theirs = run_iaas_policy(Policy("theta", 1.0, theta=0.0), w)
        assert (ours.on_demand_cost, ours.spot_cost) == (theirs.on_demand_cost[0], theirs.spot_cost[0])
        assert ours.on_demand_work == pytest.approx(size)
        # work left for the last partial hour (not the policy's) is done by the safety net at
        # the last moment, one started hour per instance either way: the same bill, a later finish
        if -(-size // delta) <= 12 * (deadline // 12):
            assert ours.finish == theirs.finish[0]
        else:
            assert theirs.finish[0] <= ours.finish <= deadline


def test_persistence_forecast_holds_the_observed_hour():
    f = persistence_forecast(np.array([0.5, 0.7]), np.array([2, 0]), 2)
    assert f.price.tolist() == [[0.5] * 3, [0.7] * 3] and f.availability.tolist() == [[2] * 3, [0] * 3]
