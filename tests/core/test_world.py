"""The core world (market/core): parametric loss curves and task bundles (paper 002, eq. 3.1,
Sec. 4.1-4.3; docs/core/calibration.md)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from market.core.bundle_generators import DIFFICULTY, TABLE1, TABLE2, BundleParams, draw_bundle
from market.core.curves import LossCurve
from market.core.parametric import BLOCK, CACHED_BLOCKS, XI_MAX, ParametricCurve, PowerLaw


def noisy(law, noise=0.05, cell=1.0, seed=0):
    return ParametricCurve(law, noise, cell, np.random.default_rng(seed))


# --- curves: hand-computed ------------------------------------------------------


def test_power_law_by_hand():
    law = PowerLaw(2.0, 0.5)  # l(s) = 2 / sqrt(s)
    assert law.value(16.0) == pytest.approx(0.5) and law.value(4.0) == pytest.approx(1.0)
    assert law.data_to_reach(0.5) == pytest.approx(16.0)  # (a / eps)^(1/b)
    curve = ParametricCurve(law)
    assert isinstance(curve, LossCurve) and law.shape == "power"
    assert curve.loss(4.0) == curve.true_loss(4.0) == pytest.approx(1.0)
    assert curve.data_to_reach(0.5, 100.0) == pytest.approx(16.0)
    assert curve.data_to_reach(0.5, 16.0) == pytest.approx(16.0)
    assert curve.data_to_reach(0.5, 15.9) == math.inf
    assert curve.data_to_reach(0.5, 0.0) == math.inf


def test_floor_and_bend_by_hand():
    floor = PowerLaw(2.0, 0.5, floor=0.25)  # 2 / sqrt(s) + 0.25
    assert floor.shape == "floor" and floor.data_to_reach(0.5) == pytest.approx(64.0)
    assert floor.data_to_reach(0.25) == math.inf and floor.data_to_reach(0.1) == math.inf
    assert floor.values(np.array([1e12]))[0] > 0.25
    bend = PowerLaw(1.0, 1.0, bend=10.0, exponent_after=0.5)  # 1/s up to 10, then 0.1 (s/10)^-0.5
    assert bend.shape == "bend"
    assert bend.value(10.0) == pytest.approx(0.1) and bend.value(40.0) == pytest.approx(0.05)
    assert bend.value(math.nextafter(10.0, 11)) == pytest.approx(0.1)  # continuous at s_bend
    assert bend.data_to_reach(0.05) == pytest.approx(40.0) and bend.data_to_reach(0.2) == pytest.approx(5.0)
    s = np.array([1.0, 5.0, 10.0, 40.0, 400.0])
    assert np.allclose(bend.values(s), [bend.value(x) for x in s])
    assert np.allclose(bend.inverse(bend.values(s)), s)


@pytest.mark.parametrize(
    "options, shape",
    [
        ({}, "power"),
        ({"floor_share": 0.4}, "floor"),
        ({"bend_share": 0.25, "bend_ratio": 0.5}, "bend"),
        ({"bend_share": 0.25, "bend_ratio": 2.0}, "bend"),
        ({"bend_share": 1.0}, "bend"),
    ],
)
def test_through_passes_through_the_calibration_point(options, shape):
    law = PowerLaw.through(0.35, 12345.0, 0.45, **options)
    assert law.shape == shape
    assert law.value(12345.0) == pytest.approx(0.35)
    assert law.data_to_reach(0.35) == pytest.approx(12345.0)
    if "floor_share" in options:
        assert law.floor == pytest.approx(0.14)
    if options.get("bend_share") == 0.25:
        assert law.bend == pytest.approx(12345.0 / 4) and law.exponent_after == pytest.approx(
            0.45 * options["bend_ratio"]
        )


@pytest.mark.parametrize("data", [0.0, -1.0, math.nan, math.inf])
def test_no_data_no_loss(data):
    curve = noisy(PowerLaw(1.0, 0.5))
    for method in (curve.loss, curve.true_loss):
        with pytest.raises(ValueError, match="data > 0"):
            method(data)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"scale": 0.0, "exponent": 0.5}, "scale"),
        ({"scale": 1.0, "exponent": -0.5}, "exponent"),
        ({"scale": 1.0, "exponent": 0.5, "floor": -1.0}, "floor"),
        ({"scale": 1.0, "exponent": 0.5, "bend": 0.0}, "bend"),
        ({"scale": 1.0, "exponent": 0.5, "exponent_after": 0.0}, "exponent_after"),
    ],
)
def test_power_law_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PowerLaw(**kwargs)


def test_curve_rejects_bad_noise_and_needs_a_generator():
    with pytest.raises(ValueError, match="noise"):
        ParametricCurve(PowerLaw(1.0, 0.5), noise=-0.1)
    with pytest.raises(ValueError, match="cell"):
        ParametricCurve(PowerLaw(1.0, 0.5), cell=0.0)
    with pytest.raises(ValueError, match="rng"):
        ParametricCurve(PowerLaw(1.0, 0.5), noise=0.1)


# --- curves: noise -------------------------------------------------------------


def test_noise_is_fixed_per_cell_and_lognormal():
    law = PowerLaw(3.0, 0.4)
    curve = noisy(law, noise=0.05)
    assert curve.noise_factor(7.2) == curve.noise_factor(7.9) != curve.noise_factor(8.0)  # one per cell
    assert curve.loss(7.9) == law.value(7.9) * curve.noise_factor(7.9)
    cells = np.arange(1, 3 * BLOCK) + 0.5
    xi = np.log([curve.loss(s) / law.value(s) for s in cells]) / 0.05
    assert abs(xi.mean()) < 0.05 and abs(xi.std() - 1.0) < 0.05 and np.abs(xi).max() <= XI_MAX + 1e-9
    assert len(curve._cache) <= CACHED_BLOCKS  # memory: a few blocks, whatever was asked


def test_same_seed_same_curve_in_any_call_order():
    law = PowerLaw.through(0.5, 5e5, 0.45)
    points = [3.0, 9e5, 12.5, 4.1e5, 77.0, 2.5e6, 3.0]
    a, b = noisy(law, seed=4), noisy(law, seed=4)
    forward = [a.loss(s) for s in points]
    backward = [b.loss(s) for s in reversed(points)][::-1]
    assert forward == backward and forward[0] == forward[-1]
    assert a.data_to_reach(0.5, 2e6) == b.data_to_reach(0.5, 2e6)
    assert noisy(law, seed=5).loss(3.0) != forward[0]
    shipped = pickle.loads(pickle.dumps(a))  # to a worker: key kept, cache not
    assert shipped._cache == {} and [shipped.loss(s) for s in points] == forward


def brute_least(curve, threshold, limit):
    """Cell by cell with loss() only: the least s in (0, limit] with loss(s) <= threshold."""
    j = 0
    while j * curve.cell < limit:
        low, top = max(j * curve.cell, 1e-300), (j + 1) * curve.cell
        high = math.nextafter(top, 0) if top <= limit else limit
        if curve.loss(high) <= threshold:  # one factor per cell, l decreasing: bisect
            if curve.loss(low) <= threshold:
                return low
            for _ in range(200):
                mid = (low + high) / 2
                low, high = (low, mid) if curve.loss(mid) <= threshold else (mid, high)
            return high
        j += 1
    return math.inf


@pytest.mark.parametrize(
    "law, cell, noise",
    [
        (PowerLaw.through(0.5, 3000.0, 0.45), 1.0, 0.05),  # deep dips: whole cells below
        (PowerLaw.through(0.5, 3000.0, 0.3), 0.5, 0.05),
        (PowerLaw.through(0.5, 3000.0, 0.45, floor_share=0.6), 1.0, 0.05),
        (PowerLaw.through(0.5, 3000.0, 0.45, bend_share=0.3, bend_ratio=0.4), 2.0, 0.05),
        (PowerLaw.through(0.5, 3000.0, 0.45), 64.0, 0.01),  # wide cells: the least s inside a cell
        (PowerLaw.through(0.5, 3000.0, 0.45, bend_share=0.3, bend_ratio=0.4), 100.0, 0.01),
        (PowerLaw.through(0.5, 3000.0, 0.3), 0.25, 0.002),
    ],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_data_to_reach_is_exact_against_brute_force(law, cell, noise, seed):
    curve = noisy(law, noise=noise, cell=cell, seed=seed)
    inside = []
    for threshold, limit in ((0.5, 6000.0), (0.55, 6000.0), (0.5, 2000.0), (0.46, 4500.0), (0.53, 6000.0)):
        found = curve.data_to_reach(threshold, limit)
        expected = brute_least(curve, threshold, limit)
        if expected == math.inf:
            assert found == math.inf
            continue
        assert found == pytest.approx(expected, rel=1e-9, abs=1e-9)
        assert found <= limit and curve.loss(found) <= threshold
        grid = np.arange(cell / 16, limit + 1e-9, cell / 16)
        below = grid[grid < found * (1 - 1e-12)]
        assert all(curve.loss(s) > threshold for s in below[-4000:])  # grid points before it miss
        inside.append(found % cell != 0)
    if cell >= 64:
        assert any(inside)


def test_data_to_reach_limits():
    curve = noisy(PowerLaw.through(0.5, 3000.0, 0.45), noise=0.05)
    exact = curve.data_to_reach(0.5, 1e4)
    assert curve.data_to_reach(0.5, exact) == exact
    assert curve.data_to_reach(0.5, math.nextafter(exact, 0)) == math.inf
    assert exact < 0.95 * curve.law.data_to_reach(0.5)  # a dip before the noise-free crossing
    assert curve.data_to_reach(0.5, math.inf) == exact
    floor = noisy(PowerLaw.through(0.5, 3000.0, 0.45, floor_share=0.6), noise=0.05)
    assert floor.data_to_reach(0.2, 1e5) == math.inf  # far below the floor: cells skipped
    with pytest.raises(ValueError, match="finite limit"):
        floor.data_to_reach(0.25, math.inf)


def test_data_to_reach_is_fast_on_a_long_thread():
    curve = noisy(PowerLaw.through(0.05, 2e6, 0.4), noise=0.01)
    found = curve.data_to_reach(0.05, 4e6)
    assert 1.6e6 < found < 2.2e6 and curve.loss(found) <= 0.05
    assert curve.data_to_reach(0.005, 4e6) == math.inf  # unreachable: nothing scanned


# --- bundles ----------------------------------------------------------------------


def bundle(seed=0, **section):
    return draw_bundle(BundleParams.from_config(section), np.random.default_rng(seed))


def test_table1_numbers_and_calibration():
    b = bundle(jitter=0.0)
    arrays = b.arrays()
    assert arrays.labels == ("ViT", "LSTM", "CNN", "ResNet18", "ResNet34")
    assert arrays.budget.tolist() == [163, 220, 375, 97, 55]
    assert arrays.deadline.tolist() == [500, 570, 590, 610, 630]
    assert arrays.threshold.tolist() == [1.35, 1.18, 0.15, 0.35, 0.45]
    assert arrays.begin.tolist() == [0] * 5 and b.horizon == 630
    for thread, curve, difficulty in zip(b.threads, b.curves, DIFFICULTY["table1"]):
        assert curve.law.data_to_reach(thread.threshold) == pytest.approx(difficulty * thread.data_limit)
        assert curve.noise == 0.01 and curve.law.shape == "power"


@pytest.mark.parametrize("eps_set", [1, 2])
def test_table2_numbers(eps_set):
    b = bundle(kind="table2", epsilon_set=eps_set, jitter=0.0)
    arrays = b.arrays()
    assert arrays.labels == TABLE2["labels"] and arrays.labels[2] == "RL DAgger+CNN"
    assert arrays.deadline.tolist() == [530, 540, 545, 585, 625, 655, 685, 690, 700, 710]
    assert arrays.budget.tolist() == [176, 176, 69, 293, 139, 107, 107, 139, 293, 69]
    expected = {
        1: [1.1, 1.35, 0.0011, 0.06, 7e-4, 0.55, 0.55, 9e-4, 0.08, 0.0012],
        2: [0.99, 1.215, 0.0011, 0.09, 6.3e-4, 0.46, 0.48, 4.5e-4, 0.108, 6e-4],
    }[eps_set]
    assert arrays.threshold.tolist() == expected
    for thread, curve, difficulty in zip(b.threads, b.curves, DIFFICULTY[("table2", eps_set)]):
        assert curve.law.data_to_reach(thread.threshold) == pytest.approx(difficulty * thread.data_limit)


def test_jitter_spreads_difficulty_across_replicates():
    solo = [
        [c.law.data_to_reach(t.threshold) / t.data_limit for t, c in zip(b.threads, b.curves)]
        for b in (bundle(seed) for seed in range(3))
    ]
    ratio = np.array(solo) / np.array(DIFFICULTY["table1"])
    assert np.all(np.abs(ratio - 1) <= 0.05 + 1e-12) and len({tuple(r) for r in solo}) == 3


def test_same_seed_same_bundle():
    for kind in ("table2", "scalability", "random"):
        a, b = bundle(7, kind=kind), bundle(7, kind=kind)
        assert a.threads == b.threads
        assert [c.loss(1234.5) for c in a.curves] == [c.loss(1234.5) for c in b.curves]
        assert [c.loss(1234.5) for c in bundle(8, kind=kind).curves] != [c.loss(1234.5) for c in a.curves]


@pytest.mark.parametrize("threads", [10, 25, 100])
def test_scalability_chains_solo_times_and_makes_a_third_harder(threads):
    b = bundle(3, kind="scalability", threads=threads)
    assert len(b) == threads and all(t.begin == 0 for t in b.threads)
    harder = [t.label.endswith("(eps/10)") for t in b.threads]
    assert sum(harder) == round(threads / 3)
    previous = 0
    for thread, curve, hard in zip(b.threads, b.curves, harder):
        model = TABLE1["labels"].index(thread.label.split(" ")[0])
        assert thread.budget == TABLE1["budget"][model]
        eps = thread.threshold * 10 if hard else thread.threshold
        assert 1.0 * TABLE1["threshold"][model] <= eps * (1 + 1e-12) and eps <= 2.0 * TABLE1["threshold"][model]
        solo = curve.law.data_to_reach(eps) / thread.budget
        assert thread.deadline - previous == math.ceil(solo)  # d_k = d_{k-1} + ceil(solo_k)
        previous = thread.deadline


def test_recording_spread_moves_only_the_deadline_chain():
    """Sec. 4.3's deadlines come from a recording run: with `recording_spread` sigma each solo
    time is the evaluated curve's times a log-normal factor; the threads and curve laws stay."""
    literal = bundle(4, kind="scalability", threads=1000)
    recorded = bundle(4, kind="scalability", threads=1000, recording_spread=0.1)
    assert [(t.budget, t.threshold, t.label) for t in literal.threads] == [
        (t.budget, t.threshold, t.label) for t in recorded.threads
    ]
    assert [c.law for c in literal.curves] == [c.law for c in recorded.curves]
    increments = np.diff([0] + [t.deadline for t in recorded.threads])
    solo = np.array(
        [
            c.law.data_to_reach(t.threshold * (10 if t.label.endswith("(eps/10)") else 1)) / t.budget
            for t, c in zip(recorded.threads, recorded.curves)
        ]
    )
    ratio = np.log(increments / solo)
    assert 0.08 <= ratio.std() <= 0.12 and abs(np.median(ratio)) < 0.03
    assert (increments != np.diff([0] + [t.deadline for t in literal.threads])).mean() > 0.5


