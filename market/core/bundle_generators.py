"""Task bundles of the `core` family (paper 002, Sec. 4.1-4.3): config section `bundle`.

Kinds (docs/core/calibration.md):
- table1: the pure bundle of Table 1 (Sec. 4.1): 5 threads, b_k = 0;
- table2: the mixed bundle of Table 2 (Sec. 4.2), thresholds eps^1 or eps^2 (`epsilon_set`);
- scalability: Sec. 4.3: each thread a random model of Table 1 with a random threshold; its
  solo time (units at full compute to reach eps on the noise-free curve) rounded up is its
  deadline increment (d_1 = ceil(solo_1), d_k = d_{k-1} + ceil(solo_k), all b_k = 0, so Shortest
  Thread First could complete them all); then a random `harder_fraction` of the threads get
  eps / `harder_factor`;
- random (beyond the paper): models and thresholds as in scalability, begins b_k ~ U{0..
  begin_spread}, d_k = b_k + ceil(slack * solo), slack ~ U[deadline_slack];
- custom: the threads given in the config (budget, deadline, threshold, begin, labels).

Calibration (the paper's curves come from real training runs we do not have): thread k's
noise-free curve reaches eps_k at S_k = difficulty_k * jitter_k * N_k (d_k - b_k) data, i.e. it
needs the fraction difficulty_k of its window at full compute (jitter_k ~ U[1 - jitter,
1 + jitter] per replicate); power: a_k = eps_k S_k^b_k with the exponent b_k of its model type;
the floor and bend shapes go through the same point (`PowerLaw.through`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from market.common.fields import as_section, choice, integer, interval, number_list, real, reject_unknown_keys
from market.core.parametric import ParametricCurve, PowerLaw
from market.core.threads import Bundle, Thread

KINDS = ("table1", "table2", "scalability", "random", "custom")
SHAPES = ("power", "floor", "bend")
TABLE_KINDS = ("table1", "table2", "custom")
MAX_THREADS = 1000

# Table 1 (Sec. 4.1, CIFAR-10): N_k, d_k, eps_k; b_k = 0.
TABLE1 = {
    "labels": ("ViT", "LSTM", "CNN", "ResNet18", "ResNet34"),
    "budget": (163.0, 220.0, 375.0, 97.0, 55.0),
    "deadline": (500, 570, 590, 610, 630),
    "threshold": (1.35, 1.18, 0.15, 0.35, 0.45),
}
# Table 2 (Sec. 4.2): 10 threads, b_k = 0, two sets of thresholds.
TABLE2 = {
    "labels": (
        "CV ViT",
        "CV ViT",
        "RL DAgger+CNN",
        "Audio Transformer",
        "NLP Attention+LSTM",
        "CV ResNet18",
        "CV ResNet18",
        "NLP Attention+LSTM",
        "Audio Transformer",
        "RL DAgger+CNN",
    ),
    "budget": (176.0, 176.0, 69.0, 293.0, 139.0, 107.0, 107.0, 139.0, 293.0, 69.0),
    "deadline": (530, 540, 545, 585, 625, 655, 685, 690, 700, 710),
    "threshold": {
        1: (1.1, 1.35, 0.0011, 0.06, 7e-4, 0.55, 0.55, 9e-4, 0.08, 0.0012),
        2: (0.99, 1.215, 0.0011, 0.09, 6.3e-4, 0.46, 0.48, 4.5e-4, 0.108, 6e-4),
    },
}
# Difficulty: S_k / (N_k (d_k - b_k)), this project's calibration (docs/core/calibration.md).
DIFFICULTY = {
    "table1": (1.2, 0.22, 0.225, 0.233, 0.26),
    ("table2", 1): (0.85, 0.35, 0.15, 0.035, 0.2, 0.08, 0.07, 0.19, 0.075, 0.075),
    ("table2", 2): (0.87, 0.69, 0.15, 0.006, 0.25, 0.19, 0.18, 0.24, 0.007, 0.13),
}
# Power-law exponent b_k per model type (docs/core/calibration.md); others get DEFAULT_EXPONENT.
EXPONENTS = {
    "ViT": 0.35,
    "LSTM": 0.4,
    "CNN": 0.5,
    "ResNet18": 0.45,
    "ResNet34": 0.45,
    "CV ViT": 0.35,
    "RL DAgger+CNN": 0.6,
    "Audio Transformer": 0.4,
    "NLP Attention+LSTM": 0.55,
    "CV ResNet18": 0.45,
}
DEFAULT_EXPONENT = 0.45


@dataclass(frozen=True)
class BundleParams:
    """Config section `bundle` (docs/core/calibration.md)."""

    kind: str = "table1"
    epsilon_set: int = 1
    threads: int = 10
    begin: tuple | None = None
    deadline: tuple | None = None
    budget: tuple | None = None
    threshold: tuple | None = None
    labels: tuple | None = None
    difficulty: tuple | None = None
    exponent: float | tuple | None = None
    jitter: float = 0.05
    noise: float = 0.01
    noise_cell: float = 1.0
    shape: str = "power"
    floor: float = 0.5
    bend_at: float = 0.25
    bend_ratio: float = 0.5
    threshold_scale: tuple = (1.0, 2.0)
    harder_fraction: float = 1 / 3
    harder_factor: float = 10.0
    recording_spread: float = 0.0
    begin_spread: int = 500
    deadline_slack: tuple = (1.5, 4.0)

    @classmethod
    def from_config(cls, section: Mapping | None) -> BundleParams:
        d = as_section(section, "bundle")
        reject_unknown_keys(cls, d, "bundle")

        def get(key):
            return d.get(key, getattr(cls, key))

        kind = choice(get("kind"), "bundle.kind", KINDS)
        eps_set = integer(get("epsilon_set"), "bundle.epsilon_set", 1, 2)
        threads = integer(get("threads"), "bundle.threads", 1, MAX_THREADS)
        shape = choice(get("shape"), "bundle.shape", SHAPES)
        lists, k = _thread_lists(d, kind)
        per = "thread" if kind in TABLE_KINDS else "model of table1"
        difficulty = d.get("difficulty")
        if difficulty is not None:
            difficulty = _sized(
                number_list(difficulty, "bundle.difficulty", minimum=0, strict_min=True), "bundle.difficulty", k, per
            )
        elif kind == "custom":
            raise ValueError(
                "bundle.difficulty must be a list of positive numbers (one per thread) for kind custom, got None"
            )
        exponent = d.get("exponent")
        if isinstance(exponent, (list, tuple)):
            exponent = _sized(
                number_list(exponent, "bundle.exponent", minimum=0, strict_min=True), "bundle.exponent", k, per
            )
        elif exponent is not None:
            exponent = real(exponent, "bundle.exponent", minimum=0, strict_min=True)
        floor = real(get("floor"), "bundle.floor", 0.0, 1.0, strict_min=True, strict_max=True)
        scale = interval(get("threshold_scale"), "bundle.threshold_scale", minimum=0.0, strict_min=True)
        if shape == "floor" and kind in ("scalability", "random") and scale[0] <= floor:
            raise ValueError(
                f"bundle.threshold_scale must stay above bundle.floor ({floor:g}) with "
                f"shape floor (eps below the floor is never reached), got {list(scale)}"
            )
        return cls(
            kind=kind,
            epsilon_set=eps_set,
            threads=threads,
            **lists,
            difficulty=difficulty,
            exponent=exponent,
            jitter=real(get("jitter"), "bundle.jitter", 0.0, 1.0, strict_max=True),
            noise=real(get("noise"), "bundle.noise", minimum=0.0),
            noise_cell=real(get("noise_cell"), "bundle.noise_cell", minimum=0.0, strict_min=True),
            shape=shape,
            floor=floor,
            bend_at=real(get("bend_at"), "bundle.bend_at", 0.0, 1.0, strict_min=True),
            bend_ratio=real(get("bend_ratio"), "bundle.bend_ratio", minimum=0.0, strict_min=True),
            threshold_scale=scale,
            harder_fraction=real(get("harder_fraction"), "bundle.harder_fraction", 0.0, 1.0),
            harder_factor=real(get("harder_factor"), "bundle.harder_factor", minimum=1.0),
            recording_spread=real(get("recording_spread"), "bundle.recording_spread", minimum=0.0),
            begin_spread=integer(get("begin_spread"), "bundle.begin_spread", minimum=0),
            deadline_slack=interval(get("deadline_slack"), "bundle.deadline_slack", minimum=0.0, strict_min=True),
        )

    def law(self, threshold: float, data: float, exponent: float) -> PowerLaw:
        """The noise-free curve of `shape` through (data, threshold)."""
        if self.shape == "floor":
            return PowerLaw.through(threshold, data, exponent, floor_share=self.floor)
        if self.shape == "bend":
            return PowerLaw.through(threshold, data, exponent, bend_share=self.bend_at, bend_ratio=self.bend_ratio)
        return PowerLaw.through(threshold, data, exponent)

    def curve(self, law: PowerLaw, rng: np.random.Generator) -> ParametricCurve:
        return ParametricCurve(law, self.noise, self.noise_cell, rng)


def _thread_lists(d: Mapping, kind: str) -> tuple[dict, int]:
    """begin, deadline, budget, threshold, labels as checked tuples (or None), and the number of
    threads of a table kind (table1, table2, custom), or of Table-1 models for the others."""
    keys = ("begin", "deadline", "budget", "threshold", "labels")
    if kind not in TABLE_KINDS:
        given = [key for key in keys if d.get(key) is not None]
        if given:
            raise ValueError(
                f"bundle.{given[0]} applies to kinds {', '.join(TABLE_KINDS)} only, "
                f"got {d[given[0]]!r} with kind {kind}"
            )
        return dict.fromkeys(keys), len(TABLE1["budget"])

    def numbers(key, **how):
        return None if d.get(key) is None else number_list(d[key], f"bundle.{key}", **how)

    out = {
        "begin": numbers("begin", kind=int, minimum=0),
        "deadline": numbers("deadline", kind=int, minimum=1),
        "budget": numbers("budget", minimum=0, strict_min=True),
        "threshold": numbers("threshold", minimum=0, strict_min=True),
        "labels": d.get("labels"),
    }
    labels = out["labels"]
    if labels is not None:
        if not isinstance(labels, (list, tuple)) or not labels or not all(isinstance(x, str) for x in labels):
            raise ValueError(f"bundle.labels must be a non-empty list of strings, got {labels!r}")
        out["labels"] = tuple(labels)
    if kind == "custom":
        missing = [key for key in ("budget", "deadline", "threshold") if out[key] is None]
        if missing:
            raise ValueError(f"bundle.{missing[0]} must be a list (one number per thread) for kind custom, got None")
    k = len(out["budget"]) if kind == "custom" else len(_table(kind, 1)["budget"])
    for key in keys:
        if out[key] is not None:
            _sized(out[key], f"bundle.{key}", k, "thread")
    begin = out["begin"] or (0,) * k
    deadline = out["deadline"] or _table(kind, 1)["deadline"]
    for j, (b, e) in enumerate(zip(begin, deadline)):
        if e <= b:
            raise ValueError(
                f"bundle.deadline must be > bundle.begin for every thread, got deadline "
                f"{e} <= begin {b} for thread {j + 1}"
            )
    return out, k


def _sized(values: tuple, key: str, k: int, per: str) -> tuple:
    if len(values) != k:
        raise ValueError(f"{key} must have {k} entries (one per {per}), got {len(values)}: {list(values)}")
    return values


def _table(kind: str, eps_set: int) -> dict:
    """The paper's table for `kind` (empty for custom)."""
    if kind == "table1":
        return {**TABLE1, "difficulty": DIFFICULTY["table1"]}
    if kind == "table2":
        return {**TABLE2, "threshold": TABLE2["threshold"][eps_set], "difficulty": DIFFICULTY[("table2", eps_set)]}
    return {}


