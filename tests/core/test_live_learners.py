"""Live scikit-learn learners as loss curves (market/core/live_learners.py,
docs/core/live_learners.md): determinism, call order, floor semantics, data_to_reach against
brute force, the recorded loss against predict_proba, decreasing losses, the bundle recipe and
its config errors."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from algorithms.core.simulation import simulate
from market.core.curves import LossCurve
from market.core.live_learners import (
    DATASETS,
    FLOOR_TOL,
    LEARNERS,
    LiveBundleParams,
    LiveLearnerCurve,
    live_bundle,
    load_dataset,
    plan_live_bundle,
)
from market.core.threads import Bundle


class EarliestDeadlineFirst:
    """The whole unit to the active thread with the nearest deadline (STF)."""

    name = "EDF"

    def reset(self, threads) -> None:
        self.deadline = threads.deadline

    def allocate(self, view) -> np.ndarray:
        shares = np.zeros(view.active.size)
        active = np.flatnonzero(view.active)
        shares[active[np.argmin(self.deadline[active])]] = 1.0
        return shares


class Uniform:
    name = "UA"

    def reset(self, threads) -> None:
        pass

    def allocate(self, view) -> np.ndarray:
        return view.active / view.active.sum()


def curve(learner="mlp_sgd", dataset="wine", seed=7, **kw) -> LiveLearnerCurve:
    return LiveLearnerCurve(learner, dataset, np.random.default_rng(seed), **kw)


# --- the curve ---------------------------------------------------------------------------


def test_is_a_loss_curve_and_starts_at_ln_classes():
    c = curve(dataset="digits")
    assert isinstance(c, LossCurve)
    assert c.n_classes == 10
    assert c.loss(0) == c.loss(0.5) == c.loss(1 - 1e-6) == pytest.approx(math.log(10))
    assert c.trained == 0  # nothing trained for floor(s) = 0
    for s in (1, 7.5, 40):
        assert c.true_loss(s) == c.loss(s) > 0


def test_same_seed_same_losses_other_seed_others():
    a, b = curve(seed=3), curve(seed=3)
    assert np.array_equal(a.reported_losses(120), b.reported_losses(120))
    assert not np.array_equal(a.reported_losses(120), curve(seed=4).reported_losses(120))


def test_call_order_is_irrelevant():
    backwards, forwards, one_by_one = curve(), curve(), curve()
    late, early = backwards.loss(50), backwards.loss(10)
    assert forwards.loss(10) == early and forwards.loss(50) == late
    stepped = [one_by_one.loss(s) for s in range(1, 51)]
    assert stepped[9] == early and stepped[49] == late
    assert np.array_equal(backwards.reported_losses(50), one_by_one.reported_losses(50))
    # data_to_reach first, then loss: the same numbers
    other = curve()
    other.data_to_reach(0.0, 80)
    assert np.array_equal(other.reported_losses(50), forwards.reported_losses(50))


def test_a_pickled_curve_goes_on_as_the_original():
    trained = curve("mlp_adam", "digits")
    trained.loss(40)
    blob = pickle.dumps(trained)
    assert len(blob) < 200_000  # the data set is reloaded by name, not pickled
    assert np.array_equal(pickle.loads(blob).reported_losses(120), curve("mlp_adam", "digits").reported_losses(120))


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_chunk_changes_speed_not_losses(learner):
    """One partial_fit on k batches = k calls of one batch (shuffle off, constant rate)."""
    single = curve(learner, "breast_cancer", seed=5, chunk=1).batch_losses(24)
    for chunk in (7, 16):
        assert np.array_equal(curve(learner, "breast_cancer", seed=5, chunk=chunk).batch_losses(24), single)


@pytest.mark.parametrize("learner, dataset", [("mlp_adam", "digits"), ("logistic", "breast_cancer")])
def test_recorded_loss_is_the_cross_entropy_before_the_update(learner, dataset):
    """What `_backprop` records equals the public predict_proba's cross-entropy on the batch,
    with the weights before the batch's update (alpha = 0: no penalty)."""
    c = curve(learner, dataset, seed=11, chunk=1)
    X, y = load_dataset(dataset)
    for b in (1, 4, 13):
        c.loss(b)
        assert c.trained == b
        idx = c.batch_indices(b + 1, b + 1)
        proba = c._model.predict_proba(X[idx])
        expected = -np.mean(np.log(proba[np.arange(idx.size), np.searchsorted(c._model.classes_, y[idx])]))
        assert c.batch_losses(b + 1)[b] == pytest.approx(expected, rel=1e-9)


