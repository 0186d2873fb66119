"""One world of the `auction` family: a cluster, a day of LoRA tasks and the vendors'
offers for each task (paper 001, Sec. 2.1).

The horizon is the day's `tasks.slots` arrival slots, extended to the last deadline so
that tasks arriving late in the day are not cut off; the operating-cost profile
repeats daily over it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from market.auction.gpu_cluster import Cluster, ClusterParams
from market.auction.labor_vendors import VendorParams
from market.auction.lora_tasks import LoraTasks, TaskParams, draw_tasks


@dataclass(frozen=True, eq=False)
class LoraInstance:
    cluster: Cluster
    tasks: LoraTasks
    vendor_price: np.ndarray  # q_in, I x N cents (charged only if f_i = 1)
    vendor_delay: np.ndarray  # h_in, I x N slots

    @property
    def horizon(self) -> int:
        return self.cluster.horizon

    @property
    def vendors(self) -> int:
        return self.vendor_price.shape[1]

    def earliest_start(self, vendor: int | np.ndarray) -> np.ndarray:
        """a_i + f_i h_in for every task (4c), with vendor n (or one vendor index per task)."""
        tasks = self.tasks
        delay = np.take_along_axis(self.vendor_delay, np.broadcast_to(np.asarray(vendor), (len(tasks),))[:, None], 1)[
            :, 0
        ]
        return tasks.arrival + tasks.preprocess * delay

    def with_bid(self, task: int, bid: float) -> LoraInstance:
        """The same world with task `task` reporting `bid` (truthfulness experiments)."""
        bids = self.tasks.bid.copy()
        bids[task] = bid
        tasks = LoraTasks(
            self.tasks.arrival,
            self.tasks.deadline,
            self.tasks.dataset,
            self.tasks.work,
            self.tasks.memory,
            self.tasks.preprocess,
            bids,
        )
        return LoraInstance(self.cluster, tasks, self.vendor_price, self.vendor_delay)


def draw_instance(
    cluster: ClusterParams,
    tasks: TaskParams,
    vendors: VendorParams,
    rng: np.random.Generator,
    trace: np.ndarray | None = None,
) -> LoraInstance:
    """Tasks first, then the vendors' offers, from one generator."""
    drawn = draw_tasks(tasks, rng, trace)
    q, h = vendors.draw(drawn.dataset, rng)
    horizon = max(tasks.slots, int(drawn.deadline.max(initial=-1)) + 1)
    return LoraInstance(cluster.build(horizon), drawn, q, h)
