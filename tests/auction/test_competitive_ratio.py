"""Theorem 5 on solved instances: pdFTSP's welfare >= OPT / gamma, gamma = rho (1 + max(alpha, beta)).

rho >= 1 (Lemma 3), so gamma >= 1 + max(alpha, beta); the test checks the stronger
welfare >= OPT / (1 + max(alpha, beta)), with alpha, beta of Lemma 2 from the workload's
bounds (here the random world's own maxima, which are its bounds), on random small worlds
that CP-SAT solves to optimality.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from algorithms.auction.offline_optimum import optimal_welfare
from algorithms.auction.pdftsp import PdFTSP
from tests.auction.worlds import small_instances


@settings(max_examples=30, deadline=None)
@given(inst=small_instances(max_tasks=5, max_nodes=2, max_horizon=6))
def test_pdftsp_within_theorem_5(inst):
    tasks = inst.tasks
    alpha, beta = float(np.max(tasks.bid / tasks.work)), float(np.max(tasks.bid / tasks.memory))
    gamma_lower = 1 + max(alpha, beta)
    opt = optimal_welfare(inst)
    for mechanism in (PdFTSP(alpha, beta), PdFTSP(alpha, beta / 10, schedule_space="fitting")):
        welfare = mechanism.run(inst).metrics()["welfare"]
        assert welfare <= opt + 1e-6
        assert welfare >= opt / gamma_lower - 1e-6
        if opt > 1e-9:
            assert welfare > 0  # the first task worth running is admitted at zero prices
    assert np.isfinite(opt)
