"""Alg. 3 of paper 004 (Sec. 5, "Adversarial Variant"): per-round unit prices that grow
exponentially with the relaxed problem's fractional usage.

Eq. (7), garbled in the text copy, reads (docs/sow/mechanisms.md):

    p(y) = p0 * (2 V_bar / p0) ** (y / N'),   p0 = 1 / (2 D_max),

so p(y) = (1/(2 D_max)) (4 V_bar D_max)^(y/N'): p(0) = 1/(2 D_max) and p(N') = 2 V_bar, as the
text under eq. (7) says. Appendix D needs p(y + C_max) <= 2 p(y) (true when
N' >= C_max log2(4 V_bar D_max)) and p(y) > V_bar once y > N' - C_max.

`start="concurrency"` (a documented switch, not the paper's) takes p0 = 1/(2 C_max D_max) and
p(N') = 2 V_bar: Appendix D's "p(0) is half the minimum value density" holds for any job only
then, since a job of value 1 may use up to C_max D_max node-rounds.

The menu (Alg. 3 line 3, and pi^t of Alg. 2): running c nodes for d rounds from t' costs
pi(t', c, d) = c * sum_{s=t'}^{t'+d-1} p(y_s). Usage y only grows, so prices never fall with the
announce time, and they grow with c and d (Sec. 3's invariants).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["STARTS", "ExponentialPrices"]

STARTS = ("paper", "concurrency")


@dataclass
class ExponentialPrices:
    """The usage y_t of every round and the unit price p(y_t), for capacity N'."""

    capacity: float  # N' = N (1 - epsilon / 10) in Alg. 2, or N without slack
    max_value: float  # V_bar
    max_duration: int  # D_max
    max_concurrency: int  # C_max
    rounds: int
    start: str = "paper"

    def __post_init__(self):
        if self.start not in STARTS:
            raise ValueError(f"prices.start must be one of {', '.join(STARTS)}, got {self.start!r}")
        if not self.capacity > 0:
            raise ValueError(f"the relaxed capacity N' must be > 0, got {self.capacity!r}")
        self.usage = np.zeros(self.rounds)
        width = self.max_duration * (self.max_concurrency if self.start == "concurrency" else 1)
        self.p0 = 1.0 / (2.0 * width)
        self._log_growth = np.log(2.0 * self.max_value / self.p0) / self.capacity

    def unit_price(self, usage) -> np.ndarray:
        """p(y) of eq. (7)."""
        return self.p0 * np.exp(self._log_growth * np.asarray(usage, dtype=float))

    def unit_menu(self, first: int, last_start: int) -> np.ndarray:
        """pi(t', 1, d) for t' = first..last_start and d = 1..D_max, as an array [t' - first, d - 1];
        pi(t', c, d) is c times it. A run past the last round costs inf (it cannot be bought)."""
        end = min(last_start + self.max_duration, self.rounds)
        p = np.full(last_start + self.max_duration - first, np.inf)
        p[: max(end - first, 0)] = self.unit_price(self.usage[first:end])
        finite = np.isfinite(p)
        cumulative = np.concatenate(([0.0], np.cumsum(np.where(finite, p, 0.0))))
        blocked = np.concatenate(([0], np.cumsum(~finite)))
        starts = np.arange(last_start - first + 1)[:, None]
        stops = starts + np.arange(1, self.max_duration + 1)[None, :]
        per_unit = cumulative[stops] - cumulative[starts]
        return np.where(blocked[stops] > blocked[starts], np.inf, per_unit)

    def allocate(self, rounds: np.ndarray, amount: np.ndarray) -> None:
        """Alg. 3 lines 6-8: add the job's (expected) allocation x_{j,t'} to y_{t'}."""
        np.add.at(self.usage, rounds, amount)
