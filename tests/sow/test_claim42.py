"""Claim 4.2 (paper 004, Sec. 4.2): with every failure estimate 0, the aggregate allocation
x_j(L_j) of the launch plan of eq. (2) maximises (5), V~_j(x_j) - pi~(x_j), over the aggregate
allocations of all launch plans. Checked by brute force with (5) computed independently of
launch_plan.py, from the aggregate allocation (each support point's c_j instances for d_i rounds
from its start, scaled by P_i) and Alg. 3's per-round unit prices."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.sow.exponential_prices import ExponentialPrices
from algorithms.sow.launch_plan import NEVER, best_plan
from market.sow.statement_of_work import Bounds
from tests.sow.test_launch_plan import all_plans
from tests.sow.worlds import random_sow

BOUNDS = Bounds(2, 3, 7, 10.0)


def relaxed_objective(sow, starts, unit_price: np.ndarray) -> float:
    """(5) for the aggregate allocation of a plan: sum_i P_i V(s_i + d_i) minus sum_t x_t p_t, with
    x_t = sum_i P_i c 1[s_i <= t < s_i + d_i] (runs past the priced rounds cannot be bought)."""
    usage = np.zeros(unit_price.size)
    value = 0.0
    for i, s in enumerate(np.asarray(starts).tolist()):
        if s == NEVER:
            continue
        d = int(sow.duration[i])
        if s + d > unit_price.size:
            return -np.inf
        usage[s : s + d] += sow.probability[i] * sow.concurrency
        value += sow.probability[i] * sow.value(s + d)
    return value - float(usage @ unit_price)


@pytest.mark.parametrize("signal", ["none", "duration"])
def test_the_launch_plan_maximises_the_relaxed_objective_when_no_job_fails(signal):
    rng = np.random.default_rng(42)
    S, D = BOUNDS.horizon, BOUNDS.max_duration
    checked = 0
    for _ in range(40):
        birth = int(rng.integers(0, 3))
        sow = random_sow(rng, birth, BOUNDS, points=3)
        prices = ExponentialPrices(
            capacity=6.0,
            max_value=BOUNDS.max_value,
            max_duration=D,
            max_concurrency=BOUNDS.max_concurrency,
            rounds=birth + S + D,
        )
        prices.allocate(np.arange(prices.rounds), rng.uniform(0, 6.0, prices.rounds))  # earlier jobs' usage
        unit = prices.unit_price(prices.usage)
        menu = prices.unit_menu(birth, birth + S - 1) * sow.concurrency  # pi(t', c, d), [t' - b, d - 1]
        plan = best_plan(sow, menu, np.zeros_like(menu), signal)
        best = max(relaxed_objective(sow, p, unit) for p in all_plans(sow, signal, S))
        assert relaxed_objective(sow, plan.start, unit) == pytest.approx(max(best, 0.0), abs=1e-9)
        assert plan.estimated_utility == pytest.approx(relaxed_objective(sow, plan.start, unit), abs=1e-9)
        checked += best > 0
    assert checked >= 10  # enough cases where running beats never
