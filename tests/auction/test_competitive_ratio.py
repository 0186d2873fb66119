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

from algorithms.auction.offline_optimum import MONEY_SCALE, optimal_welfare
from algorithms.auction.pdftsp import PdFTSP
from tests.auction.worlds import small_instances


def rounding_bound(inst) -> float:
    """How far OPT's welfare may be from the exact optimum: the model rounds each b_i, q_in and
    e_ikt to the nearest 1/MONEY_SCALE cent (algorithms/auction/offline_optimum.py), half a unit
    each at most. A tie in the model can so admit a task worth -0.004 cents (found by hypothesis:
    one task whose vendor charges 0.0039 cents)."""
    tasks, cluster = len(inst.tasks), inst.cluster
    return 0.5 / MONEY_SCALE * tasks * (2 + len(cluster.compute) * cluster.horizon)


@settings(max_examples=30, deadline=None)
@given(inst=small_instances(max_tasks=5, max_nodes=2, max_horizon=6))
def test_pdftsp_within_theorem_5(inst):
    tasks = inst.tasks
    alpha, beta = float(np.max(tasks.bid / tasks.work)), float(np.max(tasks.bid / tasks.memory))
    gamma_lower = 1 + max(alpha, beta)
    opt = optimal_welfare(inst)
    for mechanism in (PdFTSP(alpha, beta), PdFTSP(alpha, beta / 10, schedule_space="fitting")):
        welfare = mechanism.run(inst).metrics()["welfare"]
        assert welfare <= opt + rounding_bound(inst)
        assert welfare >= opt / gamma_lower - rounding_bound(inst)
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


def test_the_rounding_tie_hypothesis_found_stays_within_the_bound():
    """One task whose vendor charges 0.0039 cents: the model sees the task worth 0 and admits it,
    so OPT's replayed welfare is -0.0039 cents, below pdFTSP's 0 by less than the rounding bound."""
    from market.auction.gpu_cluster import Cluster, NodeType
    from market.auction.lora_instance import LoraInstance, LoraTasks

    a100 = NodeType(name="A100-80GB", compute=24.0, task_rate=6.0, memory=80.0, cost_per_slot=40.0)
    one = np.array
    cluster = Cluster((a100,), one([0]), one([24.0]), one([80.0]), one([6.0]), 0.5, one([[24.0, 24.0]]))
    tasks = LoraTasks(one([0]), one([1]), one([3.0]), one([3.0]), one([4.0]), one([True]), one([6.0]))
    inst = LoraInstance(cluster, tasks, one([[0.0, 0.00390625]]), one([[1, 1]]))
    opt = optimal_welfare(inst)
    assert -rounding_bound(inst) <= opt <= 0.0  # -0.0039 today; 0 under rounding that never favours a task
    assert PdFTSP(2.0, 1.5).run(inst).metrics()["welfare"] - opt <= rounding_bound(inst)
