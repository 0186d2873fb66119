"""Titan's objective as a setting: `welfare` (problem (4), plain `Titan`) against the
bid-blind `throughput` (the most admitted tasks, then the least cost): by hand and by brute
force on a small world where they choose differently, name parsing, and `Titan(objective=
welfare)` bit-identical to `Titan`."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from algorithms.auction import family
from algorithms.auction.config import parse
from algorithms.auction.ledger import EPS, Ledger, Schedule
from algorithms.auction.titan import Titan, greedy, throughput_instance
from tests.auction.test_offline_optimum import assert_feasible
from tests.auction.worlds import A100, make_instance


def _two_small_or_one_big():
    # One A100 (6 ksamples a slot per task, 79.5 GB for tasks, e = 6 cents per task-slot at
    # night), two slots, three tasks arriving in slot 0 with deadline 1, 45 GB each (no two
    # share the node): task 0 needs both slots (12 ksamples, bid 200), tasks 1 and 2 one slot
    # each (6 ksamples, bid 30). Plans: {0} (welfare 200 - 12 = 188) or {1, 2} (60 - 12 = 48).
    return make_instance(
        [A100], 2, [0, 0, 0], [1, 1, 1], [12.0, 6.0, 6.0], [45, 45, 45], [False] * 3, [200.0, 30.0, 30.0]
    )


def _every_plan(inst):
    """Brute force: every set of (task -> slots on node 0) that fits and finishes every
    admitted task, as {task: Schedule}."""
    n, horizon = len(inst.tasks), inst.horizon
    options = []
    for i in range(n):
        mine = [None]
        last = min(int(inst.tasks.deadline[i]), horizon - 1)
        window = range(int(inst.tasks.arrival[i]), last + 1)
        for size in range(1, len(window) + 1):
            for slots in itertools.combinations(window, size):
                if inst.cluster.task_rate[0] * size >= inst.tasks.work[i] - EPS:
                    mine.append(Schedule(i, -1, np.array(slots, dtype=np.int64), np.zeros(size, dtype=np.int64)))
        options.append(mine)
    for choice in itertools.product(*options):
        ledger, plan = Ledger(inst), {}
        for s in choice:
            if s is None:
                continue
            if not ledger.fits(s):
                break
            ledger.commit(s)
            plan[s.task] = s
        else:
            yield plan


def _welfare(inst, plan):
    return sum(inst.tasks.bid[i] - s.vendor_cost(inst) - s.operating_cost(inst) for i, s in plan.items())


def test_the_objectives_choose_differently_by_hand_and_by_brute_force():
    inst = _two_small_or_one_big()
    plans = list(_every_plan(inst))
    best_welfare = max(_welfare(inst, p) for p in plans)
    most_tasks = max(len(p) for p in plans)
    assert math.isclose(best_welfare, 188.0) and most_tasks == 2
    # The only plans of either optimum: {0} for welfare, {1, 2} for the count.
    assert {tuple(sorted(p)) for p in plans if math.isclose(_welfare(inst, p), best_welfare)} == {(0,)}
    assert {tuple(sorted(p)) for p in plans if len(p) == most_tasks} == {(1, 2)}

    welfare = Titan(objective="welfare").run(inst, np.random.default_rng(0))
    throughput = Titan(objective="throughput").run(inst, np.random.default_rng(0))
    assert list(welfare.admitted) == [True, False, False]
    assert list(throughput.admitted) == [False, True, True]
    assert math.isclose(welfare.metrics()["welfare"], 188.0)
    assert math.isclose(throughput.metrics()["welfare"], 48.0)  # reported with the true bids
    assert throughput.payment[1] == 30.0 and throughput.payment[2] == 30.0  # pay-as-bid
    assert_feasible(welfare)
    assert_feasible(throughput)
    # The greedy start alone (no CP-SAT) makes the same choices here.
    assert list(Titan(objective="throughput", solve=False).run(inst, np.random.default_rng(0)).admitted) == [
        False,
        True,
        True,
    ]


def test_throughput_is_bid_blind_and_breaks_ties_by_cost():
    # A task worth less than its cost: welfare rejects it, throughput runs it.
    inst = make_instance([A100], 2, [0], [1], [6.0], [10], [False], [1.0])
    assert not Titan().run(inst, np.random.default_rng(0)).admitted.any()
    out = Titan(objective="throughput").run(inst, np.random.default_rng(0))
    assert out.admitted.all() and math.isclose(out.metrics()["welfare"], 1.0 - 6.0)
    # Every bid scaled by 100 or by 0.01 changes nothing the bid-blind objective does.
    base = _two_small_or_one_big()
    for scale in (0.01, 100.0):
        other = make_instance(
            [A100],
            2,
            [0, 0, 0],
            [1, 1, 1],
            [12.0, 6.0, 6.0],
            [45, 45, 45],
            [False] * 3,
            list(np.array([200.0, 30.0, 30.0]) * scale),
        )
        a = Titan(objective="throughput").run(base, np.random.default_rng(0))
        b = Titan(objective="throughput").run(other, np.random.default_rng(0))
        assert np.array_equal(a.admitted, b.admitted)
    # As many tasks either way, then the least cost: one A100 from 22:00, slots 0-5 at the
    # shoulder tariff (1.0), 6-11 off-peak (0.6); 2 slots of work by slot 11: slots 0-1 cost
    # 20 cents, any two of slots 6-11 12 cents. The greedy start takes slots 0-1; the MILP moves
    # the task to the cheap slots.
    inst = make_instance([A100], 12, [0], [11], [12.0], [10], [False], [100.0], start_hour=22.0)
    assert Titan(objective="throughput", solve=False).run(inst, np.random.default_rng(0)).metrics()[
        "welfare"
    ] == pytest.approx(80.0)
    out = Titan(objective="throughput", time_limit=1.0).run(inst, np.random.default_rng(0))
    assert set(out.schedules[0].slots) <= set(range(6, 12))
    assert out.schedules[0].operating_cost(inst) == pytest.approx(12.0)


def test_throughput_instance_and_greedy_order():
    inst = make_instance(
        [A100],
        3,
        [0, 0, 1],
        [2, 2, 2],
        [12.0, 6.0, 6.0],
        [10, 10, 10],
        [True, False, False],
        [5.0, 7.0, 9.0],
        vendor_price=[[3.0], [0.0], [0.0]],
        vendor_delay=[[1], [1], [1]],
    )
    batch = np.array([0, 1])
    vendors = {0: [0], 1: [0]}
    model = throughput_instance(inst, batch, vendors)
    # e = 6 a slot. Task 0: vendor 3 + slots 1-2 (after its 1-slot delay); task 1: slots 0-2:
    # bound 3 + 12 + 18 = 33, B = 2 x 33 + 100 = 166; task 2 is not in the batch.
    assert list(model.tasks.bid) == [166.0, 166.0, 0.0]
    assert list(inst.tasks.bid) == [5.0, 7.0, 9.0]  # the world itself is untouched
    placed = greedy(model, Ledger(inst), batch, vendors, order="work")
    assert [s.task for s in placed] == [1, 0]  # smallest work first
    with pytest.raises(ValueError, match="order"):
        greedy(model, Ledger(inst), batch, vendors, order="bid")


def test_names():
    assert (
        parse("Titan") == parse("Titan(objective=welfare)") == parse("Titan(start=earliest,solve=on)") == ("Titan", {})
    )
    assert parse("Titan(objective=throughput)") == ("Titan", {"objective": "throughput"})
    assert parse("Titan(start=cheapest,objective=throughput,solve=off)") == (
        "Titan",
        {"start": "cheapest", "objective": "throughput", "solve": False},
    )
    assert parse("EFT")[0] == "EFT"
    with pytest.raises(ValueError, match="objective"):
        parse("Titan(objective=jct)")
    with pytest.raises(ValueError, match="Titan"):
        family.prepare({"mechanisms": ["Titan(objective=count)"]})
    with pytest.raises(ValueError, match="objective"):
        Titan(objective="count")
    prepared = family.prepare(
        {
            "cluster": {"nodes": 2},
            "tasks": {"load": 2, "slots": 4},
            "titan": {"time_limit": 0.25},
            "mechanisms": ["Titan", "Titan(objective=throughput)"],
        }
    )
    made = family.make_mechanism("Titan(objective=throughput)", prepared)
    assert isinstance(made, Titan) and made.objective == "throughput" and made.time_limit == 0.25
    assert family.make_mechanism("Titan", prepared).objective == "welfare"


def test_welfare_variant_is_bit_identical_to_titan():
    config = {
        "cluster": {"nodes": 3},
        "tasks": {"load": 3, "slots": 12},
        "mechanisms": ["Titan", "Titan(objective=welfare)", "Titan(objective=throughput)"],
    }
    prepared = family.prepare(config)
    rows = {r["mechanism"]: r for r in family.simulate_replicate(prepared, 0, np.random.default_rng(11))}
    plain, named = rows["Titan"], rows["Titan(objective=welfare)"]
    for key, value in plain.items():
        if key in ("mechanism", "tables") or key in family.TIMING_COLUMNS:
            continue
        assert named[key] == value or (isinstance(value, float) and math.isnan(value) and math.isnan(named[key])), key
    a, b = plain["tables"]["tasks"], named["tables"]["tasks"]
    for column in a:
        if column in family.TIMING_COLUMNS:
            continue
        assert np.array_equal(np.asarray(a[column]), np.asarray(b[column]), equal_nan=True), column
    # Titan's variants share Titan's vendor draws.
    c = rows["Titan(objective=throughput)"]["tables"]["tasks"]
    both = np.asarray(a["admitted"]) & np.asarray(c["admitted"])
    assert both.any() and np.array_equal(np.asarray(a["vendor"])[both], np.asarray(c["vendor"])[both])
    # The direct class too: the default objective is welfare.
    instance = family.draw_world(prepared, np.random.default_rng(5))
    first = Titan(time_limit=0.5).run(instance, np.random.default_rng(2))
    second = Titan(time_limit=0.5, objective="welfare").run(instance, np.random.default_rng(2))
    assert np.array_equal(first.admitted, second.admitted)
    assert first.metrics()["welfare"] == second.metrics()["welfare"]
    for i, s in first.schedules.items():
        t = second.schedules[i]
        assert np.array_equal(s.slots, t.slots) and np.array_equal(s.nodes, t.nodes) and s.vendor == t.vendor