def test_batches_follow_reshuffled_epochs():
    c = curve(dataset="iris", batch_size=32)  # 150 samples: batches straddle epochs
    idx = c.batch_indices(1, 15)  # 480 samples: 3 full epochs and 30 more
    assert idx.size == 480
    for e in range(3):
        assert sorted(idx[150 * e : 150 * (e + 1)]) == list(range(150))
    assert not np.array_equal(idx[:150], idx[150:300])
    assert np.array_equal(c.batch_indices(5, 6), idx[128:192])


def test_floor_semantics_and_the_window_mean():
    c = curve(window=5)
    reported = c.reported_losses(60)
    raw = c.batch_losses(60)
    for b in (1, 2, 4, 5, 6, 33, 59):
        assert reported[b] == pytest.approx(raw[max(0, b - 5) : b].mean(), rel=1e-12)
        assert c.loss(b) == c.loss(b + 0.5) == c.loss(b + 0.999999) == reported[b]
        assert c.loss(b - FLOOR_TOL / 10) == reported[b]  # shares summed in floating point
        assert c.loss(b - 0.01) == reported[b - 1]
    assert len(set(reported[1:].tolist())) > 50  # it moves every batch


def brute_force(reported: np.ndarray, threshold: float, limit: float) -> float:
    if limit <= 0:
        return math.inf
    top = min(int(math.floor(limit + FLOOR_TOL)), reported.size - 1)
    hits = np.flatnonzero(reported[: top + 1] <= threshold)
    return float(hits[0]) if hits.size else math.inf


def test_data_to_reach_matches_brute_force():
    reported = curve(seed=21).reported_losses(300)
    thresholds = [
        *np.quantile(reported, [0.02, 0.1, 0.3, 0.6, 0.9]),
        reported.min(),
        reported.min() * 0.999,
        reported[0],
        reported[0] + 1,
        reported[150],
    ]
    for limit in (300, 123.7, 40.0, 0.5, 0, -3):
        fresh = curve(seed=21)  # searching trains it
        for threshold in thresholds:
            got = fresh.data_to_reach(float(threshold), limit)
            assert got == brute_force(reported, threshold, limit), (threshold, limit)
            if math.isfinite(got):
                assert fresh.loss(got) <= threshold
                if got >= 1:
                    assert fresh.loss(got - 0.5) > threshold
        assert fresh.trained <= 320  # up to the next whole chunk of 16 past the limit


def test_data_to_reach_against_max_batches():
    c = curve(max_batches=40)
    assert c.data_to_reach(c.loss(0), math.inf) == 0.0
    assert c.data_to_reach(1e-9, 40) == math.inf
    with pytest.raises(ValueError, match="max_batches=40"):
        c.data_to_reach(1e-9, math.inf)
    with pytest.raises(ValueError, match="max_batches=40"):
        c.loss(41)
    reached = c.data_to_reach(c.loss(30), 1e6)  # found below the cap: fine
    assert reached <= 30


@pytest.mark.parametrize("dataset", sorted(DATASETS))
def test_losses_decrease_on_average(dataset):
    for learner in LEARNERS:
        reported = curve(learner, dataset, seed=1).reported_losses(128)
        assert reported[97:].mean() < 0.95 * reported[1:33].mean(), learner
        assert reported[97:].mean() < reported[0]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="learner must be one of"):
        LiveLearnerCurve("svm", "wine", 0)
    with pytest.raises(ValueError, match="dataset must be one of"):
        LiveLearnerCurve("logistic", "mnist", 0)
    with pytest.raises(ValueError, match="batch_size"):
        LiveLearnerCurve("logistic", "wine", 0, batch_size=0)
    c = curve()
    for bad in (-1, math.nan, math.inf, "3", True):
        with pytest.raises(ValueError, match="data must be"):
            c.loss(bad)
    with pytest.raises(ValueError, match="threshold"):
        c.data_to_reach(math.nan, 10)
    with pytest.raises(ValueError, match="limit"):
        c.data_to_reach(0.1, math.nan)


# --- bundles and their config --------------------------------------------------------------


def test_params_defaults_and_from_config():
    assert LiveBundleParams.from_config(None) == LiveBundleParams()
    p = LiveBundleParams.from_config(
        {"threads": 4.0, "learners": "logistic", "budget": [2, 3], "slack": [1, 2], "datasets": ["wine", "iris"]}
    )
    assert (p.threads, p.learners, p.budget, p.slack, p.datasets) == (
        4,
        ("logistic",),
        (2, 3),
        (1.0, 2.0),
        ("wine", "iris"),
    )
    assert LiveBundleParams.from_config({"kind": "live"}, also_known=("kind",)) == LiveBundleParams()


