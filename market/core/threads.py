"""Learning threads and task bundles (paper 002, Sec. 2.1).

A thread T_k = {b_k, d_k, N_k, eps_k}: it begins at time b_k and receives data in the unit
times t = b_k + 1, ..., d_k (the paper's experiments set b_k = 0 and count t = 1, 2, ...: a
thread with d_k = 500 has 500 units); in unit t the allocator gives it a share eta_{k,t} of the
one unit of compute (sum over threads <= 1), and it learns eta_{k,t} N_k data units (the paper's
unit is a batch of 64 samples; N_k is the most it can learn in one unit time). It succeeds when
its observed training loss reaches eps_k by the end of unit d_k (docs/core/model.md).

A bundle is the threads and one loss curve per thread (market/core/curves.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from market.core.curves import LossCurve


@dataclass(frozen=True)
class Thread:
    """One learning thread: begin b_k (>= 0), deadline d_k (> b_k), data budget N_k per unit
    time (> 0), loss threshold eps_k (> 0), and a label for tables and plots."""

    begin: int
    deadline: int
    budget: float
    threshold: float
    label: str = ""

    def __post_init__(self) -> None:
        where = f"thread {self.label!r}" if self.label else "thread"
        if isinstance(self.begin, bool) or not isinstance(self.begin, (int, np.integer)) or self.begin < 0:
            raise ValueError(f"{where}: begin (b_k) must be an integer >= 0, got {self.begin!r}")
        if (
            isinstance(self.deadline, bool)
            or not isinstance(self.deadline, (int, np.integer))
            or self.deadline <= self.begin
        ):
            raise ValueError(
                f"{where}: deadline (d_k) must be an integer > begin ({self.begin}), got {self.deadline!r}"
            )
        for name in ("budget", "threshold"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float, np.floating, np.integer))
                or not math.isfinite(value)
                or value <= 0
            ):
                symbol = "N_k" if name == "budget" else "eps_k"
                raise ValueError(f"{where}: {name} ({symbol}) must be a finite number > 0, got {value!r}")

    @property
    def units(self) -> int:
        """The unit times the thread may receive data in: d_k - b_k."""
        return self.deadline - self.begin

    @property
    def data_limit(self) -> float:
        """The most data it can learn: N_k (d_k - b_k)."""
        return float(self.budget) * self.units


@dataclass(frozen=True)
class Bundle:
    """A task bundle: threads and their loss curves (same length, same order)."""

    threads: tuple[Thread, ...]
    curves: tuple[LossCurve, ...]

    def __post_init__(self) -> None:
        if len(self.threads) == 0:
            raise ValueError("a bundle needs at least one thread")
        if len(self.threads) != len(self.curves):
            raise ValueError(
                f"a bundle needs one curve per thread: {len(self.threads)} threads, {len(self.curves)} curves"
            )

    def __len__(self) -> int:
        return len(self.threads)

    @property
    def horizon(self) -> int:
        """T: the last deadline."""
        return max(th.deadline for th in self.threads)

    def arrays(self) -> ThreadArrays:
        return ThreadArrays.of(self.threads)


@dataclass(frozen=True)
class ThreadArrays:
    """The threads' parameters as arrays (what an allocator may know: no curves)."""

    begin: np.ndarray  # int64 (K,)
    deadline: np.ndarray  # int64 (K,)
    budget: np.ndarray  # float (K,)
    threshold: np.ndarray  # float (K,)
    labels: tuple[str, ...]

    @classmethod
    def of(cls, threads: Sequence[Thread]) -> ThreadArrays:
        return cls(
            np.array([t.begin for t in threads], dtype=np.int64),
            np.array([t.deadline for t in threads], dtype=np.int64),
            np.array([t.budget for t in threads], dtype=float),
            np.array([t.threshold for t in threads], dtype=float),
            tuple(t.label or f"thread {k + 1}" for k, t in enumerate(threads)),
        )

    def __len__(self) -> int:
        return self.begin.size
