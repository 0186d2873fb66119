"""Statements of work and birth sequences (paper 004, Sec. 2; docs/sow/world.md).

N homogeneous nodes, discrete rounds 0, 1, 2, ... A job j is born (submitted) at round b_j with a
statement of work SoW_j = (V_j, c_j, P_j):
- V_j, a non-increasing value function of the finish time f with values in {0} U [1, V_bar] and
  V_j(b_j + S_max) = 0 (Sec. 2, "Technical assumptions"). It is stored as `values[k] = V_j(b_j + k)`
  for k = 0..S_max; after b_j + S_max the value is 0.
- c_j <= C_max, the number of nodes it needs while it runs (its concurrency demand).
- P_j, a finite joint distribution over (arrival a_j, duration d_j): the support points
  `arrival[i], duration[i]` with probabilities `probability[i]`, b_j <= a_j < b_j + S_max and
  1 <= d_j <= D_max.
A job that starts at round s runs in rounds s..s+d-1 and finishes at f = s + d (Sec. 2).

The signal revealed at arrival (Sec. 2, footnote 6) is one of two: `none` (nothing about d) or
`duration` (sigma(a, d) = d, the signal of Theorem 5.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from market.common.fields import integer, real
from market.common.sections import checked, key

__all__ = [
    "SIGNALS",
    "Bounds",
    "StatementOfWork",
    "BirthSequence",
    "Realisation",
    "check_sow",
    "realise",
    "sow_from_lists",
]

SIGNALS = ("none", "duration")
PROBABILITY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Bounds:
    """The known bounds of Sec. 2: C_max, D_max, S_max and V_bar (config section `bounds`, read by
    market/sow/birth_sequences.py's bounds_from_config)."""

    max_concurrency: int = key(4, checked(integer, minimum=1), "C_max: nodes a job uses at once")
    max_duration: int = key(4, checked(integer, minimum=1), "D_max: rounds a job runs")
    # S_max: V_j(b_j + S_max) = 0
    horizon: int = key(16, checked(integer, minimum=1), "S_max: rounds after its birth by which a job's value is 0")
    # V_bar: positive values lie in [1, V_bar]
    max_value: float = key(16.0, checked(real, minimum=1.0), "V_bar: largest value of a job")

    def __post_init__(self):
        for name in ("max_concurrency", "max_duration", "horizon"):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"bounds.{name} must be a positive integer, got {value!r}")
        if not np.isfinite(self.max_value) or self.max_value < 1:
            raise ValueError(f"bounds.max_value must be a finite number >= 1, got {self.max_value!r}")


@dataclass(frozen=True, eq=False)
class StatementOfWork:
    """One job's reported (or true) SoW: birth, concurrency, value function, distribution."""

    birth: int
    concurrency: int
    values: np.ndarray  # float, length S_max + 1: values[k] = V(birth + k)
    arrival: np.ndarray  # int, the support's arrival rounds (absolute)
    duration: np.ndarray  # int, the support's durations
    probability: np.ndarray  # float, > 0, summing to 1

    def __post_init__(self):
        object.__setattr__(self, "values", np.asarray(self.values, dtype=float))
        object.__setattr__(self, "arrival", np.asarray(self.arrival, dtype=np.int64))
        object.__setattr__(self, "duration", np.asarray(self.duration, dtype=np.int64))
        object.__setattr__(self, "probability", np.asarray(self.probability, dtype=float))

    def value(self, finish) -> np.ndarray:
        """V(f) for an array of absolute finish rounds (0 outside birth..birth + S_max)."""
        k = np.asarray(finish, dtype=np.int64) - self.birth
        inside = (k >= 0) & (k < len(self.values))
        return np.where(inside, self.values[np.clip(k, 0, len(self.values) - 1)], 0.0)

    def expected_duration(self) -> float:
        return float(self.probability @ self.duration)

    def replace(self, **changes) -> StatementOfWork:
        fields = {
            "birth": self.birth,
            "concurrency": self.concurrency,
            "values": self.values,
            "arrival": self.arrival,
            "duration": self.duration,
            "probability": self.probability,
        }
        fields.update(changes)
        return StatementOfWork(**fields)


