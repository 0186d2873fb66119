"""Alg. 2's DP (eq. 13) against brute-force enumeration of every schedule."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from algorithms.auction.ledger import Schedule, check_schedule
from algorithms.auction.schedule_dp import chunk_size, find_schedule
from tests.auction.worlds import A40, A100, make_instance


def brute_force(instance, task, start, lam, phi, usable):
    c = instance.cluster
    tasks = instance.tasks
    delta = c.task_rate[:, None] * lam + tasks.memory[task] * phi + c.node_cost * (c.task_rate / c.compute)[:, None]
    slots = list(range(start, int(tasks.deadline[task]) + 1))
    best = math.inf
    for choice in itertools.product([-1, *range(c.nodes)], repeat=len(slots)):
        used = [(k, t) for k, t in zip(choice, slots) if k >= 0]
        if any(not usable[k, t] for k, t in used):
            continue
        if sum(c.task_rate[k] for k, _ in used) < tasks.work[task] - 1e-9:
            continue
        best = min(best, sum(delta[k, t] for k, t in used))
    return best


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_dp_equals_brute_force(data):
    nodes = data.draw(st.lists(st.sampled_from([A100, A40]), min_size=1, max_size=3))
    horizon = data.draw(st.integers(1, 5))
    deadline = data.draw(st.integers(0, horizon - 1))
    arrival = data.draw(st.integers(0, deadline))
    work = data.draw(st.sampled_from([1.0, 3.0, 5.0, 6.0, 9.0, 13.0, 18.0]))
    preprocess = data.draw(st.booleans())
    inst = make_instance(
        nodes,
        horizon,
        [arrival],
        [deadline],
        [work],
        [data.draw(st.integers(1, 20))],
        [preprocess],
        [100.0],
        [[5.0]],
        [[data.draw(st.integers(1, 2))]],
        start_hour=data.draw(st.sampled_from([0.0, 6.5, 17.0])),
    )
    shape = (len(nodes), horizon)
    values = st.sampled_from([0.0, 0.0, 0.25, 0.5, 1.0, 2.0])
    lam = np.array(data.draw(st.lists(values, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]))).reshape(
        shape
    )
    phi = np.array(data.draw(st.lists(values, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]))).reshape(
        shape
    )
    usable = np.array(data.draw(st.lists(st.booleans(), min_size=lam.size, max_size=lam.size))).reshape(shape)
    vendor = 0 if preprocess else -1
    start = arrival + (int(inst.vendor_delay[0, 0]) if preprocess else 0)
    cost, schedule = find_schedule(inst, 0, vendor, lam, phi, usable)
    expected = brute_force(inst, 0, start, lam, phi, usable)
    if math.isinf(expected):
        assert schedule is None and math.isinf(cost)
        return
    assert math.isclose(cost, expected, rel_tol=1e-12, abs_tol=1e-12)
    check_schedule(inst, schedule)
    c = inst.cluster
    k, t = schedule.nodes, schedule.slots
    assert usable[k, t].all()
    recomputed = (
        c.task_rate[k] * lam[k, t]
        + inst.tasks.memory[0] * phi[k, t]
        + c.node_cost[k, t] * c.task_rate[k] / c.compute[k]
    ).sum()
    assert math.isclose(recomputed, cost, rel_tol=1e-12, abs_tol=1e-12)


def test_chunk_is_gcd_of_rates():
    assert chunk_size(np.array([6.0, 3.0, 6.0])) == 3.0
    assert chunk_size(np.array([6.0])) == 6.0


def test_ties_prefer_earliest_cheapest_slots():
    # One A100, flat tariff within the off-peak night (00:00-07:00), zero duals: every slot
    # costs the same, so the task runs in its first slots.
    inst = make_instance([A100], 10, [2], [9], [12.0], [8], [False], [100.0])
    zeros = np.zeros((1, 10))
    cost, schedule = find_schedule(inst, 0, -1, zeros, zeros)
    assert list(schedule.slots) == [2, 3]
    assert cost == 2 * 40.0 * 0.6 * 6 / 24


def test_expensive_slot_is_skipped_by_hand():
    # Slot 3 carries a compute price of 1 cent/ksample: 6 more cents; slots 4 and 5 are free.
    inst = make_instance([A100], 6, [3], [5], [12.0], [8], [False], [100.0])
    lam = np.zeros((1, 6))
    lam[0, 3] = 1.0
    cost, schedule = find_schedule(inst, 0, -1, lam, np.zeros((1, 6)))
    assert list(schedule.slots) == [4, 5]
    assert math.isclose(cost, 2 * 6.0)  # e = 40 * 0.6 / 4 = 6 cents per slot at night


def test_schedule_type_is_a_plain_value():
    s = Schedule(0, -1, np.array([1]), np.array([0]))
    assert s.vendor == -1
