"""The exact maximiser of F(il) for one node type (algorithms/auction/exact_selector.py) against
brute force over every schedule, and against Alg. 2's DP, which maximises a surrogate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from algorithms.auction.exact_selector import exact_select
from algorithms.auction.ledger import Schedule
from algorithms.auction.pdftsp import PdFTSP
from tests.auction.worlds import A40, A100, make_instance


def _random_case(rng: np.random.Generator):
    nodes = int(rng.integers(1, 4))
    horizon = int(rng.integers(3, 7))
    arrival = int(rng.integers(0, 2))
    deadline = int(rng.integers(arrival, horizon))
    vendors = 2
    inst = make_instance(
        [A100] * nodes,
        horizon,
        [arrival],
        [deadline],
        [float(rng.choice([6.0, 9.0, 12.0, 18.0]))],
        [int(rng.integers(4, 30))],
        [bool(rng.random() < 0.5)],
        [float(rng.uniform(20, 300))],
        vendor_price=[rng.uniform(0, 30, vendors).tolist()],
        vendor_delay=[rng.integers(1, 3, vendors).tolist()],
        start_hour=float(rng.choice([0.0, 16.0])),
    )
    lam = np.where(rng.random((nodes, horizon)) < 0.4, 0.0, rng.uniform(0, 3, (nodes, horizon)))
    phi = np.where(rng.random((nodes, horizon)) < 0.4, 0.0, rng.uniform(0, 1, (nodes, horizon)))
    usable = rng.random((nodes, horizon)) < 0.85
    return inst, lam, phi, usable


def _brute_force(inst, lam, phi, usable) -> float:
    tasks = inst.tasks
    need = math.ceil(tasks.work[0] / 6.0 - 1e-9)
    best = -math.inf
    vendors = range(inst.vendors) if tasks.preprocess[0] else [-1]
    for n in vendors:
        start = int(tasks.arrival[0]) + (int(inst.vendor_delay[0, n]) if n >= 0 else 0)
        slots = range(start, int(tasks.deadline[0]) + 1)
        for chosen in itertools.combinations(slots, need):
            for nodes in itertools.product(range(inst.cluster.nodes), repeat=need):
                if not all(usable[k, t] for k, t in zip(nodes, chosen)):
                    continue
                schedule = Schedule(0, n, np.array(chosen), np.array(nodes))
                best = max(best, PdFTSP.score(inst, schedule, lam, phi)[0])
    return best


@pytest.mark.parametrize("seed", range(60))
def test_exact_selector_attains_the_brute_force_maximum_and_the_dp_never_beats_it(seed):
    inst, lam, phi, usable = _random_case(np.random.default_rng(seed))
    truth = _brute_force(inst, lam, phi, usable)
    f, schedule = exact_select(inst, 0, lam, phi, usable)
    if schedule is None:
        assert truth == -math.inf
        return
    assert f == pytest.approx(truth, abs=1e-9)
    assert PdFTSP.score(inst, schedule, lam, phi)[0] == pytest.approx(truth, abs=1e-9)
    assert all(usable[k, t] for k, t in zip(schedule.nodes, schedule.slots))
    dp_f, dp_schedule, _ = PdFTSP(1.0, 1.0).select(inst, 0, lam, phi, usable)
    if dp_schedule is not None:
        assert dp_f <= truth + 1e-9


def test_the_dp_can_miss_the_best_f_by_hand():
    # One A100, 12 ksamples = 2 slots in slots 0-2, no vendor, night tariff (e = 6 a slot).
    # lambda = (0, 0, 1), phi = (1, 1, 0), r = 10: per-slot Delta = 6 lambda + 10 phi + 6 =
    # (16, 16, 12), so the DP takes slots 0 and 2 (sum 28, the least), with maxima lambda 1,
    # phi 1: F = 100 - 12 - 1 x 12 - 1 x 20 = 56. Slots 0 and 1 have maxima lambda 0, phi 1:
    # F = 100 - 12 - 0 - 20 = 68, the best.
    inst = make_instance([A100], 3, [0], [2], [12.0], [10], [False], [100.0])
    lam, phi = np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 1.0, 0.0]])
    dp_f, dp_schedule, _ = PdFTSP(1.0, 1.0).select(inst, 0, lam, phi)
    assert list(dp_schedule.slots) == [0, 2] and dp_f == pytest.approx(56.0)
    f, schedule = exact_select(inst, 0, lam, phi)
    assert list(schedule.slots) == [0, 1] and f == pytest.approx(68.0)
    exact_f, exact_schedule, _ = PdFTSP(1.0, 1.0, selector="exact").select(inst, 0, lam, phi)
    assert exact_f == pytest.approx(68.0) and list(exact_schedule.slots) == [0, 1]


def test_the_exact_selector_refuses_mixed_clusters():
    inst = make_instance([A100, A40], 3, [0], [2], [12.0], [10], [False], [100.0])
    with pytest.raises(ValueError, match="one node type"):
        exact_select(inst, 0, np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="selector"):
        PdFTSP(1.0, 1.0, selector="greedy")


def test_the_family_offers_the_exact_selector_on_one_node_type_only():
    from algorithms.auction import family

    small = {"cluster": {"nodes": 3}, "tasks": {"load": 3, "slots": 12}}
    prepared = family.prepare({**small, "mechanisms": ["pdFTSP(selector=exact)"]})
    assert family.make_mechanism("pdFTSP(selector=exact)", prepared).selector == "exact"
    rows = family.simulate_replicate(prepared, 0, np.random.default_rng(0))
    assert rows[0]["admitted"] > 0
    with pytest.raises(ValueError, match="selector=exact needs one node type"):
        family.prepare({"cluster": {"nodes": 3, "node_type": "mixed"}, "mechanisms": ["pdFTSP(selector=exact)"]})
    with pytest.raises(ValueError, match=r"pdftsp\.selector"):
        family.prepare({"pdftsp": {"selector": "fast"}, "mechanisms": ["pdFTSP"]})
