"""The greedy placement shared by the EFT and NTM baselines (paper
paper 001, Sec. 5.1): from the task's earliest start, in every slot put
the task on the fastest node where it fits (ties: the lowest node index), until its
computation is done; a task that cannot finish by its deadline is rejected. Running in
the fastest free node of every slot is the earliest finish with one node per slot (4b).
"""

from __future__ import annotations

import numpy as np

from algorithms.auction.ledger import EPS, Ledger, Schedule
from market.auction.lora_instance import LoraInstance


def earliest_finish(
    instance: LoraInstance, ledger: Ledger, task: int, vendor: int, exclusive: bool = False
) -> Schedule | None:
    """The earliest-finishing schedule next to what `ledger` holds (None if none meets d_i);
    `exclusive`: only nodes that run no other task in the slot (NTM)."""
    tasks = instance.tasks
    c = instance.cluster
    start = int(tasks.arrival[task]) + (int(instance.vendor_delay[task, vendor]) if vendor >= 0 else 0)
    last = int(tasks.deadline[task])
    if start > last:
        return None
    free = ledger.free_mask(task, exclusive)[:, start : last + 1]
    # Fastest first, then lowest index: rank nodes once, take the best free one per slot.
    order = np.lexsort((np.arange(c.nodes), -c.task_rate))
    ranked = free[order]
    has = ranked.any(axis=0)
    pick = order[np.argmax(ranked, axis=0)]
    rate = np.where(has, c.task_rate[pick], 0.0)
    done = np.cumsum(rate)
    enough = np.flatnonzero(done >= tasks.work[task] - EPS)
    if len(enough) == 0:
        return None
    used = np.flatnonzero(has[: enough[0] + 1])
    return Schedule(task, vendor, (start + used).astype(np.int64), pick[used].astype(np.int64))
