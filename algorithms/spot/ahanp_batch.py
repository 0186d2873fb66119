"""AHANP (paper 000, Appendix A-A, Alg. 3) for a pool of
thresholds sigma on one world, compiled: the fast path of `family.simulate_replicate`.

The reference is `algorithms/spot/ahanp.py` (`AHANP.indicators` / `total` /
`decide`, the seven cases of Alg. 3 lines 3-8, and the readings of the start `literal`,
`fresh` and `cold`) run by `simulation.simulate` (the accounting of Sec. III and the
termination configuration of Sec. III-E2), one policy at a time. `AHANPPool.run` runs every
(threshold, start) of the pool in one Numba call (`_run_pool`, the start as an int code per
policy) with the same operations in the same order (no fast-math), so the outcomes are the
same bit for bit (tests/spot/test_spot_ahanp_batch.py). The accounting
of each slot and the end of the job are `pool_accounting`'s (shared with the AHAP pool),
and so is the result, `PoolResult`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from algorithms.spot.ahanp import COLD_RISE
from algorithms.spot.pool_accounting import SLOT_ERRORS, PoolResult, account_slot, finish, open_accounts
from algorithms.spot.registry import AHANP_STARTS
from algorithms.spot.simulation import PolicyError
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket

# The readings of the start as _run_pool's codes: the position in registry.AHANP_STARTS.
LITERAL, FRESH, COLD = 0, 1, 2


@njit(cache=True, inline="always")
def _indicators(t, z_prev, prev_avail, a_t, p_t, start, threshold, p_o, workload, d, tol):
    """AHANP.indicators, Alg. 3 line 3 (Appendix A-A): (on schedule, n^hat, p^hat) in slot t
    for progress z_prev, last slot's availability prev_avail (0 before slot 1, read by the
    start code `start`) and this slot's a_t, p_t."""
    expected = workload / d * (t - 1)
    on_schedule = z_prev >= expected - tol
    if prev_avail != 0:
        n_hat = a_t / prev_avail
    elif start == COLD and t >= 2:
        n_hat = 0.0 if a_t == 0 else COLD_RISE
    else:
        n_hat = np.inf
    p_hat = p_t / (threshold * p_o)
    return on_schedule, n_hat, p_hat


