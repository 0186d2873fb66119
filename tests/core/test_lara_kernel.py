"""LARA's compiled per-unit update (algorithms/core/lara_kernel.py) against the NumPy LARA
(algorithms/core/lara.py): the same `Outcome` (completed, completion_time, data to 1e-9
relative, the eta trajectory to 1e-12, the allocator's trace and exploration_end) on Table 1,
Table 2 (eps^2), scalability bundles of 10-100 threads and random bundles with staggered begins,
with exploration on and off, `when_none_selected` uniform and idle, gamma 0.9 and 1.0, Remark 2's
UCB, both deliveries (`cascade`, `deadline`) and `min_need` > 0 (with the threads done by the fit,
`done_by_fit`); and its pieces against theirs, bit for bit: numpy's pairwise sum, Alg. 1
(tree_search.adaptive_tree_search, including ties, p_k = 0 and inf and the heap path), the RLS
fits (weighted_rls.RLSBank) and eq. 3.6 (remaining_data.remaining_data).

The first run compiles the kernel (about 9 s on the 2-core machine); later runs load it from
Numba's cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.core.lara import DELIVERIES, LARA
from algorithms.core.lara_kernel import (
    BAD_POINT,
    REPEATED,
    ROWS,
    CompiledLARA,
    pairwise_sum,
    remaining_need,
    rls_update,
    tree_search_sorted,
)
from algorithms.core.remaining_data import remaining_data
from algorithms.core.simulation import UnitView, simulate
from algorithms.core.tree_search import TOL, adaptive_tree_search, deadline_order
from algorithms.core.weighted_rls import RLSBank
from market.core.bundle_generators import BundleParams, draw_bundle
from market.core.threads import ThreadArrays


def bundle(config: dict, seed: int):
    return draw_bundle(BundleParams.from_config(config), np.random.default_rng(seed))


def assert_same_outcome(b, **options) -> tuple:
    reference, compiled = LARA(**options), CompiledLARA(**options)
    want = simulate(b, reference, record_eta=True)
    got = simulate(b, compiled, record_eta=True)
    np.testing.assert_array_equal(got.completed, want.completed)
    np.testing.assert_array_equal(got.completion_time, want.completion_time)
    np.testing.assert_allclose(got.data, want.data, rtol=1e-9, atol=0.0)
    np.testing.assert_allclose(got.eta, want.eta, rtol=0.0, atol=1e-12)
    np.testing.assert_array_equal(got.last_loss, want.last_loss)
    assert got.decisions == want.decisions
    assert compiled.exploration_end == reference.exploration_end
    assert got.allocator_trace == want.allocator_trace
    np.testing.assert_array_equal(compiled.done_by_fit, reference.done_by_fit)
    return reference, compiled, want


@pytest.mark.parametrize("explore", [True, False], ids=["explore", "no-explore"])
@pytest.mark.parametrize("when", ["uniform", "idle"])
@pytest.mark.parametrize("gamma", [0.9, 1.0])
def test_table1(explore, when, gamma):
    assert_same_outcome(bundle({"kind": "table1"}, 0), explore=explore, when_none_selected=when, gamma=gamma)


@pytest.mark.parametrize(
    "seed, options",
    [
        (0, {}),
        (1, {"explore": False, "gamma": 1.0}),
        (2, {"when_none_selected": "idle"}),
        (3, {"explore": False, "when_none_selected": "idle", "gamma": 1.0}),
    ],
)
def test_table2(seed, options):
    assert_same_outcome(bundle({"kind": "table2", "epsilon_set": 2}, seed), **options)


@pytest.mark.parametrize(
    "threads, seed, options",
    [
        (10, 0, {}),
        (10, 1, {"explore": False, "when_none_selected": "idle"}),
        (10, 2, {"gamma": 1.0, "exploration": 0.0}),
        (25, 3, {"when_none_selected": "idle", "gamma": 1.0}),
        (100, 6, {"exploration": 4000.0}),
        (10, 0, {"delivery": "deadline"}),
        (10, 1, {"delivery": "deadline", "explore": False, "when_none_selected": "idle"}),
        (25, 3, {"delivery": "deadline", "gamma": 1.0, "min_need": 1.0}),
        (100, 6, {"delivery": "deadline", "exploration": 4000.0}),
    ],
)
def test_scalability(threads, seed, options):
    """Sec. 4.3's bundles; K = 100 is the size of the issue's speed goal."""
    _, _, outcome = assert_same_outcome(bundle({"kind": "scalability", "threads": threads}, seed), **options)
    assert outcome.successes > 0


@pytest.mark.parametrize("delivery", DELIVERIES)
@pytest.mark.parametrize(
    "seed, options",
    [
        (0, {}),
        (1, {"explore": False}),
        (2, {"when_none_selected": "idle", "gamma": 1.0}),
        (3, {"min_need": 1.0}),
        (4, {"explore": False, "min_need": 2.5, "when_none_selected": "idle"}),
    ],
)
def test_random_staggered(seed, options, delivery):
    """Beyond the paper: threads begin at different times (the active set grows and shrinks)."""
    b = bundle({"kind": "random", "threads": 20}, seed)
    assert len({th.begin for th in b.threads}) > 1
    assert_same_outcome(b, delivery=delivery, **options)


@pytest.mark.parametrize("delivery", DELIVERIES)
@pytest.mark.parametrize("min_need", [0.0, 1.0, 3.0])
@pytest.mark.parametrize(
    "seed, config",
    [
        (0, {"kind": "random", "threads": 20, "shape": "floor"}),
        (6, {"kind": "random", "threads": 20, "shape": "floor"}),
        (7, {"kind": "scalability", "threads": 25, "shape": "floor"}),
    ],
)
def test_threads_done_by_the_fit(seed, config, min_need, delivery):
    """Curves with a floor and a short exploration (H_k = 500): the fit of some thread says it is
    done (S_hat = 0) before its loss reaches eps; `done_by_fit` and the shares with `min_need`
    agree too."""
    reference, _, _ = assert_same_outcome(bundle(config, seed), exploration=500.0, min_need=min_need, delivery=delivery)
    assert reference.done_by_fit.any()


@pytest.mark.parametrize(
    "options", [{"ucb_beta": 50.0, "log_predictions": True}, {"ucb_beta": 500.0, "explore": False}]
)
def test_ucb_and_trace(options):
    """Remark 2's UCB need and the prediction trace (Fig. 5) agree as well."""
    reference, _, _ = assert_same_outcome(bundle({"kind": "table2", "epsilon_set": 2}, 1), **options)
    if options.get("log_predictions"):
        assert len(reference.trace) > 100


