"""Eq. (1)-(2): the launch plan by enumeration equals the best of every plan (brute force)."""

import itertools

import numpy as np
import pytest

from algorithms.sow.launch_plan import NEVER, best_plan, plan_for_points
from market.sow.statement_of_work import Bounds, sow_from_lists
from tests.sow.worlds import random_sow

BOUNDS = Bounds(2, 3, 7, 10.0)


def utility(sow, starts, price, failure):
    """Eq. (1) for one plan, written point by point."""
    total = 0.0
    for i, s in enumerate(starts):
        if s == NEVER:
            continue
        k, d = s - sow.birth, int(sow.duration[i])
        total += sow.probability[i] * (1 - failure[k, d - 1]) * (sow.value(s + d) - price[k, d - 1])
    return total


def all_plans(sow, signal, S):
    keys = [(a,) if signal == "none" else (a, d) for a, d in zip(sow.arrival.tolist(), sow.duration.tolist())]
    groups = sorted(set(keys))
    options = [[NEVER] + list(range(g[0], sow.birth + S)) for g in groups]
    for choice in itertools.product(*options):
        pick = dict(zip(groups, choice))
        yield np.array([pick[k] for k in keys])


@pytest.mark.parametrize("signal", ["none", "duration"])
def test_best_plan_is_the_best_of_all_plans(signal):
    rng = np.random.default_rng(7)
    S, D = BOUNDS.horizon, BOUNDS.max_duration
    for _trial in range(40):
        sow = random_sow(rng, int(rng.integers(0, 3)), BOUNDS, points=3)
        price = np.cumsum(rng.uniform(0.1, 3.0, (S, D)), axis=1) * sow.concurrency
        failure = rng.uniform(0, 0.6, (S, D)) * (rng.random((S, D)) < 0.5)
        plan = best_plan(sow, price, failure, signal)
        best = max(utility(sow, p, price, failure) for p in all_plans(sow, signal, S))
        assert plan.estimated_utility == pytest.approx(max(best, 0.0), abs=1e-9)
        assert utility(sow, plan.start, price, failure) == pytest.approx(plan.estimated_utility, abs=1e-9)
        assert np.all((plan.start == NEVER) | (plan.start >= sow.arrival))
        if signal == "none":  # one start per arrival
            for a in np.unique(sow.arrival):
                assert len(set(plan.start[sow.arrival == a].tolist())) == 1


def test_hand_case_waiting_for_a_cheaper_round():
    # born at 0, arrives at 0, runs 1 round; V = 5 for finish 1..3. Price 4 in round 0, 1 in round 1,
    # 1 in round 2 with failure 0.5 there: start 1 gives 5 - 1 = 4 > 5 - 4 = 1 > 0.5 (5 - 1) = 2.
    sow = sow_from_lists(0, 1, [5, 5, 5, 5, 0, 0, 0, 0], [(0, 1, 1.0)])
    price = np.full((7, 3), 9.0)
    price[:3, 0] = [4.0, 1.0, 1.0]
    failure = np.zeros((7, 3))
    failure[2, 0] = 0.5
    plan = best_plan(sow, price, failure, "none")
    assert plan.start.tolist() == [1] and plan.estimated_utility == pytest.approx(4.0)
    price[:3, 0] = [6.0, 6.0, 6.0]  # nothing pays: never
    assert best_plan(sow, price, failure, "none").start.tolist() == [NEVER]


def test_no_signal_shares_a_start_the_duration_signal_does_not():
    # arrival 0, durations 1 (p 0.5) or 3 (p 0.5); V = 4 up to finish 3, then 0.
    sow = sow_from_lists(0, 1, [4, 4, 4, 4, 0, 0, 0, 0], [(0, 1, 0.5), (0, 3, 0.5)])
    price = np.tile(np.arange(1, 4, dtype=float), (7, 1)) * 0.5  # 0.5 per round
    failure = np.zeros((7, 3))
    # no signal: start 0 gives 0.5 (4 - 0.5) + 0.5 (4 - 1.5) = 3; start 1: 0.5 (3.5) + 0.5 (0 - 1.5) = 1
    plan = best_plan(sow, price, failure, "none")
    assert plan.start.tolist() == [0, 0] and plan.estimated_utility == pytest.approx(3.0)
    # with d known, the short one may start anywhere up to 2 (ties: earliest), the long one at 0
    plan = best_plan(sow, price, failure, "duration")
    assert plan.start.tolist() == [0, 0] and plan.estimated_utility == pytest.approx(3.0)
    assert plan_for_points(plan.start, sow, [0, 0, 1], [3, 2, 1], "none").tolist() == [0, 0, NEVER]
    assert plan_for_points(plan.start, sow, [0, 0], [3, 2], "duration").tolist() == [0, NEVER]