def test_random_bundle_staggers_begins_within_slack():
    b = bundle(5, kind="random", threads=40, begin_spread=300, deadline_slack=[1.5, 3.0])
    for thread, curve in zip(b.threads, b.curves):
        solo = curve.law.data_to_reach(thread.threshold) / thread.budget
        assert 0 <= thread.begin <= 300
        assert max(1, math.ceil(1.5 * solo)) <= thread.units <= max(1, math.ceil(3.0 * solo))
    assert len({t.begin for t in b.threads}) > 20


@pytest.mark.parametrize("shape", ["floor", "bend"])
def test_mis_specified_shapes_keep_the_calibration_point(shape):
    b = bundle(shape=shape, jitter=0.0)
    for thread, curve, difficulty in zip(b.threads, b.curves, DIFFICULTY["table1"]):
        data = difficulty * thread.data_limit
        assert curve.law.shape == shape and curve.law.value(data) == pytest.approx(thread.threshold)
    if shape == "floor":
        assert all(c.law.floor == pytest.approx(0.5 * t.threshold) for t, c in zip(b.threads, b.curves))


def test_exponents_per_model_type_or_from_the_config():
    default = bundle(kind="table2")
    assert [c.law.exponent for c in default.curves] == [0.35, 0.35, 0.6, 0.4, 0.55, 0.45, 0.45, 0.55, 0.4, 0.6]
    assert {c.law.exponent for c in bundle(exponent=0.5).curves} == {0.5}
    listed = bundle(exponent=[0.3, 0.4, 0.5, 0.6, 0.7])
    assert [c.law.exponent for c in listed.curves] == [0.3, 0.4, 0.5, 0.6, 0.7]
    assert {c.noise for c in bundle(noise=0).curves} == {0.0}


