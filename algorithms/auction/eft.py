"""EFT, Earliest Finish Time (paper 001, Sec. 5.1, baseline ii):
the vendor with the lowest delay (ties: the cheaper, then the lower index), then the
earliest-finishing placement (algorithms/auction/earliest_finish.py); every task that
can finish by its deadline is admitted, whatever its bid; pay-as-bid (no pricing).

`admit="positive"` (EFT(admit=positive), beside the literal baseline): the same placement, but a
task is admitted only when its bid exceeds its vendor price plus the operating cost of that
placement, so no task of negative welfare is run (docs/auction/reproduction.md measures both).
"""

from __future__ import annotations

import time

import numpy as np

from algorithms.auction.earliest_finish import earliest_finish
from algorithms.auction.outcome import AuctionOutcome
from market.auction.lora_instance import LoraInstance

ADMITS = ("all", "positive")


class EFT:
    name = "EFT"

    def __init__(self, admit: str = "all"):
        if admit not in ADMITS:
            raise ValueError(f"EFT admit must be one of {ADMITS}, got {admit!r}")
        self.admit = admit

    def run(self, instance: LoraInstance, rng: np.random.Generator | None = None) -> AuctionOutcome:
        out = AuctionOutcome.empty(instance)
        tasks = instance.tasks
        for i in range(len(tasks)):
            started = time.perf_counter()
            vendor = -1
            if tasks.preprocess[i]:
                vendor = int(
                    np.lexsort((np.arange(instance.vendors), instance.vendor_price[i], instance.vendor_delay[i]))[0]
                )
            schedule = earliest_finish(instance, out.ledger, i, vendor)
            if schedule is not None and self.admit == "positive":
                cost = schedule.vendor_cost(instance) + schedule.operating_cost(instance)
                if tasks.bid[i] - cost <= 0:
                    schedule = None
            if schedule is not None:
                out.admit(schedule, float(tasks.bid[i]))
            out.decision_seconds[i] = time.perf_counter() - started
        return out
