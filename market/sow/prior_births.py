"""The stochastic variant's world (paper 004, Sec. 2 and Sec. 5 "Stochastic Variant"): every job's
statement of work is drawn from a known finite prior D_j, and every job is submitted before the
earliest arrival (`births.kind: prior`, docs/sow/world.md).

Sec. 5: "The number of jobs is fixed, but each job j's SoW is drawn independently from a known
distribution D_j of finite support. Once all the SoWs have been drawn, an adversary can choose
the submission time for each job, subject to being before the earliest arrival time." Theorem 5.2
needs "sigma(a, d) = d (i.e., durations are revealed upon job arrival)": this kind requires
`births.signal: duration` (a config error otherwise, checked by `BirthParams.from_config` through
`REQUIRED_SIGNAL`).

Readings (ours, written down):
- "before the earliest arrival time" is read globally: every birth lies at or before the
  earliest arrival any job can have (over every variant's support), so all the SoWs are known to
  the platform before anything arrives. (Each job's birth at or before its own arrivals is already
  Sec. 2's model, b_j <= a_j, so the sentence would say nothing if read per job.)
- The adversary's order: `order: random` (a uniform permutation) or `ascending` (jobs whose prior
  has the lowest expected peak value submitted first, the order that hurts posted prices).
- D_j: job j is instance n of pipeline k = j mod P. The pipeline has K variants, each with its
  prior probability, nominal duration, peak value and arrival-window shift ("K variants of a
  recurring pipeline", the issue); the instance has its own nominal arrival. A variant is a whole
  SoW: its (arrival, duration) distribution (binomial jitter around the shifted nominal arrival
  and the nominal duration, as `kind: recurring`) and a deadline value function.

Config keys (`PriorParams`; ranges [low, high], integers inclusive, null takes the bound):

| key | meaning | default |
|---|---|---|
| `jobs` | number of jobs J | 12 |
| `pipelines` | P: job j belongs to pipeline j mod P | 4 |
| `variants` | K, the support size of every D_j | 3 |
| `rounds` | nominal arrivals lie in lead .. lead + rounds - 1 | 4 |
| `lead` | the earliest nominal arrival | 3 |
| `shift` | a variant moves its arrival window by -shift..shift | 1 |
| `arrival_jitter` | J_a: arrival offsets -J_a..J_a (binomial weights) | 1 |
| `duration_jitter` | J_d: duration offsets -J_d..J_d, clipped to [1, D_max] | 0 |
| `concurrency` | a pipeline's concurrency | bound: [1, C_max] |
| `duration` | a variant's nominal duration | bound: [1, D_max] |
| `value` | a variant's peak value, log-uniform | bound: [1, V_bar] |
| `slack` | V = peak for f <= latest arrival + nominal d + J_d + slack | 1 |
| `order` | submission order: random or ascending | random |

Checks at config: lead >= shift + arrival_jitter (the earliest arrival is a round >= 0, so every
birth can precede it) and lead + rounds - 1 + shift + arrival_jitter + duration high +
duration_jitter + slack < S_max (a job born at round 0 can finish its latest window with value
before birth + S_max); the error names the keys.

Draws, all uniforms in [0, 1) of fixed shapes, in this order (so that two configs differing only
in the bounds or the ranges draw the same stream, and a grid over V_bar and D_max with those keys
in `seed_excludes` has the same pipelines in every cell at the same quantiles):
  pipelines: concurrency [P], prior weights [P, K], durations [P, K], values [P, K], shifts [P, K];
  jobs: nominal arrivals [J], order [J], realised variant [J].
Mapped: an integer range [lo, hi] takes lo + floor(u (hi - lo + 1)); a value lo (hi/lo)^u floored
to 3 decimals (log-uniform); prior probabilities (0.5 + u) normalised; the realised variant by the
inverse CDF of the prior. The (arrival, duration) of the realised SoW is drawn later by
`statement_of_work.realise`, as for every kind.

Births: with A_min = lead - shift - arrival_jitter the earliest possible arrival, the job of rank r
(0-based, in the submission order) is born at floor(r (A_min + 1) / J), so births fill 0..A_min.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from market.common.fields import choice, integer, interval
from market.sow.statement_of_work import BirthSequence, Bounds, StatementOfWork, check_sow

__all__ = ["ORDERS", "Prior", "PriorBirthSequence", "PriorParams", "draw_prior_births"]

ORDERS = ("random", "ascending")
VALUE_DECIMALS = 3


@dataclass(frozen=True, eq=False)
class Prior:
    """A job's known prior D_j: the K variant SoWs (same birth and concurrency-per-variant), their
    probabilities, and which one was drawn (the job's true SoW)."""

    variants: tuple[StatementOfWork, ...]
    probability: np.ndarray
    drawn: int

    def __post_init__(self):
        object.__setattr__(self, "probability", np.asarray(self.probability, dtype=float))
        if len(self.variants) != self.probability.size or not len(self.variants):
            raise ValueError("a prior needs one probability per variant")
        if not 0 <= self.drawn < len(self.variants):
            raise ValueError(f"drawn variant {self.drawn} outside 0..{len(self.variants) - 1}")


@dataclass(frozen=True)
class PriorBirthSequence(BirthSequence):
    """A birth sequence whose jobs are the drawn variants of known priors (`priors[j].variants[
    priors[j].drawn]` is `jobs[j]`)."""

    priors: tuple[Prior, ...] = field(default=())

    def __post_init__(self):
        super().__post_init__()
        if len(self.priors) != len(self.jobs):
            raise ValueError(f"{len(self.priors)} priors for {len(self.jobs)} jobs")
        for j, (sow, prior) in enumerate(zip(self.jobs, self.priors)):
            if prior.variants[prior.drawn] is not sow:
                raise ValueError(f"jobs[{j}] is not the drawn variant of its prior")

    def check(self, nodes: int | None = None, where: str = "jobs") -> PriorBirthSequence:
        super().check(nodes, where)
        for j, prior in enumerate(self.priors):
            for v, sow in enumerate(prior.variants):
                check_sow(sow, self.bounds, f"{where}[{j}] variant {v}", nodes)
                if sow.birth != self.jobs[j].birth:
                    raise ValueError(f"{where}[{j}] variant {v}: born at {sow.birth}, not at the job's birth")
            if abs(float(prior.probability.sum()) - 1.0) > 1e-9 or np.any(prior.probability <= 0):
                raise ValueError(f"{where}[{j}]: prior probabilities must be positive and sum to 1")
        return self


def _range(d: Mapping, key: str, default, low, high, what: str, kind=int) -> tuple:
    raw = d.get(key)
    raw = default if raw is None else raw
    value = interval(raw, f"births.{key}", kind=kind, minimum=low)
    if value[0] < low or value[1] > high:
        raise ValueError(f"births.{key} must lie within [{low:g}, {high:g}] ({what}), got {raw!r}")
    return value


@dataclass(frozen=True)
class PriorParams:
    """`births.kind: prior` (module docstring)."""

    REQUIRED_SIGNAL: ClassVar[str] = "duration"  # Theorem 5.2: sigma(a, d) = d

    jobs: int = 12
    pipelines: int = 4
    variants: int = 3
    rounds: int = 4
    lead: int = 3
    shift: int = 1
    arrival_jitter: int = 1
    duration_jitter: int = 0
    concurrency: tuple | None = None
    duration: tuple | None = None
    value: tuple | None = None
    slack: int = 1
    order: str = "random"

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> PriorParams:
        def get(key):  # a value the config leaves out, or null, is the class default
            return d[key] if d.get(key) is not None else getattr(cls, key)

        p = cls(
            jobs=integer(get("jobs"), "births.jobs", minimum=1),
            pipelines=integer(get("pipelines"), "births.pipelines", minimum=1),
            variants=integer(get("variants"), "births.variants", minimum=1),
            rounds=integer(get("rounds"), "births.rounds", minimum=1),
            lead=integer(get("lead"), "births.lead", minimum=0),
            shift=integer(get("shift"), "births.shift", minimum=0),
            arrival_jitter=integer(get("arrival_jitter"), "births.arrival_jitter", minimum=0),
            duration_jitter=integer(
                get("duration_jitter"), "births.duration_jitter", minimum=0, maximum=bounds.max_duration - 1
            ),
            concurrency=_range(
                d,
                "concurrency",
                (1, bounds.max_concurrency),
                1,
                bounds.max_concurrency,
                f"bounds.max_concurrency = {bounds.max_concurrency}",
            ),
            duration=_range(
                d,
                "duration",
                (1, bounds.max_duration),
                1,
                bounds.max_duration,
                f"bounds.max_duration = {bounds.max_duration}",
            ),
            value=_range(
                d,
                "value",
                (1.0, bounds.max_value),
                1.0,
                bounds.max_value,
                f"bounds.max_value = {bounds.max_value:g}",
                kind=float,
            ),
            slack=integer(get("slack"), "births.slack", minimum=0),
            order=choice(get("order"), "births.order", ORDERS),
        )
        if p.lead < p.shift + p.arrival_jitter:
            raise ValueError(
                f"births.lead must be >= births.shift + births.arrival_jitter (every birth precedes the "
                f"earliest arrival, a round >= 0), got {p.lead} < {p.shift} + {p.arrival_jitter}"
            )
        parts = {
            "lead": p.lead,
            "rounds - 1": p.rounds - 1,
            "shift": p.shift,
            "arrival_jitter": p.arrival_jitter,
            "duration high": p.duration[1],
            "duration_jitter": p.duration_jitter,
            "slack": p.slack,
        }
        if sum(parts.values()) >= bounds.horizon:
            keys = " + ".join(f"births.{key}" for key in parts)
            raise ValueError(
                f"{keys} must be < bounds.horizon = {bounds.horizon} (a job born at round 0 can finish "
                f"its latest window with value before birth + S_max), got "
                f"{' + '.join(str(v) for v in parts.values())}"
            )
        return p

    def earliest_arrival(self) -> int:
        return self.lead - self.shift - self.arrival_jitter


def _offsets(jitter: int) -> tuple[np.ndarray, np.ndarray]:
    weights = np.array([math.comb(2 * jitter, i) / 4**jitter for i in range(2 * jitter + 1)])
    return np.arange(-jitter, jitter + 1, dtype=np.int64), weights


def _integers(u: np.ndarray, low: int, high: int) -> np.ndarray:
    return np.minimum(low + np.floor(u * (high - low + 1)).astype(np.int64), high)


def _variant_sow(
    p: PriorParams, bounds: Bounds, birth: int, concurrency: int, nominal: int, duration: int, peak: float
) -> StatementOfWork:
    a_off, a_w = _offsets(p.arrival_jitter)
    d_off, d_w = _offsets(p.duration_jitter)
    table: dict[tuple[int, int], float] = {}
    for a, wa in zip((nominal + a_off).tolist(), a_w.tolist()):
        for d, wd in zip(np.clip(duration + d_off, 1, bounds.max_duration).tolist(), d_w.tolist()):
            table[(a, d)] = table.get((a, d), 0.0) + wa * wd
    keys = sorted(table)
    last = min(nominal + p.arrival_jitter + duration + p.duration_jitter + p.slack - birth, bounds.horizon - 1)
    values = np.where(np.arange(bounds.horizon + 1) <= last, peak, 0.0)
    values[bounds.horizon] = 0.0
    return StatementOfWork(
        birth,
        concurrency,
        values,
        np.array([k[0] for k in keys], np.int64),
        np.array([k[1] for k in keys], np.int64),
        np.array([table[k] for k in keys]),
    )


def draw_prior_births(p: PriorParams, bounds: Bounds, rng: np.random.Generator) -> PriorBirthSequence:
    """The jobs, their priors and their drawn variants (module docstring for the draws)."""
    P, K, J = p.pipelines, p.variants, p.jobs
    u_conc, u_weight, u_dur, u_val, u_shift = (
        rng.random(P),
        rng.random((P, K)),
        rng.random((P, K)),
        rng.random((P, K)),
        rng.random((P, K)),
    )
    u_arr, u_order, u_variant = rng.random(J), rng.random(J), rng.random(J)
    concurrency = _integers(u_conc, *p.concurrency)
    weight = 0.5 + u_weight
    prior = weight / weight.sum(axis=1, keepdims=True)
    durations = _integers(u_dur, *p.duration)
    low, high = p.value
    peaks = np.maximum(np.floor(low * (high / low) ** u_val * 10**VALUE_DECIMALS) / 10**VALUE_DECIMALS, low)
    shifts = _integers(u_shift, -p.shift, p.shift)
    nominal = p.lead + _integers(u_arr, 0, p.rounds - 1)
    pipeline = np.arange(J) % P
    if p.order == "random":
        order = np.argsort(u_order, kind="stable")
    else:  # ascending expected peak value of the prior, ties by job index
        order = np.lexsort((np.arange(J), (prior * peaks).sum(axis=1)[pipeline]))
    first = p.earliest_arrival()
    birth_of = np.empty(J, np.int64)
    birth_of[order] = (np.arange(J) * (first + 1)) // J
    jobs, priors = [], []
    for j in order.tolist():
        k = pipeline[j]
        b = int(birth_of[j])
        variants = tuple(
            _variant_sow(
                p,
                bounds,
                b,
                int(concurrency[k]),
                int(nominal[j] + shifts[k, v]),
                int(durations[k, v]),
                float(peaks[k, v]),
            )
            for v in range(K)
        )
        cdf = np.cumsum(prior[k])
        drawn = min(int(np.searchsorted(cdf, u_variant[j] * cdf[-1], side="right")), K - 1)
        priors.append(Prior(variants, prior[k].copy(), drawn))
        jobs.append(variants[drawn])
    return PriorBirthSequence(tuple(jobs), bounds, "duration", tuple(priors))
