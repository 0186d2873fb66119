"""Definition 1 (paper 004, Appendix E) on the fractional unit allocation we build from Appendix E's
LP (algorithms/sow/fractional_unit_allocation.py): the partition of every round's C' units and the
three conditions, on 200 random instances and by hand."""

import numpy as np
import pytest

from algorithms.sow.fractional_unit_allocation import build_fractional_unit_allocation, definition1_violations
from algorithms.sow.stochastic_lp import solve_stochastic_lp
from market.sow.prior_births import Prior
from market.sow.statement_of_work import Bounds, sow_from_lists
from tests.sow.worlds import random_sow


def random_priors(rng, bounds, jobs, variants):
    priors = []
    for b in np.sort(rng.integers(0, 4, size=jobs)).tolist():
        sows = tuple(random_sow(rng, int(b), bounds, points=int(rng.integers(1, 4))) for _ in range(variants))
        priors.append(Prior(sows, rng.dirichlet(np.ones(variants)), 0))
    return priors


def test_definition_1_holds_on_200_random_instances():
    kept = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        c_max = int(rng.integers(1, 4))
        bounds = Bounds(c_max, int(rng.integers(1, 5)), 10, 20.0)
        priors = random_priors(rng, bounds, int(rng.integers(1, 9)), int(rng.integers(1, 4)))
        capacity = float(rng.uniform(c_max, 4 * c_max))  # C' >= C_max: at least one lane
        lp = solve_stochastic_lp(priors, capacity)
        fua = build_fractional_unit_allocation(lp, c_max, rounds=30)
        assert definition1_violations(fua, lp) == [], seed
        assert fua.lanes == int(np.floor(capacity / c_max + 1e-9))
        assert 0 <= fua.value <= fua.lp_value + 1e-9
        # z_FUA <= z is an LP solution: supply and per-task caps hold
        assert np.all(lp.usage(fua.z, 30) <= capacity + 1e-7)
        kept.append(fua.share)
    assert np.mean(kept) > 0.3  # information: what the construction keeps on these instances


def outcome_lp(starts, durations, widths, values, capacity):
    """An LP-like object for hand cases: one job, one variant, one point per outcome."""
    from algorithms.sow.stochastic_lp import StochasticLP

    n = len(starts)

    def ints(xs):
        return np.asarray(xs, np.int64)

    z = np.ones(n)
    return StochasticLP(
        capacity,
        ints(range(n)),
        ints([0] * n),
        ints([0] * n),
        ints(starts),
        ints(durations),
        ints(widths),
        np.ones(n),
        np.ones(n),
        np.asarray(values, float),
        z,
        float(np.sum(values)),
        float(np.sum(values)),
    )


def test_hand_case_groups_lanes_and_the_leftover_units():
    # C' = 5, C_max = 2: L = 2 lanes, 1 unit a round left over. Outcomes (z = 1, lambda = 1):
    #  o0 [0, 2) width 1 value 4;  o1 [0, 2) width 1 value 2  -> one group (mass 2), span [0, 2)
    #  o2 [1, 3) width 2 value 6  -> does not fit the first (mass 4 > 2): its own group [1, 3)
    #  o3 [1, 2) width 1 value 1  -> fits none with room overlapping... opens a third group [1, 2)
    # Three groups overlap in round 1 with only 2 lanes: by value density the groups are
    # [0,2): 6/2 = 3, [1,3): 6/2 = 3, [1,2): 1/1 = 1 -> the last is dropped (share 12/13).
    lp = outcome_lp([0, 0, 1, 1], [2, 2, 2, 1], [1, 1, 2, 1], [4, 2, 6, 1], 5.0)
    fua = build_fractional_unit_allocation(lp, 2, rounds=4)
    assert fua.lanes == 2 and len(fua) == 2
    assert fua.bundle.tolist() == [0, 0, 1, -1]
    assert fua.first.tolist() == [0, 1] and fua.stop.tolist() == [2, 3] and fua.lane.tolist() == [0, 1]
    assert fua.bundle_value.tolist() == [6.0, 6.0] and fua.bundle_weight.tolist() == [2.0, 2.0]
    assert fua.share == pytest.approx(12 / 13)
    held, empty = fua.units()
    # round 0: bundle 0 holds 2 + the 3 left over; round 1: 2 + 1 and 2; round 2: bundle 1 2 + 3; round 3: empty
    assert held.tolist() == [[5, 3, 0, 0], [0, 2, 5, 0]] and empty.tolist() == [0, 0, 0, 5]
    assert definition1_violations(fua, lp) == []


def test_the_checker_sees_each_broken_condition():
    lp = outcome_lp([0, 0, 1, 1], [2, 2, 2, 1], [1, 1, 2, 1], [4, 2, 6, 1], 5.0)
    fua = build_fractional_unit_allocation(lp, 2, rounds=4)
    from dataclasses import replace

    assert any("condition 1" in v for v in definition1_violations(replace(fua, stop=np.array([1, 3])), lp))
    assert any(
        "condition 2" in v
        for v in definition1_violations(replace(fua, bundle=np.array([0, 0, 0, -1]), stop=np.array([3, 3])), lp)
    )
    assert any("condition 3" in v for v in definition1_violations(replace(fua, unit=3), lp))


def test_no_lane_is_refused():
    lp = outcome_lp([0], [1], [1], [1], 1.5)
    with pytest.raises(ValueError, match=r"C' = N'/2 = 1\.5 is below C_max = 2"):
        build_fractional_unit_allocation(lp, 2)


def test_the_priors_of_a_hand_world():
    # also through real SoWs: a one-job prior whose two variants need the same round
    bounds = Bounds(1, 1, 3, 10.0)
    a = sow_from_lists(0, 1, [5, 5, 0, 0], [(0, 1, 1.0)])
    b = sow_from_lists(0, 1, [3, 3, 0, 0], [(0, 1, 1.0)])
    lp = solve_stochastic_lp([Prior((a, b), np.array([0.5, 0.5]), 0)], 1.0)
    fua = build_fractional_unit_allocation(lp, bounds.max_concurrency)
    assert lp.objective == pytest.approx(4.0) and fua.share == pytest.approx(1.0)
    assert definition1_violations(fua, lp) == []
