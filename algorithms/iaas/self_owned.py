"""Self-owned instances (paper 003, Sec. IV-A): the policy of eq. (3)-(5) with parameter beta0
and the naive policy of eq. (2), allocated job by job in arrival order against the count of
idle self-owned instances N(t).

A job j given r_j self-owned instances holds them at every slot of [a_j, a_j + d_j - 1]; its
remainder is a new job with the same arrival and deadline, size z_j - r_j d_j and parallelism
delta_j - r_j (Sec. IV-A, "its remaining workload ... could be viewed as a new job j'"), which
spot and on-demand instances process (job_execution.py).
"""
from __future__ import annotations

import math

import numpy as np

LEN = 12  # slots per hour (L = 5 minutes)


def expected_need(size: float, deadline: int, parallelism: int, beta: float, slots_per_hour: int = LEN) -> float:
    """r_bar_j(beta) of eq. (3) / (4): the fewest self-owned instances after which the job is
    expected to finish on spot instances alone (Proposition 1), before max(., 0).

    kappa0 = ceil(d / Len) - 1. Eq. (3) when d - kappa0 Len >= beta Len, eq. (4) otherwise. Where
    a denominator is zero (eq. (3) with d = beta Len and kappa0 = 0; eq. (4) with kappa0 = 0)
    Proposition 1's inequality reads d delta >= z, true for every r: r_bar = 0."""
    d, delta, z, n = float(deadline), float(parallelism), float(size), slots_per_hour
    kappa0 = math.ceil(d / n) - 1
    slack = d * delta - z
    if d - kappa0 * n >= beta * n:
        denominator = d - (kappa0 + 1) * n * beta
    else:
        denominator = (1.0 - beta) * kappa0 * n
    if denominator <= 0.0:
        return 0.0
    return delta - slack / denominator


def idle_minimum(idle: np.ndarray, start: int, end: int) -> int:
    """m_start(end) = min N(t) over slots start..end (1-based, inclusive)."""
    return int(idle[start - 1:end].min())


def allocate_self_owned(arrival, size, deadline, parallelism, instances: int, beta0: float | None,
                        slots_per_hour: int = LEN) -> np.ndarray:
    """r_j for every job, in arrival order, with `instances` (R) self-owned instances.

    beta0 a number: eq. (5), r_j = min(max(r_bar_j(beta0), 0), m_{a_j}(a_j + d_j - 1)), rounded
    up to a whole instance before the cap (Sec. IV-A: "we could round the allocations up to
    integers"). beta0 None: the naive policy of eq. (2), r_j = min(m, ceil(z_j / d_j)). Both
    are capped at delta_j."""
    arrival = np.asarray(arrival, dtype=np.int64)
    deadline = np.asarray(deadline, dtype=np.int64)
    size = np.asarray(size, dtype=float)
    parallelism = np.asarray(parallelism, dtype=np.int64)
    r = np.zeros(arrival.size, dtype=np.int64)
    if instances <= 0 or arrival.size == 0:
        return r
    horizon = int((arrival + deadline - 1).max())
    idle = np.full(horizon, instances, dtype=np.int64)
    for j in range(arrival.size):
        a, d, delta = int(arrival[j]), int(deadline[j]), int(parallelism[j])
        free = idle_minimum(idle, a, a + d - 1)
        if free <= 0:
            continue
        if beta0 is None:
            want = math.ceil(size[j] / d - 1e-12)
        else:
            want = math.ceil(max(expected_need(size[j], d, delta, beta0, slots_per_hour), 0.0) - 1e-12)
        r[j] = min(want, free, delta)
        idle[a - 1:a + d - 1] -= r[j]
    return r


def self_owned_work(size, deadline, r) -> np.ndarray:
    """Work each job gets from its r_j self-owned instances: r_j d_j, at most z_j."""
    return np.minimum(np.asarray(r) * np.asarray(deadline), np.asarray(size, dtype=float))


def utilisation(arrival, size, deadline, r, instances: int, horizon: int | None = None) -> float:
    """Share of the R x T self-owned instance-slots that process work (Fig. 5, right), T the
    last deadline (or `horizon`)."""
    arrival = np.asarray(arrival, dtype=np.int64)
    deadline = np.asarray(deadline, dtype=np.int64)
    if instances <= 0 or arrival.size == 0:
        return 0.0
    t = horizon or int((arrival + deadline - 1).max())
    return float(self_owned_work(size, deadline, r).sum()) / (instances * t)