def test_rls_state_after_a_run():
    """After a whole run the fits are RLSBank's, bit for bit (theta, P, n, fitted, last_s)."""
    reference, compiled, _ = assert_same_outcome(bundle({"kind": "scalability", "threads": 10}, 7))
    rls = reference.rls
    np.testing.assert_array_equal(compiled.theta, rls.theta)
    np.testing.assert_array_equal(compiled.P, rls.P)
    np.testing.assert_array_equal(compiled.n, rls.n)
    np.testing.assert_array_equal(compiled.fitted, rls.fitted)
    np.testing.assert_array_equal(compiled.last_s, rls.last_s)


# --- the pieces ---------------------------------------------------------------------------


def test_pairwise_sum_is_numpys():
    rng = np.random.default_rng(0)
    for n in list(range(0, 300)) + [511, 777, 1000, 1001, 2048, 8192]:
        a = rng.standard_normal(n) * np.exp(rng.uniform(-30.0, 30.0, n))
        assert pairwise_sum(a) == a.sum(), n


def random_instances(rng, count):
    """Needs on a grid of quarters (ties, exact sums), reals, zeros and inf; deadlines with ties;
    some sets exactly tight (line 5's tolerance)."""
    for _ in range(count):
        k = int(rng.integers(1, 40))
        d0 = int(rng.integers(0, 50))
        d = d0 + rng.integers(1, 12, size=k)
        kind = rng.integers(0, 3)
        if kind == 0:
            p = rng.integers(0, 25, size=k) / 4.0
        elif kind == 1:
            p = rng.exponential(2.0, size=k)
        else:
            p = (d - d0) / rng.integers(1, 6, size=k) + rng.choice([0.0, 1e-10, -1e-10], size=k)
        p[rng.random(k) < 0.1] = 0.0
        p[rng.random(k) < 0.1] = math.inf
        yield np.maximum(p, 0.0), d.astype(np.int64), d0


