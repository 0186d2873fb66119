"""NTM, No Task Merging (paper 001, Sec. 5.1, baseline iii): a
random vendor, at most one task per node and slot (no multi-LoRA sharing of a node),
the earliest-finishing placement (algorithms/auction/earliest_finish.py); every task
that can finish by its deadline is admitted; pay-as-bid (no pricing).
"""

from __future__ import annotations

import time

import numpy as np

from algorithms.auction.earliest_finish import earliest_finish
from algorithms.auction.outcome import AuctionOutcome
from market.auction.lora_instance import LoraInstance


class NTM:
    name = "NTM"

    def run(self, instance: LoraInstance, rng: np.random.Generator) -> AuctionOutcome:
        out = AuctionOutcome.empty(instance)
        tasks = instance.tasks
        vendors = rng.integers(instance.vendors, size=len(tasks))
        for i in range(len(tasks)):
            started = time.perf_counter()
            vendor = int(vendors[i]) if tasks.preprocess[i] else -1
            schedule = earliest_finish(instance, out.ledger, i, vendor, exclusive=True)
            if schedule is not None:
                out.admit(schedule, float(tasks.bid[i]))
            out.decision_seconds[i] = time.perf_counter() - started
        return out
