"""`lara.delivery`: how LARA splits the unit among the threads Alg. 1 selects, by the
cascade of eq. 3.8 (Alg. 2 line 11, the default) or in deadline order, each selected thread
served in full (a reading of Theorem 1; algorithms/core/lara.py). Alg. 1's selected set does
not depend on the delivery: checked on recorded decisions of random bundles, where the compiled
allocator's shares are also the reference's, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.core import family
from algorithms.core.config import PredictionSettings, allocator_specs, make_allocator
from algorithms.core.lara import DELIVERIES, LARA, deadline_shares, lara_unit_shares
from algorithms.core.lara_kernel import CompiledLARA
from algorithms.core.simulation import UnitView, simulate
from algorithms.core.tree_search import adaptive_tree_search, deadline_order
from market.core.bundle_generators import BundleParams, draw_bundle


def bundle(config: dict, seed: int):
    return draw_bundle(BundleParams.from_config(config), np.random.default_rng(seed))


# --- the split ------------------------------------------------------------------------------


def test_deadline_shares_serve_the_selected_threads_in_deadline_order_each_in_full():
    units = np.array([0.3, math.inf, 0.5, 0.4, 0.0])
    selected = np.array([True, False, True, True, True])
    deadlines = np.array([5, 3, 4, 6, 2])
    # deadline order: T5 (needs 0), T2 (not selected), T3 0.5, T1 0.3, T4 takes the 0.2 left
    shares = deadline_shares(units, selected, deadline_order(deadlines))
    np.testing.assert_allclose(shares, [0.3, 0.0, 0.5, 0.2, 0.0], rtol=0, atol=1e-15)
    assert shares.sum() == pytest.approx(1.0)


def test_deadline_ties_go_to_the_lower_index_first():
    units = np.array([0.7, 0.7, 0.7])
    shares = deadline_shares(units, np.ones(3, dtype=bool), deadline_order(np.array([9, 9, 4])))
    np.testing.assert_allclose(shares, [0.3, 0.0, 0.7], rtol=0, atol=1e-15)


def test_when_the_needs_do_not_fill_the_unit_line_12_rescales_them():
    """Needs of 0.1 and 0.3 units: both deliveries select both threads; deadline order gives
    0.1 and 0.3, line 12 rescales them to 0.25 and 0.75 (the cascade's shares are smaller,
    p_k / (d_k - d_0 - earlier needs), and rescaled likewise)."""
    need, budget = np.array([1.0, 3.0, 50.0]), np.array([10.0, 10.0, 1.0])
    deadline, active = np.array([10, 20, 5]), np.array([True, True, True])
    shares, selected = lara_unit_shares(need, budget, deadline, active, 1, "deadline")
    assert selected.tolist() == [True, True, False]  # T3 needs 50 units by unit 5
    np.testing.assert_allclose(shares, [0.25, 0.75, 0.0], rtol=1e-15)
    cascade, selected_too = lara_unit_shares(need, budget, deadline, active, 1, "cascade")
    assert selected_too.tolist() == selected.tolist()
    assert cascade.sum() == pytest.approx(1.0) and (cascade[:2] > 0).all() and cascade[2] == 0.0


def test_when_nothing_is_selected_both_deliveries_fall_back_alike():
    need, budget = np.array([500.0, 0.0]), np.array([1.0, 1.0])
    deadline, active = np.array([5, 6]), np.array([True, True])
    for delivery in DELIVERIES:
        shares, selected = lara_unit_shares(need, budget, deadline, active, 1, delivery, "uniform")
        assert selected.tolist() == [False, True] and shares.tolist() == [0.5, 0.5]
        shares, _ = lara_unit_shares(need, budget, deadline, active, 1, delivery, "idle")
        assert shares.tolist() == [0.0, 0.0]


# --- recorded decisions ---------------------------------------------------------------------


def record_exploit_units(b, allocator):
    """Run `allocator` (CompiledLARA) on `b`; at every exploiting unit keep (view, need, shares)."""
    inner = allocator.allocate
    seen = []

    def allocate(view: UnitView):
        shares = inner(view)
        fitted = allocator.fitted
        exploring = view.active & (~fitted | ((view.data <= allocator.exploration) if allocator.explore else False))
        if not exploring.any():
            seen.append((view, allocator.need, shares.copy()))
        return shares

    allocator.allocate = allocate
    outcome = simulate(b, allocator)
    return seen, outcome


def served_prefix(order, chosen, amount, full):
    """The threads of `chosen` (positive need) in `order` up to and including the first one at
    which `full(so_far)` says the unit is used up: the threads a delivery gives a share."""
    out, so_far = [], []
    for k in order:
        if chosen[k]:
            out.append(k)
            so_far.append(amount[k])
            if full(so_far):
                break
    return sorted(out)


@pytest.mark.parametrize("running", DELIVERIES)
@pytest.mark.parametrize(
    "seed, config, options",
    [
        (0, {"kind": "random", "threads": 20}, {}),
        (1, {"kind": "random", "threads": 20}, {"explore": False}),
        (2, {"kind": "random", "threads": 20}, {"explore": False, "when_none_selected": "idle"}),
        (3, {"kind": "random", "threads": 30, "shape": "floor"}, {"exploration": 500.0, "min_need": 1.0}),
        (6, {"kind": "random", "threads": 20, "shape": "floor"}, {"exploration": 500.0}),
    ],
)
def test_both_deliveries_select_the_same_set_on_the_same_state(seed, config, options, running):
    """One allocator runs (delivery `running`, compiled); at every exploit unit Alg. 2's lines
    10-12 are recomputed on its state for both deliveries (lara.lara_unit_shares, the reference):
    the same set C; the running delivery's shares equal the compiled ones bit for bit; each
    delivery's shares are positive exactly on the threads of C with a positive need that it
    serves before the unit is used up: with the cascade, those up to the first with
    eta_tilde = 1 (usually all of C); in deadline order, those up to the first at which the
    needs p_k reach 1. If C has no thread with a positive need, `when_none_selected` decides."""
    b = bundle(config, seed)
    arrays = b.arrays()
    when = options.get("when_none_selected", "uniform")
    m = options.get("min_need", 0.0)
    seen, _ = record_exploit_units(b, CompiledLARA(delivery=running, **options))
    assert len(seen) > 20
    differ = 0
    for view, need, compiled_shares in seen:
        if m > 0.0:
            need = np.where(view.active & (need == 0.0), m, need)
        got = {
            d: lara_unit_shares(need, arrays.budget, arrays.deadline, view.active, view.t, d, when) for d in DELIVERIES
        }
        np.testing.assert_array_equal(got["cascade"][1], got["deadline"][1])  # the same C
        np.testing.assert_array_equal(got[running][0], compiled_shares)  # reference = compiled
        active = np.flatnonzero(view.active)
        units = need / arrays.budget
        units = np.where(np.isnan(units), np.inf, units)
        selected = got["cascade"][1]
        chosen = selected & (units > 0.0)
        eta = np.zeros(units.size)
        eta[active], keep = adaptive_tree_search(units[active], arrays.deadline[active], view.t - 1)
        np.testing.assert_array_equal(keep, selected[active])
        order = active[deadline_order(arrays.deadline[active])].tolist()
        expected = {
            "cascade": served_prefix(order, chosen, eta, lambda e: e[-1] >= 1.0),
            "deadline": served_prefix(order, chosen, units, lambda p: math.fsum(p) >= 1.0),
        }
        for delivery, (shares, _) in got.items():
            if chosen.any():
                assert np.flatnonzero(shares > 0.0).tolist() == expected[delivery], (view.t, delivery)
                assert shares.sum() == pytest.approx(1.0, abs=1e-12)
            elif when == "uniform":
                np.testing.assert_array_equal(shares[active], np.full(active.size, 1.0 / active.size))
            else:
                assert not shares.any()
        differ += not np.array_equal(got["cascade"][0], got["deadline"][0])
    assert differ > 0  # the deliveries split the unit differently


def test_the_default_delivery_is_the_cascade_and_changes_nothing():
    b = bundle({"kind": "table2", "epsilon_set": 2}, 0)
    default = simulate(b, CompiledLARA(), record_eta=True)
    cascade = simulate(b, CompiledLARA(delivery="cascade"), record_eta=True)
    np.testing.assert_array_equal(default.eta, cascade.eta)
    assert LARA().delivery == CompiledLARA().delivery == PredictionSettings().delivery == "cascade"


def test_the_deadline_delivery_runs_the_same_in_both_paths_on_table1():
    b = bundle({"kind": "table1"}, 0)
    want = simulate(b, LARA(delivery="deadline"), record_eta=True)
    got = simulate(b, CompiledLARA(delivery="deadline"), record_eta=True)
    np.testing.assert_array_equal(got.eta, want.eta)
    np.testing.assert_array_equal(got.completed, want.completed)


# --- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [LARA, CompiledLARA])
def test_an_unknown_delivery_is_an_error_naming_the_key(make):
    with pytest.raises(ValueError, match="lara.delivery must be one of cascade, deadline, got 'edf'"):
        make(delivery="edf")


def test_the_section_and_the_variants_take_delivery():
    with pytest.raises(ValueError, match="lara.delivery must be one of cascade, deadline, got 'x'"):
        allocator_specs({"mechanisms": ["LARA"], "lara": {"delivery": "x"}})
    with pytest.raises(ValueError, match=r"LARA\(delivery=edf\): delivery must be one of cascade, deadline"):
        allocator_specs({"mechanisms": ["LARA(delivery=edf)"]})
    with pytest.raises(
        ValueError,
        match=r"LRF\(delivery=deadline\): unknown key\(s\) 'delivery': LRF takes the optional keys",
    ):
        allocator_specs({"mechanisms": ["LRF(delivery=deadline)"]})
    specs = allocator_specs({"mechanisms": ["LARA", "LARA(delivery=deadline)", "LRF"], "lara": {"delivery": "cascade"}})
    assert [s.settings.delivery for s in specs] == ["cascade", "deadline", "cascade"]
    allocator = make_allocator(specs[1])
    assert isinstance(allocator, CompiledLARA) and allocator.delivery == "deadline"
    assert allocator.name == "LARA(delivery=deadline)"
    deadline_everywhere = allocator_specs({"mechanisms": ["LARA"], "lara": {"delivery": "deadline"}})
    assert make_allocator(deadline_everywhere[0]).delivery == "deadline"


def test_a_cell_runs_both_deliveries_side_by_side():
    config = {
        "bundle": {"kind": "table1"},
        "lara": {"delivery": None, "min_need": None},
        "mechanisms": ["LARA", "LARA(delivery=deadline)", "OPT"],
    }
    rows = family.simulate_replicate(family.prepare(config), 0, np.random.default_rng(0))
    assert [r["mechanism"] for r in rows] == ["LARA", "LARA(delivery=deadline)", "OPT"]
    assert all(r["utility"] <= rows[-1]["utility"] for r in rows)
