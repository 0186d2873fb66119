"""Alg. 1 of paper 002 (adaptive binary tree search, Sec. 3.2) and the cascade of eq. 3.8-3.9
(algorithms/core/tree_search.py): optimality against all 2^K subsets (Theorem 1), feasibility
of the selected set, exact delivery of the cascade interval by interval, a hand-computed
example, the fast implementation against the line-by-line one, and input checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from algorithms.core.tree_search import (
    adaptive_tree_search,
    adaptive_tree_search_reference,
    cascade_shares,
    deadline_order,
    delivered_units,
)

# Needs on a grid of quarters (sums are exact in floating point, so "feasible" is exact), with
# zeros and inf; deadlines d0 + 1 .. d0 + 8 (ties likely).
GRID = [i / 4 for i in range(0, 25)] + [math.inf]


@st.composite
def instances(draw, max_k=10):
    k = draw(st.integers(1, max_k))
    p = draw(st.lists(st.sampled_from(GRID), min_size=k, max_size=k))
    d0 = draw(st.integers(0, 50))
    d = draw(st.lists(st.integers(d0 + 1, d0 + 8), min_size=k, max_size=k))
    return np.array(p), np.array(d, dtype=np.int64), d0


def edf_feasible(p, d, d0, subset) -> bool:
    """A set is feasible iff for every k in it, sum_{i in set, d_i <= d_k} p_i <= d_k - d0."""
    subset = list(subset)
    if any(math.isinf(p[i]) for i in subset):
        return False
    return all(sum(p[i] for i in subset if d[i] <= d[k]) <= d[k] - d0 for k in subset)


def best_count(p, d, d0) -> int:
    k = p.size
    for size in range(k, -1, -1):
        if any(edf_feasible(p, d, d0, c) for c in itertools.combinations(range(k), size)):
            return size
    return 0


def simulate_cascade(eta_tilde, d, d0):
    """Hold eq. 3.8 over every unit d0+1..max d: in unit t the threads with d_k >= t cascade in
    deadline order (an interval [d_{j-1}, d_j] is a run of such units). Returns the compute each
    thread received by its deadline and the largest total share of a unit."""
    order = deadline_order(d)
    got = np.zeros(eta_tilde.size)
    peak = 0.0
    for t in range(d0 + 1, int(d.max()) + 1):
        alive = np.where(d >= t, eta_tilde, 0.0)
        shares = cascade_shares(alive, order)
        assert np.all(shares >= 0.0) and np.all(shares[d < t] == 0.0)
        peak = max(peak, shares.sum())
        got += shares
    return got, peak


@settings(max_examples=120, deadline=None)
@given(instances())
def test_selects_the_most_threads(inst):
    """(a) Theorem 1: as many threads as the best of all 2^K subsets; (b) the set is feasible."""
    p, d, d0 = inst
    eta, selected = adaptive_tree_search(p, d, d0)
    assert selected.sum() == best_count(p, d, d0)
    assert edf_feasible(p, d, d0, np.flatnonzero(selected))
    assert not selected[np.isinf(p)].any() and selected[p == 0].all()
    assert np.all(eta[~selected] == 0.0) and np.all((eta >= 0.0) & (eta <= 1.0))


@settings(max_examples=120, deadline=None)
@given(instances())
def test_cascade_delivers_exactly_the_needs(inst):
    """(c) Interval by interval, the cascade gives every selected thread exactly p_k by d_k,
    the others nothing, and never more than the whole unit; eq. 3.9 agrees."""
    p, d, d0 = inst
    eta, selected = adaptive_tree_search(p, d, d0)
    got, peak = simulate_cascade(eta, d, d0)
    assert peak <= 1.0 + 1e-12
    assert np.allclose(got[selected], p[selected], rtol=0.0, atol=1e-9)
    assert np.all(got[~selected] == 0.0)
    assert np.allclose(delivered_units(eta, d, d0), got, rtol=0.0, atol=1e-9)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 60), st.integers(0, 2**16))
def test_cascade_stays_valid_on_real_valued_needs(k, seed):
    """Needs off the grid (rounding everywhere): shares still fit the unit and the selected
    threads still get their needs to 1e-9."""
    rng = np.random.default_rng(seed)
    d0 = int(rng.integers(0, 100))
    d = d0 + rng.integers(1, 4 * k + 2, k)
    p = rng.exponential(rng.uniform(0.5, 6.0), k)
    p[rng.random(k) < 0.1] = math.inf
    eta, selected = adaptive_tree_search(p, d, d0)
    got, peak = simulate_cascade(eta, d, d0)
    assert peak <= 1.0 + 1e-9
    assert np.all(got[selected] >= p[selected] - 1e-9)


@settings(max_examples=150, deadline=None)
@given(instances(max_k=40))
def test_fast_equals_the_line_by_line_reference(inst):
    p, d, d0 = inst
    eta, selected = adaptive_tree_search(p, d, d0)
    eta_ref, selected_ref = adaptive_tree_search_reference(p, d, d0)
    assert np.array_equal(selected, selected_ref)
    assert np.allclose(eta, eta_ref, rtol=1e-12, atol=0.0)
    # the precomputed order gives the same answer
    eta2, selected2 = adaptive_tree_search(p, d, d0, order=deadline_order(d))
    assert np.array_equal(selected2, selected) and np.array_equal(eta2, eta)


def test_hand_computed_three_threads():
    """(d) tau = 11 (d0 = 10). Thread 0: p = 1, d = 14; thread 1: p = 2, d = 12; thread 2:
    p = 1.5, d = 13. Deadline order 1, 2, 0. Add 1: 2 <= 12 - 10. Add 2: 3.5 > 13 - 10, drop the
    largest p in C, thread 1 (p = 2): C = {2}, sum 1.5. Add 0: 2.5 <= 4. C = {2, 0}.
    Line 10: eta_2 = 1.5 / (13 - 10) = 0.5; eta_0 = 1 / (14 - 10 - 1.5) = 0.4; eta_1 = 0.
    Cascade (eq. 3.8) in unit 11: thread 1 gets 0, thread 2 (1 - 0) 0.5 = 0.5, thread 0
    (1 - 0)(1 - 0.5) 0.4 = 0.2. Units 11-13 give thread 2 0.5 each = 1.5 and thread 0 0.2 each,
    unit 14 gives thread 0 alone 0.4: 0.6 + 0.4 = 1. (Threads 1 and 0 would also fit: 2 <= 2,
    3 <= 4; two threads is the best, all three need 4.5 > 4.)"""
    p = np.array([1.0, 2.0, 1.5])
    d = np.array([14, 12, 13])
    eta, selected = adaptive_tree_search(p, d, 10)
    assert selected.tolist() == [True, False, True]
    assert eta.tolist() == pytest.approx([0.4, 0.0, 0.5], abs=1e-15)
    order = deadline_order(d)
    assert order.tolist() == [1, 2, 0]
    assert cascade_shares(eta, order).tolist() == pytest.approx([0.2, 0.0, 0.5], abs=1e-15)
    assert delivered_units(eta, d, 10).tolist() == pytest.approx([1.0, 0.0, 1.5], abs=1e-15)
    assert best_count(p, d, 10) == 2


def test_ties_drop_the_latest_deadline_then_the_highest_index():
    # equal needs 2, 2, 2 with deadlines 3, 3, 4 and d0 = 0: the third cannot fit; line 6's
    # argmax over equal needs takes the latest position in deadline order (thread 2).
    eta, selected = adaptive_tree_search([2.0, 2.0, 2.0], [4, 3, 3], 0)
    # order: 1 (d 3), 2 (d 3), 0 (d 4). Add 1: 2 <= 3. Add 2: 4 > 3: drop the latest of the
    # equal needs, thread 2. Add 0: 4 <= 4.
    assert selected.tolist() == [True, True, False]
    assert eta.tolist() == pytest.approx([1.0, 2.0 / 3.0, 0.0])


def test_zero_and_infinite_needs():
    eta, selected = adaptive_tree_search([0.0, math.inf, 0.5, math.inf], [1, 1, 2, 5], 0)
    assert selected.tolist() == [True, False, True, False]
    assert eta.tolist() == [0.0, 0.0, 0.25, 0.0]
    eta, selected = adaptive_tree_search([], [], 3)
    assert eta.size == 0 and selected.size == 0


def test_exactly_tight_sets_survive_rounding():
    # 0.1 + 0.2 + 0.7 is 1.0000000000000002 in floating point; within tol, all three fit
    eta, selected = adaptive_tree_search([0.1, 0.2, 0.7], [1, 1, 1], 0)
    assert selected.all()
    shares = cascade_shares(eta, deadline_order([1, 1, 1]))
    assert shares.sum() <= 1.0 + 1e-12 and np.allclose(shares, [0.1, 0.2, 0.7])


def test_cascade_sum_is_one_minus_the_product():
    rng = np.random.default_rng(3)
    eta = rng.uniform(0, 1, 30)
    order = rng.permutation(30)
    shares = cascade_shares(eta, order)
    assert shares.sum() == pytest.approx(1.0 - np.prod(1.0 - eta))
    assert shares[order[0]] == eta[order[0]]
    assert shares[order[2]] == pytest.approx((1 - eta[order[0]]) * (1 - eta[order[1]]) * eta[order[2]])


@pytest.mark.parametrize(
    "p, d, d0, match",
    [
        ([1.0, math.nan], [3, 4], 0, "nan"),
        ([1.0, -0.5], [3, 4], 0, ">= 0"),
        ([1.0, 1.0], [3, 4], 3, "d_0"),
        ([1.0], [3, 4], 0, "one deadline"),
    ],
)
def test_rejects_bad_inputs(p, d, d0, match):
    with pytest.raises(ValueError, match=match):
        adaptive_tree_search(p, d, d0)


def test_rejects_an_order_that_does_not_sort_the_deadlines():
    with pytest.raises(ValueError, match="order"):
        adaptive_tree_search([1.0, 1.0], [3, 4], 0, order=np.array([1, 0]))
