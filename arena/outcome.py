"""One mechanism on one job stream: per-job money and work, and the row the arena stores
(docs/arena.md, "Metric").

alpha, the average unit cost (paper 003, Sec. V-A), is the stream's total cost over its total
work, per instance-hour of work, in units of the on-demand price: 1.0 is what on-demand
instances used for whole hours cost; hourly billing can push it above 1. `utility` is -alpha
(higher is better, as in every family).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.world import LEN


@dataclass(frozen=True, eq=False)
class StreamOutcome:
    """Per-job arrays of one mechanism on one stream, jobs in arrival order."""

    spot_cost: np.ndarray
    on_demand_cost: np.ndarray
    spot_work: np.ndarray
    on_demand_work: np.ndarray
    finish: np.ndarray  # the slot each job was done in (0: missed its deadline)
    fell_back: np.ndarray  # the slot from which the deadline's fallback ran it (0: never)

    @property
    def cost(self) -> np.ndarray:
        return self.spot_cost + self.on_demand_cost

    @property
    def work(self) -> np.ndarray:
        return self.spot_work + self.on_demand_work

    def unit_cost(self) -> float:
        work = float(self.work.sum())
        return float(self.cost.sum() / work * LEN) if work > 0 else 0.0

    def row(self, name: str, paper: str) -> dict:
        work = float(self.work.sum())
        return {
            "mechanism": name,
            "utility": -self.unit_cost(),
            "unit_cost": self.unit_cost(),
            "paper": paper,
            "spot_share": float(self.spot_work.sum() / work) if work > 0 else 0.0,
            "cost": float(self.cost.sum()),
            "jobs": int(self.finish.size),
            "missed": int(np.count_nonzero(self.finish == 0)),
            "fallback_share": float(np.count_nonzero(self.fell_back)) / self.finish.size if self.finish.size else 0.0,
        }


def from_columns(spot_cost, on_demand_cost, spot_work, on_demand_work, finish, fell_back) -> StreamOutcome:
    return StreamOutcome(
        *(np.asarray(a, dtype=float) for a in (spot_cost, on_demand_cost, spot_work, on_demand_work)),
        np.asarray(finish, dtype=np.int64),
        np.asarray(fell_back, dtype=np.int64),
    )
