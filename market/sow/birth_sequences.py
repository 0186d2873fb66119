"""Birth sequences of paper 004's world (Sec. 1-2): config sections `bounds` and `births`.

`bounds_from_config(section)` reads the known bounds of Sec. 2 (C_max, D_max, S_max, V_bar);
`BirthParams.from_config(section, bounds)` reads the generator, checked against those bounds;
`draw_births(params, bounds, rng)` returns a checked `BirthSequence` (docs/sow/world.md).
`births.kind` selects the generator, `births.signal` what the platform learns about d at arrival
(`none` or `duration`, Sec. 2, footnote 6).

- recurring: recurring training pipelines. Pipeline k has a period, a phase, a concurrency, a
  nominal duration, a value shape (deadline or decaying) and a peak value, drawn once per
  sequence. Its instance n has the nominal arrival phase + n * period and is born `lead` rounds
  before (clipped at round 0). Its support is the product of the arrival offsets
  -J..+J (J = `arrival_jitter`, clipped to >= birth) and the duration offsets -J'..+J'
  (J' = `duration_jitter`, clipped to [1, D_max]). The offsets carry binomial weights
  C(2J, J + o) / 4^J (a discretised bell; J = 2 gives 1/16, 4/16, 6/16, 4/16, 1/16). Arrival and
  duration are independent, and points merged by a clip add their weights.
- toy: the toy example of Sec. 1, `jobs` copies `spacing` rounds apart (`_toy_sow`).
- adversarial: `bursts` bursts `gap` rounds apart. Each burst is jobs born in the same round with
  concurrency near C_max, the same short arrival window and durations, and values rising
  geometrically within the burst (low values submitted first: the classic sequence against
  posted prices). A burst's total concurrency is overload * nodes_hint (plus less than one job).
- blocking: `waves` waves `gap` rounds apart, the classic sequence against first-come greedy.
  Wave i's low jobs are born at i * gap, arrive at birth + lead, run low_duration (D_max) rounds
  and are worth low_value for any finish up to arrival + low_duration + low_slack (flexible).
  Its high jobs are born `delay` rounds later, arrive uniformly in birth + lead .. birth + lead
  + jitter, run high_duration (D_max) rounds and are worth high_value (V_bar) only for finishes up
  to the last arrival + high_duration (tight). The low (high) jobs' total concurrency is
  low_demand (high_demand) * nodes_hint, plus less than one job. Jobs are listed by birth, a
  wave's low jobs before its high ones. Greedy, having started the low jobs, is blocked when
  delay + jitter < low_duration.
- trace: the SoWs of a CSV file (`market/sow/sow_trace.py`).
- dense, daily: `market/sow/dense_births.py` and `market/sow/daily_births.py` (their own draw orders).

Draws, in this order, from the Generator passed in:
- recurring: P = `pipelines` values each of period (integers in `period`), phase (integers in
  [0, period)), concurrency, nominal duration, shape (uniforms: deadline when u < `shape_mix`),
  peak value (uniform in `value`) and deadline slack (integers in `deadline`, drawn for decaying
  pipelines too). Nothing is drawn per instance.
- adversarial: one (bursts, m) array of concurrencies (integers in `concurrency`), with
  m = ceil(overload * nodes_hint / concurrency low). Burst i takes the shortest prefix of row i
  whose sum reaches overload * nodes_hint.
- blocking: the low jobs' (waves, m) array of concurrencies, then the high jobs' (waves, m')
  array (integers in `concurrency`), m = ceil(low_demand * nodes_hint / concurrency low) and
  m' the same with high_demand. Wave i's low (high) jobs take the shortest prefix of row i of the
  first (second) array whose sum reaches low_demand (high_demand) * nodes_hint. The high jobs'
  arrival is in their SoW (realised later), not drawn here.
- toy, trace: nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from market.common.fields import as_section, choice, integer, interval, real, reject_unknown_keys
from market.common.sections import parse
from market.sow.daily_births import DailyParams, daily_births
from market.sow.dense_births import DenseParams, dense_births
from market.sow.prior_births import PriorParams, draw_prior_births
from market.sow.sow_trace import load_sow_trace
from market.sow.statement_of_work import SIGNALS, BirthSequence, Bounds, StatementOfWork

__all__ = [
    "KINDS",
    "SHAPES",
    "AdversarialParams",
    "BirthParams",
    "BlockingParams",
    "RecurringParams",
    "ToyParams",
    "TraceParams",
    "binomial_offsets",
    "bounds_from_config",
    "draw_births",
]

KINDS = ("recurring", "toy", "adversarial", "blocking", "trace")
SHAPES = ("deadline", "decaying")
VALUE_DECIMALS = 3  # peak and decayed values are floored to 3 decimals (monotone: order kept)


def bounds_from_config(section: Mapping | None) -> Bounds:
    """Config section `bounds`: C_max, D_max, S_max (integers >= 1) and V_bar (>= 1).
    Defaults: max_concurrency 4, max_duration 4, horizon 16, max_value 16."""
    return parse(Bounds, section, "bounds")


# --- config helpers ----------------------------------------------------------------------------


def _getter(cls, d: Mapping):
    return lambda key: d.get(key, getattr(cls, key))


def _within(value: tuple, key: str, low, high, what: str, raw) -> tuple:
    """`value` (the checked [low, high] pair read from `raw`) inside [low, high] of the bounds."""
    if value[0] < low or value[1] > high:
        raise ValueError(f"{key} must lie within [{low:g}, {high:g}] ({what}), got {raw!r}")
    return value


def _int_range(get, key: str, default: tuple, low: int, high: int, what: str) -> tuple:
    raw = get(key)
    raw = default if raw is None else raw
    return _within(interval(raw, f"births.{key}", kind=int, minimum=low), f"births.{key}", low, high, what, raw)


def _value_range(get, key: str, bounds: Bounds) -> tuple:
    raw = get(key)
    raw = (1.0, bounds.max_value) if raw is None else raw
    return _within(
        interval(raw, f"births.{key}", minimum=1.0),
        f"births.{key}",
        1.0,
        bounds.max_value,
        f"bounds.max_value = {bounds.max_value:g}",
        raw,
    )


def _fits_horizon(parts: Mapping[str, int], bounds: Bounds, why: str, strict: bool = False) -> None:
    """The sum of the keys `parts` (name -> value) is <= S_max (< S_max when `strict`); the error
    names every key: `births.lead + births.window must be <= bounds.horizon = 16 (why), got 10 + 7`."""
    total = sum(parts.values())
    if total > bounds.horizon or (strict and total == bounds.horizon):
        keys = " + ".join(f"births.{key}" for key in parts)
        raise ValueError(
            f"{keys} must be {'<' if strict else '<='} bounds.horizon = {bounds.horizon} ({why}), "
            f"got {' + '.join(str(v) for v in parts.values())}"
        )


def _sized_for_hint(get, bounds: Bounds) -> tuple[tuple, int]:
    """`concurrency` (null: [ceil(3 C_max / 4), C_max]) and `nodes_hint` (>= its high end) of the
    generators sized against a cluster (adversarial, blocking)."""
    c_max = bounds.max_concurrency
    concurrency = _int_range(get, "concurrency", (-(-3 * c_max // 4), c_max), 1, c_max, _c_max(bounds))
    nodes = integer(get("nodes_hint"), "births.nodes_hint", minimum=1)
    if nodes < concurrency[1]:
        raise ValueError(
            f"births.nodes_hint must be >= the highest concurrency {concurrency[1]} (births.concurrency), got {nodes}"
        )
    return concurrency, nodes


def _duration(get, key: str, bounds: Bounds) -> int:
    """An integer duration in [1, D_max]; null takes D_max."""
    raw = get(key)
    return bounds.max_duration if raw is None else integer(raw, f"births.{key}", minimum=1, maximum=bounds.max_duration)


def _value(get, key: str, default: float | None, bounds: Bounds) -> float:
    """A value in [1, V_bar]; null takes `default` (None: V_bar)."""
    raw = get(key)
    raw = (bounds.max_value if default is None else default) if raw is None else raw
    return real(raw, f"births.{key}", minimum=1.0, maximum=bounds.max_value)


def _c_max(bounds: Bounds) -> str:
    return f"bounds.max_concurrency = {bounds.max_concurrency}"


def _d_max(bounds: Bounds) -> str:
    return f"bounds.max_duration = {bounds.max_duration}"


def _floor(x):
    scale = 10**VALUE_DECIMALS
    return np.floor(np.asarray(x, dtype=float) * scale) / scale


def binomial_offsets(jitter: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets -J..J and their weights C(2J, J + o) / 4^J (exact integer ratios, correctly rounded;
    they sum to 1 exactly for small J). Offsets whose weight underflows to 0 (J > 500) are left out."""
    weights = np.array([math.comb(2 * jitter, i) / 4**jitter for i in range(2 * jitter + 1)])
    offsets = np.arange(-jitter, jitter + 1, dtype=np.int64)
    keep = weights > 0
    return offsets[keep], weights[keep]


