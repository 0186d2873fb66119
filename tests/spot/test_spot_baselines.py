"""OD-Only, MSU, UP and UP-track (paper 000 Sec. VI-A; UP as Can't Be Late defines it) on
hand-computed cases and random worlds."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot.msu import MaximalSpotUtilization, switch_slot
from algorithms.spot.od_only import OnDemandOnly
from algorithms.spot.simulation import can_finish, simulate
from algorithms.spot.uniform_progress import UniformProgress
from algorithms.spot.uniform_progress_track import UniformProgressTrack
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket
from tests.spot.strategies import jobs

POLICIES = (OnDemandOnly, MaximalSpotUtilization, UniformProgress, UniformProgressTrack)

# L = 10 in d = 4 slots, N in [1, 4], H(n) = n, mu1 = mu2 = 0.5, v = 20
SMALL = FineTuneJob(workload=10, deadline=4, n_min=1, n_max=4, mu1=0.5, mu2=0.5, value=20)
SMALL_MARKET = SpotMarket([0.2, 0.3, 0.4, 0.5], [2, 0, 3, 0])


def test_names():
    assert [p.name for p in POLICIES] == ["OD-Only", "MSU", "UP", "UP-track"]


def test_od_only_paper_defaults():
    job = FineTuneJob()
    out = simulate(job, SpotMarket(np.full(10, 0.3), np.full(10, 16)), OnDemandOnly())
    # n = 8: 0.9*8 + 9*8 = 79.2 < 80; n = 9: 0.9*9 + 9*9 = 89.1 >= 80 -> 9, kept every slot.
    # Z after slot 9 = 8.1 + 8*9 = 80.1 >= 80: T = 9, cost 9*9 = 81, utility 160 - 81 = 79.
    assert out.n_on_demand.tolist() == [9] * 9 + [0]
    assert out.n_spot.sum() == 0
    assert out.completion_time == 9
    assert out.cost == pytest.approx(81.0)
    assert out.utility == pytest.approx(79.0)
    assert out.reconfigurations == 1


def test_od_only_small_case():
    out = simulate(SMALL, SMALL_MARKET, OnDemandOnly())
    # n running 4 slots from 0: 0.5n + 3n = 3.5n >= 10 -> n = 3 (10.5).
    # Z: 1.5, 4.5, 7.5, 10.5 -> T = 4; cost 4*3 = 12; utility 20 - 12 = 8.
    assert out.n_on_demand.tolist() == [3, 3, 3, 3]
    assert out.completion_time == 4 and out.cost == pytest.approx(12.0)
    assert out.utility == pytest.approx(8.0)


def test_od_only_runs_n_max_when_nothing_suffices():
    job = FineTuneJob(workload=100, deadline=3, n_max=4, mu1=1.0, mu2=1.0, value=50, gamma=3)
    out = simulate(job, SpotMarket([0.1] * 3, [16] * 3), OnDemandOnly())
    # 3 slots of 4 = 12 < 100: N_max throughout; 88 left after d -> 22 slots, T = 25 >= 9: V = 0.
    assert out.n_on_demand.tolist() == [4, 4, 4]
    assert out.progress_at_deadline == 12.0
    assert out.completion_time == 25 and out.utility == pytest.approx(-100.0)


def test_msu_small_case():
    out = simulate(SMALL, SMALL_MARKET, MaximalSpotUtilization())
    # t1: spot 2 -> Z 0.5*2 = 1; 9 left in 3 slots from 2: 0.5*4 + 4 + 4 = 10 >= 9 -> spot only.
    # t2: no spot; idling leaves 9 for 2 slots from 0: 2 + 4 = 6 < 9 -> N_max = 4 on-demand,
    #     mu(4 > 2) = 0.5 -> Z = 3, cost 4.
    # t3: spot 3 -> Z 3 + 0.5*3 = 4.5, 5.5 left for 1 slot from 3: 0.5*4 = 2 < 5.5 -> N_max:
    #     3 spot + 1 on-demand, mu = 1 -> Z = 7, cost 1 + 3*0.4.
    # t4: no spot, last slot: N_max on-demand -> Z = 11 >= 10, T = 4, cost 4.
    assert out.n_spot.tolist() == [2, 0, 3, 0]
    assert out.n_on_demand.tolist() == [0, 4, 1, 4]
    assert out.spot_cost == pytest.approx(0.4 + 1.2)
    assert out.on_demand_cost == pytest.approx(9.0)
    assert out.completion_time == 4 and out.met_deadline
    assert out.utility == pytest.approx(20 - 10.6)
    assert out.reconfigurations == 2


def test_msu_idles_without_spot_until_the_deadline_requires_on_demand():
    job = FineTuneJob()
    out = simulate(job, SpotMarket(np.full(10, 0.3), np.zeros(10, dtype=int)), MaximalSpotUtilization())
    # Idle while 80 <= 0.9*12 + 12*(slots after - 1): slot 3 leaves 7 slots: 10.8 + 72 = 82.8.
    # Slot 4 would leave 6: 10.8 + 60 = 70.8 < 80 -> 12 on-demand from slot 4 to 10:
    # Z = 10.8 + 6*12 = 82.8, cost 7*12 = 84, utility 76.
    assert out.n_on_demand.tolist() == [0, 0, 0] + [12] * 7
    assert out.completion_time == 10 and out.utility == pytest.approx(76.0)


def test_msu_ignores_price_and_uses_all_spot():
    job = FineTuneJob()
    out = simulate(job, SpotMarket(np.full(10, 2.5), np.full(10, 16)), MaximalSpotUtilization())
    # 12 spot at 2.5 per slot: 10.8, 22.8, ... 7 slots reach 82.8: T = 7, cost 7*12*2.5 = 210.
    assert out.n_spot.tolist() == [12] * 7 + [0] * 3
    assert out.cost == pytest.approx(210.0) and out.utility == pytest.approx(-50.0)


def test_up_track_small_case():
    out = simulate(SMALL, SMALL_MARKET, UniformProgressTrack())
    # Line Z_t^exp = 10/4 t = 2.5 t.
    # t1: n = 1..4 from 0 give 0.5 n < 2.5 -> N_max: 2 spot + 2 on-demand, Z = 2; cost 0.4 + 2.
    # t2: no spot, Z = 2 < 5: n = 1, 2, 3 (mu 0.5) give 2.5, 3, 3.5; n = 4 (mu 1) gives 6 >= 5:
    #     4 on-demand, Z = 6, cost 4.
    # t3: n = 3 (mu 0.5) gives 7.5 >= 7.5, but 2.5 left for 1 slot from 3: 0.5*4 = 2 < 2.5 ->
    #     safety net: N_max = 3 spot + 1 on-demand, Z = 10, T = 3.
    assert out.n_spot.tolist() == [2, 0, 3, 0]
    assert out.n_on_demand.tolist() == [2, 4, 1, 0]
    assert out.completion_time == 3
    assert out.cost == pytest.approx(0.4 + 2 + 4 + 1 + 1.2)
    assert out.utility == pytest.approx(20 - 8.6)
    assert out.reconfigurations == 1


def test_up_track_buys_only_what_the_line_needs_spot_first():
    job = FineTuneJob(workload=8, deadline=4, n_min=1, n_max=4, mu1=1.0, mu2=1.0, value=20)
    out = simulate(job, SpotMarket([0.1, 0.1, 0.1, 0.1], [4, 0, 0, 3]), UniformProgressTrack())
    # Line 2t: two instances a slot reach it; spot where there is some (4 and 3 available).
    assert out.n_spot.tolist() == [2, 0, 0, 2]
    assert out.n_on_demand.tolist() == [0, 2, 2, 0]
    assert out.completion_time == 4 and out.cost == pytest.approx(0.2 + 2 + 2 + 0.2)


def test_up_track_idles_on_the_line():
    job = FineTuneJob(workload=8, deadline=4, n_min=3, n_max=4, mu1=1.0, mu2=1.0, value=20)
    out = simulate(job, SpotMarket([0.1] * 4, [4] * 4), UniformProgressTrack())
    # N_min = 3 overshoots the line 2t: Z = 3, 6; at t3 Z = 6 >= 6: idle; t4 3 more -> 9.
    assert out.n_spot.tolist() == [3, 3, 0, 3] and out.n_on_demand.sum() == 0
    assert out.completion_time == 4


def test_up_track_tops_up_with_spot_below_n_min():
    job = FineTuneJob(workload=12, deadline=2, n_min=4, n_max=8, mu1=1.0, mu2=1.0, value=20)
    out = simulate(job, SpotMarket([0.1, 0.1], [2, 2]), UniformProgressTrack())
    # Line 6: the smallest n >= 4 with n >= 6 is 6: 2 spot + 4 on-demand each slot.
    assert out.n_spot.tolist() == [2, 2]
    assert out.n_on_demand.tolist() == [4, 4]


def test_up_rules_spot_idle_on_demand_and_back():
    """Can't Be Late's rules with no changeover delay (mu = 1): L = 12, d = 6, line 2t at the
    start of slot t+1, N in [1, 4], C(t) = remaining / 4."""
    job = FineTuneJob(workload=12, deadline=6, n_min=1, n_max=4, mu1=1.0, mu2=1.0, value=20)
    market = SpotMarket([0.5, 0.5, 0.5, 0.5, 0.6, 0.7], [3, 0, 0, 0, 2, 4])
    out = simulate(job, market, UniformProgress())
    # t1: spot -> all 3 usable (Taking Risks); Z = 3.
    # t2: no spot, Z = 3 >= ep = 2: idle (R = 5 > C = 2.25).
    # t3: no spot, Z = 3 < ep = 4: on-demand, N_max = 4; Z = 7.
    # t4: no spot: stays on on-demand (Hysteresis); Z = 11.
    # t5: spot and Z = 11 >= ep(t + 2d) = 8: back to spot, all 2; Z = 13 >= 12, T = 5.
    assert out.n_spot.tolist() == [3, 0, 0, 0, 2, 0]
    assert out.n_on_demand.tolist() == [0, 0, 4, 4, 0, 0]
    assert out.completion_time == 5
    assert out.cost == pytest.approx(1.5 + 8 + 1.2)


def test_up_hysteresis_keeps_on_demand_until_two_changeovers_ahead():
    """mu = 0.5: a changeover loses half a slot, d = 0.5, so 2d = one slot of the line (1.5)."""
    job = FineTuneJob(workload=12, deadline=8, n_min=1, n_max=4, mu1=0.5, mu2=0.5, value=20)
    market = SpotMarket([0.2] * 8, [0, 0, 4, 4, 4, 4, 4, 4])
    out = simulate(job, market, UniformProgress())
    # t1: no spot, Z = 0 >= ep = 0: idle. t2: Z = 0 < 1.5: on-demand 4, mu1 -> Z = 2.
    # t3: spot, but Z = 2 < ep(t + 2d) = 1.5 * 3 = 4.5: stays on on-demand; Z = 6.
    # t4: Z = 6 >= ep(t + 2d) = 1.5 * 4 = 6 and spot: 4 spot (same count, no loss); Z = 10.
    # t5: 4 spot; Z = 14, T = 5.
    assert out.n_on_demand.tolist() == [0, 4, 4, 0, 0, 0, 0, 0]
    assert out.n_spot.tolist() == [0, 0, 0, 4, 4, 0, 0, 0]
    assert out.completion_time == 5


def test_up_safety_net_two_changeovers_from_idle():
    """mu1 = 0.75 (d = 0.25): on the line and idle, but R(t) <= C(t) + 2d: on-demand."""
    job = FineTuneJob(workload=6, deadline=4, n_min=1, n_max=4, mu1=0.75, mu2=0.75, value=20)
    out = simulate(job, SpotMarket([0.3] * 4, [4, 0, 0, 0]), UniformProgress())
    # t1: 4 spot, mu1 -> Z = 3. t2: no spot, Z = 3 >= 1.5: idle. t3: no spot, Z = 3 >= ep = 3,
    # but C = 3/4, ceil(C + 2d) = 2 >= R = 2: on-demand 4, Z = 3 + 3 = 6, T = 3.
    assert out.n_spot.tolist() == [4, 0, 0, 0]
    assert out.n_on_demand.tolist() == [0, 0, 4, 0]
    assert out.completion_time == 3


@pytest.mark.parametrize("last_spot, spot, on_demand", [(1, [4, 2, 0], [0, 0, 4]), (4, [4, 2, 4], [0, 0, 0])])
def test_up_rides_spot_at_the_last_changeover_only_on_a_full_cluster(last_spot, spot, on_demand):
    """mu = 1: at t3, R = 1 and C = 0.5: ceil(C + d) >= R. On spot, UP rides spot out when all
    N_max = 4 run on spot (as fast as on-demand); 1 spot instance would miss the deadline."""
    job = FineTuneJob(workload=8, deadline=3, n_min=1, n_max=4, mu1=1.0, mu2=1.0, value=20)
    out = simulate(job, SpotMarket([0.3] * 3, [4, 2, last_spot]), UniformProgress())
    assert out.n_spot.tolist() == spot and out.n_on_demand.tolist() == on_demand
    assert out.met_deadline


# --- properties over random jobs and markets -----------------------------------


@st.composite
def worlds(draw, zero_availability=False):
    job = draw(jobs())
    d = job.deadline
    price = draw(st.lists(st.floats(0.05, 3.0), min_size=d, max_size=d))
    if zero_availability:
        avail = [0] * d
    else:
        avail = draw(st.lists(st.integers(0, 16), min_size=d, max_size=d))
    p_o = draw(st.sampled_from([1.0, 0.5, 2.0]))
    return job, SpotMarket(np.array(price) * p_o, avail, on_demand_price=p_o)


PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(worlds())
def test_baselines_follow_the_rules_and_the_accounting(world):
    job, market = world
    outs = {}
    for policy in POLICIES:
        out = simulate(job, market, policy())  # PolicyError would fail the test
        outs[policy.name] = out
        assert out.cost >= 0 and out.spot_cost >= 0 and out.on_demand_cost >= 0
        assert out.utility <= job.value
        assert out.cost == pytest.approx(out.spot_cost + out.on_demand_cost)
        running = out.n_on_demand + out.n_spot
        assert np.all((running == 0) | ((running >= job.n_min) & (running <= job.n_max)))
        assert np.all(out.n_spot <= market.availability[: job.deadline])
        assert out.spot_cost == pytest.approx(float(np.dot(out.n_spot, market.price[: job.deadline])))
        assert out.met_deadline == (out.completion_time <= job.deadline)
        assert out.utility == pytest.approx(job.value_at(out.completion_time) - out.cost)
        if out.met_deadline:
            assert job.is_complete(out.progress_at_deadline)
    assert outs["OD-Only"].n_spot.sum() == 0 and outs["OD-Only"].spot_cost == 0.0


@PROPS
@given(worlds())
def test_every_baseline_meets_a_feasible_deadline(world):
    # Feasible from slot 1: L <= mu1 H(N_max) + (d - 1) H(N_max). OD-Only keeps a count that
    # finishes; MSU and UP keep "can finish with N_max afterwards" true in every slot.
    job, market = world
    if can_finish(job.workload, job.deadline, 0, job):
        for policy in POLICIES:
            assert simulate(job, market, policy()).met_deadline, policy.name


@PROPS
@given(worlds(zero_availability=True))
def test_zero_availability_all_meet_the_deadline(world):
    job, market = world
    if job.throughput(job.n_max) * job.deadline * job.mu1 >= job.workload:
        for policy in POLICIES:
            out = simulate(job, market, policy())
            assert out.met_deadline, policy.name
            assert out.n_spot.sum() == 0


@PROPS
@given(worlds())
def test_msu_uses_all_usable_spot_whenever_it_runs(world):
    job, market = world
    out = simulate(job, market, MaximalSpotUtilization())
    avail = market.availability[: job.deadline]
    running = (out.n_on_demand + out.n_spot) > 0
    full = np.minimum(avail, job.n_max)
    assert np.all(out.n_spot[running] == full[running])
    # It idles only when no spot is usable on its own (fewer than N_min available).
    ran = np.arange(job.deadline) < min(out.completion_time, job.deadline)
    assert np.all(full[ran & ~running] < job.n_min)


@PROPS
@given(worlds())
def test_up_runs_a_homogeneous_cluster(world):
    """CBL Sec. 5.5: N_max on-demand, or every usable spot instance, or nothing; never mixed."""
    job, market = world
    out = simulate(job, market, UniformProgress())
    usable = np.minimum(market.availability[: job.deadline], job.n_max)
    assert np.all((out.n_on_demand == 0) | (out.n_on_demand == job.n_max))
    assert np.all((out.n_spot == 0) | (out.n_on_demand == 0))
    assert np.all((out.n_spot == 0) | (out.n_spot == usable))


def test_up_track_can_use_more_spot_than_msu_when_msu_finishes_first():
    job = FineTuneJob(workload=3, deadline=3, n_min=1, n_max=2, mu1=0.5, mu2=1.0, value=10)
    market = SpotMarket([0.5, 0.5, 0.5], [2, 0, 1])
    msu = simulate(job, market, MaximalSpotUtilization())
    up = simulate(job, market, UniformProgressTrack())
    # MSU: t1 2 spot, Z = 0.5*2 = 1 (2 left fits 2 + 2); t2 no spot, idling leaves 2 for one
    #      slot from 0: 0.5*2 = 1 < 2 -> N_max = 2 on-demand, mu = 1: Z = 3, T = 2. Spot 2.
    # UP-track: line t. t1 as MSU, Z = 1 >= 1. t2 Z = 1 < 2: 1 on-demand (mu2 = 1) -> 2; t3 1 spot
    #      (unchanged count) -> 3, T = 3. Spot 3.
    assert msu.n_spot.tolist() == [2, 0, 0] and msu.n_on_demand.tolist() == [0, 2, 0]
    assert up.n_spot.tolist() == [2, 0, 1] and up.n_on_demand.tolist() == [0, 1, 0]


def test_up_track_top_up_can_use_spot_msu_cannot():
    job = FineTuneJob(workload=1, deadline=2, n_min=2, n_max=2, mu1=1.0, mu2=1.0, value=1)
    market = SpotMarket([1.0, 1.0], [1, 0])
    msu = simulate(job, market, MaximalSpotUtilization())
    up = simulate(job, market, UniformProgressTrack())
    # 1 spot < N_min: MSU idles in t1 (1 left fits one slot of 2), then 2 on-demand in t2.
    # UP-track is behind its line (0.5) in t1: 1 spot + 1 on-demand, done in t1.
    assert msu.n_spot.tolist() == [0, 0] and msu.n_on_demand.tolist() == [0, 2]
    assert up.n_spot.tolist() == [1, 0] and up.n_on_demand.tolist() == [1, 0]


def test_msu_with_a_fixed_switch_time_by_hand():
    """MSU(switch=time): all usable spot before d - T_min + 1, then N_max on-demand alone.
    L = 10, N_max = 4 (H(n) = n, no overhead): T_min = 3 slots, so the switch is at slot 6 of 8."""
    job = FineTuneJob(workload=10, deadline=8, n_min=1, n_max=4, alpha=1.0, beta=0.0, mu1=1.0, mu2=1.0, value=20)
    assert switch_slot(job) == 6
    market = SpotMarket([0.3] * 8, [1, 1, 0, 1, 1, 3, 3, 3])
    timed = simulate(job, market, MaximalSpotUtilization(switch="time"))
    # slots 1-5: 1, 1, idle, 1, 1 spot -> Z = 4; slot 6: 4 on-demand (spot ignored) -> 8; slot 7 -> 12, T = 7
    assert timed.n_spot.tolist() == [1, 1, 0, 1, 1, 0, 0, 0]
    assert timed.n_on_demand.tolist() == [0, 0, 0, 0, 0, 4, 4, 0]
    assert timed.met_deadline and timed.completion_time == 7
    assert timed.cost == pytest.approx(4 * 0.3 + 8 * 1.0)
    # The safety net waits as long as it can: after slot 5 (Z = 4), 6 left fits 3 slots of 4; slot 6
    # takes the 3 spot (Z = 7, 3 left fits 2 slots), slot 7 the 3 spot (Z = 10): done on spot alone.
    net = simulate(job, market, MaximalSpotUtilization())
    assert net.n_on_demand.sum() == 0 and net.met_deadline and net.completion_time == 7


def test_msu_switch_time_when_n_max_cannot_finish_is_the_first_slot():
    job = FineTuneJob(workload=100, deadline=4, n_min=1, n_max=4, alpha=1.0, beta=0.0, mu1=1.0, mu2=1.0, value=20)
    assert switch_slot(job) == 1
    with pytest.raises(ValueError, match="switch must be one of safety_net, time"):
        MaximalSpotUtilization(switch="soon")


@PROPS
@given(worlds())
def test_msu_with_a_fixed_switch_time_meets_every_feasible_deadline(world):
    job, market = world
    out = simulate(job, market, MaximalSpotUtilization(switch="time"))
    first = switch_slot(job)
    assert np.all(out.n_spot[first - 1 :] == 0) and np.all(out.n_on_demand[: first - 1] == 0)
    if can_finish(job.workload, job.deadline, 0, job):
        assert out.met_deadline
