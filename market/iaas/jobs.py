"""The job stream of the `iaas` family (paper 003, Sec. III-B and V-A): config section `jobs`.

Time is in slots of L = 5 minutes, Len = 12 slots per hour (Sec. III-A/B). Job j arrives in slot
a_j (1-based), has a size z_j in CPU-slots (one instance processes one unit per slot), a
parallelism bound delta_j and a relative deadline d_j: it must finish by slot a_j + d_j - 1.

The law (Sec. V-A, docs/iaas/world.md): Poisson arrivals per slot; z_j = Len * delta_j * x with x
a Pareto of scale `pareto_scale` and shape `pareto_shape` truncated to `size_hours` [lo, hi]
(the paper's "bounded Pareto (1/1.01, 1/6.06, 1/6)"); d_j = ceil(x' * z_j / delta_j) with
x' ~ U[1, x0], x0 = `slackness_max`.

Draws, in this order, from the Generator passed in: the T Poisson counts of slots 1..T, then one
uniform u per job (its size), then one U[1, x0] per job (its slackness), jobs in arrival order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from market.common.fields import integer, interval, real
from market.common.sections import checked, key, parse

__all__ = ["LEN", "SLOT_MINUTES", "JobParams", "JobStream", "draw_jobs"]

SLOT_MINUTES = 5  # L (Sec. III-A: spot prices change every 5 minutes)
LEN = 60 // SLOT_MINUTES  # Len, slots per hour


def _size_hours(value, where: str) -> tuple:
    """`jobs.size_hours`: a [low, high] pair of hours, 0 < low <= high < inf."""
    size = interval(value, where, minimum=0.0, strict_min=True)
    if not math.isfinite(size[1]):
        raise ValueError(f"{where} must have a finite high, got {list(value)!r}")
    return size


NULL_KEY = "a null key stays out of the cell's hash"


@dataclass(frozen=True)
class JobParams:
    """Config section `jobs` (paper 003, Sec. V-A; docs/iaas/world.md)."""

    arrival_rate: float = key(
        1.0, checked(real, minimum=0.0, strict_min=True), "Poisson mean of job arrivals per 5-minute slot"
    )
    parallelism: int = key(20, checked(integer, minimum=1), "delta_j: instances a job runs on at once")
    pareto_shape: float = key(
        1.01,
        checked(real, minimum=0.0, strict_min=True),
        f"a of the Pareto sizes; null: 1.01 (docs/iaas/world.md; {NULL_KEY})",
        optional=True,
    )
    pareto_scale: float = key(
        1 / 6,
        checked(real, minimum=0.0, strict_min=True),
        "scale of the Pareto sizes in hours; null: 1/6",
        optional=True,
    )
    size_hours: tuple = key(
        (0.5, 10.0), _size_hours, "truncation [low, high] of the sizes in hours; null: [0.5, 10]", optional=True
    )
    slackness_max: float = key(3.0, checked(real, minimum=1.0), "deadline slack x' ~ U[1, slackness_max]")
    slots: int = key(2000, checked(integer, minimum=1), "5-minute slots of arrivals")

    @classmethod
    def from_config(cls, section: Mapping | None) -> JobParams:
        return parse(cls, section, "jobs")

    def check(self) -> None:
        """The sizes' truncation starts at or above the Pareto's scale."""
        if self.size_hours[0] < self.pareto_scale:
            raise ValueError(
                f"jobs.size_hours must have low >= jobs.pareto_scale ({self.pareto_scale:g}), "
                f"got {list(self.size_hours)!r}"
            )


@dataclass(frozen=True, eq=False)
class JobStream:
    """The jobs of one world, one array entry per job, ordered by arrival slot (ties in draw
    order); arrays are read-only. `deadline` is relative: job j must finish by slot
    arrival + deadline - 1 (Sec. III-B)."""

    arrival: np.ndarray  # int64, a_j >= 1
    size: np.ndarray  # float64, z_j in CPU-slots
    deadline: np.ndarray  # int64, d_j >= ceil(z_j / delta_j)
    parallelism: np.ndarray  # int64, delta_j

    def __post_init__(self):
        n = len(self.arrival)
        for name, dtype in (
            ("arrival", np.int64),
            ("size", np.float64),
            ("deadline", np.int64),
            ("parallelism", np.int64),
        ):
            a = np.array(getattr(self, name), dtype=dtype)
            if a.shape != (n,):
                raise ValueError(f"JobStream.{name} must have shape ({n},), got {a.shape}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    def __len__(self) -> int:
        return len(self.arrival)

    def slackness(self) -> np.ndarray:
        """s_j = d_j * delta_j / z_j (Sec. III-B, eq. 1 at the first allocation)."""
        return self.deadline * self.parallelism / self.size

    def horizon(self) -> int:
        """The last slot any job may run, max(a_j + d_j - 1) (0 without jobs): prices are needed
        for slots 1..horizon."""
        return int((self.arrival + self.deadline - 1).max()) if len(self) else 0


def draw_jobs(params: JobParams, rng: np.random.Generator) -> JobStream:
    """The jobs arriving in slots 1..T (paper 003, Sec. V-A). Sizes by the inverse CDF of the
    truncated Pareto, x = (lo^-a - u (lo^-a - hi^-a))^(-1/a), u ~ U[0, 1); draw order in the
    module docstring."""
    counts = rng.poisson(params.arrival_rate, params.slots)
    n = int(counts.sum())
    u = rng.random(n)
    x_prime = rng.uniform(1.0, params.slackness_max, n)
    a = params.pareto_shape
    low, high = params.size_hours
    x = (low**-a - u * (low**-a - high**-a)) ** (-1.0 / a)
    x = np.clip(x, low, high)  # rounding only
    delta = params.parallelism
    size = LEN * delta * x
    deadline = np.ceil(x_prime * (size / delta)).astype(np.int64)
    return JobStream(
        arrival=np.repeat(np.arange(1, params.slots + 1, dtype=np.int64), counts),
        size=size,
        deadline=deadline,
        parallelism=np.full(n, delta, dtype=np.int64),
    )
