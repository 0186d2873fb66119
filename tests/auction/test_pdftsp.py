"""pdFTSP (Alg. 1-2, eq. 7-11, 14) by hand, and the properties of Sec. 4.3 on random worlds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from algorithms.auction.eft import EFT
from algorithms.auction.ledger import EPS, check_schedule
from algorithms.auction.ntm import NTM
from algorithms.auction.pdftsp import PdFTSP
from tests.auction.worlds import A100, make_instance, small_instances

ALPHA, BETA = 6.0, 150.0


def one_task_world(bid=100.0):
    # One A100, night tariff: e = 40 * 0.6 / 4 = 6 cents per slot; 12 ksamples = 2 slots.
    return make_instance([A100], 6, [0], [5], [12.0], [10], [False], [bid])


def test_single_task_by_hand():
    inst = one_task_world()
    mech = PdFTSP(ALPHA, BETA)
    out = mech.run(inst)
    assert out.admitted[0]
    assert list(out.schedules[0].slots) == [0, 1]
    # F = b - e (zero duals) = 100 - 12; critical payment = b - F = 12.
    assert math.isclose(out.payment[0], 12.0)
    lam, phi = mech.final_duals
    b_il = 100.0 - 12.0
    bbar = b_il / (12.0 + 2 * 10.0)
    assert math.isclose(lam[0, 0], ALPHA * bbar * 6 / 24)
    assert math.isclose(phi[0, 1], BETA * bbar * 10 / (80 - 0.5))
    assert lam[0, 2] == 0 and phi[0, 2] == 0
    metrics = out.metrics()
    assert math.isclose(metrics["welfare"], 88.0)
    assert math.isclose(metrics["users_utility"], 88.0)
    assert math.isclose(metrics["provider_utility"], 0.0, abs_tol=1e-12)


def test_second_task_pays_the_first_tasks_prices():
    inst = make_instance([A100], 2, [0, 0], [1, 1], [12.0, 12.0], [10, 10], [False, False], [100.0, 100.0])
    mech = PdFTSP(ALPHA, BETA, payment="eq14")
    out = mech.run(inst)
    bbar = 88.0 / 32.0
    lam1 = ALPHA * bbar * 0.25
    phi1 = BETA * bbar * 10 / 79.5
    f2 = 88.0 - lam1 * 12 - phi1 * 20
    assert f2 < 0 and not out.admitted[1]  # memory prices from Lemma 2's beta shut the node
    assert out.admitted[0] and out.payment[0] == 0.0  # eq. 14 without vendor, zero duals


def test_vendor_with_largest_f_wins():
    # Vendor 0 is cheap but slow: the task then misses its deadline; vendor 1 fits.
    inst = make_instance(
        [A100], 6, [0], [3], [12.0], [10], [True], [100.0], vendor_price=[[1.0, 20.0]], vendor_delay=[[3, 1]]
    )
    out = PdFTSP(ALPHA, BETA).run(inst)
    assert out.vendor[0] == 1
    assert list(out.schedules[0].slots) == [1, 2]
    assert math.isclose(out.payment[0], 20.0 + 12.0)


def test_duals_are_updated_before_the_capacity_check():
    # Tiny bids: prices stay low, so the third 24-ksample task is offered a full slot and
    # rejected by the capacity check (line 8) after its dual update (line 7).
    inst = make_instance([A100], 1, [0] * 5, [0] * 5, [6.0] * 5, [4] * 5, [False] * 5, [20.0] * 5)
    mech = PdFTSP(0.01, 0.01)
    out = mech.run(inst)
    assert out.admitted.sum() == 4  # compute: 4 x 6 = 24 = C_kp
    lam, _ = mech.final_duals
    n_updates = 5
    expected = 0.0
    for _ in range(n_updates):
        expected = expected * 1.25 + 0.01 * ((20.0 - 6.0) / (6.0 + 4.0)) * 0.25
    assert math.isclose(lam[0, 0], expected)


@pytest.mark.parametrize("payment", ["critical", "eq14"])
@settings(max_examples=40, deadline=None)
@given(inst=small_instances())
def test_feasible_and_individually_rational(inst, payment):
    for mech in (
        PdFTSP(ALPHA, BETA, payment=payment),
        PdFTSP(0.05, 0.05, payment=payment, schedule_space="fitting"),
        EFT(),
        NTM(),
    ):
        out = mech.run(inst, np.random.default_rng(0))
        c = inst.cluster
        for schedule in out.schedules.values():
            check_schedule(inst, schedule)
        assert np.all(out.ledger.compute_used <= c.compute[:, None] + EPS)
        assert np.all(out.ledger.memory_used + c.base_model_gb <= c.memory[:, None] + EPS)
        assert np.all(out.payment[out.admitted] <= inst.tasks.bid[out.admitted] + 1e-9)
        if isinstance(mech, NTM):
            assert out.ledger.tasks_on.max(initial=0) <= 1
        if isinstance(mech, PdFTSP):
            assert np.all(out.payment[out.admitted] >= -1e-9)


def utility_curve(inst, task, reports, mechanism):
    value = inst.tasks.bid[task]
    out = []
    for report in reports:
        result = mechanism.run(inst.with_bid(task, report))
        out.append(value - result.payment[task] if result.admitted[task] else 0.0)
    return np.array(out)


@settings(max_examples=25, deadline=None)
@given(inst=small_instances(max_tasks=5))
def test_truthful_with_critical_payment(inst):
    mech = PdFTSP(0.5, 0.5)
    for task in range(len(inst.tasks)):
        value = inst.tasks.bid[task]
        reports = np.concatenate([[value], value * np.array([0.0, 0.25, 0.5, 0.9, 0.99, 1.01, 1.1, 2.0, 5.0, 50.0])])
        utilities = utility_curve(inst, task, reports, mech)
        assert utilities[0] >= utilities.max() - 1e-9


def test_eq14_as_printed_rewards_overbidding():
    # Value 10 cents, operating cost 12: truthful -> rejected (utility 0); bid 100 -> admitted,
    # eq. 14 charges only the (zero) resource prices: utility 10 > 0.
    inst = one_task_world(bid=10.0)
    mech = PdFTSP(ALPHA, BETA, payment="eq14")
    assert utility_curve(inst, 0, [10.0, 100.0], mech).tolist() == [0.0, 10.0]
    # The critical payment charges the operating cost too: overbidding costs 12 - 10.
    assert utility_curve(inst, 0, [10.0, 100.0], PdFTSP(ALPHA, BETA)).tolist() == [0.0, -2.0]


def test_rejects_bad_parameters():
    with pytest.raises(ValueError, match="alpha"):
        PdFTSP(0.0, 1.0)
    with pytest.raises(ValueError, match="payment"):
        PdFTSP(1.0, 1.0, payment="vcg")
    with pytest.raises(ValueError, match="schedule_space"):
        PdFTSP(1.0, 1.0, schedule_space="any")
