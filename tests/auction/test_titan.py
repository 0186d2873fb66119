"""Titan, the per-slot MILP baseline (paper 001, Sec. 5.1): by hand, equal to OPT when
every task arrives in one slot, feasible schedules on random worlds, vendor draws,
decision times, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from ortools.sat.python import cp_model

from algorithms.auction.offline_optimum import Problem4, capacity_left, offline_optimum
from algorithms.auction.outcome import AuctionOutcome
from algorithms.auction.titan import Titan, greedy
from market.auction.gpu_cluster import ClusterParams
from market.auction.labor_vendors import VendorParams
from market.auction.lora_instance import draw_instance
from market.auction.lora_tasks import TaskParams
from tests.auction.test_offline_optimum import TINY, TOL, assert_feasible
from tests.auction.worlds import A40, A100, make_instance, small_instances


def test_by_hand_myopic():
    # One A100 (e = 6 cents per slot at night). Task 0 (slot 0, bid 50) and task 1
    # (slot 1, bid 200) both need 2 slots by slot 2 and cannot share the node (85 GB):
    # Titan admits task 0 in slot 0, which leaves task 1 no room; OPT keeps task 1.
    inst = make_instance([A100], 3, [0, 1], [2, 2], [12.0, 12.0], [40, 45], [False, False], [50.0, 200.0])
    titan = Titan()
    out = titan.run(inst, np.random.default_rng(0))
    assert list(out.admitted) == [True, False]
    assert out.payment[0] == 50.0
    assert math.isclose(out.metrics()["welfare"], 50.0 - 12.0)
    assert math.isclose(offline_optimum(inst).welfare, 200.0 - 12.0)
    stats = titan.last_stats
    assert stats.slots == 2 and stats.limited_slots == 0 and stats.no_solution_slots == 0


def test_by_hand_one_slot_picks_best_pair():
    # Two A40s (47.5 GB each for tasks, 4 tasks of compute), one slot, three tasks of one
    # slot's work (3 ksamples): 30 + 20 GB cannot share a node, 30 + 15 can. Welfare per
    # task = bid - 5 (e = 20 * 1.0 / 4 at 08:00). All three fit: {30}, {20, 15}.
    inst = make_instance(
        [A40, A40], 1, [0, 0, 0], [0, 0, 0], [3.0] * 3, [30, 20, 15], [False] * 3, [10.0, 10.0, 10.0], start_hour=8.0
    )
    out = Titan().run(inst, np.random.default_rng(0))
    assert out.admitted.all()
    assert math.isclose(out.metrics()["welfare"], 3 * (10.0 - 5.0))
    assert_feasible(out)
    # A third task of 40 GB cannot join: one of the four is left out.
    inst = make_instance(
        [A40, A40],
        1,
        [0] * 4,
        [0] * 4,
        [3.0] * 4,
        [30, 20, 15, 40],
        [False] * 4,
        [10.0, 10.0, 10.0, 12.0],
        start_hour=8.0,
    )
    out = Titan().run(inst, np.random.default_rng(0))
    assert out.admitted.sum() == 3 and out.admitted[3]
    assert math.isclose(out.metrics()["welfare"], 7.0 + 5.0 + 5.0)


@st.composite
def one_slot_instances(draw):
    """Every task arrives in slot 0 and there is one vendor: Titan's MILP is problem (4)."""
    kinds = draw(st.lists(st.sampled_from([A100, A40, TINY]), min_size=1, max_size=4))
    horizon = draw(st.integers(1, 6))
    n = draw(st.integers(1, 8))
    deadline = [draw(st.integers(0, horizon - 1)) for _ in range(n)]
    work = [draw(st.sampled_from([3.0, 6.0, 7.5, 9.0, 12.0, 18.0])) for _ in range(n)]
    memory = [draw(st.integers(4, 40)) for _ in range(n)]
    preprocess = [draw(st.booleans()) for _ in range(n)]
    bid = [draw(st.floats(1.0, 150.0)) for _ in range(n)]
    q = [[draw(st.floats(0.0, 20.0))] for _ in range(n)]
    h = [[draw(st.integers(1, 2))] for _ in range(n)]
    return make_instance(
        kinds,
        horizon,
        [0] * n,
        deadline,
        work,
        memory,
        preprocess,
        bid,
        q,
        h,
        start_hour=draw(st.sampled_from([0.0, 16.5])),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_slot_instances())
