"""Live learners: small scikit-learn models trained batch by batch, emitting their real training
loss (paper 002, Sec. 2.1, 3.1 and 4; docs/core/live_learners.md).

One data unit is one batch of `batch_size` samples (the paper's unit is a batch of 64). A
`LiveLearnerCurve` is one learner on one data set that ships inside scikit-learn (no download),
seen as a `LossCurve` (market/core/curves.py):

* Data order. When the world is built, two seeds are drawn from its Generator: one for the
  model's initial weights, one for the data order. The data set is visited in epochs, each a
  fresh permutation (epoch e uses ``default_rng([seed, e])``); batch b (1-based) is the samples
  at positions (b-1)B .. bB-1 of that endless stream, so a batch may straddle two epochs.
* Training loss (the paper's Sec. 4.1: "the average cross-entropy loss over the past training
  batches"). Every batch's cross-entropy is recorded as the model computes it in its training
  step, with the weights it has before that batch's update (what a training loop prints). The
  loss *reported after b batches* is the mean of that per-batch loss over the last
  ``window`` batches (over all b batches while b < window); before any batch it is
  ln(classes), the cross-entropy of a model that knows nothing (uniform prediction). No weight
  penalty is added (alpha = 0): the number is the pure cross-entropy.
* Floor semantics: ``loss(s)`` is the loss reported after floor(s) batches (s within 1e-9
  below an integer counts as that integer: shares summed in floating point). So for s in
  [b, b+1) it is constant, and ``data_to_reach`` returns an integer b.
* Lazy, cached: the model and every loss computed so far are kept; asking for more data trains
  further, asking for less reads the cache. Training runs in fixed chunks of ``chunk`` batches
  (one ``partial_fit`` call each, aligned on multiples of ``chunk``), so the sequence of calls,
  and every loss, is the same whatever order the curve is asked in. With ``shuffle=False`` and
  a constant learning rate (all learners here), one ``partial_fit`` on k batches performs the
  same k updates as k calls of one batch each (tests/core/test_live_learners.py checks it); the
  chunk only saves scikit-learn's per-call overhead.
* ``true_loss`` is ``loss``: a live learner has no separate noise-free curve.

The per-batch loss is read by overriding ``MLPClassifier._backprop`` (a private method: the
scikit-learn version is pinned, and a test checks the recorded numbers against
``predict_proba``). All learners are ``MLPClassifier``s: a linear softmax regression
(``hidden_layer_sizes=()``) and three small networks; ``SGDClassifier`` is left out because its
one-vs-rest ``partial_fit`` costs 3-6 ms a batch and exposes no per-batch loss.

`live_bundle` draws a task bundle of live threads by the paper's Sec. 4.3 recipe (chained
deadlines that Shortest Thread First can meet, then a fraction of thresholds made ten times
smaller); `LiveBundleParams` is its config section (`bundle.*`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache

import numpy as np
from sklearn import datasets as _sk_datasets
from sklearn.neural_network import MLPClassifier

from market.common.fields import integer, interval, real, reject_unknown_keys
from market.core.threads import Bundle, Thread

__all__ = [
    "DATASETS",
    "LEARNERS",
    "LearnerSpec",
    "LiveBundleParams",
    "LiveLearnerCurve",
    "LivePlan",
    "LiveThreadInfo",
    "live_bundle",
    "load_dataset",
    "measure_speed",
    "plan_live_bundle",
]

FLOOR_TOL = 1e-9  # data within this below an integer counts as that integer
LOSS_FLOOR = 1e-12  # a reported loss is at least this (the protocol wants > 0)
DEFAULT_MAX_BATCHES = 200_000


# --- catalogue -------------------------------------------------------------------------


@dataclass(frozen=True)
class LearnerSpec:
    """One learner: an MLPClassifier trained with a constant learning rate, no weight penalty."""

    hidden: tuple[int, ...]
    solver: str  # "sgd" or "adam"
    learning_rate: float
    momentum: float = 0.0  # sgd only (Nesterov)
    description: str = ""

    def build(self, batch_size: int, seed: int) -> _RecordingMLP:
        extra = {"momentum": self.momentum, "nesterovs_momentum": True} if self.solver == "sgd" else {}
        return _RecordingMLP(
            hidden_layer_sizes=self.hidden,
            solver=self.solver,
            learning_rate="constant",
            learning_rate_init=self.learning_rate,
            alpha=0.0,
            batch_size=batch_size,
            shuffle=False,
            random_state=seed,
            **extra,
        )


LEARNERS: dict[str, LearnerSpec] = {
    "logistic": LearnerSpec((), "sgd", 0.01, 0.9, "softmax (logistic) regression, SGD lr 0.01, Nesterov momentum 0.9"),
    "mlp_sgd": LearnerSpec((64,), "sgd", 0.01, 0.9, "one hidden layer of 64 ReLU, SGD lr 0.01, Nesterov momentum 0.9"),
    "mlp_adam": LearnerSpec((32,), "adam", 1e-3, 0.0, "one hidden layer of 32 ReLU, Adam lr 1e-3"),
    "mlp_deep": LearnerSpec((32, 32), "adam", 3e-4, 0.0, "two hidden layers of 32 ReLU, Adam lr 3e-4 (slow start)"),
}

# name -> (description, loader); every loader returns (X, y) from data shipped in scikit-learn
# or generated with a fixed seed.
DATASETS: dict[str, str] = {
    "digits": "load_digits: 1797 8x8 images, 64 features, 10 classes",
    "breast_cancer": "load_breast_cancer: 569 samples, 30 features, 2 classes",
    "wine": "load_wine: 178 samples, 13 features, 3 classes",
    "iris": "load_iris: 150 samples, 4 features, 3 classes",
    "synthetic": "make_classification(2000, 20 features, 10 informative, 4 classes, "
    "flip_y=0.03, random_state=0): label noise, a loss floor",
}


@cache
def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a catalogue data set, features standardised over the whole set (a constant
    feature is left at 0); read-only arrays, loaded once per process."""
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {', '.join(DATASETS)}, got {name!r}")
    if name == "synthetic":
        X, y = _sk_datasets.make_classification(
            n_samples=2000, n_features=20, n_informative=10, n_redundant=4, n_classes=4, flip_y=0.03, random_state=0
        )
    else:
        loader = {
            "digits": _sk_datasets.load_digits,
            "breast_cancer": _sk_datasets.load_breast_cancer,
            "wine": _sk_datasets.load_wine,
            "iris": _sk_datasets.load_iris,
        }[name]
        X, y = loader(return_X_y=True)
    X = np.asarray(X, dtype=float)
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    X = np.ascontiguousarray((X - X.mean(axis=0)) / scale)
    y = np.asarray(y)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


