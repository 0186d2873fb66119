"""Resource bookkeeping shared by every auction mechanism: compute and memory in use
on each node and slot, and the capacity check of constraints (4f)-(4g) of paper
paper 001 (Alg. 1 line 8, "enough resources").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from market.auction.lora_instance import LoraInstance

EPS = 1e-9


@dataclass(frozen=True)
class Schedule:
    """A task's execution plan l: node `nodes[j]` in slot `slots[j]` (slots strictly
    increasing, so at most one node per slot, 4b) and the vendor (-1 if none, 4a)."""

    task: int
    vendor: int
    slots: np.ndarray
    nodes: np.ndarray

    def work(self, instance: LoraInstance) -> float:
        """sum_k sum_t s_ik x_ikt (ksamples)."""
        return float(instance.cluster.task_rate[self.nodes].sum())

    def operating_cost(self, instance: LoraInstance) -> float:
        """sum_k sum_t e_ikt x_ikt (cents)."""
        c = instance.cluster
        return float((c.node_cost[self.nodes, self.slots] * (c.task_rate / c.compute)[self.nodes]).sum())

    def vendor_cost(self, instance: LoraInstance) -> float:
        """sum_n q_in z_in (cents); 0 without pre-processing."""
        return float(instance.vendor_price[self.task, self.vendor]) if self.vendor >= 0 else 0.0


class Ledger:
    """Committed compute (ksamples) and task memory (GB, without r_b) per node and slot."""

    def __init__(self, instance: LoraInstance):
        self.instance = instance
        c = instance.cluster
        self.compute_used = np.zeros((c.nodes, c.horizon))
        self.memory_used = np.zeros((c.nodes, c.horizon))
        self.tasks_on = np.zeros((c.nodes, c.horizon), dtype=np.int64)

    def fits(self, schedule: Schedule) -> bool:
        """Whether adding the schedule keeps (4f) and (4g) on every node and slot it uses."""
        c = self.instance.cluster
        k, t = schedule.nodes, schedule.slots
        r = self.instance.tasks.memory[schedule.task]
        return bool(
            np.all(self.compute_used[k, t] + c.task_rate[k] <= c.compute[k] + EPS)
            and np.all(self.memory_used[k, t] + r + c.base_model_gb <= c.memory[k] + EPS)
        )

    def free_mask(self, task: int, exclusive: bool = False) -> np.ndarray:
        """K x horizon: where `task` fits next to what is committed (alone if `exclusive`)."""
        c = self.instance.cluster
        r = self.instance.tasks.memory[task]
        ok = (self.compute_used + c.task_rate[:, None] <= c.compute[:, None] + EPS) & (
            self.memory_used + r + c.base_model_gb <= c.memory[:, None] + EPS
        )
        return ok & (self.tasks_on == 0) if exclusive else ok

    def commit(self, schedule: Schedule) -> None:
        c = self.instance.cluster
        k, t = schedule.nodes, schedule.slots
        self.compute_used[k, t] += c.task_rate[k]
        self.memory_used[k, t] += self.instance.tasks.memory[schedule.task]
        self.tasks_on[k, t] += 1

    def utilisation(self) -> float:
        """Committed compute over the cluster's compute capacity during the day's arrival slots
        and after, up to the horizon."""
        c = self.instance.cluster
        return float(self.compute_used.sum() / (c.compute.sum() * c.horizon))


def check_schedule(instance: LoraInstance, schedule: Schedule) -> None:
    """Raise AssertionError unless the schedule meets (4a)-(4e) for its task."""
    tasks = instance.tasks
    i = schedule.task
    slots, nodes = schedule.slots, schedule.nodes
    assert len(slots) == len(nodes) and len(slots) > 0, "empty schedule"
    assert np.all(np.diff(slots) > 0), "two nodes in one slot (4b) or unsorted slots"
    if tasks.preprocess[i]:
        assert schedule.vendor >= 0, "pre-processing needs a vendor (4a)"
        start = tasks.arrival[i] + instance.vendor_delay[i, schedule.vendor]
    else:
        assert schedule.vendor == -1, "a vendor for a task without pre-processing"
        start = tasks.arrival[i]
    assert slots[0] >= start, f"task {i} runs in slot {slots[0]} before {start} (4c)"
    assert slots[-1] <= tasks.deadline[i], f"task {i} runs after its deadline (4d)"
    assert schedule.work(instance) >= tasks.work[i] - EPS, f"task {i} is not finished (4e)"