def _exponents(params: BundleParams, labels) -> np.ndarray:
    if params.exponent is None:
        return np.array([EXPONENTS.get(label, DEFAULT_EXPONENT) for label in labels])
    return np.broadcast_to(np.asarray(params.exponent, dtype=float), (len(labels),)).copy()


def _jitter(params: BundleParams, k: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(1.0 - params.jitter, 1.0 + params.jitter, size=k)


# --- generators -----------------------------------------------------------------


def table_bundle(params: BundleParams, rng: np.random.Generator) -> Bundle:
    """table1, table2, custom: the listed threads, curves calibrated by difficulty (Sec. 4.1-4.2)."""
    table = _table(params.kind, params.epsilon_set)

    def pick(key):  # the config's list, else the table's
        value = getattr(params, key)
        return table[key] if value is None else value

    budget, deadline, threshold = pick("budget"), pick("deadline"), pick("threshold")
    k = len(budget)
    begin = params.begin or (0,) * k
    labels = params.labels or table.get("labels") or tuple(f"thread {j + 1}" for j in range(k))
    difficulty = np.asarray(pick("difficulty"), dtype=float) * _jitter(params, k, rng)
    exponent = _exponents(params, labels)
    threads, curves = [], []
    for j in range(k):
        thread = Thread(int(begin[j]), int(deadline[j]), float(budget[j]), float(threshold[j]), labels[j])
        law = params.law(thread.threshold, difficulty[j] * thread.data_limit, exponent[j])
        threads.append(thread)
        curves.append(params.curve(law, rng))
    return Bundle(tuple(threads), tuple(curves))


def _models(params: BundleParams, k: int, rng: np.random.Generator):
    """Random models of Table 1 with their reference curves and random thresholds (Sec. 4.3):
    model index, budget N, curve law, threshold eps, solo units S / N."""
    model = rng.integers(0, len(TABLE1["labels"]), size=k)
    difficulty = np.asarray(params.difficulty or DIFFICULTY["table1"], dtype=float)[model] * _jitter(params, k, rng)
    scale = rng.uniform(*params.threshold_scale, size=k)
    exponent = _exponents(params, TABLE1["labels"])[model]
    budget = np.asarray(TABLE1["budget"])[model]
    reference = np.asarray(TABLE1["threshold"])[model]
    data = difficulty * budget * np.asarray(TABLE1["deadline"])[model]
    laws = [params.law(reference[j], data[j], exponent[j]) for j in range(k)]
    threshold = reference * scale
    solo = np.array([laws[j].data_to_reach(threshold[j]) / budget[j] for j in range(k)])
    return model, budget, laws, threshold, solo


def scalability_bundle(params: BundleParams, rng: np.random.Generator) -> Bundle:
    """Sec. 4.3: chained deadlines from the solo times of a recording run, then a harder third
    (eps / 10). The recording run's solo time is this run's times a log-normal factor of sigma
    `recording_spread` (0: the noise-free solo time itself)."""
    k = params.threads
    model, budget, laws, threshold, solo = _models(params, k, rng)
    harder = np.zeros(k, dtype=bool)
    harder[rng.choice(k, size=int(round(params.harder_fraction * k)), replace=False)] = True
    if params.recording_spread > 0:
        solo = solo * np.exp(params.recording_spread * rng.standard_normal(k))
    deadline = np.cumsum([max(1, math.ceil(x)) for x in solo])
    threads = tuple(
        Thread(
            0,
            int(deadline[j]),
            float(budget[j]),
            float(threshold[j] / params.harder_factor if harder[j] else threshold[j]),
            TABLE1["labels"][model[j]] + (f" (eps/{params.harder_factor:g})" if harder[j] else ""),
        )
        for j in range(k)
    )
    return Bundle(threads, tuple(params.curve(law, rng) for law in laws))


def random_bundle(params: BundleParams, rng: np.random.Generator) -> Bundle:
    """Beyond the paper: staggered begins, deadlines = begin + slack x solo time."""
    k = params.threads
    model, budget, laws, threshold, solo = _models(params, k, rng)
    begin = rng.integers(0, params.begin_spread + 1, size=k)
    slack = rng.uniform(*params.deadline_slack, size=k)
    threads = tuple(
        Thread(
            int(begin[j]),
            int(begin[j]) + max(1, math.ceil(slack[j] * solo[j])),
            float(budget[j]),
            float(threshold[j]),
            TABLE1["labels"][model[j]],
        )
        for j in range(k)
    )
    return Bundle(threads, tuple(params.curve(law, rng) for law in laws))


def draw_bundle(params: BundleParams, rng: np.random.Generator) -> Bundle:
    """One replicate's bundle: threads and their (fixed) curves."""
    if params.kind == "scalability":
        return scalability_bundle(params, rng)
    if params.kind == "random":
        return random_bundle(params, rng)
    return table_bundle(params, rng)
