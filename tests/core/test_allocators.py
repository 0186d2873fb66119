"""The allocation loop (algorithms/core/simulation.py) and the allocators of paper 002: UA, STF
(Sec. 4.1), LRF, ETF (Sec. 4.1, with the prediction of Sec. 3.1), LARA (Alg. 2), on bundles
small enough to follow by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.core.easiest_thread_first import EasiestThreadFirst
from algorithms.core.explore_then_exploit import priority_cascade
from algorithms.core.lara import LARA
from algorithms.core.least_resources_first import LeastResourcesFirst
from algorithms.core.offline_optimum import solve_offline_optimum
from algorithms.core.shortest_thread_first import ShortestThreadFirst
from algorithms.core.simulation import AllocationError, UnitView, simulate
from algorithms.core.uniform_allocation import UniformAllocation
from market.core.bundle_generators import BundleParams, draw_bundle
from market.core.parametric import ParametricCurve, PowerLaw
from market.core.threads import Bundle, Thread


def power_bundle(specs, exponent=0.5):
    """Noise-free threads (begin, deadline, budget, threshold, data needed S_k)."""
    threads = tuple(Thread(b, d, float(n), float(e), f"T{k + 1}") for k, (b, d, n, e, _) in enumerate(specs))
    curves = tuple(ParametricCurve(PowerLaw.through(e, s, exponent)) for (_, _, _, e, s) in specs)
    return Bundle(threads, curves)


class Fixed:
    """Replays given shares (tests of the loop's checks)."""

    name = "Fixed"

    def __init__(self, shares):
        self.shares = shares

    def reset(self, threads):
        pass

    def allocate(self, view):
        return self.shares(view)


def test_a_thread_succeeds_when_its_reported_loss_reaches_eps_and_then_leaves_the_active_set():
    # T1 needs 30 data at 10 per unit: with the whole unit it succeeds at the end of unit 3
    bundle = power_bundle([(0, 10, 10, 0.5, 30.0), (0, 10, 10, 0.5, 1000.0)])
    seen = []

    def shares(view):
        seen.append(view.active.copy())
        return np.array([1.0, 0.0]) if view.active[0] else np.array([0.0, 1.0])

    outcome = simulate(bundle, Fixed(shares), record_eta=True)
    assert outcome.completed.tolist() == [True, False]
    assert outcome.completion_time.tolist() == [3, 0]
    assert outcome.data[0] == pytest.approx(30.0)
    assert [a.tolist() for a in seen[:4]] == [[True, True]] * 3 + [[False, True]]
    assert outcome.eta[:3, 0].tolist() == [1.0, 1.0, 1.0] and outcome.eta[3:, 0].sum() == 0.0


def test_threads_are_active_only_in_units_after_their_begin_and_up_to_their_deadline():
    bundle = power_bundle([(2, 4, 1, 0.5, 100.0), (0, 5, 1, 0.5, 100.0)])
    actives = []
    simulate(
        bundle, Fixed(lambda view: actives.append((view.t, view.active.tolist())) or view.active / view.active.sum())
    )
    assert actives == [(1, [False, True]), (2, [False, True]), (3, [True, True]), (4, [True, True]), (5, [False, True])]


@pytest.mark.parametrize(
    "shares, message",
    [
        (lambda v: np.array([0.7, 0.4]), "sum to"),
        (lambda v: np.array([-0.1, 0.5]), ">= 0"),
        (lambda v: np.array([np.nan, 0.5]), "finite"),
        (lambda v: np.array([0.5]), "expected 2 shares"),
        (lambda v: np.array([0.5, 0.5]) if v.t == 3 else np.array([0.0, 1.0]), "not active"),
    ],
)
def test_a_bad_allocation_is_rejected_naming_the_allocator_and_the_unit(shares, message):
    bundle = power_bundle([(0, 2, 1, 0.5, 100.0), (0, 5, 1, 0.5, 100.0)])
    with pytest.raises(AllocationError, match=f"Fixed at unit \\d+: .*{message}"):
        simulate(bundle, Fixed(shares))


def test_uniform_splits_the_unit_among_the_active_threads():
    bundle = power_bundle([(0, 2, 1, 0.5, 100.0), (0, 4, 1, 0.5, 100.0), (1, 4, 1, 0.5, 100.0)])
    outcome = simulate(bundle, UniformAllocation(), record_eta=True)
    np.testing.assert_allclose(outcome.eta, [[0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3], [0, 0.5, 0.5], [0, 0.5, 0.5]])


def test_stf_gives_the_whole_unit_to_the_nearest_deadline_and_never_gives_up():
    # T1 cannot finish (needs 50 units by unit 5): STF still spends units 1-5 on it, then T2
    bundle = power_bundle([(0, 5, 1, 0.5, 50.0), (0, 8, 1, 0.5, 3.0), (0, 8, 1, 0.5, 2.0)])
    outcome = simulate(bundle, ShortestThreadFirst(), record_eta=True)
    assert outcome.eta[:5, 0].tolist() == [1.0] * 5
    assert outcome.completed.tolist() == [False, True, False]  # T2 (lower index on the tie) takes units 6-8
    assert outcome.completion_time[1] == 8


def test_the_priority_cascade_gives_each_thread_its_need_in_order_and_the_rest_to_the_next():
    view = UnitView(
        1, np.array([True, True, True, False]), np.zeros(4), np.empty(0, int), np.empty(0), np.zeros(4, bool)
    )
    need = np.array([30.0, 5.0, math.inf, 1.0])
    budget = np.array([100.0, 10.0, 10.0, 10.0])
    shares = priority_cascade(view, need, budget, key=need)
    np.testing.assert_allclose(shares, [0.3, 0.5, 0.2, 0.0])  # order T2 (0.5), T1 (0.3), T3 takes the rest


def test_lrf_and_etf_rank_by_predicted_need_and_by_need_over_the_time_window():
    view = UnitView(1, np.array([True, True]), np.zeros(2), np.empty(0, int), np.empty(0), np.zeros(2, bool))
    threads = power_bundle([(0, 100, 1, 0.5, 1.0), (0, 10, 1, 0.5, 1.0)]).arrays()
    need = np.array([20.0, 30.0])  # LRF: 20 < 30, T1 first; ETF: 20/100 < 30/10, T1 first
    lrf, etf = LeastResourcesFirst(), EasiestThreadFirst()
    for a in (lrf, etf):
        a.reset(threads)
    assert lrf.exploit(view, need).tolist() == [1.0, 0.0]
    assert etf.exploit(view, need).tolist() == [1.0, 0.0]
    need = np.array([40.0, 30.0])  # LRF: T2 first; ETF: 40/100 = 0.4 < 30/10 = 3, T1 first
    assert lrf.exploit(view, need).tolist() == [0.0, 1.0]
    assert etf.exploit(view, need).tolist() == [1.0, 0.0]


def test_lara_exploration_on_table1_ends_after_unit_336():
    """Appendix B.2: with H_k = 8000, exploring all threads "takes a total of about 335 seconds"
    (shares 1 / |E_t|, recomputed as threads pass 8000 data units: after units 107, 167, 206,
    273, 336). Thresholds out of reach here, so that no thread leaves by succeeding."""
    params = BundleParams.from_config({"kind": "table1", "noise": 0.0, "jitter": 0.0, "threshold": [1e-6] * 5})
    bundle = draw_bundle(params, np.random.default_rng(0))
    lara = LARA(exploration=8000.0)
    outcome = simulate(bundle, lara, record_eta=True)
    assert lara.exploration_end == 336
    np.testing.assert_allclose(outcome.eta[0], [0.2] * 5)
    data = np.cumsum(outcome.eta * bundle.arrays().budget, axis=0)
    last_unit_under = [int(np.flatnonzero(data[:, k] <= 8000)[-1]) + 2 for k in range(5)]
    assert last_unit_under == [206, 167, 107, 273, 336]


def test_lara_gives_up_on_a_hopeless_thread_and_serves_the_others():
    # after exploration (H = 0: two reports each), T1 needs far more than its window: Alg. 1
    # drops it and the cascade serves T2 and T3, which both fit
    bundle = power_bundle([(0, 20, 10, 0.5, 5000.0), (0, 30, 10, 0.5, 80.0), (0, 40, 10, 0.5, 90.0)])
    lara = LARA(exploration=0.0, gamma=1.0)
    outcome = simulate(bundle, lara, record_eta=True)
    assert outcome.completed.tolist() == [False, True, True]
    assert lara.exploration_end == 2
    last = int(outcome.completion_time[1:].max())
    assert outcome.eta[2:last, 0].max() == 0.0  # nothing for T1 while the others run
    assert outcome.eta[last:20, 0].min() == 1.0  # then the unit is not wasted (when_none_selected: uniform)


def test_lara_when_nothing_is_selected_uniform_or_idle():
    bundle = power_bundle([(0, 5, 1, 0.5, 5000.0), (0, 5, 1, 0.5, 6000.0)])
    uniform, idle = LARA(exploration=0.0, gamma=1.0), LARA(exploration=0.0, gamma=1.0, when_none_selected="idle")
    assert simulate(bundle, uniform, record_eta=True).eta[2:].sum() == pytest.approx(3.0)
    assert simulate(bundle, idle, record_eta=True).eta[2:].sum() == 0.0
    with pytest.raises(ValueError, match="lara.when_none_selected"):
        LARA(when_none_selected="wait")


@pytest.mark.parametrize("seed", range(6))
def test_no_online_allocator_beats_the_offline_optimum(seed):
    params = BundleParams.from_config({"kind": "random", "threads": 6, "begin_spread": 50, "noise": 0.01})
    bundle = draw_bundle(params, np.random.default_rng(seed))
    arrays = bundle.arrays()
    needs = np.array([c.data_to_reach(t.threshold, t.data_limit) for t, c in zip(bundle.threads, bundle.curves)])
    best = solve_offline_optimum(arrays.begin, arrays.deadline, needs / arrays.budget)
    assert best.optimal
    for allocator in (
        LARA(exploration=500.0),
        UniformAllocation(),
        ShortestThreadFirst(),
        LeastResourcesFirst(exploration=500.0),
        EasiestThreadFirst(exploration=500.0),
    ):
        assert simulate(bundle, allocator).successes <= best.count