def check_sow(sow: StatementOfWork, bounds: Bounds, where: str, nodes: int | None = None) -> None:
    """Raise ValueError naming `where` (a config key or `file:line`) if `sow` breaks Sec. 2's model."""
    if isinstance(sow.birth, bool) or int(sow.birth) != sow.birth or sow.birth < 0:
        raise ValueError(f"{where}: birth must be a non-negative integer, got {sow.birth!r}")
    c = sow.concurrency
    if isinstance(c, bool) or int(c) != c or c < 1:
        raise ValueError(f"{where}: concurrency must be a positive integer, got {c!r}")
    if c > bounds.max_concurrency:
        raise ValueError(f"{where}: concurrency {c} is above C_max = {bounds.max_concurrency}")
    if nodes is not None and c > nodes:
        raise ValueError(f"{where}: concurrency {c} is above the {nodes} nodes")
    v = sow.values
    if v.shape != (bounds.horizon + 1,):
        raise ValueError(
            f"{where}: the value function must have S_max + 1 = {bounds.horizon + 1} values "
            f"(finish at birth + 0..S_max), got {v.size}"
        )
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{where}: the value function has a value that is not finite")
    bad = np.flatnonzero((v != 0) & ((v < 1) | (v > bounds.max_value)))
    if bad.size:
        k = int(bad[0])
        raise ValueError(
            f"{where}: value at finish birth+{k} is {v[k]:g}, outside {{0}} U [1, V_bar = {bounds.max_value:g}]"
        )
    rising = np.flatnonzero(np.diff(v) > 0)
    if rising.size:
        k = int(rising[0])
        raise ValueError(
            f"{where}: the value function increases from {v[k]:g} at birth+{k} to {v[k + 1]:g} "
            f"at birth+{k + 1} (it must be non-increasing)"
        )
    if v[-1] != 0:
        raise ValueError(f"{where}: V(birth + S_max) must be 0, got {v[-1]:g}")
    a, d, p = sow.arrival, sow.duration, sow.probability
    if a.ndim != 1 or a.size == 0 or a.shape != d.shape or a.shape != p.shape:
        raise ValueError(
            f"{where}: the distribution needs equal, non-empty lists of arrivals, durations and "
            f"probabilities, got {a.size}, {d.size}, {p.size}"
        )
    if np.any(a < sow.birth) or np.any(a >= sow.birth + bounds.horizon):
        i = int(np.flatnonzero((a < sow.birth) | (a >= sow.birth + bounds.horizon))[0])
        raise ValueError(
            f"{where}: arrival {int(a[i])} is outside [birth, birth + S_max) = "
            f"[{sow.birth}, {sow.birth + bounds.horizon})"
        )
    if np.any(d < 1) or np.any(d > bounds.max_duration):
        i = int(np.flatnonzero((d < 1) | (d > bounds.max_duration))[0])
        raise ValueError(f"{where}: duration {int(d[i])} is outside [1, D_max = {bounds.max_duration}]")
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"{where}: probabilities must be positive, got {p.tolist()}")
    if abs(float(p.sum()) - 1.0) > PROBABILITY_TOLERANCE:
        raise ValueError(f"{where}: probabilities sum to {float(p.sum()):.12g}, not 1")
    points = set(zip(a.tolist(), d.tolist()))
    if len(points) != a.size:
        raise ValueError(f"{where}: the distribution lists an (arrival, duration) pair twice")


@dataclass(frozen=True)
class BirthSequence:
    """The jobs in submission order (births non-decreasing), their bounds and the signal."""

    jobs: tuple[StatementOfWork, ...]
    bounds: Bounds
    signal: str = "none"

    def __post_init__(self):
        if self.signal not in SIGNALS:
            raise ValueError(f"signal must be one of {', '.join(SIGNALS)}, got {self.signal!r}")

    def check(self, nodes: int | None = None, where: str = "jobs") -> BirthSequence:
        births = [sow.birth for sow in self.jobs]
        for j, sow in enumerate(self.jobs):
            check_sow(sow, self.bounds, f"{where}[{j}]", nodes)
            if j and births[j] < births[j - 1]:
                raise ValueError(
                    f"{where}[{j}]: born at {births[j]}, before job {j - 1} ({births[j - 1]}): "
                    "jobs must be listed in submission order"
                )
        return self

    def __len__(self) -> int:
        return len(self.jobs)

    def rounds(self) -> int:
        """Rounds 0..T-1 cover every job's possible run: T = last birth + S_max + D_max."""
        last = max((sow.birth for sow in self.jobs), default=0)
        return last + self.bounds.horizon + self.bounds.max_duration


@dataclass(frozen=True)
class Realisation:
    """The drawn support point of every job, with its arrival and duration."""

    point: np.ndarray
    arrival: np.ndarray
    duration: np.ndarray


def realise(sequence: BirthSequence, rng: np.random.Generator) -> Realisation:
    """One (a_j, d_j) per job from P_j: one uniform per job, in submission order."""
    u = rng.random(len(sequence))
    point = np.empty(len(sequence), dtype=np.int64)
    for j, sow in enumerate(sequence.jobs):
        cdf = np.cumsum(sow.probability)
        point[j] = min(int(np.searchsorted(cdf, u[j] * cdf[-1], side="right")), cdf.size - 1)
    arrival = np.array([sow.arrival[i] for sow, i in zip(sequence.jobs, point)], dtype=np.int64)
    duration = np.array([sow.duration[i] for sow, i in zip(sequence.jobs, point)], dtype=np.int64)
    return Realisation(point, arrival, duration)


def sow_from_lists(
    birth: int, concurrency: int, values: Sequence[float], points: Sequence[tuple[int, int, float]]
) -> StatementOfWork:
    """A SoW from plain lists: `points` is [(arrival, duration, probability), ...]."""
    a, d, p = zip(*points) if points else ((), (), ())
    return StatementOfWork(
        int(birth),
        int(concurrency),
        np.asarray(values, float),
        np.asarray(a, np.int64),
        np.asarray(d, np.int64),
        np.asarray(p, float),
    )
