"""Self-owned instances (paper 003, Sec. IV-A): the policy of eq. (3)-(5) with parameter beta0
and the naive policy of eq. (2), allocated job by job in arrival order against the count of
idle self-owned instances N(t).

A job j given r_j self-owned instances holds them at every slot of [a_j, a_j + d_j - 1]; its
remainder is a new job with the same arrival and deadline, size z_j - r_j d_j and parallelism
delta_j - r_j (Sec. IV-A, "its remaining workload ... could be viewed as a new job j'"), which
spot and on-demand instances process (job_execution.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

LEN = 12  # slots per hour (L = 5 minutes)


def expected_need(size, deadline, parallelism, beta: float, slots_per_hour: int = LEN):
    """r_bar_j(beta) of eq. (3) / (4): the fewest self-owned instances after which the job is
    expected to finish on spot instances alone (Proposition 1), before max(., 0); a float for
    one job, an array for arrays of jobs.

    kappa0 = ceil(d / Len) - 1. Eq. (3) when d - kappa0 Len >= beta Len, eq. (4) otherwise. Where
    a denominator is zero (eq. (3) with d = beta Len and kappa0 = 0; eq. (4) with kappa0 = 0)
    Proposition 1's inequality reads d delta >= z, true for every r: r_bar = 0."""
    d = np.asarray(deadline, dtype=float)
    delta = np.asarray(parallelism, dtype=float)
    z = np.asarray(size, dtype=float)
    n = float(slots_per_hour)
    kappa0 = np.ceil(d / n) - 1.0
    slack = d * delta - z
    denominator = np.where(d - kappa0 * n >= beta * n, d - (kappa0 + 1.0) * n * beta, (1.0 - beta) * kappa0 * n)
    positive = denominator > 0.0
    need = np.where(positive, delta - slack / np.where(positive, denominator, 1.0), 0.0)
    return float(need) if need.ndim == 0 else need


def idle_minimum(idle: np.ndarray, start: int, end: int) -> int:
    """m_start(end) = min N(t) over slots start..end (1-based, inclusive)."""
    return int(idle[start - 1 : end].min())


def wanted_instances(size, deadline, parallelism, beta0: float | None, slots_per_hour: int = LEN) -> np.ndarray:
    """Each job's request before the cap by the idle instances, capped at delta_j: eq. (5)'s
    ceil(max(r_bar_j(beta0), 0)) (rounded up to a whole instance, Sec. IV-A: "we could round
    the allocations up to integers"), or eq. (2)'s ceil(z_j / d_j) when beta0 is None."""
    size = np.asarray(size, dtype=float)
    deadline = np.asarray(deadline, dtype=np.int64)
    parallelism = np.asarray(parallelism, dtype=np.int64)
    if beta0 is None:
        need = size / deadline
    else:
        need = np.maximum(expected_need(size, deadline, parallelism, beta0, slots_per_hour), 0.0)
    return np.minimum(np.ceil(need - 1e-12).astype(np.int64), parallelism)


@njit(cache=True)
def _allocate(arrival, deadline, want, instances, horizon):
    r = np.zeros(arrival.size, dtype=np.int64)
    idle = np.full(horizon, instances, dtype=np.int64)
    for j in range(arrival.size):
        a, d = arrival[j], deadline[j]
        r[j] = min(want[j], idle[a - 1 : a + d - 1].min())
        idle[a - 1 : a + d - 1] -= r[j]
    return r


def allocate_self_owned(
    arrival, size, deadline, parallelism, instances: int, beta0: float | None, slots_per_hour: int = LEN
) -> np.ndarray:
    """r_j for every job, in arrival order, with `instances` (R) self-owned instances:
    r_j = min(`wanted_instances`, m_{a_j}(a_j + d_j - 1)), eq. (5) with beta0 a number, the
    naive eq. (2) with beta0 None (compiled: the idle count N(t) is updated job by job)."""
    arrival = np.asarray(arrival, dtype=np.int64)
    deadline = np.asarray(deadline, dtype=np.int64)
    if instances <= 0 or arrival.size == 0:
        return np.zeros(arrival.size, dtype=np.int64)
    want = wanted_instances(size, deadline, parallelism, beta0, slots_per_hour)
    return _allocate(arrival, deadline, want, int(instances), int((arrival + deadline - 1).max()))


def self_owned_work(size, deadline, r) -> np.ndarray:
    """Work each job gets from its r_j self-owned instances: r_j d_j, at most z_j."""
    return np.minimum(np.asarray(r) * np.asarray(deadline), np.asarray(size, dtype=float))


def utilisation(arrival, size, deadline, r, instances: int, horizon: int | None = None) -> float:
    """Share of the R x T self-owned instance-slots that process work over the arrival window
    (Fig. 5, right), T the last arrival slot (or `horizon`): job j's r_j instances work from a_j
    until its self-owned share min(r_j d_j, z_j) is done, and only their work in slots 1..T
    counts (the tail of late deadlines after the last arrival would dilute the share)."""
    arrival = np.asarray(arrival, dtype=np.int64)
    deadline = np.asarray(deadline, dtype=np.int64)
    r = np.asarray(r, dtype=float)
    if instances <= 0 or arrival.size == 0:
        return 0.0
    t = horizon or int(arrival.max())
    in_window = r * np.maximum(t - arrival + 1, 0)
    return float(np.minimum(self_owned_work(size, deadline, r), in_window).sum()) / (instances * t)