def _prefix_sizes(concurrency: tuple, target: float, rows: int, rng: np.random.Generator) -> list[np.ndarray]:
    """One (rows, m) array of concurrencies (integers in `concurrency`), m = ceil(target /
    concurrency low); row i gives the shortest prefix whose sum reaches `target`."""
    width = max(1, math.ceil(target / concurrency[0]))
    draws = rng.integers(concurrency[0], concurrency[1] + 1, (rows, width))
    reached = np.cumsum(draws, axis=1) >= target - 1e-9
    return [row[: int(np.argmax(hit)) + 1] for row, hit in zip(draws, reached)]


def _uniform_support(arrival: np.ndarray, durations: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every arrival (relative to birth) with every duration, uniformly: (arrivals, durations,
    probabilities)."""
    a = np.repeat(arrival, durations.size)
    return a, np.tile(durations, arrival.size), np.full(a.size, 1.0 / a.size)


def _deadline_values(peak: float, last: int, bounds: Bounds) -> np.ndarray:
    """values[k] = peak for finishes k = f - b <= last, then 0 (and 0 at S_max)."""
    values = np.where(np.arange(bounds.horizon + 1) <= last, float(peak), 0.0)
    values[bounds.horizon] = 0.0
    return values


# --- recurring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecurringParams:
    """`births.kind: recurring`. Ranges are [low, high] (inclusive for integers); null takes the
    bound: concurrency [1, C_max], duration [1, D_max], value [1, V_bar]."""

    rounds: int = 96  # instances born in rounds 0..rounds-1
    pipelines: int = 4
    period: tuple = (8, 24)
    concurrency: tuple | None = None
    duration: tuple | None = None  # the nominal duration
    value: tuple | None = None  # the peak value
    lead: int = 4  # rounds from birth to the nominal arrival
    arrival_jitter: int = 2
    duration_jitter: int = 1
    deadline: tuple = (0, 6)  # slack after the nominal finish (deadline shape)
    shape_mix: float = 0.5  # P(deadline shape); decaying otherwise
    half_life: int = 4  # decaying shape: the value halves every half_life rounds

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> RecurringParams:
        get = _getter(cls, d)
        lead = integer(get("lead"), "births.lead", minimum=0)
        jitter = integer(get("arrival_jitter"), "births.arrival_jitter", minimum=0)
        _fits_horizon(
            {"lead": lead, "arrival_jitter": jitter}, bounds, "arrivals lie before birth + S_max", strict=True
        )
        return cls(
            rounds=integer(get("rounds"), "births.rounds", minimum=1),
            pipelines=integer(get("pipelines"), "births.pipelines", minimum=1),
            period=interval(get("period"), "births.period", kind=int, minimum=1),
            concurrency=_int_range(
                get, "concurrency", (1, bounds.max_concurrency), 1, bounds.max_concurrency, _c_max(bounds)
            ),
            duration=_int_range(get, "duration", (1, bounds.max_duration), 1, bounds.max_duration, _d_max(bounds)),
            value=_value_range(get, "value", bounds),
            lead=lead,
            arrival_jitter=jitter,
            duration_jitter=integer(
                get("duration_jitter"), "births.duration_jitter", minimum=0, maximum=bounds.max_duration - 1
            ),
            deadline=interval(get("deadline"), "births.deadline", kind=int, minimum=0),
            shape_mix=real(get("shape_mix"), "births.shape_mix", minimum=0.0, maximum=1.0),
            half_life=integer(get("half_life"), "births.half_life", minimum=1),
        )


@dataclass(frozen=True)
class Pipeline:
    """One recurring pipeline's parameters, drawn once per sequence."""

    period: int
    phase: int
    concurrency: int
    duration: int
    shape: str
    peak: float
    slack: int


def _draw_pipelines(p: RecurringParams, rng: np.random.Generator) -> list[Pipeline]:
    n = p.pipelines
    period = rng.integers(p.period[0], p.period[1] + 1, n)
    phase = rng.integers(0, period)
    concurrency = rng.integers(p.concurrency[0], p.concurrency[1] + 1, n)
    duration = rng.integers(p.duration[0], p.duration[1] + 1, n)
    deadline = rng.random(n) < p.shape_mix
    peak = _floor(rng.uniform(p.value[0], p.value[1], n))
    slack = rng.integers(p.deadline[0], p.deadline[1] + 1, n)
    return [
        Pipeline(
            int(period[k]),
            int(phase[k]),
            int(concurrency[k]),
            int(duration[k]),
            "deadline" if deadline[k] else "decaying",
            float(peak[k]),
            int(slack[k]),
        )
        for k in range(n)
    ]


def _merge(arrival: np.ndarray, duration: np.ndarray, probability: np.ndarray):
    """Support points sorted by (arrival, duration), equal points merged (weights added)."""
    pairs, inverse = np.unique(np.stack([arrival, duration], axis=1), axis=0, return_inverse=True)
    return pairs[:, 0], pairs[:, 1], np.bincount(inverse.ravel(), weights=probability)


def _recurring_sow(p: RecurringParams, pipe: Pipeline, nominal: int, bounds: Bounds) -> StatementOfWork:
    """Instance with nominal arrival `nominal` (absolute round) of `pipe`."""
    birth = max(0, nominal - p.lead)
    a_off, a_w = binomial_offsets(p.arrival_jitter)
    d_off, d_w = binomial_offsets(p.duration_jitter)
    arrival = np.maximum(nominal + a_off, birth)
    duration = np.clip(pipe.duration + d_off, 1, bounds.max_duration)
    a, d, prob = _merge(np.repeat(arrival, d_off.size), np.tile(duration, a_off.size), np.outer(a_w, d_w).ravel())
    k = np.arange(bounds.horizon + 1)
    if pipe.shape == "deadline":
        last = nominal - birth + pipe.duration + pipe.slack  # last finish (k = f - birth) at the peak
        values = np.where(k <= last, pipe.peak, 0.0)
    else:
        first = int((a + d).min()) - birth  # earliest possible finish
        values = _floor(pipe.peak * 0.5 ** (np.maximum(k - first, 0) / p.half_life))
        values[values < 1] = 0.0
    values[bounds.horizon] = 0.0
    return StatementOfWork(birth, pipe.concurrency, values, a, d, prob)


def _recurring(p: RecurringParams, bounds: Bounds, rng: np.random.Generator) -> list[StatementOfWork]:
    keyed = []
    for k, pipe in enumerate(_draw_pipelines(p, rng)):
        shapes: dict[int, StatementOfWork] = {}  # by nominal - birth: the SoW born at 0 (lead, or less when clipped)
        n = 0
        while (birth := max(0, pipe.phase + n * pipe.period - p.lead)) < p.rounds:
            lag = pipe.phase + n * pipe.period - birth
            if lag not in shapes:
                shapes[lag] = _recurring_sow(p, pipe, lag, bounds)
            shape = shapes[lag]
            sow = shape.replace(
                birth=birth,
                arrival=shape.arrival + birth,
                values=shape.values.copy(),
                duration=shape.duration.copy(),
                probability=shape.probability.copy(),
            )
            keyed.append(((birth, k, n), sow))
            n += 1
    return [sow for _, sow in sorted(keyed, key=lambda item: item[0])]


# --- toy ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToyParams:
    """`births.kind: toy`: Sec. 1's example, `jobs` copies born `spacing` rounds apart."""

    jobs: int = 8
    spacing: int = 1
    X: int = 4

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> ToyParams:
        get = _getter(cls, d)
        x = integer(get("X"), "births.X", minimum=1)
        if bounds.horizon < x + 2 or bounds.max_value < 2.0**x:
            raise ValueError(
                f"births.X = {x} needs bounds.horizon >= X + 2 = {x + 2} and bounds.max_value >= "
                f"2^X = {2**x}, got {bounds.horizon} and {bounds.max_value:g}"
            )
        return cls(
            jobs=integer(get("jobs"), "births.jobs", minimum=1),
            spacing=integer(get("spacing"), "births.spacing", minimum=0),
            X=x,
        )


def _toy_sow(x: int, birth: int, bounds: Bounds) -> StatementOfWork:
    """Sec. 1: arrival b + k with probability 2^(k - X) for k < X and the rest, 2^-X, at k = X;
    duration 1, concurrency 1; completing in the round of arrival k (f = b + k + 1) is worth
    2^(X - k): values[k + 1] = 2^(X - k) for k = 0..X, values[0] = 2^X (no job can finish at its
    birth; kept non-increasing), 0 from b + X + 2 on.

    Scheduled on arrival, the expected value is sum_{k<X} 2^(k-X) 2^(X-k) + 2^-X * 1 = X + 2^-X,
    Theta(X), using one node-round. A block reserved at birth over rounds b..b+k-1 (k <= X)
    earns sum_{i<k} 2^(i-X) 2^(X-i) = k and holds k node-rounds."""
    k = np.arange(x + 1)
    probability = np.append(2.0 ** (k[:-1] - x), 2.0**-x)
    values = np.zeros(bounds.horizon + 1)
    values[0] = 2.0**x
    values[k + 1] = 2.0 ** (x - k)
    return StatementOfWork(birth, 1, values, birth + k, np.ones(x + 1, np.int64), probability)


def _toy(p: ToyParams, bounds: Bounds, rng: np.random.Generator) -> list[StatementOfWork]:
    return [_toy_sow(p.X, n * p.spacing, bounds) for n in range(p.jobs)]


# --- adversarial -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdversarialParams:
    """`births.kind: adversarial`. `nodes_hint` is the cluster size the bursts are sized for (the
    family passes its own N to the mechanisms; a burst asks for overload * nodes_hint nodes).
    Null ranges take: concurrency [ceil(3 C_max / 4), C_max], duration [1, min(2, D_max)],
    value [1, V_bar]."""

    bursts: int = 4
    gap: int = 8
    nodes_hint: int = 16
    overload: float = 2.0
    concurrency: tuple | None = None
    lead: int = 1  # rounds from birth to the window's first arrival
    window: int = 2  # arrivals birth + lead .. birth + lead + window - 1, uniform
    duration: tuple | None = None  # durations uniform over [low, high], independent of the arrival
    value: tuple | None = None  # values from low (first job) to high (last), geometric
    slack: int = 2  # V = value for finishes up to the last arrival + high duration + slack

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> AdversarialParams:
        get = _getter(cls, d)
        concurrency, nodes = _sized_for_hint(get, bounds)
        lead = integer(get("lead"), "births.lead", minimum=0)
        window = integer(get("window"), "births.window", minimum=1)
        _fits_horizon({"lead": lead, "window": window}, bounds, "arrivals lie before birth + S_max")
        return cls(
            bursts=integer(get("bursts"), "births.bursts", minimum=1),
            gap=integer(get("gap"), "births.gap", minimum=0),
            nodes_hint=nodes,
            overload=real(get("overload"), "births.overload", minimum=0.0, strict_min=True),
            concurrency=concurrency,
            lead=lead,
            window=window,
            duration=_int_range(
                get, "duration", (1, min(2, bounds.max_duration)), 1, bounds.max_duration, _d_max(bounds)
            ),
            value=_value_range(get, "value", bounds),
            slack=integer(get("slack"), "births.slack", minimum=0),
        )

    def target(self) -> float:
        """A burst's total concurrency, at least overload * nodes_hint."""
        return self.overload * self.nodes_hint


def _adversarial(p: AdversarialParams, bounds: Bounds, rng: np.random.Generator) -> list[StatementOfWork]:
    a_rel, d, prob = _uniform_support(np.arange(p.lead, p.lead + p.window), np.arange(p.duration[0], p.duration[1] + 1))
    last = p.lead + p.window - 1 + p.duration[1] + p.slack
    jobs = []
    for i, sizes in enumerate(_prefix_sizes(p.concurrency, p.target(), p.bursts, rng)):
        birth = i * p.gap
        low, high = p.value
        peaks = _floor(low * (high / low) ** (np.arange(sizes.size) / max(sizes.size - 1, 1)))
        for c, peak in zip(sizes, peaks):
            jobs.append(
                StatementOfWork(
                    birth, int(c), _deadline_values(peak, last, bounds), birth + a_rel, d.copy(), prob.copy()
                )
            )
    return jobs


# --- blocking ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockingParams:
    """`births.kind: blocking`: waves of long low-value jobs, each followed by tight high-value
    jobs that need the nodes the first hold. `nodes_hint` as in AdversarialParams (a wave asks for
    demand * nodes_hint nodes). Null takes: concurrency [ceil(3 C_max / 4), C_max], high_value V_bar,
    low_duration and high_duration D_max."""

    waves: int = 4
    gap: int = 12  # wave i's low jobs are born at round i * gap
    nodes_hint: int = 16
    low_demand: float = 1.0  # the low jobs' total concurrency / nodes_hint
    high_demand: float = 1.0  # the high jobs' total concurrency / nodes_hint
    concurrency: tuple | None = None
    low_value: float = 1.0
    high_value: float | None = None
    low_duration: int | None = None
    high_duration: int | None = None
    lead: int = 1  # rounds from birth to the (first) arrival, both kinds of job
    delay: int = 1  # rounds from the low jobs' birth to the high jobs' birth
    jitter: int = 2  # high jobs arrive uniformly in birth + lead .. birth + lead + jitter
    low_slack: int = 8  # low jobs: V = low_value for f <= arrival + low_duration + low_slack

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> BlockingParams:
        get = _getter(cls, d)
        concurrency, nodes = _sized_for_hint(get, bounds)
        lead = integer(get("lead"), "births.lead", minimum=0)
        jitter = integer(get("jitter"), "births.jitter", minimum=0)
        low_duration = _duration(get, "low_duration", bounds)
        high_duration = _duration(get, "high_duration", bounds)
        low_slack = integer(get("low_slack"), "births.low_slack", minimum=0)
        why = "the job must be able to finish with value before birth + S_max"
        _fits_horizon({"lead": lead, "low_duration": low_duration, "low_slack": low_slack}, bounds, why, strict=True)
        _fits_horizon({"lead": lead, "jitter": jitter, "high_duration": high_duration}, bounds, why, strict=True)
        return cls(
            waves=integer(get("waves"), "births.waves", minimum=1),
            gap=integer(get("gap"), "births.gap", minimum=0),
            nodes_hint=nodes,
            low_demand=real(get("low_demand"), "births.low_demand", minimum=0.0, strict_min=True),
            high_demand=real(get("high_demand"), "births.high_demand", minimum=0.0, strict_min=True),
            concurrency=concurrency,
            low_value=_value(get, "low_value", cls.low_value, bounds),
            high_value=_value(get, "high_value", None, bounds),
            low_duration=low_duration,
            high_duration=high_duration,
            lead=lead,
            delay=integer(get("delay"), "births.delay", minimum=0),
            jitter=jitter,
            low_slack=low_slack,
        )


def _blocking(p: BlockingParams, bounds: Bounds, rng: np.random.Generator) -> list[StatementOfWork]:
    kinds = [  # (birth after the wave's start, concurrencies per wave, support, value function)
        (
            0,
            _prefix_sizes(p.concurrency, p.low_demand * p.nodes_hint, p.waves, rng),
            _uniform_support(np.array([p.lead]), np.array([p.low_duration])),
            _deadline_values(p.low_value, p.lead + p.low_duration + p.low_slack, bounds),
        ),
        (
            p.delay,
            _prefix_sizes(p.concurrency, p.high_demand * p.nodes_hint, p.waves, rng),
            _uniform_support(np.arange(p.lead, p.lead + p.jitter + 1), np.array([p.high_duration])),
            _deadline_values(p.high_value, p.lead + p.jitter + p.high_duration, bounds),
        ),
    ]
    keyed = []
    for kind, (offset, sizes, (a_rel, d, prob), values) in enumerate(kinds):
        for i, wave in enumerate(sizes):
            birth = i * p.gap + offset
            for n, c in enumerate(wave):
                sow = StatementOfWork(birth, int(c), values.copy(), birth + a_rel, d.copy(), prob.copy())
                keyed.append(((birth, i, kind, n), sow))
    return [sow for _, sow in sorted(keyed, key=lambda item: item[0])]


# --- trace -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceParams:
    """`births.kind: trace`: the SoWs of a CSV file (market/sow/sow_trace.py)."""

    path: str = "data/sow_example_sows.csv"

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> TraceParams:
        path = d.get("path", cls.path)
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str) or not path:
            raise ValueError(f"births.path must be a non-empty string, got {path!r}")
        load_sow_trace(path).to_sequence(bounds)  # a bad file or a bound it breaks fails here
        return cls(path=path)


