"""EFT, Earliest Finish Time (paper 001, Sec. 5.1, baseline ii):
the vendor with the lowest delay (ties: the cheaper, then the lower index), then the
earliest-finishing placement (algorithms/auction/earliest_finish.py); every task that
can finish by its deadline is admitted, whatever its bid; pay-as-bid (no pricing).
"""
from __future__ import annotations

import time

import numpy as np

from algorithms.auction.earliest_finish import earliest_finish
from algorithms.auction.outcome import AuctionOutcome
from market.auction.lora_instance import LoraInstance


class EFT:
    name = "EFT"

    def run(self, instance: LoraInstance, rng: np.random.Generator | None = None) -> AuctionOutcome:
        out = AuctionOutcome.empty(instance)
        tasks = instance.tasks
        for i in range(len(tasks)):
            started = time.perf_counter()
            vendor = -1
            if tasks.preprocess[i]:
                vendor = int(np.lexsort((np.arange(instance.vendors), instance.vendor_price[i],
                                         instance.vendor_delay[i]))[0])
            schedule = earliest_finish(instance, out.ledger, i, vendor)
            if schedule is not None:
                out.admit(schedule, float(tasks.bid[i]))
            out.decision_seconds[i] = time.perf_counter() - started
        return out
