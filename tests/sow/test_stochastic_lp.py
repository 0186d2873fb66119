"""Appendix E's LP (algorithms/sow/stochastic_lp.py), solved by hand on a small instance."""

import numpy as np
import pytest

from algorithms.sow.stochastic_lp import solve_stochastic_lp
from market.sow.prior_births import Prior
from market.sow.statement_of_work import sow_from_lists


def test_a_hand_computed_lp():
    # S_max = 4, capacity C' = 1 node in every round.
    # Job A (one variant, q = 1), c = 1, V = 3 for finishes <= 2: points (a=0, d=1) and (a=1, d=1),
    #   lambda = 1/2 each. Point 0 may start at 0 or 1, point 1 at 1: outcomes of width 1/2, value 3/2.
    # Job B, c = 1, two variants of q = 1/2: V = 10 (v0) or 2 (v1) for finishes <= 1, one point (0, 1):
    #   starts at 0 only, width 1, value 10 or 2, z <= 1/2.
    # Round 1 holds both of A's outcomes that start at 1 (1/2 + 1/2 = 1 <= C'): A is worth 3/2 + 3/2.
    # Round 0: B's v0 (density 10) takes 1/2, then v1 (density 2 > A's 3/2 per unit... A is already
    # served in round 1) fills the other 1/2: 5 + 1. V_LP = 3 + 5 + 1 = 9.
    a = sow_from_lists(0, 1, [3, 3, 3, 0, 0], [(0, 1, 0.5), (1, 1, 0.5)])
    b0 = sow_from_lists(0, 1, [10, 10, 0, 0, 0], [(0, 1, 1.0)])
    b1 = sow_from_lists(0, 1, [2, 2, 0, 0, 0], [(0, 1, 1.0)])
    lp = solve_stochastic_lp([Prior((a,), np.ones(1), 0), Prior((b0, b1), np.array([0.5, 0.5]), 1)], 1.0)
    assert lp.objective == pytest.approx(9.0) and lp.bound == pytest.approx(9.0)
    outcomes = {
        (int(j), int(v), int(i), int(s)): float(z)
        for j, v, i, s, z in zip(lp.job, lp.variant, lp.point, lp.start, lp.z)
    }
    assert set(outcomes) == {(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 1), (1, 0, 0, 0), (1, 1, 0, 0)}
    assert outcomes[(0, 0, 0, 1)] == pytest.approx(1.0) and outcomes[(0, 0, 1, 1)] == pytest.approx(1.0)
    assert outcomes[(0, 0, 0, 0)] == pytest.approx(0.0, abs=1e-9)
    assert outcomes[(1, 0, 0, 0)] == pytest.approx(0.5) and outcomes[(1, 1, 0, 0)] == pytest.approx(0.5)
    assert lp.width.tolist() == [0.5, 0.5, 0.5, 1.0, 1.0]
    assert lp.usage().tolist() == pytest.approx([1.0, 1.0])


def test_the_halved_supply_halves_a_linear_lp():
    # With C' = 1/2: round 0 gives its 1/2 to B's v0 (value 10 per unit of width: 5); round 1 holds
    # 1/2 of width of A's two outcomes (3 per unit of width: 3/2). V_LP = 6.5.
    a = sow_from_lists(0, 1, [3, 3, 3, 0, 0], [(0, 1, 0.5), (1, 1, 0.5)])
    b0 = sow_from_lists(0, 1, [10, 10, 0, 0, 0], [(0, 1, 1.0)])
    b1 = sow_from_lists(0, 1, [2, 2, 0, 0, 0], [(0, 1, 1.0)])
    lp = solve_stochastic_lp([Prior((a,), np.ones(1), 0), Prior((b0, b1), np.array([0.5, 0.5]), 1)], 0.5)
    assert lp.objective == pytest.approx(6.5)
    assert lp.usage().max() <= 0.5 + 1e-9