def _trace(p: TraceParams, bounds: Bounds, rng: np.random.Generator) -> list[StatementOfWork]:
    return list(load_sow_trace(p.path).to_sequence(bounds).jobs)


# --- the section -------------------------------------------------------------------------------

GENERATORS = {
    "recurring": (RecurringParams, _recurring),
    "toy": (ToyParams, _toy),
    "adversarial": (AdversarialParams, _adversarial),
    "blocking": (BlockingParams, _blocking),
    "trace": (TraceParams, _trace),
}
# births.kind: prior (market/sow/prior_births.py, the stochastic variant of Sec. 5): its generator
# returns the whole sequence, the jobs with their known priors.
GENERATORS["prior"] = (PriorParams, draw_prior_births)
KINDS += ("prior",)
# births.kind: dense (market/sow/dense_births.py: relaxed usage near N', Theorem 4.1's regime) and
# daily (market/sow/daily_births.py: an overloaded day with three job classes, Helios-sized).
GENERATORS["dense"] = (DenseParams, dense_births)
GENERATORS["daily"] = (DailyParams, daily_births)
KINDS += ("dense", "daily")


@dataclass(frozen=True)
class BirthParams:
    """Config section `births`: `kind` (default recurring), `signal` (default none) and the keys
    of the kind's generator, read into `generator` (its ranges resolved against the bounds) by
    `from_config`; keys of other kinds are rejected."""

    kind: str = "recurring"
    signal: str = "none"
    generator: RecurringParams | ToyParams | AdversarialParams | BlockingParams | TraceParams | None = None

    @classmethod
    def from_config(cls, section: Mapping | None, bounds: Bounds) -> BirthParams:
        d = as_section(section, "births")
        kind = choice(d.pop("kind", cls.kind), "births.kind", KINDS)
        signal = choice(d.pop("signal", cls.signal), "births.signal", SIGNALS)
        generator_cls = GENERATORS[kind][0]
        required = getattr(generator_cls, "REQUIRED_SIGNAL", None)  # kind prior: Theorem 5.2's sigma = d
        if required is not None and signal != required:
            raise ValueError(f"births.signal must be '{required}' for births.kind '{kind}', got {signal!r}")
        reject_unknown_keys(generator_cls, d, "births", context=f" for kind '{kind}'", also_known=("kind", "signal"))
        return cls(kind, signal, generator_cls.from_config(d, bounds))


def draw_births(params: BirthParams, bounds: Bounds, rng: np.random.Generator) -> BirthSequence:
    """The birth sequence of `params` (draw order in the module docstring), checked against
    `bounds`: jobs in submission order, several may share a birth round (Remark 1)."""
    jobs = GENERATORS[params.kind][1](params.generator, bounds, rng)
    if isinstance(jobs, BirthSequence):  # a generator that builds its own sequence (kind prior: with the priors)
        return jobs.check(where="births")
    return BirthSequence(tuple(jobs), bounds, params.signal).check(where="births")
