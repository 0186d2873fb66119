"""One job on spot and on-demand instances (algorithms/iaas/job_execution.py): billing cases
computed by hand, Alg. 1 and Proposition 4 on the paper's own examples, and the deadline met
under any price path (property test)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from algorithms.iaas.job_execution import (
    DYNALLOC,
    THETA,
    THETA_ONCE,
    fallback_plan,
    proportion_split,
    run_job,
    theta_split,
)


def test_on_demand_is_billed_by_started_hours():
    # theta = 0: 2 on-demand instances process 30 units in 15 slots: hours [1, 12] and [13, 24]
    result = run_job(1, 20, 30.0, 2, np.full(20, 0.1), THETA, bid=0.2, theta=0.0)
    assert result.finish == 15 and result.on_demand_cost == pytest.approx(4 * 0.25)
    assert result.spot_cost == 0.0 and result.on_demand_work == 30.0


def test_a_spot_hour_ended_by_the_cloud_is_free_and_one_ended_by_the_tenant_is_paid_in_full():
    prices = np.full(60, 0.1)
    prices[5] = 0.5  # slot 6 above the bid: hour 1's spot ends after 5 slots (10 units), free
    prices[24] = 0.12  # hour 3 starts at slot 25 at 0.12
    result = run_job(1, 60, 40.0, 2, prices, THETA, bid=0.2, theta=1.0)
    # hour 1: 10 units, free; hour 2 (slots 13-24): 24 units at 2 x 0.1; hour 3: 6 units in
    # slots 25-27, then the tenant stops them: the whole hour, 2 x 0.12
    assert result.finish == 27 and result.fell_back == 0
    assert result.spot_work == 40.0 and result.on_demand_cost == 0.0
    assert result.spot_cost == pytest.approx(2 * 0.1 + 2 * 0.12)


def test_a_price_equal_to_the_bid_keeps_the_spot_instances():
    result = run_job(1, 12, 24.0, 2, np.full(12, 0.2), THETA, bid=0.2, theta=1.0)
    assert result.finish == 12 and result.spot_cost == pytest.approx(2 * 0.2) and result.on_demand_cost == 0.0


def test_proportion_on_the_paper_fig3_example():
    # Sec. IV-B, Fig. 3: d = 42, z = 122, delta = 4, beta = 1/2, Len = 12: nu = 7, kappa2 = 1
    assert proportion_split(122.0, 42, 4, 0.5) == (4, 0)
    # after an hour with the expected beta Len = 6 slots of 4 spot instances: z' = 98, 30 slots
    # left, nu = floor((120 - 98) / 6) = 3, kappa2 = 0: 3 spot and 1 on-demand
    assert proportion_split(98.0, 30, 4, 0.5) == (3, 1)
    # nu = 0: the last update with flexibility bids for delta
    assert proportion_split(118.0, 30, 4, 0.5) == (4, 0)
    # beta 0.9999: the whole slack counts, all spot
    assert proportion_split(119.0, 30, 4, 0.9999) == (4, 0)


def test_theta_split_rounds_half_up():
    assert theta_split(20, 0.3) == (6, 14)
    assert theta_split(5, 0.5) == (3, 2)
    assert theta_split(20, 1.0) == (20, 0) and theta_split(20, 0.0) == (0, 20)


def test_proposition4_plan():
    # 31 slots left (10..40): kappa = 2 whole hours from t'' = 17, head 10..16 (7 slots)
    assert fallback_plan(120.0, 10, 40, 4) == (17, 4)  # (120 - 96) / 7 = 3.43 -> 4
    assert fallback_plan(110.0, 10, 40, 4) == (17, 2)  # 14 / 7 = 2
    assert fallback_plan(90.0, 10, 40, 4) == (17, 0)  # the two hours suffice
    assert fallback_plan(48.0, 13, 24, 4) == (13, 0)  # an exact hour: no head


def test_ours_falls_back_to_proposition4_when_the_spot_is_lost_without_flexibility():
    # delta 4, 36 slots, z = 130: nu = floor(14 / 6) = 2 -> 2 spot, 2 on-demand at slot 1
    prices = np.full(36, 0.1)
    prices[2] = 1.0  # lost at slot 3
    result = run_job(1, 36, 130.0, 4, prices, DYNALLOC, beta=0.5, bid=0.2)
    # slots 1-2: 2 spot + 2 on-demand units each (122 left); at slot 3 the next update would
    # have 122 - 2 x 10 = 102 > 4 x 24: no flexibility. Prop. 4 from slot 3: kappa = 2 hours
    # from t'' = 13, head 3..12 (10 slots) with ceil((122 - 96) / 10) = 3 instances (2 already
    # paid for hour 1): 30 + 96 = 126 >= 122, so the last 4 units are not needed: done at 35
    assert result.fell_back == 3 and result.finish == 35
    assert result.spot_work == 4.0 and result.spot_cost == 0.0
    assert result.on_demand_work == pytest.approx(126.0)
    # instance-hours: 2 at slot 1, 1 at 3 (paid to 14), 3 at 13 (to 24), the slot-3 one
    # renewed at 15, 3 renewed at 25, 1 at 27: 11 = delta kappa + o_bar = 4 x 2 + 3, Prop. 4's hours
    assert result.on_demand_cost == pytest.approx(0.25 * 11)


def test_theta_once_turns_to_on_demand_at_its_first_spot_loss():
    # the prices of the test above: hour 1's spot ends after 5 slots (10 units); with plenty of
    # flexibility `theta` waits and bids again, `theta_once` takes delta = 2 on-demand
    # instances from slot 6 to the end: 30 units in slots 6-20, two started hours each
    prices = np.full(60, 0.1)
    prices[5] = 0.5
    result = run_job(1, 60, 40.0, 2, prices, THETA_ONCE, bid=0.2, theta=1.0)
    assert result.fell_back == 6 and result.finish == 20
    assert result.spot_work == 10.0 and result.spot_cost == 0.0
    assert result.on_demand_work == 30.0 and result.on_demand_cost == pytest.approx(4 * 0.25)


@settings(max_examples=150, deadline=None)
@given(
    delta=st.integers(1, 8),
    hours=st.floats(0.2, 4.0),
    slack=st.floats(1.0, 4.0),
    kind=st.sampled_from([DYNALLOC, THETA, THETA_ONCE]),
    beta=st.sampled_from([0.0, 0.25, 0.5, 0.9999]),
    theta=st.sampled_from([0.0, 0.3, 1.0]),
    bid=st.sampled_from([0.1, 0.19, 0.28]),
    seed=st.integers(0, 2**16),
)
def test_every_policy_meets_the_deadline_and_accounts_for_the_work(delta, hours, slack, kind, beta, theta, bid, seed):
    size = 12 * delta * hours
    deadline = int(np.ceil(slack * size / delta))
    prices = np.random.default_rng(seed).exponential(0.11, deadline + 5)
    result = run_job(
        3, deadline, size, delta, np.concatenate([np.zeros(2), prices]), kind, beta=beta, bid=bid, theta=theta
    )
    assert result.done and 3 <= result.finish <= 3 + deadline - 1
    assert result.spot_work + result.on_demand_work == pytest.approx(size)
    assert result.on_demand_cost / 0.25 == pytest.approx(round(result.on_demand_cost / 0.25))
    # every unit of on-demand work was paid: at most 12 units per instance-hour
    assert result.on_demand_work <= 12 * result.on_demand_cost / 0.25 + 1e-9