@pytest.mark.parametrize(
    "section, key",
    [
        ({"threads": 0}, "bundle.threads"),
        ({"threads": True}, "bundle.threads"),
        ({"batch_size": 2.5}, "bundle.batch_size"),
        ({"learners": ["logistic", "svm"]}, "bundle.learners"),
        ({"learners": []}, "bundle.learners"),
        ({"datasets": "mnist"}, "bundle.datasets"),
        ({"budget": [0, 3]}, "bundle.budget"),
        ({"budget": [4, 2]}, "bundle.budget"),
        ({"target_batches": [10.5, 20]}, "bundle.target_batches"),
        ({"slack": [0.5, 2]}, "bundle.slack"),
        ({"slack": 1.5}, "bundle.slack"),
        ({"slack": [1, math.inf]}, "bundle.slack"),
        ({"hard_fraction": 1.5}, "bundle.hard_fraction"),
        ({"hard_scale": 0}, "bundle.hard_scale"),
        ({"window": 0}, "bundle.window"),
        ({"chunk": -1}, "bundle.chunk"),
    ],
)
def test_bad_config_values_name_their_key(section, key):
    with pytest.raises(ValueError, match=f"^{key} must"):
        LiveBundleParams.from_config(section)


def test_bad_config_sections():
    with pytest.raises(ValueError, match=r"^bundle: unknown key\(s\) 'thread'"):
        LiveBundleParams.from_config({"thread": 3})
    with pytest.raises(ValueError, match="^bundle: must be a mapping"):
        LiveBundleParams.from_config([("threads", 3)])
    with pytest.raises(ValueError, match="^bundle.live.threads must"):
        LiveBundleParams.from_config({"threads": -2}, prefix="bundle.live")
    with pytest.raises(ValueError, match="^bundle.window must"):
        LiveBundleParams(window=0)


SMALL = {"threads": 5, "target_batches": [20, 80], "budget": [1, 4], "hard_fraction": 0.4}


def test_live_bundle_recipe():
    plan = plan_live_bundle(np.random.default_rng(2), SMALL)
    bundle = plan.bundle
    assert isinstance(bundle, Bundle) and len(bundle) == 5
    deadlines = [t.deadline for t in bundle.threads]
    assert deadlines == sorted(set(deadlines))  # chained, strictly increasing
    assert sum(info.hard for info in plan.info) == 2
    previous = 0
    for thread, c, info in zip(bundle.threads, bundle.curves, plan.info):
        assert isinstance(c, LiveLearnerCurve) and thread.begin == 0
        assert thread.budget in (1.0, 2.0, 3.0, 4.0)
        assert thread.label.startswith(f"{info.learner}/{info.dataset}#")
        assert info.window == thread.deadline - previous >= max(1, info.units)
        assert info.base_threshold == c.loss(info.target_batches)
        assert info.needed_batches == c.data_to_reach(info.base_threshold, info.target_batches)
        assert info.units * thread.budget >= info.needed_batches
        expected = info.base_threshold * (0.1 if info.hard else 1.0)
        assert thread.threshold == pytest.approx(expected)
        previous = thread.deadline
    # the same seed, the same world
    again = live_bundle(np.random.default_rng(2), LiveBundleParams.from_config(SMALL))
    assert again.threads == bundle.threads
    assert all(
        np.array_equal(a.reported_losses(50), b.reported_losses(50)) for a, b in zip(again.curves, bundle.curves)
    )


def test_shortest_thread_first_meets_every_base_threshold():
    """Sec. 4.3's construction: without the hardened thresholds, STF (EDF) serves the chain."""
    plan = plan_live_bundle(np.random.default_rng(5), SMALL)
    outcome = simulate(plan.bundle, EarliestDeadlineFirst())
    for k, info in enumerate(plan.info):
        if not info.hard:
            assert outcome.completed[k], plan.bundle.threads[k]


def test_a_default_bundle_simulates_and_its_needs_are_reached():
    bundle = live_bundle(np.random.default_rng(0), {"threads": 6})
    for allocator in (EarliestDeadlineFirst(), Uniform()):
        outcome = simulate(bundle, allocator)
        assert 0 <= outcome.successes <= 6
    for thread, c in zip(bundle.threads, bundle.curves):  # what an offline optimum asks
        needed = c.data_to_reach(thread.threshold, thread.data_limit)
        assert needed == math.inf or c.loss(needed) <= thread.threshold