def test_equals_opt_when_all_arrive_in_one_slot(inst):
    titan = Titan()
    out = titan.run(inst, np.random.default_rng(0))
    assert titan.last_stats.limited_slots == 0
    assert_feasible(out)
    assert out.metrics()["welfare"] == pytest.approx(offline_optimum(inst).welfare, abs=TOL)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(), st.integers(0, 2**32 - 1))
def test_feasible_and_vendor_draws(inst, seed):
    titan = Titan()
    out = titan.run(inst, np.random.default_rng(seed))
    assert_feasible(out)
    assert titan.last_stats.limited_slots == 0
    tasks = inst.tasks
    rng = np.random.default_rng(seed)
    draws = rng.integers(inst.vendors, size=len(tasks))
    for i in np.flatnonzero(out.admitted):
        assert out.vendor[i] == (draws[i] if tasks.preprocess[i] else -1)
    # Exactly one draw per task, whatever the outcome.
    state = np.random.default_rng(seed)
    state.integers(inst.vendors, size=len(tasks))
    reused = np.random.default_rng(seed)
    titan.run(inst, reused)
    assert reused.random() == state.random()
    # Decision time: the slot's time shared equally by its tasks.
    assert np.all(out.decision_seconds > 0)
    for slot in np.unique(tasks.arrival):
        batch = out.decision_seconds[tasks.arrival == slot]
        assert np.all(batch == batch[0])
    assert titan.last_stats.slots == len(np.unique(tasks.arrival))


def test_deterministic_on_a_generated_day():
    params = TaskParams.from_dict({"load": 6, "slots": 6})
    inst = draw_instance(ClusterParams(nodes=8, node_type="mixed"), params, VendorParams(), np.random.default_rng(5))
    first = Titan(time_limit=0.5).run(inst, np.random.default_rng(9))
    second = Titan(time_limit=0.5).run(inst, np.random.default_rng(9))
    assert_feasible(first)
    assert np.array_equal(first.admitted, second.admitted)
    assert np.array_equal(first.vendor, second.vendor)
    for i, s in first.schedules.items():
        t = second.schedules[i]
        assert np.array_equal(s.slots, t.slots) and np.array_equal(s.nodes, t.nodes)
    assert first.metrics()["welfare"] == second.metrics()["welfare"]


def test_validation():
    with pytest.raises(ValueError):
        Titan(time_limit=0)
    assert Titan().name == "Titan"


@pytest.mark.parametrize("aggregate", [True, False])
def test_greedy_hint_is_a_solution(aggregate):
    # The hint is complete and, with every variable fixed to it, the model stays feasible.
    params = TaskParams.from_dict({"load": 8, "slots": 5})
    inst = draw_instance(ClusterParams(nodes=5, node_type="mixed"), params, VendorParams(), np.random.default_rng(4))
    draws = np.random.default_rng(0).integers(inst.vendors, size=len(inst.tasks))
    out = AuctionOutcome.empty(inst)
    hinted = 0
    for slot in np.unique(inst.tasks.arrival):
        batch = np.flatnonzero(inst.tasks.arrival == slot)
        vendors = {int(i): [int(draws[i])] for i in batch}
        problem = Problem4(inst, batch, *capacity_left(inst, out.ledger), vendors, aggregate)
        problem.hint(greedy(inst, out.ledger, batch, vendors))
        hint = problem.model.proto.solution_hint
        hinted += sum(hint.values)
        assert len(hint.vars) == len(problem.model.proto.variables)
        fixed = problem.model.clone()
        for var, value in zip(hint.vars, hint.values):
            fixed.add(fixed.get_bool_var_from_proto_index(var) == value)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        assert solver.solve(fixed) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        for s in problem.solve(5.0).schedules:
            out.admit(s, float(inst.tasks.bid[s.task]))
    assert hinted > 0 and out.admitted.any() and not out.admitted.all()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=small_instances(max_tasks=6))
