"""The exact maximiser of F(il) (paper 001, eq. 9-10 and problem 12) for a cluster of one node
type, by enumerating the two thresholds; beside Alg. 2's DP (schedule_dp.py), which minimises
the per-slot surrogate sum of Delta_kt and so can return a schedule whose F is below the best.

With one node type every slot a task runs in gives it the same s_ik, so every schedule of task
i uses the same n_i = ceil(M_i / s_ik) slots (one node per slot, 4b): its work n_i s_ik and
GB-slots r_i n_i are fixed, and

    F(il) = b_i - q_in - sum_{(k,t) in l} e_ikt - max_l lambda * n_i s_ik - max_l phi * r_i n_i.

For thresholds (Lambda, Phi), the best schedule using only (k, t) with lambda_kt <= Lambda and
phi_kt <= Phi takes, in each slot, the eligible node of least e_ikt, and the n_i slots of least
such cost (ties: earlier slots, lower node index); its F is at least
b - q - sum e - Lambda n s - Phi r n. The best schedule overall is eligible at its own maxima,
so the largest of these bounds over the thresholds is max F, and the schedule that attains it
has exactly that F. The thresholds tried: Lambda among the lambdas of the nodes on each slot's
Pareto frontier of (lambda, phi), Phi among the slots' least phi under Lambda (eligibility only
changes there), both ascending with a stop once the bound cannot beat the best so far (e >= 0).
Both reductions need e_ikt to be the same on every node of a slot, which holds for one node type
(its cost per slot times the slot's tariff) and is checked. Cost: (frontier lambdas) x (window)
x K x window per vendor: measurements, not the sweeps.
"""

from __future__ import annotations

import math

import numpy as np

from algorithms.auction.ledger import Schedule
from market.auction.lora_instance import LoraInstance

TOLERANCE = 1e-9


def _frontier_lambdas(lam: np.ndarray, phi: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """The lambda caps worth trying, ascending: the lambda of every node that is on its slot's
    Pareto frontier of (lambda, phi) among the usable nodes (a node with both values at least
    another's in the same slot never makes a slot eligible earlier)."""
    caps = []
    for t in range(lam.shape[1]):
        rows = np.flatnonzero(ok[:, t])
        if not rows.size:
            continue
        order = rows[np.lexsort((phi[rows, t], lam[rows, t]))]
        running = np.minimum.accumulate(phi[order, t])
        keep = np.concatenate(([True], phi[order[1:], t] < running[:-1]))
        caps.append(lam[order[keep], t])
    return np.unique(np.concatenate(caps)) if caps else np.array([])


def _best_in_window(
    instance: LoraInstance,
    task: int,
    start: int,
    vendor_cost: float,
    lam: np.ndarray,
    phi: np.ndarray,
    usable: np.ndarray | None,
) -> tuple[float, np.ndarray | None, np.ndarray | None]:
    """(max F bound, slots, nodes) of the task's schedules from slot `start` on."""
    c = instance.cluster
    tasks = instance.tasks
    last = int(tasks.deadline[task])
    rate = float(c.task_rate[0])
    need = max(1, math.ceil(tasks.work[task] / rate - 1e-9))
    if last - start + 1 < need:
        return -math.inf, None, None
    window = slice(start, last + 1)
    lam_w, phi_w = lam[:, window], phi[:, window]
    cost = c.node_cost[:, window] * (c.task_rate / c.compute)[:, None]
    ok = np.ones(lam_w.shape, bool) if usable is None else usable[:, window]
    if not ok.any():
        return -math.inf, None, None
    fixed = float(tasks.bid[task]) - vendor_cost
    work, memory = need * rate, float(tasks.memory[task]) * need
    span = np.arange(lam_w.shape[1])
    best_f, best_slots, best_nodes = -math.inf, None, None
    for lam_cap in _frontier_lambdas(lam_w, phi_w, ok):
        if fixed - lam_cap * work <= best_f + TOLERANCE:
            break  # larger caps only lower the bound
        below = ok & (lam_w <= lam_cap)
        # slot t is eligible under phi cap Phi iff Phi >= its least phi among these nodes
        least_phi = np.where(below, phi_w, np.inf).min(axis=0)
        for phi_cap in np.unique(least_phi[np.isfinite(least_phi)]):
            ceiling = fixed - lam_cap * work - phi_cap * memory
            if ceiling <= best_f + TOLERANCE:
                break
            priced = np.where(below & (phi_w <= phi_cap), cost, np.inf)
            node = np.argmin(priced, axis=0)
            slot_cost = priced[node, span]
            if np.isfinite(slot_cost).sum() < need:
                continue
            chosen = np.sort(np.argsort(slot_cost, kind="stable")[:need])
            f = ceiling - float(slot_cost[chosen].sum())
            if f > best_f + TOLERANCE:
                best_f, best_slots, best_nodes = f, start + chosen, node[chosen]
    return best_f, best_slots, best_nodes


def exact_select(
    instance: LoraInstance, task: int, lam: np.ndarray, phi: np.ndarray, usable: np.ndarray | None = None
) -> tuple[float, Schedule | None]:
    """max over vendors and schedules of F(il) (eq. 10) and a schedule attaining it (ties: the
    lowest vendor index, then the module docstring's); (-inf, None) if the task has no schedule.
    Raises ValueError unless the cluster has one node type."""
    c = instance.cluster
    if len(c.types) != 1:
        raise ValueError(f"the exact selector needs one node type, the cluster has {len(c.types)}")
    if not np.all(c.node_cost == c.node_cost[:1]):
        raise ValueError("the exact selector needs the same operating cost on every node of a slot")
    tasks = instance.tasks
    a = int(tasks.arrival[task])
    vendors = range(instance.vendors) if tasks.preprocess[task] else [-1]
    best_f, best = -math.inf, None
    for n in vendors:
        start = a + (int(instance.vendor_delay[task, n]) if n >= 0 else 0)
        price = float(instance.vendor_price[task, n]) if n >= 0 else 0.0
        f, slots, nodes = _best_in_window(instance, task, start, price, lam, phi, usable)
        if slots is not None and f > best_f + TOLERANCE:
            best_f, best = f, Schedule(task, n, slots.astype(np.int64), nodes.astype(np.int64))
    return best_f, best