class _RecordingMLP(MLPClassifier):
    """An MLPClassifier that records the loss of every batch it trains on, computed in its own
    training step before that batch's update (`_recorded`)."""

    def _backprop(self, *args, **kwargs):
        loss, coef_grads, intercept_grads = super()._backprop(*args, **kwargs)
        recorded = getattr(self, "_recorded", None)
        if recorded is not None:
            recorded.append(float(loss))
        return loss, coef_grads, intercept_grads


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


# --- the curve ---------------------------------------------------------------------------


class LiveLearnerCurve:
    """One live learner on one data set as a `LossCurve` (module docstring).

    `rng`: the world's Generator (two seeds are drawn from it at once) or an int seed.
    `batch_size`: samples per batch (one data unit). `window`: batches averaged in a reported
    loss. `chunk`: batches per `partial_fit` call (speed only; the losses do not depend on it).
    `max_batches`: the most batches the curve may be asked about (it trains up to the next
    multiple of `chunk`); asking beyond is an error.
    """

    def __init__(
        self,
        learner: str,
        dataset: str,
        rng: np.random.Generator | int,
        *,
        batch_size: int = 32,
        window: int = 8,
        chunk: int = 16,
        max_batches: int = DEFAULT_MAX_BATCHES,
    ) -> None:
        if learner not in LEARNERS:
            raise ValueError(f"learner must be one of {', '.join(LEARNERS)}, got {learner!r}")
        if dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {', '.join(DATASETS)}, got {dataset!r}")
        self.learner = learner
        self.dataset = dataset
        self.batch_size = integer(batch_size, "batch_size", 1)
        self.window = integer(window, "window", 1)
        self.chunk = integer(chunk, "chunk", 1)
        self.max_batches = integer(max_batches, "max_batches", 1)
        if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
            rng = np.random.default_rng(int(rng))
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator or an int seed, got {type(rng).__name__}")
        self.model_seed = int(rng.integers(2**31 - 1))
        self.data_seed = int(rng.integers(2**63 - 1))
        self._X, self._y = load_dataset(dataset)
        self._classes = np.unique(self._y)
        self.n_classes = int(self._classes.size)
        self._model = LEARNERS[learner].build(self.batch_size, self.model_seed)
        self._epochs: dict[int, np.ndarray] = {}
        # raw[i]: the loss of batch i+1 before its update; reported[b]: the loss after b batches
        self._raw = np.empty(0)
        self._reported = np.array([math.log(self.n_classes)])
        self._trained = 0
        self.train_seconds = 0.0

    def __getstate__(self) -> dict:
        """Pickled without the data set (reloaded by name): a curve is a few tens of kB."""
        state = self.__dict__.copy()
        del state["_X"], state["_y"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._X, self._y = load_dataset(self.dataset)

    def __repr__(self) -> str:
        return (
            f"LiveLearnerCurve({self.learner!r}, {self.dataset!r}, batch_size={self.batch_size}, "
            f"window={self.window}, trained={self._trained})"
        )

    # -- data order --------------------------------------------------------------------

    def _epoch(self, e: int) -> np.ndarray:
        order = self._epochs.get(e)
        if order is None:
            order = np.random.default_rng([self.data_seed, e]).permutation(self._y.size)
            for old in [k for k in self._epochs if k < e - 1]:
                del self._epochs[old]
            self._epochs[e] = order
        return order

    def batch_indices(self, first: int, last: int) -> np.ndarray:
        """The sample indices of batches first..last (1-based, inclusive), in training order."""
        n = self._y.size
        start, stop = (first - 1) * self.batch_size, last * self.batch_size
        parts = []
        for e in range(start // n, (stop - 1) // n + 1):
            lo, hi = max(start - e * n, 0), min(stop - e * n, n)
            parts.append(self._epoch(e)[lo:hi])
        return np.concatenate(parts)

    # -- training ------------------------------------------------------------------------

    @property
    def trained(self) -> int:
        """Batches trained so far."""
        return self._trained

    def _train_to(self, batches: int) -> None:
        """Train (in whole chunks) until at least `batches` batches are trained."""
        if batches > self.max_batches:
            raise ValueError(f"{self!r}: asked for {batches} batches, more than max_batches={self.max_batches}")
        if batches <= self._trained:
            return
        target = -(-batches // self.chunk) * self.chunk  # whole chunks: the same calls in any order
        started = time.perf_counter()
        raw = [self._raw]
        done = self._trained
        while done < target:
            size = min(self.chunk, target - done)
            idx = self.batch_indices(done + 1, done + size)
            self._model._recorded = recorded = []
            self._model.partial_fit(self._X[idx], self._y[idx], classes=self._classes)
            self._model._recorded = None
            if len(recorded) != size:  # a scikit-learn change would show here
                raise RuntimeError(f"{self!r}: expected {size} batch losses, recorded {len(recorded)}")
            raw.append(np.asarray(recorded, dtype=float))
            done += size
        old, w = self._trained, self.window
        self._raw = np.concatenate(raw)
        # reported[b] for b = old+1..done: the mean of raw[b-w..b-1] (batches b-w+1..b), summed
        # term by term in one fixed order (zeros in front while b < w), so that the number does
        # not depend on which chunks were trained in which call
        padded = np.concatenate([np.zeros(w), self._raw])  # padded[i + w] = raw[i]
        b = np.arange(old + 1, done + 1)
        total = np.zeros(b.size)
        for j in range(w):
            total = total + padded[b + j]
        new = total / np.minimum(b, w)
        self._reported = np.concatenate([self._reported, np.maximum(new, LOSS_FLOOR)])
        self._trained = done
        self.train_seconds += time.perf_counter() - started

    def batch_losses(self, batches: int | None = None) -> np.ndarray:
        """The per-batch losses (before each update) of batches 1..`batches` (default: all
        trained so far), training further if needed; a copy."""
        if batches is not None:
            self._train_to(integer(batches, "batches", 0))
            return self._raw[:batches].copy()
        return self._raw.copy()

    def reported_losses(self, batches: int) -> np.ndarray:
        """The reported losses after 0..`batches` batches (entry 0 is ln(classes)); a copy."""
        batches = integer(batches, "batches", 0)
        self._train_to(batches)
        return self._reported[: batches + 1].copy()

    # -- the LossCurve protocol ------------------------------------------------------------

    @staticmethod
    def batches_of(data: float) -> int:
        """floor(data), counting data within FLOOR_TOL below an integer as that integer."""
        if not _is_number(data) or math.isnan(data) or math.isinf(data) or data < 0:
            raise ValueError(f"data must be a finite number >= 0, got {data!r}")
        return int(math.floor(float(data) + FLOOR_TOL))

    def loss(self, data: float) -> float:
        """The loss reported after floor(data) batches (ln(classes) before the first)."""
        b = self.batches_of(data)
        self._train_to(b)
        return float(self._reported[b])

    def true_loss(self, data: float) -> float:
        """The same as `loss`: a live learner has no separate noise-free curve."""
        return self.loss(data)

    def data_to_reach(self, threshold: float, limit: float) -> float:
        """The least batch count b <= limit whose reported loss is <= threshold (float(b)), or
        math.inf if there is none; trains up to floor(limit) batches if needed. 0.0 when the
        loss before any batch, ln(classes), is already <= threshold (any data reaches it). A
        limit beyond max_batches is an error unless the threshold is met within max_batches."""
        if not _is_number(threshold) or math.isnan(threshold):
            raise ValueError(f"threshold must be a number, got {threshold!r}")
        if not _is_number(limit) or math.isnan(limit):
            raise ValueError(f"limit must be a number, got {limit!r}")
        if limit <= 0:
            return math.inf
        last = math.inf if math.isinf(limit) else int(math.floor(float(limit) + FLOOR_TOL))
        searched = 0  # reported[0..searched-1] have been checked
        while True:
            stop = int(min(last, self._trained, self.max_batches)) + 1
            if stop > searched:
                hits = np.flatnonzero(self._reported[searched:stop] <= threshold)
                if hits.size:
                    return float(searched + hits[0])
                searched = stop
            if searched > last:
                return math.inf
            if searched > self.max_batches:
                raise ValueError(
                    f"{self!r}: loss {threshold!r} not reached within max_batches="
                    f"{self.max_batches}, below the limit {limit!r}"
                )
            self._train_to(int(min(last, self.max_batches, self._trained + max(self.chunk, 64))))


# --- bundles -------------------------------------------------------------------------------


def _names(value, key: str, catalogue: Mapping) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if isinstance(items, Mapping) or not isinstance(items, Sequence) or len(items) == 0:
        raise ValueError(f"{key} must be a non-empty list of names from {', '.join(catalogue)}, got {value!r}")
    for item in items:
        if not isinstance(item, str) or item not in catalogue:
            raise ValueError(
                f"{key} must be a non-empty list of names from {', '.join(catalogue)}, "
                f"got {value!r} ({item!r} is not one)"
            )
    return tuple(items)


@dataclass(frozen=True)
class LiveBundleParams:
    """The `bundle` config section of a live bundle (docs/core/live_learners.md).

    threads:        K, the number of threads
    batch_size:     samples per batch (one data unit)
    learners:       names from LEARNERS, drawn uniformly per thread
    datasets:       names from DATASETS, drawn uniformly per thread
    budget:         [low, high]: N_k, an integer drawn uniformly (batches per unit time)
    target_batches: [low, high]: batches at which the base threshold is read, drawn uniformly
    slack:          [low, high] (low >= 1): each thread's window is slack x the units it needs
    hard_fraction:  share of threads (rounded) whose threshold is multiplied by hard_scale
    hard_scale:     the paper's Sec. 4.3 uses 1/10
    window:         batches averaged in a reported loss
    chunk:          batches per partial_fit call (speed only)
    """

    threads: int = 6
    batch_size: int = 32
    learners: tuple[str, ...] = tuple(LEARNERS)
    datasets: tuple[str, ...] = tuple(DATASETS)
    budget: tuple[int, int] = (1, 8)
    target_batches: tuple[int, int] = (30, 300)
    slack: tuple[float, float] = (1.0, 1.5)
    hard_fraction: float = 1 / 3
    hard_scale: float = 0.1
    window: int = 8
    chunk: int = 16

    def __post_init__(self) -> None:
        self._check("bundle")

    def _check(self, prefix: str) -> None:
        def put(name, value):
            object.__setattr__(self, name, value)

        put("threads", integer(self.threads, f"{prefix}.threads", 1, 1000))
        put("batch_size", integer(self.batch_size, f"{prefix}.batch_size", 1, 4096))
        put("learners", _names(self.learners, f"{prefix}.learners", LEARNERS))
        put("datasets", _names(self.datasets, f"{prefix}.datasets", DATASETS))
        put("budget", interval(self.budget, f"{prefix}.budget", int, minimum=1))
        put("target_batches", interval(self.target_batches, f"{prefix}.target_batches", int, minimum=1))
        put("slack", interval(self.slack, f"{prefix}.slack", float, minimum=1.0))
        if not math.isfinite(self.slack[1]):
            raise ValueError(f"{prefix}.slack must be finite, got {list(self.slack)!r}")
        put("hard_fraction", real(self.hard_fraction, f"{prefix}.hard_fraction", 0.0, 1.0))
        put("hard_scale", real(self.hard_scale, f"{prefix}.hard_scale", 0.0, 1.0, strict_min=True))
        put("window", integer(self.window, f"{prefix}.window", 1))
        put("chunk", integer(self.chunk, f"{prefix}.chunk", 1))

    @classmethod
    def from_config(cls, section, *, prefix: str = "bundle", also_known: Sequence[str] = ()) -> LiveBundleParams:
        """Build from a config mapping (None: all defaults). Unknown keys, other than
        `also_known` (keys the caller handles, such as a bundle `kind`), are an error naming
        `prefix`; a bad value's error names `prefix.key`."""
        if section is None:
            section = {}
        if not isinstance(section, Mapping):
            raise ValueError(f"{prefix}: must be a mapping, got {type(section).__name__}")
        reject_unknown_keys(cls, section, prefix, also_known=also_known)
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in section.items() if k in names}
        defaults = cls()
        merged = {f.name: values.get(f.name, getattr(defaults, f.name)) for f in fields(cls)}
        params = object.__new__(cls)
        for name, value in merged.items():
            object.__setattr__(params, name, value)
        params._check(prefix)
        return params


@dataclass(frozen=True)
class LiveThreadInfo:
    """How `plan_live_bundle` made one thread (not shown to allocators)."""

    learner: str
    dataset: str
    target_batches: int  # m_k: the base threshold is the loss reported after m_k batches
    base_threshold: float  # that loss
    needed_batches: float  # the least data reaching it (<= m_k)
    units: int  # ceil(needed / N_k): units of full compute it needs
    window: int  # the units between the previous deadline and d_k
    hard: bool  # threshold = base_threshold x hard_scale


@dataclass(frozen=True)
class LivePlan:
    bundle: Bundle
    info: tuple[LiveThreadInfo, ...]


def plan_live_bundle(rng: np.random.Generator, params: LiveBundleParams | Mapping | None = None) -> LivePlan:
    """A live bundle and how it was made, by the paper's Sec. 4.3 recipe read for live curves:

    for each thread in turn: a learner and a data set (uniform from the lists), N_k (an
    integer, uniform in `budget`), m_k (uniform in `target_batches`); the base threshold is the
    loss the thread's own curve reports after m_k batches (the pilot run is the start of the
    world's own training, cached), S_k the least data that reaches it (<= m_k), and its window
    ceil(slack x ceil(S_k / N_k)) units with slack uniform in `slack`. Deadlines are chained:
    d_k = d_{k-1} + window_k, b_k = 0, so Shortest Thread First (EDF) meets every base
    threshold. Then round(hard_fraction x K) threads (half up), chosen uniformly, get their
    threshold multiplied by hard_scale (the paper: 1/10): hard or impossible, alone or together.
    """
    if params is None:
        params = LiveBundleParams()
    elif isinstance(params, Mapping):
        params = LiveBundleParams.from_config(params)
    k = params.threads
    threads, curves, info, plans = [], [], [], []
    deadline = 0
    for _ in range(k):
        learner = params.learners[int(rng.integers(len(params.learners)))]
        dataset = params.datasets[int(rng.integers(len(params.datasets)))]
        budget = int(rng.integers(params.budget[0], params.budget[1] + 1))
        target = int(rng.integers(params.target_batches[0], params.target_batches[1] + 1))
        slack = float(rng.uniform(params.slack[0], params.slack[1]))
        curve = LiveLearnerCurve(
            learner, dataset, rng, batch_size=params.batch_size, window=params.window, chunk=params.chunk
        )
        base = curve.loss(target)
        needed = curve.data_to_reach(base, target)
        units = int(math.ceil(needed / budget - FLOOR_TOL)) if needed > 0 else 0
        window = max(1, int(math.ceil(slack * units - FLOOR_TOL)))
        deadline += window
        plans.append((learner, dataset, budget, target, base, needed, units, window, deadline))
        curves.append(curve)
    n_hard = int(math.floor(params.hard_fraction * k + 0.5))  # rounded half up
    hard = np.zeros(k, dtype=bool)
    if n_hard:
        hard[rng.choice(k, size=n_hard, replace=False)] = True
    for i, (learner, dataset, budget, target, base, needed, units, window, d) in enumerate(plans):
        threshold = base * params.hard_scale if hard[i] else base
        label = f"{learner}/{dataset}#{i + 1}"
        threads.append(Thread(begin=0, deadline=d, budget=float(budget), threshold=float(threshold), label=label))
        info.append(LiveThreadInfo(learner, dataset, target, float(base), float(needed), units, window, bool(hard[i])))
    return LivePlan(Bundle(tuple(threads), tuple(curves)), tuple(info))


def live_bundle(rng: np.random.Generator, params: LiveBundleParams | Mapping | None = None) -> Bundle:
    """A task bundle of live threads (`plan_live_bundle` without the plan)."""
    return plan_live_bundle(rng, params).bundle


# --- speed ---------------------------------------------------------------------------------


def measure_speed(
    batches: int = 400,
    batch_size: int = 32,
    chunk: int = 16,
    seed: int = 0,
    learners: Sequence[str] = tuple(LEARNERS),
    datasets: Sequence[str] = tuple(DATASETS),
) -> dict[tuple[str, str], float]:
    """Seconds per 100 batches of every learner x data set (training `batches` batches from
    scratch, data loading excluded)."""
    out = {}
    for dataset in datasets:
        load_dataset(dataset)
        for learner in learners:
            curve = LiveLearnerCurve(learner, dataset, seed, batch_size=batch_size, chunk=chunk)
            started = time.perf_counter()
            curve.loss(batches)
            out[(learner, dataset)] = (time.perf_counter() - started) * 100.0 / batches
    return out


if __name__ == "__main__":  # python -m market.core.live_learners [batches] [batch_size] [chunk]
    import sys

    args = [int(a) for a in sys.argv[1:4]]
    n, size, step = (args + [400, 32, 16][len(args) :])[:3]
    speed = measure_speed(n, size, step)
    print(f"seconds per 100 batches ({n} batches of {size}, chunk {step})")
    print(f"{'':14s}" + "".join(f"{name:>10s}" for name in LEARNERS))
    for dataset in DATASETS:
        print(f"{dataset:14s}" + "".join(f"{speed[(name, dataset)]:10.4f}" for name in LEARNERS))
