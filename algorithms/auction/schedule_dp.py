"""findSchedule of Alg. 2 (paper 001, Sec. 3.3, eq. 12-13): the
cheapest way to give task i its computation M_i between its earliest start and d_i,
at most one node per slot (4b).

Reading (reading notes `auction`; docs/auction/model.md): the objective of problem (12)
prices every used (k, t) at the maximum dual over the schedule, which is not additive
over slots; the DP uses the per-slot increments of Alg. 2 line 13,
    Delta_kt = s_ik lambda_kt + r_i phi_kt + e_ikt,
so it minimises sum over used (k, t) of Delta_kt exactly (this is what "optimal for its
own objective" means, and what the brute-force test checks); F(il) of eq. 10 and the
payment (14) are then computed with the maxima over the schedule found.

Computation is discretised in chunks: the greatest common divisor of the per-task rates
s_ik of the cluster's node types (3 ksamples with A100s and A40s, 6 with A100s only), so
a slot on node k adds s_ik / chunk whole chunks and the task needs W_i = ceil(M_i / chunk)
of them; that is exactly (4e), since the work done is always a multiple of the chunk.

The table runs backwards over the slots (g[t, w] = least cost of w more chunks in slots
t..d_i), so that one pass serves every vendor's start a_i + h_in. Only the cheapest node
of each type matters in a slot (equal rates), which makes a step O(types * W_i) after an
O(K) minimum. Ties: running now beats idling (the earliest schedule among the cheapest),
then the type listed first, then the lowest node index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.auction.ledger import Schedule
from market.auction.lora_instance import LoraInstance


def chunk_size(rates: np.ndarray) -> float:
    """gcd of the per-task rates (ksamples per slot); rates must be whole ksamples."""
    whole = np.unique(rates)
    if not np.all(whole == np.floor(whole)):
        raise ValueError(f"per-task rates must be whole ksamples per slot, got {whole}")
    return float(math.gcd(*(int(r) for r in whole)))


@dataclass(frozen=True)
class ScheduleSearch:
    """The backward table of one task over slots [first, last]: call `best(start)`."""

    instance: LoraInstance
    task: int
    first: int
    last: int
    need: int
    steps: np.ndarray  # chunks per slot, by type
    best_node: np.ndarray  # types x slots: cheapest node of the type in the slot (-1: none)
    table: np.ndarray  # (slots + 1) x (need + 1): g[t, w]
    choice: np.ndarray  # slots x (need + 1): type run in slot t (-1: idle)

    def best(self, start: int) -> tuple[float, Schedule | None]:
        """Least sum of Delta_kt from slot `start` on, and the schedule (None if infeasible)."""
        if start > self.last:
            return math.inf, None
        row = max(start, self.first) - self.first
        cost = float(self.table[row, self.need])
        if not math.isfinite(cost):
            return math.inf, None
        slots, nodes = [], []
        w = self.need
        for j in range(row, self.last - self.first + 1):
            g = self.choice[j, w]
            if g >= 0:
                slots.append(self.first + j)
                nodes.append(int(self.best_node[g, j]))
                w = max(0, w - int(self.steps[g]))
                if w == 0:
                    break
        return cost, (slots, nodes)


def search(
    instance: LoraInstance, task: int, first: int, lam: np.ndarray, phi: np.ndarray, usable: np.ndarray | None = None
) -> ScheduleSearch:
    """The DP of eq. 13 for `task` over slots first..d_i with duals lam, phi (K x horizon);
    `usable` (K x horizon bool) removes (k, t) pairs from the schedule space."""
    c = instance.cluster
    tasks = instance.tasks
    last = int(tasks.deadline[task])
    chunk = chunk_size(c.task_rate)
    need = max(1, math.ceil(tasks.work[task] / chunk - 1e-9))
    types = len(c.types)
    steps = np.array([int(round(t.task_rate / chunk)) for t in c.types], dtype=np.int64)
    span = max(0, last - first + 1)
    window = slice(first, first + span)
    r = tasks.memory[task]
    delta = (
        c.task_rate[:, None] * lam[:, window]
        + r * phi[:, window]
        + c.node_cost[:, window] * (c.task_rate / c.compute)[:, None]
    )
    if usable is not None:
        delta = np.where(usable[:, window], delta, np.inf)
    best_node = np.full((types, span), -1, dtype=np.int64)
    best_cost = np.full((types, span), np.inf)
    for g in range(types):
        members = np.flatnonzero(c.node_type == g)
        if len(members) and span:
            pick = np.argmin(delta[members], axis=0)
            best_node[g] = members[pick]
            best_cost[g] = delta[members, :][pick, np.arange(span)]
    best_node[~np.isfinite(best_cost)] = -1
    table = np.full((span + 1, need + 1), np.inf)
    table[span, 0] = 0.0
    choice = np.full((span, need + 1), -1, dtype=np.int64)
    positions = np.arange(need + 1)
    sources = [np.maximum(0, positions - s) for s in steps]
    for j in range(span - 1, -1, -1):
        after = table[j + 1]
        best = after.copy()
        pick = choice[j]
        for g in range(types):
            cost = best_cost[g, j]
            if not math.isfinite(cost):
                continue
            cand = cost + after[sources[g]]
            better = (cand < best) | ((cand == best) & (pick == -1) & np.isfinite(cand))
            better[0] = False
            best = np.where(better, cand, best)
            pick[better] = g
        table[j] = best
    return ScheduleSearch(instance, task, first, last, need, steps, best_node, table, choice)


def find_schedule(
    instance: LoraInstance, task: int, vendor: int, lam: np.ndarray, phi: np.ndarray, usable: np.ndarray | None = None
) -> tuple[float, Schedule | None]:
    """findSchedule for one vendor (-1: no pre-processing): (least sum of Delta, schedule)."""
    tasks = instance.tasks
    start = int(tasks.arrival[task]) + (int(instance.vendor_delay[task, vendor]) if vendor >= 0 else 0)
    cost, plan = search(instance, task, start, lam, phi, usable).best(start)
    if plan is None:
        return cost, None
    return cost, Schedule(task, vendor, np.array(plan[0], dtype=np.int64), np.array(plan[1], dtype=np.int64))
