"""AHANP (paper 000, Sec. IV-B, Appendix A-A, Alg. 3): the seven cases by hand,
the edge cases of the indicators, and properties on random worlds."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from algorithms.spot.ahanp import AHANP
from algorithms.spot.simulation import MarketInfo, SlotState, simulate
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket

# L = 80, d = 10: Z^exp_{t-1} = 8 (t - 1); N in [1, 12]; sigma = 0.5, p_o = 1.
JOB = FineTuneJob()
SIGMA = 0.5


def decide(t, progress, n_prev, price, avail, prev_avail, job=JOB, sigma=SIGMA):
    """AHANP's decision in slot t after a slot t-1 that had `prev_avail` spot available
    (None: slot t is the first one). Returns (case, (n_on_demand, n_spot))."""
    policy = AHANP(sigma)
    policy.reset(job, MarketInfo(1.0, 16, job.deadline))
    if prev_avail is not None:
        # Slot t-1 only sets the previous availability; its decision does not matter.
        policy.decide(t - 1, state(t - 1, 0.0, 0, 0.5, prev_avail, job))
    decision = policy.decide(t, state(t, progress, n_prev, price, avail, job))
    return policy.last_case, decision


def state(t, progress, n_prev, price, avail, job=JOB):
    return SlotState(t, progress, n_prev, price, avail, job, 1.0,
                     np.array([price]), np.array([avail]))


def test_name_and_validation():
    assert AHANP(0.7).name == "AHANP(sigma=0.7)"
    assert AHANP(0.3).name == "AHANP(sigma=0.3)"
    for bad in (0, -0.5, float("inf"), True, "0.5"):
        with pytest.raises(ValueError, match="threshold"):
            AHANP(bad)


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
    assert decide(1, 0.0, 0, 0.4, 6, None) == (5, (0, 6))   # cheap: all spot
    assert decide(1, 0.0, 0, 0.6, 6, None) == (4, (0, 0))   # expensive: keep n_0 = 0
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


# --- properties ----------------------------------------------------------------------


@st.composite
def worlds(draw):
    n_min = draw(st.integers(1, 4))
    n_max = draw(st.integers(n_min, 16))
    alpha = draw(st.floats(0.25, 2.0))
    beta = draw(st.floats(-0.2, 1.0))
    if alpha * n_min + beta <= 0:
        beta = 0.0
    job = FineTuneJob(
        workload=draw(st.floats(1.0, 200.0)), deadline=draw(st.integers(1, 12)),
        n_min=n_min, n_max=n_max, alpha=alpha, beta=beta,
        mu1=draw(st.floats(0.3, 1.0)), mu2=draw(st.floats(0.3, 1.0)),
        value=draw(st.floats(1.0, 500.0)), gamma=draw(st.floats(1.1, 4.0)))
    d = job.deadline
    p_o = draw(st.sampled_from([1.0, 0.5, 2.0]))
    price = np.array(draw(st.lists(st.floats(0.05, 3.0), min_size=d, max_size=d))) * p_o
    avail = draw(st.lists(st.integers(0, 16), min_size=d, max_size=d))
    return job, SpotMarket(price, avail, on_demand_price=p_o), draw(st.floats(0.1, 1.5))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_ahanp_follows_the_rules(world):
    job, market, sigma = world
    out = simulate(job, market, AHANP(sigma))  # PolicyError would fail the test
    assert out.utility <= job.value
    assert out.utility == pytest.approx(job.value_at(out.completion_time) - out.cost)
    running = out.n_on_demand + out.n_spot
    assert np.all((running == 0) | ((running >= job.n_min) & (running <= job.n_max)))
    # Spot first (line 7): on-demand only when all available spot is used.
    avail = market.availability[: job.deadline]
    assert np.all((out.n_on_demand == 0) | (out.n_spot == avail))
