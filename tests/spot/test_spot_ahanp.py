"""AHANP (paper 000, Sec. IV-B, Appendix A-A, Alg. 3): the seven cases by hand,
the edge cases of the indicators, the readings of the start (literal, fresh, cold), and
properties on random worlds."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot.ahanp import AHANP, COLD_RISE
from algorithms.spot.offline_optimum import solve_offline
from algorithms.spot.registry import AHANP_STARTS
from algorithms.spot.simulation import MarketInfo, SlotState, simulate
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket, SyntheticMarketParams
from tests.spot.strategies import jobs

# L = 80, d = 10: Z^exp_{t-1} = 8 (t - 1); N in [1, 12]; sigma = 0.5, p_o = 1.
JOB = FineTuneJob()
SIGMA = 0.5


def decide(t, progress, n_prev, price, avail, prev_avail, job=JOB, sigma=SIGMA, start="literal"):
    """AHANP's decision in slot t after a slot t-1 that had `prev_avail` spot available
    (None: slot t is the first one). Returns (case, (n_on_demand, n_spot))."""
    policy = AHANP(sigma, start)
    policy.reset(job, MarketInfo(1.0, 16, job.deadline))
    if prev_avail is not None:
        # Slot t-1 only sets the previous availability; its decision does not matter.
        policy.decide(t - 1, state(t - 1, 0.0, 0, 0.5, prev_avail, job))
    decision = policy.decide(t, state(t, progress, n_prev, price, avail, job))
    return policy.last_case, decision


def state(t, progress, n_prev, price, avail, job=JOB):
    return SlotState(t, progress, n_prev, price, avail, job, 1.0, np.array([price]), np.array([avail]))


def test_name_and_validation():
    assert AHANP(0.7).name == "AHANP(sigma=0.7)"
    assert AHANP(0.3).name == "AHANP(sigma=0.3)"
    for bad in (0, -0.5, float("inf"), True, "0.5"):
        with pytest.raises(ValueError, match="threshold"):
            AHANP(bad)
    # the literal start keeps the plain name (results and hashes from before the readings)
    assert AHANP(0.7, "literal").name == "AHANP(sigma=0.7)" and AHANP(0.7).start == "literal"
    assert AHANP(0.7, "fresh").name == "AHANP(sigma=0.7,start=fresh)"
    assert AHANP(0.3, "cold").name == "AHANP(sigma=0.3,start=cold)"
    for bad in ("warm", "", None, 1):
        with pytest.raises(ValueError, match="start must be one of literal, fresh, cold"):
            AHANP(0.7, bad)


# --- the seven cases of Alg. 3 line 5 (t = 3: Z^exp_2 = 16) ------------------------


def test_case_1_on_schedule_and_no_spot_left_idles():
    # z_hat = 16/16 = 1, n_hat = 0/4 = 0 -> 0, and 0 stays 0 (idle is a decision).
    assert decide(3, 16.0, 5, 0.3, 0, 4) == (1, (0, 0))


def test_case_2_availability_halved_halves_the_count():
    # z_hat = 20/16 >= 1, n_hat = 5/10 = 0.5 -> max(ceil(0.5 * 7), 1) = 4; 4 spot.
    assert decide(3, 20.0, 7, 0.9, 5, 10) == (2, (0, 4))
    # N_min floor: N_min = 3, n_{t-1} = 4 -> max(2, 3) = 3; 1 spot + 2 on-demand.
    job = FineTuneJob(n_min=3)
    assert decide(3, 20.0, 4, 0.9, 1, 4, job=job) == (2, (2, 1))


def test_case_3_availability_stable_keeps_the_count():
    # n_hat = 6/8 = 0.75 -> n_{t-1} = 5 (price does not matter): 5 spot.
    assert decide(3, 16.0, 5, 2.0, 6, 8) == (3, (0, 5))
    # n_hat = 1 exactly is still case 3.
    assert decide(3, 16.0, 5, 0.1, 8, 8) == (3, (0, 5))


def test_case_4_more_spot_but_expensive_keeps_the_count():
    # n_hat = 8/4 = 2 > 1, p_hat = 0.6 / 0.5 = 1.2 > 1 -> n_{t-1} = 5.
    assert decide(3, 16.0, 5, 0.6, 8, 4) == (4, (0, 5))


def test_case_5_more_spot_and_cheap_takes_all_of_it():
    # n_hat = 2, p_hat = 0.5 / 0.5 = 1 <= 1 -> max(5, 8) = 8 spot.
    assert decide(3, 16.0, 5, 0.5, 8, 4) == (5, (0, 8))
    # More than N_max available: limited to 12.
    assert decide(3, 16.0, 5, 0.2, 16, 4) == (5, (0, 12))


def test_case_6_behind_after_no_spot_restarts_at_n_min():
    # z_hat = 10/16 < 1, n_{t-1}^avail = 0 -> n_hat = infinity -> N_min = 1: 1 spot.
    assert decide(3, 10.0, 0, 0.9, 3, 0) == (6, (0, 1))


def test_case_7_behind_doubles_the_count():
    # z_hat < 1, n_hat = 3/4 -> 2 * 5 = 10: 3 spot + 7 on-demand.
    assert decide(3, 10.0, 5, 0.9, 3, 4) == (7, (7, 3))
    # Doubling is limited to N_max: 2 * 7 = 14 -> 12.
    assert decide(3, 10.0, 7, 0.9, 3, 4) == (7, (9, 3))


# --- edge cases ------------------------------------------------------------------------


def test_infinite_n_hat_when_the_previous_availability_is_zero():
    policy = AHANP(SIGMA)
    policy.reset(JOB, MarketInfo(1.0, 16, 10))
    policy.decide(2, state(2, 0.0, 0, 0.5, 0))
    on_schedule, n_hat, p_hat = policy.indicators(3, state(3, 16.0, 0, 0.25, 5))
    assert on_schedule and n_hat == math.inf and p_hat == 0.5
    # 0 / 0 counts as infinite as well (the previous availability is 0).
    on_schedule, n_hat, _ = policy.indicators(3, state(3, 16.0, 0, 0.25, 0))
    assert n_hat == math.inf
    # Ahead with n_hat = infinity: case 5 (cheap) takes all spot, case 4 keeps n_{t-1}.
    assert decide(3, 16.0, 0, 0.25, 5, 0) == (5, (0, 5))
    assert decide(3, 16.0, 2, 0.75, 5, 0) == (4, (0, 2))
    # Ahead, nothing available before or now: case 5 gives max(0, 0) = 0, the job waits.
    assert decide(3, 16.0, 0, 0.25, 0, 0) == (5, (0, 0))
    # Behind, nothing available before or now: case 6 restarts on-demand at N_min.
    assert decide(3, 10.0, 0, 0.25, 0, 0) == (6, (1, 0))


def test_first_slot_is_on_schedule_with_infinite_n_hat():
    # t = 1: Z^exp_0 = 0, z_hat taken as 1; no previous availability -> n_hat = infinity.
    assert decide(1, 0.0, 0, 0.4, 6, None) == (5, (0, 6))  # cheap: all spot
    assert decide(1, 0.0, 0, 0.6, 6, None) == (4, (0, 0))  # expensive: keep n_0 = 0
    # t = 2 after an idle first slot: behind (0 < 8), n_hat = 6/6 finite: case 7 doubles
    # n_1 = 0, which restarts at N_min instead of leaving a late job idle.
    assert decide(2, 0.0, 0, 0.6, 6, 6) == (7, (0, 1))


def test_case_2_rounds_half_up():
    # n_{t-1} = 9, n_hat = 4/8 = 0.5 -> ceil(4.5) = 5: 4 spot + 1 on-demand.
    assert decide(3, 16.0, 9, 0.9, 4, 8) == (2, (1, 4))


def test_run_on_the_paper_defaults():
    # Constant market: spot 0.4 (p_hat = 0.8 at sigma = 0.5), 6 available every slot.
    # t1: on schedule, n_hat = inf, p_hat <= 1: case 5 -> 6 spot, Z = 5.4.
    # t2: Z^exp_1 = 8 > 5.4: behind, n_hat = 1: case 7 -> 12: 6 spot + 6 od,
    #     mu1 = 0.9: Z = 5.4 + 10.8 = 16.2.
    # t3: 16.2 >= 16, n_hat = 1: case 3 keeps 12, Z = 28.2; likewise later (28.2 >= 24, ...).
    # Z = 16.2 + 12 (t - 2) reaches 80 in slot 8 (88.2).
    out = simulate(JOB, SpotMarket(np.full(10, 0.4), np.full(10, 6)), AHANP(SIGMA))
    assert out.n_spot.tolist() == [6] * 8 + [0, 0]
    assert out.n_on_demand.tolist() == [0] + [6] * 7 + [0, 0]
    assert out.completion_time == 8
    assert out.cost == pytest.approx(8 * 6 * 0.4 + 7 * 6)


# --- readings of the start (module docstring of algorithms/spot/ahanp.py) -----------------


def test_fresh_runs_n_min_in_a_dear_first_slot():
    # t = 1, p_hat = 0.6 / 0.5 = 1.2 > 1, n_hat = infinity: case 4 keeps n_0 = 0. Literal: 0 is
    # idle. Fresh: no n_0 to keep, line 6 lifts it to N_min = 1 (spot first).
    assert decide(1, 0.0, 0, 0.6, 6, None) == (4, (0, 0))
    assert decide(1, 0.0, 0, 0.6, 6, None, start="fresh") == (4, (0, 1))
    # N_min = 3 with 2 spot available: 2 spot + 1 on-demand.
    assert decide(1, 0.0, 0, 0.6, 2, None, job=FineTuneJob(n_min=3), start="fresh") == (4, (1, 2))
    # Cheap slot 1 without spot: case 5 gives max(n_0, 0) = 0, n_0's 0 again -> N_min on-demand.
    assert decide(1, 0.0, 0, 0.4, 0, None) == (5, (0, 0))
    assert decide(1, 0.0, 0, 0.4, 0, None, start="fresh") == (5, (1, 0))
    # Cheap slot 1 with spot: case 5 as literal (all of it).
    assert decide(1, 0.0, 0, 0.4, 6, None, start="fresh") == (5, (0, 6))
    # Cold reads t = 1 as literal does.
    assert decide(1, 0.0, 0, 0.6, 6, None, start="cold") == (4, (0, 0))


def test_fresh_is_literal_from_t_2_on():
    # A 0 of case 3 (n_{t-1} = 0 kept) and case 1 stays idle at t >= 2 under fresh too.
    for start in AHANP_STARTS:
        assert decide(3, 16.0, 0, 0.6, 6, 6, start=start) == (3, (0, 0))
        assert decide(3, 16.0, 5, 0.3, 0, 4, start=start) == (1, (0, 0))
    # and a 0 of case 4 at t = 2 (on schedule, n_1^avail = 0, dear) stays idle
    assert decide(2, 8.0, 0, 0.6, 6, 0, start="fresh") == (4, (0, 0))


def test_dear_first_slot_world_literal_misses_fresh_meets_d():
    # Paper defaults (L = 80, d = 10, N in [1, 12], mu = 0.9), sigma = 0.5, spot 0.6 (dear:
    # p_hat = 1.2) and 6 available in every slot.
    # Literal: t1 case 4 keeps n_0 = 0 (idle); behind from t2 on, n_hat = 1: case 7 doubles
    #   from N_min: 1, 2, 4, 8, 12, 12, 12, 12, 12. Z = 0.9 (1 + 2 + 4 + 8 + 12) + 4 * 12 = 72.3
    #   < 80 by d = 10: deadline missed.
    # Fresh: t1 runs N_min = 1, then 2, 4, 8, 12 (Z_5 = 24.3), 12 x 5 more: Z_9 = 72.3,
    #   Z_10 = 84.3 >= 80: done in slot 10.
    market = SpotMarket(np.full(10, 0.6), np.full(10, 6))
    literal = simulate(JOB, market, AHANP(SIGMA))
    fresh = simulate(JOB, market, AHANP(SIGMA, "fresh"))
    assert (literal.n_on_demand + literal.n_spot).tolist() == [0, 1, 2, 4, 8, 12, 12, 12, 12, 12]
    assert literal.progress_at_deadline == pytest.approx(72.3) and not literal.met_deadline
    assert (fresh.n_on_demand + fresh.n_spot).tolist() == [1, 2, 4, 8, 12, 12, 12, 12, 12, 12]
    assert fresh.n_spot.tolist() == [1, 2, 4, 6, 6, 6, 6, 6, 6, 6]
    assert fresh.progress_at_deadline == pytest.approx(84.3)
    assert fresh.met_deadline and fresh.completion_time == 10
    assert fresh.cost == pytest.approx(0.6 * (1 + 2 + 4 + 6 * 7) + (2 + 6 * 6))


def test_cold_doubles_after_an_outage_where_literal_restarts():
    # z_hat = 10/16 < 1, n_{t-1}^avail = 0, 3 available now. Literal: n_hat = infinity, case 6
    # restarts at N_min = 1. Cold: availability rose (n_hat finite > 1), case 7 doubles
    # n_{t-1} = 5: 10 = 3 spot + 7 on-demand.
    assert decide(3, 10.0, 5, 0.9, 3, 0) == (6, (0, 1))
    assert decide(3, 10.0, 5, 0.9, 3, 0, start="cold") == (7, (7, 3))
    # None now either: cold's n_hat = 0, behind: case 7 doubles too (literal: case 6).
    assert decide(3, 10.0, 5, 0.9, 0, 0) == (6, (1, 0))
    assert decide(3, 10.0, 5, 0.9, 0, 0, start="cold") == (7, (10, 0))
    # Doubling an idle count restarts at N_min, as literal's case 7 does.
    assert decide(3, 10.0, 0, 0.9, 3, 0, start="cold") == (7, (0, 1))
    # Fresh reads an outage as literal does.
    assert decide(3, 10.0, 5, 0.9, 3, 0, start="fresh") == (6, (0, 1))


def test_cold_idles_on_schedule_when_spot_stays_out():
    # z_hat = 1, n_{t-1}^avail = n_t^avail = 0. Literal: 0/0 = infinity, case 4 (p_hat = 1.2)
    # keeps n_{t-1} = 5 on-demand. Cold: n_hat = 0, case 1: "the job remains idle".
    assert decide(3, 16.0, 5, 0.6, 0, 0) == (4, (5, 0))
    assert decide(3, 16.0, 5, 0.6, 0, 0, start="cold") == (1, (0, 0))
    # Spot back and cheap: n_hat finite > 1, case 5 takes all of it, as literal.
    assert decide(3, 16.0, 5, 0.25, 8, 0, start="cold") == (5, (0, 8))
    # The indicator itself: infinity only at t = 1.
    policy = AHANP(SIGMA, "cold")
    policy.reset(JOB, MarketInfo(1.0, 16, 10))
    assert policy.indicators(1, state(1, 0.0, 0, 0.5, 5))[1] == math.inf
    policy.decide(1, state(1, 0.0, 0, 0.5, 0))
    assert policy.indicators(2, state(2, 8.0, 0, 0.5, 5))[1] == COLD_RISE
    assert policy.indicators(2, state(2, 8.0, 0, 0.5, 0))[1] == 0
    assert 1 < COLD_RISE < math.inf


def test_outage_world_literal_restarts_cold_doubles():
    # Paper defaults, sigma = 0.5, spot 0.6 (dear), 6 available but none in slot 4.
    # Both: t1 idle (case 4), t2-t3 case 7: 1, 2; t4 (n_hat = 0/6 = 0, behind) case 7: 4
    # on-demand; Z_4 = 0.9 (1 + 2 + 4) = 6.3.
    # t5, after the outage (n_4^avail = 0), behind (6.3 < 32):
    #   literal: n_hat = infinity, case 6: N_min = 1 (mu2: Z = 7.2), then doubles again
    #     2, 4, 8, 12: Z_10 = 7.2 + 0.9 (2 + 4 + 8 + 12) + 12 = 42.6;
    #   cold: n_hat finite, case 7: 8 = 6 spot + 2 on-demand (Z = 13.5), then 12 x 5:
    #     Z_10 = 13.5 + 10.8 + 48 = 72.3.
    avail = np.full(10, 6)
    avail[3] = 0
    market = SpotMarket(np.full(10, 0.6), avail)
    literal = simulate(JOB, market, AHANP(SIGMA))
    cold = simulate(JOB, market, AHANP(SIGMA, "cold"))
    assert (literal.n_on_demand + literal.n_spot).tolist() == [0, 1, 2, 4, 1, 2, 4, 8, 12, 12]
    assert literal.progress_at_deadline == pytest.approx(42.6)
    assert (cold.n_on_demand + cold.n_spot).tolist() == [0, 1, 2, 4, 8, 12, 12, 12, 12, 12]
    assert cold.n_on_demand.tolist() == [0, 0, 0, 4, 2, 6, 6, 6, 6, 6]
    assert cold.progress_at_deadline == pytest.approx(72.3)
    # Without an outage the cold reading is the literal one.
    steady = SpotMarket(np.full(10, 0.6), np.full(10, 6))
    assert repr(simulate(JOB, steady, AHANP(SIGMA, "cold")).record("x")) == repr(
        simulate(JOB, steady, AHANP(SIGMA)).record("x")
    )


@pytest.mark.parametrize("outages", [0.0, 0.2])
def test_opt_is_never_beaten_by_any_start(outages):
    """The offline optimum (Sec. III-D) is at least every AHANP of the paper's pool, every start."""
    job = FineTuneJob()
    params = SyntheticMarketParams(mean_price=1.0, outage_fraction=outages)
    for seed in range(8):
        market = params.sample(np.random.default_rng(seed), job.deadline)
        plan = solve_offline(job, market)
        assert plan.status == "OPTIMAL"
        for start in AHANP_STARTS:
            for sigma in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
                assert plan.utility >= simulate(job, market, AHANP(sigma, start)).utility - 1e-9, (seed, start)