@njit(cache=True, inline="always")
def _total(on_schedule, n_hat, p_hat, last, a_t, t, start, n_min, n_max):
    """AHANP.total, Alg. 3 lines 4-6 (Appendix A-A): the seven cases, from n_{t-1} = last;
    a positive total (and under the `fresh` start slot 1's) limited to [N_min, N_max]."""
    if on_schedule and n_hat == 0:
        n = 0
    elif on_schedule and n_hat <= 0.5:
        n = max((last + 1) // 2, n_min)
    elif on_schedule and n_hat <= 1:
        n = last
    elif on_schedule and p_hat > 1:
        n = last
    elif on_schedule:
        n = max(last, a_t)
    elif n_hat == np.inf:
        n = n_min
    else:
        n = max(2 * last, n_min)
    if n > 0 or (t == 1 and start == FRESH):
        n = min(max(n, n_min), n_max)
    return n


@njit(cache=True)
def _run_pool(
    thresholds, starts, price, avail, p_o, workload, deadline, n_min, n_max, alpha, beta, mu1, mu2, value, gamma
):
    """Every threshold of the pool on one world, policy q read with the start code starts[q]
    (LITERAL, FRESH, COLD): per slot, each running policy's indicators (`_indicators`),
    total (`_total`) and split (Alg. 3 lines 7-8: spot first), then the slot's accounting
    (Sec. III, `pool_accounting`). Returns what `ahap_batch._run_pool` returns but its count
    of label sweeps (error[q] pool_accounting.AVAILABILITY_ERROR / BOUNDS_ERROR if a decision
    broke (5b) / (5c-5d): never, kept as simulate's checks)."""
    n_pol = thresholds.size
    d = deadline
    tol = 1e-9 * max(1.0, workload)
    done_at = workload - tol
    (progress, n_prev, running, spot_cost, od_cost, reconf, completion, error, n_od, n_sp) = open_accounts(n_pol, d)
    prev_avail = np.zeros(n_pol, dtype=np.int64)
    od_t = np.zeros(n_pol, dtype=np.int64)  # the decisions of slot t
    sp_t = np.zeros(n_pol, dtype=np.int64)
    for t in range(1, d + 1):
        p_t = price[t - 1]
        a_t = avail[t - 1]
        for q in range(n_pol):
            if not running[q]:
                continue
            on_schedule, n_hat, p_hat = _indicators(
                t, progress[q], prev_avail[q], a_t, p_t, starts[q], thresholds[q], p_o, workload, d, tol
            )
            n = _total(on_schedule, n_hat, p_hat, n_prev[q], a_t, t, starts[q], n_min, n_max)
            # AHANP.decide (lines 7-8)
            prev_avail[q] = a_t
            sp_t[q] = min(a_t, n)
            od_t[q] = n - sp_t[q]
        # simulate: checks (5b)-(5e) and the accounting of the slot, for every running policy
        account_slot(
            t,
            od_t,
            sp_t,
            p_t,
            a_t,
            n_min,
            n_max,
            alpha,
            beta,
            mu1,
            mu2,
            p_o,
            done_at,
            progress,
            n_prev,
            running,
            spot_cost,
            od_cost,
            reconf,
            completion,
            error,
            n_od,
            n_sp,
        )
    utility, cost, extra_slots = finish(
        progress,
        n_prev,
        completion,
        od_cost,
        spot_cost,
        reconf,
        error,
        d,
        workload,
        tol,
        n_max,
        alpha,
        beta,
        mu1,
        mu2,
        p_o,
        value,
        gamma,
    )
    return (n_od, n_sp, utility, cost, spot_cost, od_cost, completion, progress, reconf, extra_slots, error)


class AHANPPool:
    """AHANP(sigma, start) for each threshold of `thresholds` and the start beside it in
    `starts` (None: every one `literal`), validated as `AHANP` does, run together on one world
    by `run`."""

    def __init__(self, thresholds: Sequence[float], starts: Sequence[str] | None = None):
        from algorithms.spot.ahanp import AHANP  # the reference's validation and names

        thresholds = list(thresholds)
        starts = ["literal"] * len(thresholds) if starts is None else list(starts)
        if len(starts) != len(thresholds):
            raise ValueError(f"AHANPPool: {len(thresholds)} thresholds but {len(starts)} starts")
        policies = [AHANP(s, start) for s, start in zip(thresholds, starts)]
        self.names = [p.name for p in policies]
        self.thresholds = np.array([p.threshold for p in policies], dtype=float)
        self.starts = np.array([AHANP_STARTS.index(p.start) for p in policies], dtype=np.int64)

    def __len__(self) -> int:
        return self.thresholds.size

    def run(self, job: FineTuneJob, market: SpotMarket) -> PoolResult:
        """What `simulate(job, market, AHANP(sigma, start))` returns for every policy, bit for bit."""
        d = job.deadline
        if len(market) < d:
            raise ValueError(f"market has {len(market)} slots, the job's deadline needs {d}")
        if len(self) == 0:
            return PoolResult.empty(d)
        # writable copies: Numba's code for read-only arrays is slower (see ahap_batch)
        *accounts, error = _run_pool(
            self.thresholds,
            self.starts,
            np.array(market.price[:d], dtype=np.float64),
            np.array(market.availability[:d], dtype=np.int64),
            float(market.on_demand_price),
            float(job.workload),
            int(d),
            int(job.n_min),
            int(job.n_max),
            float(job.alpha),
            float(job.beta),
            float(job.mu1),
            float(job.mu2),
            float(job.value),
            float(job.gamma),
        )
        bad = np.flatnonzero(error)
        if bad.size:
            q = int(bad[0])
            raise PolicyError(f"{self.names[q]}: {SLOT_ERRORS[int(error[q])]}")
        return PoolResult.of(d, *accounts)