def test_without_solver_time_titan_is_its_greedy_start(inst):
    """With almost no solver time CP-SAT finds nothing beyond its presolve: where it has no
    solution the slot keeps its greedy start, so if every slot ended that way Titan is
    exactly `greedy` applied slot after slot."""
    titan = Titan(time_limit=1e-9)
    out = titan.run(inst, np.random.default_rng(3))
    stats = titan.last_stats
    assert stats.greedy_slots <= stats.limited_slots <= stats.slots
    assert_feasible(out)
    if stats.no_solution_slots == stats.slots:
        draws = np.random.default_rng(3).integers(inst.vendors, size=len(inst.tasks))
        reference = AuctionOutcome.empty(inst)
        for slot in np.unique(inst.tasks.arrival):
            batch = np.flatnonzero(inst.tasks.arrival == slot)
            for s in greedy(inst, reference.ledger, batch, {int(i): [int(draws[i])] for i in batch}):
                reference.admit(s, float(inst.tasks.bid[s.task]))
        assert np.array_equal(out.admitted, reference.admitted)
        assert out.metrics()["welfare"] == pytest.approx(reference.metrics()["welfare"])


def test_cheapest_start_follows_the_tariff_and_solve_off_keeps_the_greedy():
    # One A100 from 22:00: slots 0-5 at the shoulder tariff (1.0), slots 6-11 off-peak (0.6).
    # 12 ksamples = 2 slots, deadline 11: earliest finish takes slots 0-1 (2 x 40 x 1.0 / 4 = 20
    # cents), the cheapest start slots 6-7 (2 x 40 x 0.6 / 4 = 12 cents).
    from algorithms.auction.ledger import Ledger
    from algorithms.auction.titan import Titan, greedy

    inst = make_instance([A100], 12, [0], [11], [12.0], [10], [False], [100.0], start_hour=22.0)
    earliest = greedy(inst, Ledger(inst), np.array([0]), {0: [0]})
    cheapest = greedy(inst, Ledger(inst), np.array([0]), {0: [0]}, start="cheapest")
    assert list(earliest[0].slots) == [0, 1] and earliest[0].operating_cost(inst) == pytest.approx(20.0)
    assert list(cheapest[0].slots) == [6, 7] and cheapest[0].operating_cost(inst) == pytest.approx(12.0)
    alone = Titan(solve=False, start="cheapest").run(inst, np.random.default_rng(0))
    assert list(alone.schedules[0].slots) == [6, 7] and alone.metrics()["welfare"] == pytest.approx(88.0)
    solved = Titan(time_limit=1.0).run(inst, np.random.default_rng(0))
    assert solved.metrics()["welfare"] == pytest.approx(88.0)  # the MILP prices the tariff
    with pytest.raises(ValueError, match="start"):
        Titan(start="latest")


def test_titan_variants_share_titans_vendor_draws():
    from algorithms.auction import family

    prepared = family.prepare(
        {
            "cluster": {"nodes": 2},
            "tasks": {"load": 2, "slots": 12},
            "mechanisms": ["Titan", "Titan(solve=off)", "Titan(start=cheapest)"],
        }
    )
    rows = {r["mechanism"]: r for r in family.simulate_replicate(prepared, 0, np.random.default_rng(3))}
    tables = {name: r["tables"]["tasks"] for name, r in rows.items()}
    both = np.asarray(tables["Titan"]["admitted"]) & np.asarray(tables["Titan(solve=off)"]["admitted"])
    vendor = {name: np.asarray(t["vendor"]) for name, t in tables.items()}
    assert both.any() and np.array_equal(vendor["Titan"][both], vendor["Titan(solve=off)"][both])
    assert rows["Titan(solve=off)"]["titan_limited_slots"] == 0
    with pytest.raises(ValueError, match="Titan"):
        family.prepare({"mechanisms": ["Titan(start=latest)"]})
