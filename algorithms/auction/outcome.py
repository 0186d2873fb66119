"""What one auction mechanism did with one world, and the metrics of paper
paper 001, Sec. 2.2: social welfare (eq. 3), provider utility (eq. 2),
users' utility (eq. 1), admitted tasks, resource utilisation, payments, decision time.

Mechanisms without pricing (Titan, EFT, NTM) charge pay-as-bid (payment = bid), so
their users' utility is 0 and their provider utility equals the welfare; welfare does
not depend on payments (eq. 3). docs/auction/model.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from algorithms.auction.ledger import Ledger, Schedule
from market.auction.lora_instance import LoraInstance


@dataclass
class AuctionOutcome:
    instance: LoraInstance
    ledger: Ledger
    admitted: np.ndarray
    vendor: np.ndarray
    payment: np.ndarray
    decision_seconds: np.ndarray
    schedules: dict[int, Schedule] = field(default_factory=dict)
    extra_seconds: float = 0.0  # solver time not attributed to one task (Titan's per-slot MILP)

    @classmethod
    def empty(cls, instance: LoraInstance) -> AuctionOutcome:
        n = len(instance.tasks)
        return cls(
            instance,
            Ledger(instance),
            np.zeros(n, dtype=bool),
            np.full(n, -1, dtype=np.int64),
            np.zeros(n),
            np.zeros(n),
        )

    def admit(self, schedule: Schedule, payment: float) -> None:
        self.ledger.commit(schedule)
        i = schedule.task
        self.admitted[i] = True
        self.vendor[i] = schedule.vendor
        self.payment[i] = payment
        self.schedules[i] = schedule

    def operating_cost(self) -> np.ndarray:
        cost = np.zeros(len(self.admitted))
        for i, s in self.schedules.items():
            cost[i] = s.operating_cost(self.instance)
        return cost

    def vendor_cost(self) -> np.ndarray:
        cost = np.zeros(len(self.admitted))
        for i, s in self.schedules.items():
            cost[i] = s.vendor_cost(self.instance)
        return cost

    def task_table(self, value: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """One entry per task: what tasks.parquet stores. `value` = true values (default the bids)."""
        bids = self.instance.tasks.bid
        value = bids if value is None else value
        finish = np.full(len(bids), -1, dtype=np.int64)
        for i, s in self.schedules.items():
            finish[i] = int(s.slots[-1])
        return {
            "task": np.arange(len(bids)),
            "arrival": self.instance.tasks.arrival,
            "bid": bids,
            "payment": np.where(self.admitted, self.payment, 0.0),
            "admitted": self.admitted,
            "vendor": self.vendor,
            "finish_slot": finish,
            "user_utility": np.where(self.admitted, value - self.payment, 0.0),
            "operating_cost": self.operating_cost(),
            "vendor_cost": self.vendor_cost(),
            "decision_seconds": self.decision_seconds,
        }

    def metrics(self, value: np.ndarray | None = None) -> dict[str, float]:
        value = self.instance.tasks.bid if value is None else value
        a = self.admitted
        op, vend = self.operating_cost(), self.vendor_cost()
        welfare = float(value[a].sum() - vend.sum() - op.sum())
        paid = float(self.payment[a].sum())
        n = len(a)
        return {
            "welfare": welfare,
            "provider_utility": paid - float(vend.sum()) - float(op.sum()),
            "users_utility": float((value[a] - self.payment[a]).sum()),
            "admitted": int(a.sum()),
            "tasks": n,
            "admission_rate": float(a.mean()) if n else 0.0,
            "payments": paid,
            "operating_cost": float(op.sum()),
            "vendor_cost": float(vend.sum()),
            "utilisation": self.ledger.utilisation(),
            "decision_ms_per_task": 1000.0 * (float(self.decision_seconds.sum()) + self.extra_seconds) / max(n, 1),
        }