def test_custom_bundle_and_defaults():
    assert BundleParams.from_config(None) == BundleParams() == BundleParams.from_config({})
    b = bundle(
        kind="custom",
        budget=[10, 20],
        deadline=[50, 60],
        begin=[0, 5],
        threshold=[0.1, 0.2],
        difficulty=[0.3, 0.4],
        exponent=0.5,
        labels=["a", "b"],
        noise=0.0,
    )
    assert [t.begin for t in b.threads] == [0, 5] and b.arrays().labels == ("a", "b")
    assert b.curves[1].data_to_reach(0.2, math.inf) == pytest.approx(0.4 * 20 * 55, rel=0.05 + 1e-9)


@pytest.mark.parametrize(
    "section, message",
    [
        ({"threshold": [1.35, 1.18, 0.0, 0.35, 0.45]}, "bundle.threshold must be"),
        ({"threshold": [1.35, 1.18, -0.15, 0.35, 0.45]}, "bundle.threshold must be"),
        ({"budget": [163, 0, 375, 97, 55]}, "bundle.budget must be"),
        ({"deadline": [500, 570, 590, 610, 0]}, "bundle.deadline must be"),
        ({"begin": [0, 0, 600, 0, 0]}, "bundle.deadline must be > bundle.begin"),
        (
            {"kind": "custom", "budget": [1], "deadline": [5], "begin": [5], "threshold": [1], "difficulty": [1]},
            "bundle.deadline must be > bundle.begin",
        ),
        ({"noise": -1}, "bundle.noise must be"),
        ({"noise_cell": 0}, "bundle.noise_cell must be"),
        ({"difficulty": [1.2, 0.2, 0.0, 0.2, 0.2]}, "bundle.difficulty must be"),
        ({"difficulty": [1.2, 0.2]}, "bundle.difficulty must have 5 entries"),
        ({"kind": "scalability", "difficulty": [0.5] * 10}, "bundle.difficulty must have 5 entries"),
        ({"kind": "scalability", "threads": 0}, "bundle.threads must be"),
        ({"kind": "scalability", "threads": 1001}, "bundle.threads must be"),
        ({"kind": "random", "threads": 2.5}, "bundle.threads must be"),
        ({"kind": "table3"}, "bundle.kind must be one of"),
        ({"kind": "table2", "epsilon_set": 3}, "bundle.epsilon_set must be"),
        ({"shape": "cubic"}, "bundle.shape must be one of"),
        ({"exponent": 0}, "bundle.exponent must be"),
        ({"exponent": [0.4, 0.4]}, "bundle.exponent must have 5 entries"),
        ({"jitter": 1.0}, "bundle.jitter must be"),
        ({"floor": 1.0}, "bundle.floor must be"),
        ({"bend_at": 0}, "bundle.bend_at must be"),
        ({"bend_ratio": -1}, "bundle.bend_ratio must be"),
        ({"threshold_scale": [2.0, 1.0]}, "bundle.threshold_scale must"),
        ({"kind": "random", "shape": "floor", "threshold_scale": [0.4, 2.0]}, "bundle.threshold_scale must stay above"),
        ({"harder_fraction": 1.5}, "bundle.harder_fraction must be"),
        ({"harder_factor": 0.5}, "bundle.harder_factor must be"),
        ({"begin_spread": -1}, "bundle.begin_spread must be"),
        ({"recording_spread": -0.1}, "bundle.recording_spread must be"),
        ({"deadline_slack": [0, 2]}, "bundle.deadline_slack must"),
        ({"kind": "scalability", "threshold": [0.1] * 5}, "bundle.threshold applies to kinds"),
        ({"kind": "custom", "deadline": [5], "threshold": [1], "difficulty": [1]}, "bundle.budget must be a list"),
        ({"kind": "custom", "budget": [1], "deadline": [5], "threshold": [1]}, "bundle.difficulty must be a list"),
        ({"labels": ["a", 2, "c", "d", "e"]}, "bundle.labels must be"),
        ({"nosie": 0.1}, "bundle: unknown key.*'nosie'"),
        ([1, 2], "bundle: must be a mapping"),
    ],
)
def test_every_bad_config_names_its_key(section, message):
    with pytest.raises(ValueError, match=message):
        BundleParams.from_config(section)
