"""Theorem 5 on solved instances: pdFTSP's welfare >= OPT / gamma, gamma = rho (1 + max(alpha, beta)).

rho >= 1 (Lemma 3), so gamma >= 1 + max(alpha, beta); the test checks the stronger
welfare >= OPT / (1 + max(alpha, beta)), with alpha, beta of Lemma 2 from the workload's
bounds (here the random world's own maxima, which are its bounds), on random small worlds
that CP-SAT solves to optimality. That bound is weak (1 + max(alpha, beta) is far above the observed ratios on these
worlds, and Theorem 5's premises hold for no measured variant exactly: docs/auction/model.md,
reading 6), so it only catches gross errors; the congested test below judges the paper's
empirical "at most 3" where prices matter.
"""

from __future__ import annotations

import numpy as np
import pytest
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


CONGESTED = {"cluster": {"nodes": 2}, "tasks": {"load": 4.0, "slots": 24}}


@pytest.mark.slow
def test_paper_unit_pdftsp_stays_within_the_papers_ratio_on_congested_worlds():
    """Fig. 12's claim (OPT / pdFTSP at most 3) judged where prices matter: 2 A100s, 4 tasks a
    slot (about 3x the compute), OPT proven by CP-SAT. pdFTSP counting computation in samples
    (the paper's unit) with fitting schedules must stay within 3 on every world; the ksamples
    reading is measured beside it (docs/auction/reproduction.md: it exceeds 3 on such worlds),
    which shows that the bound can be missed."""
    from algorithms.auction import family

    samples = "pdFTSP(work_unit=samples,schedule_space=fitting)"
    prepared = family.prepare({**CONGESTED, "mechanisms": ["pdFTSP", samples, "OPT"]})
    worst = {"pdFTSP": 0.0, samples: 0.0}
    for day in range(4):
        rows = {r["mechanism"]: r for r in family.simulate_replicate(prepared, day, np.random.default_rng([day, 12]))}
        assert rows["OPT"]["opt_proven"]
        assert rows["OPT"]["admission_rate"] < 0.8  # congested: OPT turns tasks away
        for name in worst:
            worst[name] = max(worst[name], rows[name]["opt_ratio"])
    assert worst[samples] <= 3.0
    assert worst["pdFTSP"] > worst[samples]
