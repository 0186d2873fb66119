"""Lemma 2 of paper 001 (capacity control): when every dual update has bbar >= 1 (eq. 7-8 in the
unit kappa), once the admitted tasks fill a (k, t), no later task is offered a schedule with
F > 0 through it; and lambda_kt + alpha >= alpha 2^(sum s / C_kp) (the proof's inequality).
The same check fails when bbar is far below 1 (the negative control)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings

from algorithms.auction.ledger import EPS
from algorithms.auction.pdftsp import PdFTSP
from tests.auction.worlds import A100, make_instance, small_instances


class _Recorded(PdFTSP):
    def run(self, instance, rng=None):
        self.proposals, self.updates = [], []
        return super().run(instance, rng)

    def select(self, instance, task, lam, phi, usable=None):
        f, schedule, terms = super().select(instance, task, lam, phi, usable)
        self.proposals.append((task, f, schedule))
        return f, schedule, terms

    def update_duals(self, instance, schedule, terms, lam, phi):
        self.updates.append((schedule, self.bbar(terms)))
        super().update_duals(instance, schedule, terms, lam, phi)


def _offers_through_full_slots(instance, mech, out) -> int:
    """Proposals with F > 0 that use a (k, t) the earlier admitted tasks have filled."""
    c = instance.cluster
    compute = np.zeros((c.nodes, c.horizon))
    memory = np.zeros((c.nodes, c.horizon))
    admitted = out.schedules  # task -> its admitted schedule
    bad = 0
    for task, f, schedule in mech.proposals:
        if schedule is not None and f > 0:
            k, t = schedule.nodes, schedule.slots
            full = (compute[k, t] >= c.compute[k] - EPS) | (memory[k, t] + c.base_model_gb >= c.memory[k] - EPS)
            bad += bool(full.any())
        if task in admitted:
            s = admitted[task]
            compute[s.nodes, s.slots] += c.task_rate[s.nodes]
            memory[s.nodes, s.slots] += instance.tasks.memory[task]
    return bad


@given(small_instances(max_tasks=8))
@settings(max_examples=150, deadline=None)
def test_with_bbar_at_least_one_no_task_is_offered_a_full_slot(inst):
    alpha = float((inst.tasks.bid / inst.tasks.work).max())
    beta = float((inst.tasks.bid / inst.tasks.memory).max())
    mech = _Recorded(alpha, beta, kappa=1e4)
    out = mech.run(inst)
    assume(all(bbar >= 1 for _, bbar in mech.updates))
    assert _offers_through_full_slots(inst, mech, out) == 0
    lam, _ = mech.final_duals
    c = inst.cluster
    used = np.zeros((c.nodes, c.horizon))
    for schedule, _ in mech.updates:
        used[schedule.nodes, schedule.slots] += (c.task_rate / c.compute)[schedule.nodes]
    assert np.all(lam + alpha >= alpha * 2.0**used - 1e-9)


def test_with_bbar_far_below_one_a_task_is_offered_a_full_slot():
    # Five 6-ksample tasks for one A100 slot (C_kp = 24): four fill it. With bbar = 1e-6 times
    # the cents value the prices stay near 0 and the fifth is offered the full slot (and then
    # rejected by Alg. 1's capacity check); with bbar >= 1 the second is already priced out.
    inst = make_instance([A100], 1, [0] * 5, [0] * 5, [6.0] * 5, [4] * 5, [False] * 5, [20.0] * 5)
    alpha, beta = 20.0 / 6.0, 20.0 / 4.0
    low = _Recorded(alpha, beta, kappa=1e-6)
    out = low.run(inst)
    assert out.admitted.sum() == 4 and _offers_through_full_slots(inst, low, out) == 1
    high = _Recorded(alpha, beta, kappa=1e4)
    out = high.run(inst)
    assert all(bbar >= 1 for _, bbar in high.updates)
    assert out.admitted.sum() == 1 and _offers_through_full_slots(inst, high, out) == 0


@pytest.mark.parametrize("kappa", [1e-6, 1.0])
def test_the_recorder_sees_every_decision(kappa):
    inst = make_instance([A100], 2, [0, 0], [1, 1], [12.0, 12.0], [10, 10], [False, False], [100.0, 100.0])
    mech = _Recorded(6.0, 150.0, kappa=kappa)
    mech.run(inst)
    assert [task for task, _, _ in mech.proposals] == [0, 1]
