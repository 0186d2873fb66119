"""`lara.min_need` and the `starved_by_fit` column: a thread whose fit says it is done
(eq. 3.6 gives S_hat = 0) while its observed loss is still above eps_k gets no data under the
paper's allocation (need 0), reports no new loss, and its fit never changes; with min_need = m
> 0 its need is m data units instead, so it keeps receiving data (explore_then_exploit.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.core import family
from algorithms.core.config import allocator_specs, make_allocator
from algorithms.core.easiest_thread_first import EasiestThreadFirst
from algorithms.core.lara import LARA
from algorithms.core.lara_kernel import CompiledLARA
from algorithms.core.least_resources_first import LeastResourcesFirst
from algorithms.core.simulation import simulate
from market.core.parametric import ParametricCurve, PowerLaw
from market.core.threads import Bundle, Thread

EPS = 0.1
DEADLINE = 150


class FloorCurve:
    """loss(s) = floor + a s^-b, noise-free: convex in log-log, so the straight line of eq. 3.3
    fitted to its recent points lies below it at the last point and reaches eps first."""

    def __init__(self, floor: float, a: float, b: float):
        self.floor, self.a, self.b = floor, a, b

    def loss(self, data: float) -> float:
        return self.floor + self.a * data**-self.b

    true_loss = loss

    def data_to_reach(self, threshold: float, limit: float) -> float:
        if threshold <= self.floor:
            return math.inf
        s = (self.a / (threshold - self.floor)) ** (1.0 / self.b)
        return s if s <= limit else math.inf


def starving_bundle(a: float = 3.0, b: float = 3.0, budget: float = 5.0) -> Bundle:
    """T1: loss 0.08 + a s^-b, eps 0.1, N = budget, deadline 150; by default 0.08 + 3 s^-3, eps
    reached at s = 150^(1/3) = 5.31: after exploration (H = 0: two reports each) LARA's
    cascade gives it a trickle of data while its fit predicts a small positive need, until the
    fit says done at about s = 5.24. T2: a power law that needs 3600 data at N = 10 (360 of its
    400 units): Alg. 1 always selects it, so the unit is never left to `when_none_selected`
    while T1 is active."""
    threads = (Thread(0, DEADLINE, budget, EPS, "T1"), Thread(0, 400, 10.0, 0.5, "T2"))
    curves = (FloorCurve(0.08, a, b), ParametricCurve(PowerLaw.through(0.5, 3600.0, 0.5)))
    return Bundle(threads, curves)


def first_unit_done_by_the_fit(trace) -> int:
    return min(t for t, k, _, need in trace if k == 0 and need == 0.0)


def run(make, world=None, **options):
    allocator = make(exploration=0.0, gamma=0.9, log_predictions=True, **options)
    outcome = simulate(world or starving_bundle(), allocator, record_eta=True)
    return allocator, outcome


@pytest.mark.parametrize("make", [LARA, CompiledLARA], ids=["reference", "compiled"])
def test_as_printed_the_thread_done_by_the_fit_starves(make):
    allocator, outcome = run(make)
    t0 = first_unit_done_by_the_fit(allocator.trace)
    assert allocator.exploration_end == 2 and t0 > 2
    assert outcome.data[0] < 5.3  # the loss it reported is above eps ...
    assert outcome.last_loss[0] > EPS
    # ... and from then on it gets nothing, up to its deadline, and its prediction stays 0
    assert outcome.eta[t0 - 1 : DEADLINE, 0].max() == 0.0
    assert {need for t, k, _, need in allocator.trace if k == 0 and t >= t0} == {0.0}
    assert not outcome.completed[0] and outcome.completed[1]
    assert allocator.done_by_fit.tolist() == [True, False]
    assert family.starved_by_fit(allocator, outcome) == 1


@pytest.mark.parametrize("make", [LARA, CompiledLARA], ids=["reference", "compiled"])
def test_with_min_need_one_it_keeps_getting_data_and_succeeds(make):
    allocator, outcome = run(make, min_need=1.0)
    t0 = first_unit_done_by_the_fit(allocator.trace)  # the fit says done as before (the trace logs S_hat)
    end = int(outcome.completion_time[0])
    assert t0 < end <= DEADLINE and outcome.completed.tolist() == [True, True]
    assert outcome.eta[t0 - 1 : end, 0].min() > 0.0  # a share every unit until it succeeds
    assert allocator.done_by_fit[0] and family.starved_by_fit(allocator, outcome) == 0
    assert family.done_by_fit_failed(allocator, outcome) == 0  # it succeeded


@pytest.mark.parametrize("delivery", ["cascade", "deadline"])
@pytest.mark.parametrize("min_need", [0.0, 1.0, 4.0])
def test_compiled_and_reference_agree_with_min_need(min_need, delivery):
    reference, want = run(LARA, min_need=min_need, delivery=delivery)
    compiled, got = run(CompiledLARA, min_need=min_need, delivery=delivery)
    np.testing.assert_array_equal(got.eta, want.eta)
    np.testing.assert_array_equal(got.completion_time, want.completion_time)
    np.testing.assert_array_equal(compiled.done_by_fit, reference.done_by_fit)
    assert compiled.trace == reference.trace


@pytest.mark.parametrize("make", [LeastResourcesFirst, EasiestThreadFirst])
def test_lrf_and_etf_starve_it_too_unless_min_need(make):
    """LRF and ETF give T1 its whole predicted need at once: with T1's loss 0.08 + 0.5 / s and
    N = 2 (eps at s = 25) the fit says done at s = 19 (unit 13); with min_need = 1 it gets one data
    unit (half the unit of compute, min(left, m / N_k)) at every unit until it succeeds."""
    world = starving_bundle(a=0.5, b=1.0, budget=2.0)
    allocator, outcome = run(make, world)
    t0 = first_unit_done_by_the_fit(allocator.trace)
    assert outcome.eta[t0 - 1 : DEADLINE, 0].max() == 0.0 and not outcome.completed[0]
    assert family.starved_by_fit(allocator, outcome) == 1
    allocator, outcome = run(make, world, min_need=1.0)
    assert outcome.completed[0] and family.starved_by_fit(allocator, outcome) == 0
    t0 = first_unit_done_by_the_fit(allocator.trace)
    end = int(outcome.completion_time[0])
    assert t0 < end and outcome.eta[t0 - 1 : end, 0].tolist() == [0.5] * (end - t0 + 1)


@pytest.mark.parametrize("make", [LARA, CompiledLARA, LeastResourcesFirst, EasiestThreadFirst])
@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_a_bad_min_need_is_an_error_naming_the_key(make, bad):
    with pytest.raises(ValueError, match="lara.min_need"):
        make(min_need=bad)


def test_the_section_and_the_variants_take_min_need():
    with pytest.raises(ValueError, match="lara.min_need must be"):
        allocator_specs({"mechanisms": ["LARA"], "lara": {"min_need": -1}})
    with pytest.raises(ValueError, match=r"LRF\(min_need=-2\): min_need must be"):
        allocator_specs({"mechanisms": ["LRF(min_need=-2)"]})
    specs = allocator_specs(
        {"mechanisms": ["LARA", "LRF", "ETF(min_need=2)", "LARA(min_need=0)"], "lara": {"min_need": 1}}
    )
    assert [s.settings.min_need for s in specs] == [1.0, 1.0, 2.0, 0.0]
    assert [make_allocator(s).min_need for s in specs] == [1.0, 1.0, 2.0, 0.0]


def test_starved_by_fit_is_in_every_row_and_zero_without_predictions():
    config = {"bundle": {"kind": "table1"}, "mechanisms": ["LARA", "UA", "STF", "LRF", "ETF", "OPT"]}
    rows = family.simulate_replicate(family.prepare(config), 0, np.random.default_rng(0))
    assert "starved_by_fit" in family.SUMMARY_COLUMNS
    for row in rows:
        assert isinstance(row["starved_by_fit"], int) and 0 <= row["starved_by_fit"] <= row["threads"]
        if row["mechanism"] in ("UA", "STF", "OPT"):
            assert row["starved_by_fit"] == 0
