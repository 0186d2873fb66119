"""The job's accounting in the compiled policy pools, written once:
paper 000, Sec. III (eq. 1-5) and the termination configuration of
Sec. III-E2, for `ahap_batch.AHAPPool` and `ahanp_batch.AHANPPool`.

The reference is `simulation.simulate`. A pool keeps one account per policy q (arrays
indexed by q, `open_accounts`); once every running policy has decided slot t it calls
`account_slot`, which does for each of them what simulate does after `decide`: the
checks of the decision, (5b) n_t^s <= a_t and (5c)-(5d) n_t = 0 or N_min <= n_t <= N_max
(where simulate raises PolicyError, error[q] is set and q stops), then the slot: a
reconfiguration if n_t != n_{t-1}, progress + mu_t H(n_t) (eq. 1, 2, 5a), cost
n_t^o p^o + n_t^s p_t^s (eq. 3), completion at the first slot with progress >= L - tol.
After slot d `finish` runs the termination configuration of a job left unfinished
(Sec. III-E2) and gives the cost and the utility V(T) - C (eq. 4, 5). A policy's decision
in slot t depends only on its own account before t, so accounting the slot after all
decisions is the same as after each one.

Every float operation is simulate's (and FineTuneJob's), in the same order, without
fast-math, so the pools' outcomes are simulate's bit for bit
(tests/spot/test_spot_pool_accounting.py against `simulate` directly, and the pools'
tests tests/spot/test_spot_ahap_batch.py, test_spot_ahanp_batch.py). `account_slot` takes the
whole slot, not one policy: a compiled function with array arguments counts references
to them at every call (atomic operations, not removed even with inline='always': 10
increments and 10 decrements per policy and slot in the LLVM IR), which called per policy
made the AHANP pool's compiled call 1.2-1.7x slower; once per slot it costs nothing
measurable.

Numba's on-disk cache (`cache=True`) is keyed by the file of the function compiled, and a
pool's cached machine code contains the functions of this module it calls (Numba links
them in; it does not see edits in another file), so after an edit here the pools use it
only once their own caches are rebuilt: touch ahap_batch.py and ahanp_batch.py, or
delete algorithms/spot/__pycache__ (the same holds for window_kernels.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from algorithms.spot.simulation import SpotOutcome

# error[q] of a policy whose decision simulate would reject (codes 0 and 1 are the pools':
# no error, and AHAP's "problem (10) had no plan")
AVAILABILITY_ERROR = 2  # (5b): more spot than available
BOUNDS_ERROR = 3  # (5c)-(5d): n_t neither 0 nor in [N_min, N_max]
SLOT_ERRORS = {
    AVAILABILITY_ERROR: "a decision exceeds the availability (5b)",
    BOUNDS_ERROR: "a decision breaks [N_min, N_max] (5c-5d)",
}


@njit(cache=True)
def throughput(n, alpha, beta):
    """FineTuneJob.throughput: H(n) = alpha n + beta for n >= 1, 0 when idle (eq. 1)."""
    return alpha * n + beta if n >= 1 else 0.0


@njit(cache=True)
def slot_work(n, n_prev, alpha, beta, mu1, mu2):
    """FineTuneJob.slot_work: mu_t H(n_t), mu_t = mu1 / mu2 / 1 as n grows / shrinks /
    stays (eq. 2, 5a)."""
    if n > n_prev:
        mu = mu1
    elif n < n_prev:
        mu = mu2
    else:
        mu = 1.0
    return mu * throughput(n, alpha, beta)


@njit(cache=True)
def open_accounts(n_pol, d):
    """The accounts of n_pol policies before slot 1, as simulate starts one: (progress,
    n_prev, running, spot_cost, od_cost, reconf, completion, error, n_od, n_sp); n_od[q],
    n_sp[q] hold slots 1..d."""
    progress = np.zeros(n_pol)
    n_prev = np.zeros(n_pol, dtype=np.int64)
    running = np.ones(n_pol, dtype=np.bool_)
    spot_cost = np.zeros(n_pol)
    od_cost = np.zeros(n_pol)
    reconf = np.zeros(n_pol, dtype=np.int64)
    completion = np.zeros(n_pol, dtype=np.int64)
    error = np.zeros(n_pol, dtype=np.int64)
    n_od = np.zeros((n_pol, d), dtype=np.int64)
    n_sp = np.zeros((n_pol, d), dtype=np.int64)
    return progress, n_prev, running, spot_cost, od_cost, reconf, completion, error, n_od, n_sp


@njit(cache=True)
def account_slot(
    t,
    on_demand,
    spot,
    price,
    avail,
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
):
    """simulate's checks (5b)-(5e) and accounting of slot t (1-based, price p_t^s and
    availability a_t) for every running policy q, which decided (on_demand[q], spot[q]);
    done_at = L - tol. A rejected decision sets error[q] (AVAILABILITY_ERROR,
    BOUNDS_ERROR) and stops q; a completed job stops q with completion[q] = t."""
    for q in range(running.size):
        if not running[q]:
            continue
        o = on_demand[q]
        s = spot[q]
        if s > avail:
            error[q] = AVAILABILITY_ERROR
            running[q] = False
            continue
        n = o + s
        if n != 0 and not (n_min <= n and n <= n_max):
            error[q] = BOUNDS_ERROR
            running[q] = False
            continue
        last = n_prev[q]
        if n != last:
            reconf[q] += 1
        progress[q] = progress[q] + slot_work(n, last, alpha, beta, mu1, mu2)
        od_cost[q] += o * p_o
        spot_cost[q] += s * price
        n_od[q, t - 1] = o
        n_sp[q, t - 1] = s
        n_prev[q] = n
        if progress[q] >= done_at:
            completion[q] = t
            running[q] = False


@njit(cache=True)
def finish(
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
):
    """The end of `simulate` for each policy q without an error: the termination
    configuration of Sec. III-E2 for an unfinished job (completion[q] == 0; adds to
    od_cost, completion and reconf in place), the cost and V(T) - C (eq. 4, 5).
    Returns (utility, cost, termination slots)."""
    n_pol = progress.size
    utility = np.empty(n_pol)
    cost = np.empty(n_pol)
    extra_slots = np.zeros(n_pol, dtype=np.int64)
    h = throughput(n_max, alpha, beta)
    for q in range(n_pol):
        if error[q]:
            continue
        if completion[q] == 0:  # FineTuneJob.termination (Sec. III-E2)
            remaining = workload - progress[q]
            first = slot_work(n_max, n_prev[q], alpha, beta, mu1, mu2)
            extra = 1
            if remaining > first + tol:
                extra += np.int64(math.ceil((remaining - first - tol) / h))
            od_cost[q] += extra * n_max * p_o
            extra_slots[q] = extra
            completion[q] = d + extra
            if n_prev[q] != n_max:
                reconf[q] += 1
        cost[q] = od_cost[q] + spot_cost[q]
        done = completion[q]  # FineTuneJob.value_at (eq. 4)
        if done <= d:
            v = value
        elif done < gamma * d:
            v = value * (1.0 - (done - d) / ((gamma - 1.0) * d))
        else:
            v = 0.0
        utility[q] = v - cost[q]
    return utility, cost, extra_slots


@dataclass(frozen=True)
class PoolResult:
    """The outcomes of a pool's `run`, one entry per policy (the arrays its compiled
    `_run_pool` returns); `outcomes()` and `record(q, name)` turn them into `SpotOutcome`s
    and result rows."""

    deadline: int
    n_od: np.ndarray
    n_sp: np.ndarray
    utility: list
    cost: list
    spot_cost: list
    od_cost: list
    completion: list
    progress: list
    reconfigurations: list
    termination_slots: list

    @classmethod
    def empty(cls, d: int) -> PoolResult:
        """The result of a pool without policies."""
        none = np.zeros((0, d), dtype=np.int64)
        return cls(d, none, none, [], [], [], [], [], [], [], [])

    @classmethod
    def of(cls, d, n_od, n_sp, utility, cost, spot_cost, od_cost, completion, progress, reconf, extra) -> PoolResult:
        """From `_run_pool`'s arrays (the per-policy ones as Python lists)."""
        return cls(
            d,
            n_od,
            n_sp,
            utility.tolist(),
            cost.tolist(),
            spot_cost.tolist(),
            od_cost.tolist(),
            completion.tolist(),
            progress.tolist(),
            reconf.tolist(),
            extra.tolist(),
        )

    def outcomes(self) -> list[SpotOutcome]:
        out = []
        for q in range(len(self.utility)):
            n_od = self.n_od[q].copy()
            n_sp = self.n_sp[q].copy()
            n_od.setflags(write=False)
            n_sp.setflags(write=False)
            out.append(
                SpotOutcome(
                    utility=self.utility[q],
                    cost=self.cost[q],
                    spot_cost=self.spot_cost[q],
                    on_demand_cost=self.od_cost[q],
                    completion_time=self.completion[q],
                    progress_at_deadline=self.progress[q],
                    met_deadline=self.completion[q] <= self.deadline,
                    reconfigurations=self.reconfigurations[q],
                    termination_slots=self.termination_slots[q],
                    n_on_demand=n_od,
                    n_spot=n_sp,
                )
            )
        return out

    def record(self, q: int, mechanism: str) -> dict:
        """`SpotOutcome.record` of policy q, without building the outcome."""
        return {
            "mechanism": mechanism,
            "utility": self.utility[q],
            "cost": self.cost[q],
            "completion_time": self.completion[q],
            "spot_cost": self.spot_cost[q],
            "on_demand_cost": self.od_cost[q],
            "progress_at_deadline": self.progress[q],
            "met_deadline": self.completion[q] <= self.deadline,
            "reconfigurations": self.reconfigurations[q],
        }
