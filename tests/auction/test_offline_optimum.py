"""The offline optimum of problem (4) (paper 001, Sec. 2.2; OPT of Fig. 12): brute force
on tiny worlds, the exactness of the pooled-node reduction, OPT above every online
mechanism, feasibility of its schedules, determinism."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.auction.eft import EFT
from algorithms.auction.ledger import EPS, Schedule, check_schedule
from algorithms.auction.ntm import NTM
from algorithms.auction.offline_optimum import (
    OPT,
    NotProvenOptimal,
    competitive_ratio,
    memory_scale,
    offline_optimum,
    optimal_welfare,
    solve_offline,
)
from algorithms.auction.pdftsp import PdFTSP
from algorithms.auction.titan import Titan
from market.auction.gpu_cluster import NodeType
from tests.auction.worlds import A40, A100, make_instance, small_instances

# Holds two tasks (compute) and little memory: makes (4f) and (4g) bind on tiny worlds.
TINY = NodeType("tiny", compute=6.0, task_rate=3.0, memory=30.0, cost_per_slot=8.0)
TOL = 0.1  # cents: money is rounded to 1/100 cent per term in the model


def assert_feasible(out):
    inst = out.instance
    c = inst.cluster
    for i, s in out.schedules.items():
        assert s.task == i and out.admitted[i]
        check_schedule(inst, s)
    led = out.ledger
    assert np.all(led.compute_used <= c.compute[:, None] + EPS)
    assert np.all(led.memory_used + c.base_model_gb <= c.memory[:, None] + EPS)
    assert out.admitted.sum() == len(out.schedules)
    assert np.all(out.payment[out.admitted] <= inst.tasks.bid[out.admitted] + EPS)


def brute_force(inst) -> float:
    """Best welfare over all combinations of minimal schedules (e_ikt > 0, so a schedule
    that still finishes without one of its slots is never better)."""
    c, job = inst.cluster, inst.tasks
    options = []
    for i in range(len(job)):
        opts = []
        for n in range(inst.vendors) if job.preprocess[i] else [-1]:
            start = int(job.arrival[i]) + (int(inst.vendor_delay[i, n]) if n >= 0 else 0)
            slots = list(range(start, min(int(job.deadline[i]), c.horizon - 1) + 1))
            for assign in itertools.product([-1, *range(c.nodes)], repeat=len(slots)):
                used = [(t, k) for t, k in zip(slots, assign) if k >= 0]
                work = sum(c.task_rate[k] for _, k in used)
                if not used or work < job.work[i] - EPS:
                    continue
                if any(work - c.task_rate[k] >= job.work[i] - EPS for _, k in used):
                    continue
                s = Schedule(i, n, np.array([t for t, _ in used]), np.array([k for _, k in used]))
                value = job.bid[i] - s.vendor_cost(inst) - s.operating_cost(inst)
                if value > 0:
                    opts.append((value, s))
        options.append(opts)
    compute = np.zeros((c.nodes, c.horizon))
    memory = np.zeros((c.nodes, c.horizon))

    def best(i: int) -> float:
        if i == len(options):
            return 0.0
        result = best(i + 1)
        for value, s in options[i]:
            k, t = s.nodes, s.slots
            if np.all(compute[k, t] + c.task_rate[k] <= c.compute[k] + EPS) and np.all(
                memory[k, t] + job.memory[i] + c.base_model_gb <= c.memory[k] + EPS
            ):
                compute[k, t] += c.task_rate[k]
                memory[k, t] += job.memory[i]
                result = max(result, value + best(i + 1))
                compute[k, t] -= c.task_rate[k]
                memory[k, t] -= job.memory[i]
        return result

    return best(0)


@st.composite
def tiny_instances(draw, nodes=2, horizon=4, max_tasks=3, vendors=2):
    kinds = draw(st.lists(st.sampled_from([A100, A40, TINY]), min_size=nodes, max_size=nodes))
    n = draw(st.integers(2, max_tasks))
    arrival = sorted(draw(st.lists(st.integers(0, horizon - 2), min_size=n, max_size=n)))
    deadline = [draw(st.integers(a, horizon - 1)) for a in arrival]
    work = [draw(st.sampled_from([3.0, 6.0, 7.5, 9.0, 12.0])) for _ in range(n)]
    memory = [draw(st.integers(5, 45)) for _ in range(n)]
    preprocess = [draw(st.booleans()) for _ in range(n)]
    bid = [draw(st.floats(5.0, 150.0)) for _ in range(n)]
    q = [[draw(st.floats(0.0, 20.0)) for _ in range(vendors)] for _ in range(n)]
    h = [[draw(st.integers(1, 2)) for _ in range(vendors)] for _ in range(n)]
    return make_instance(
        kinds,
        horizon,
        arrival,
        deadline,
        work,
        memory,
        preprocess,
        bid,
        q,
        h,
        start_hour=draw(st.sampled_from([0.0, 16.5])),
    )


def online_mechanisms(inst):
    job = inst.tasks
    alpha = float(np.max(job.bid / job.work))
    beta = float(np.max(job.bid / job.memory))
    return [PdFTSP(alpha, beta), PdFTSP(alpha, beta, schedule_space="fitting"), EFT(), NTM(), Titan()]


def test_by_hand_offline_beats_myopic():
    # One A100, night tariff: e = 6 cents per slot. Task 0 (slot 0, 2 slots of work, bid 50)
    # and task 1 (slot 1, 2 slots, bid 200) cannot share the node (40 + 45 GB > 79.5) and
    # both must finish by slot 2: OPT runs task 1 only, in slots 1-2.
    inst = make_instance([A100], 3, [0, 1], [2, 2], [12.0, 12.0], [40, 45], [False, False], [50.0, 200.0])
    result = offline_optimum(inst)
    assert result.optimal and result.solution.status == "OPTIMAL"
    out = result.outcome
    assert list(out.admitted) == [False, True]
    assert list(out.schedules[1].slots) == [1, 2]
    assert math.isclose(out.metrics()["welfare"], 200.0 - 12.0)
    assert math.isclose(result.solution.objective, 188.0)
    assert out.payment[1] == 200.0
    assert math.isclose(optimal_welfare(inst), 188.0)
    assert OPT().name == "OPT" and OPT().run(inst).admitted[1]


def test_vendor_choice_couples_start_time():
    # (4c): the cheap vendor takes 2 slots, which leaves too little time; OPT pays the dear one.
    inst = make_instance(
        [A100], 4, [0], [2], [12.0], [10], [True], [100.0], vendor_price=[[1.0, 20.0]], vendor_delay=[[3, 1]]
    )
    out = solve_offline(inst)
    assert out.vendor[0] == 1
    assert list(out.schedules[0].slots) == [1, 2]
    assert math.isclose(out.metrics()["welfare"], 100.0 - 20.0 - 12.0)


def test_not_proven_optimal_raises():
    rng = np.random.default_rng(3)
    n = 30
    arrival = np.sort(rng.integers(0, 10, n))
    inst = make_instance(
        [A100, A40] * 3,
        20,
        arrival,
        arrival + rng.integers(2, 8, n),
        rng.choice([6.0, 9.0, 12.0, 18.0], n),
        rng.integers(10, 40, n),
        rng.random(n) < 0.5,
        rng.uniform(10, 100, n),
        rng.uniform(0, 20, (n, 3)),
        rng.integers(1, 3, (n, 3)),
    )
    with pytest.raises(NotProvenOptimal):
        solve_offline(inst, time_limit=1e-4)
    relaxed = offline_optimum(inst, time_limit=1e-4)
    assert not relaxed.optimal
    assert_feasible(relaxed.outcome)


def test_memory_scale():
    assert memory_scale(np.array([4.0, 24.0])) == 1
    assert memory_scale(np.array([4.5, 2.25])) == 100
    with pytest.raises(ValueError):
        memory_scale(np.array([1 / 3]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_opt_equals_brute_force(inst):
    out = solve_offline(inst)
    assert_feasible(out)
    assert out.metrics()["welfare"] == pytest.approx(brute_force(inst), abs=TOL)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(nodes=4, horizon=5, max_tasks=5))
def test_pooled_nodes_are_exact(inst):
    pooled = offline_optimum(inst, aggregate=True)
    literal = offline_optimum(inst, aggregate=False)
    assert pooled.optimal and literal.optimal
    assert pooled.solution.objective == pytest.approx(literal.solution.objective, abs=1e-9)
    assert_feasible(pooled.outcome)
    assert_feasible(literal.outcome)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(), st.integers(0, 2**32 - 1))
def test_opt_dominates_online_mechanisms(inst, seed):
    opt = solve_offline(inst)
    assert_feasible(opt)
    best = opt.metrics()["welfare"]
    assert best >= -EPS
    for mech in online_mechanisms(inst):
        out = mech.run(inst, np.random.default_rng(seed))
        assert_feasible(out)
        welfare = out.metrics()["welfare"]
        assert welfare <= best + TOL, mech.name
        if isinstance(mech, PdFTSP) and mech.schedule_space == "paper":
            ratio = competitive_ratio(inst, out)
            if welfare > 0:
                assert ratio == pytest.approx(best / welfare)
            else:
                assert ratio == (1.0 if best <= 1e-9 else math.inf)


def test_deterministic():
    rng = np.random.default_rng(11)
    n = 12
    arrival = np.sort(rng.integers(0, 6, n))
    inst = make_instance(
        [A100, A40, TINY, TINY],
        12,
        arrival,
        arrival + rng.integers(1, 5, n),
        rng.choice([3.0, 6.0, 9.0, 12.0], n),
        rng.integers(5, 40, n),
        rng.random(n) < 0.5,
        rng.uniform(10, 100, n),
        rng.uniform(0, 20, (n, 2)),
        rng.integers(1, 3, (n, 2)),
    )
    first, second = offline_optimum(inst), offline_optimum(inst)
    assert first.optimal
    assert first.solution.objective == second.solution.objective
    assert first.outcome.schedules.keys() == second.outcome.schedules.keys()
    for i, s in first.outcome.schedules.items():
        t = second.outcome.schedules[i]
        assert s.vendor == t.vendor and np.array_equal(s.slots, t.slots) and np.array_equal(s.nodes, t.nodes)
