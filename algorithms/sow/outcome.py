"""What happened to every job of one birth sequence under one mechanism (paper 004, Sec. 2).

A job that completes at finish round f earns V_j(f) and pays its price; a job that is evicted
(stopped while running), cancelled (stopped before it started) or never started earns and pays
nothing (Sec. 2: "payment only on completion"). Welfare is the sum of V_j(f_j) (Sec. 2); an
agent's utility is V_j(f_j) - payment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["JobOutcomes", "NOT_STARTED"]

NOT_STARTED = -1


@dataclass
class JobOutcomes:
    """Per-job arrays (length J, submission order)."""

    start: np.ndarray  # the round the job started, NOT_STARTED if it never did
    finish: np.ndarray  # f = start + d if it completed, NOT_STARTED otherwise
    completed: np.ndarray  # bool
    evicted: np.ndarray  # bool: stopped while running
    cancelled: np.ndarray  # bool: stopped while active before it started (its plan had a start)
    value: np.ndarray  # V_j(f_j) if completed, else 0
    payment: np.ndarray  # charged on completion only
    extra: dict = field(default_factory=dict)  # mechanism-specific per-job columns

    @classmethod
    def empty(cls, jobs: int) -> JobOutcomes:
        return cls(
            np.full(jobs, NOT_STARTED, np.int64),
            np.full(jobs, NOT_STARTED, np.int64),
            np.zeros(jobs, bool),
            np.zeros(jobs, bool),
            np.zeros(jobs, bool),
            np.zeros(jobs),
            np.zeros(jobs),
        )

    @property
    def utility(self) -> np.ndarray:
        return self.value - self.payment

    def welfare(self) -> float:
        return float(self.value.sum())

    def summary(self) -> dict:
        """The row columns every sow mechanism reports."""
        return {
            "welfare": self.welfare(),
            "payments": float(self.payment.sum()),
            "agent_utility": float(self.utility.sum()),
            "completions": int(self.completed.sum()),
            "evictions": int(self.evicted.sum()),
            "cancellations": int(self.cancelled.sum()),
            "jobs": int(self.completed.size),
        }