# --- properties ----------------------------------------------------------------------


@st.composite
def worlds(draw):
    job = draw(jobs())
    d = job.deadline
    p_o = draw(st.sampled_from([1.0, 0.5, 2.0]))
    price = np.array(draw(st.lists(st.floats(0.05, 3.0), min_size=d, max_size=d))) * p_o
    avail = draw(st.lists(st.integers(0, 16), min_size=d, max_size=d))
    return job, SpotMarket(price, avail, on_demand_price=p_o), draw(st.floats(0.1, 1.5))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.sampled_from(AHANP_STARTS))
def test_ahanp_follows_the_rules(world, start):
    job, market, sigma = world
    out = simulate(job, market, AHANP(sigma, start))  # PolicyError would fail the test
    if start == "fresh":  # slot 1 always runs
        assert out.n_on_demand[0] + out.n_spot[0] >= job.n_min
    assert out.utility <= job.value
    assert out.utility == pytest.approx(job.value_at(out.completion_time) - out.cost)
    running = out.n_on_demand + out.n_spot
    assert np.all((running == 0) | ((running >= job.n_min) & (running <= job.n_max)))
    # Spot first (line 7): on-demand only when all available spot is used.
    avail = market.availability[: job.deadline]
    assert np.all((out.n_on_demand == 0) | (out.n_spot == avail))