def test_tree_search_is_adaptive_tree_search():
    """Alg. 1 (eta_tilde and C) bit for bit, on instances where lines 5-6 drop threads."""
    rng = np.random.default_rng(1)
    dropped = 0
    for p, d, d0 in random_instances(rng, 1500):
        want_eta, want_keep = adaptive_tree_search(p, d, d0)
        order = deadline_order(d)
        ps = p[order]
        eta, keep = np.empty(p.size), np.empty(p.size, dtype=bool)
        tree_search_sorted(ps, d[order] - float(d0), TOL, eta, keep)
        np.testing.assert_array_equal(eta, want_eta[order])
        np.testing.assert_array_equal(keep, want_keep[order])
        dropped += int((~keep & (ps <= d[order] - d0 + TOL)).any())
    assert dropped > 150


def test_rls_and_need_are_the_banks():
    """rls_update and remaining_need against RLSBank and remaining_data on random points:
    repeated s (the exact start), subsets in any order."""
    rng = np.random.default_rng(2)
    k = 30
    for gamma in (0.9, 1.0):
        bank = RLSBank(k, gamma)
        state = np.full((ROWS, k), np.nan)
        state[6:8] = 0.0
        n, fitted = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=bool)
        s = rng.uniform(1.0, 100.0, k)
        eps = rng.uniform(0.01, 1.0, k)
        for _step in range(60):
            idx = rng.permutation(k)[: int(rng.integers(1, k + 1))]
            grow = rng.random(idx.size) < 0.7
            s[idx] = np.where(grow, s[idx] * rng.uniform(1.0, 1.5, idx.size), s[idx])
            loss = 3.0 * s[idx] ** -0.4 * np.exp(rng.normal(0.0, 0.05, idx.size))
            bank.update(idx, s[idx], loss)
            assert rls_update(state, n, fitted, idx.astype(np.int64), s[idx].copy(), loss, gamma) == 0
            np.testing.assert_array_equal(state[:2].T, bank.theta)
            np.testing.assert_array_equal(n, bank.n)
            np.testing.assert_array_equal(fitted, bank.fitted)
            need = np.empty(k)
            remaining_need(state, fitted, np.log(eps), s, need)
            np.testing.assert_array_equal(need, remaining_data(bank.theta, eps, s, bank.fitted))
        np.testing.assert_array_equal(np.stack([state[2], state[3], state[3], state[4]], 1).reshape(k, 2, 2), bank.P)
    before = state.copy()
    one = np.array([1], dtype=np.int64)
    assert rls_update(state, n, fitted, one, np.array([-1.0]), np.array([1.0]), 0.9) == BAD_POINT
    assert rls_update(state, n, fitted, np.array([1, 1], dtype=np.int64), np.ones(2), np.ones(2), 0.9) == REPEATED
    np.testing.assert_array_equal(state, before)


def test_arguments_and_errors():
    with pytest.raises(ValueError, match="when_none_selected"):
        CompiledLARA(when_none_selected="wait")
    threads = ThreadArrays.of(bundle({"kind": "table1"}, 0).threads)
    with pytest.raises(ValueError, match="gamma"):
        CompiledLARA(gamma=1.5).reset(threads)
    lara = CompiledLARA()
    lara.reset(threads)
    assert lara.name == "LARA" and lara.exploration_end is None and lara.trace == []
    k = len(threads)
    view = UnitView(
        2,
        np.ones(k, dtype=bool),
        np.full(k, 10.0),
        np.array([0], dtype=np.int64),
        np.array([-0.5]),
        np.zeros(k, dtype=bool),
    )
    with pytest.raises(ValueError, match="finite and > 0"):
        lara.allocate(view)
