"""The offline optimum "OPT" of paper 002's problem (2.1): the most threads that can reach their
thresholds by their deadlines when every loss curve is known in advance.

With the true curve, thread k needs S*_k = curve.data_to_reach(eps_k, N_k (d_k - b_k)) data
(inf: never within its data limit), that is p_k = S*_k / N_k units of compute, received in the
units b_k + 1..d_k; a unit has capacity 1 and shares are divisible. Problem (2.1) is then the
fluid preemptive single machine with release times b_k and deadlines d_k, maximising the number
of threads served (1 | r_j, pmtn | sum U_j). By Horn's condition (1974) a set C is feasible iff
for every pair (r, d') with r in {b_k} and d' in {d_k}, r < d':

    sum_{k in C, b_k >= r, d_k <= d'} p_k <= d' - r.

CP-SAT model: one boolean x_k per thread (none, i.e. x_k = 0, when p_k is inf or p_k > d_k -
b_k), one constraint per pair (r, d') whose members could overflow it, written once per member
set with its tightest window (r = the members' smallest begin, d' = their largest deadline;
`_horn_windows`), maximise sum_k x_k. With equal begins this is one EDF constraint per deadline.

Integers (CP-SAT needs them): p_k is scaled by Q = `scale` (default 10^4) and rounded UP,
P_k = ceil(Q p_k) computed exactly (fractions.Fraction of the float), capacities Q (d' - r)
are exact. A set the model accepts is therefore feasible in real numbers (conservative), and
the model rejects a feasible set only if one of its windows has a slack below (threads in the
window) / Q units of compute (each rounding adds less than 1 / Q): with Q = 10^4 and 100
threads, below 10^-2 units, i.e. 10^-2 N_k data. The chosen set is checked again in floats.
Q was 10^6 first: on a Sec. 4.3 bundle of 100 threads (needs up to 7,400 units, coefficients
up to 7.4e9) CP-SAT 9.15 returned OPTIMAL with 53 threads while the same model accepts a
62-thread set (STF's) and Q <= 10^5 gives 67, the Moore-Hodgson count (tests/core/
test_offline_optimum.py keeps that bundle's needs as a regression case).

Solver (as in algorithms/auction/offline_optimum.py): one worker, a fixed `seed`,
linearization_level 2, and a limit in CP-SAT's deterministic time (`time_limit`), so the same
input always gives the same answer; `wall_limit` is an optional safety net in seconds (breaks
determinism when it binds). The status is CP-SAT's: OPTIMAL (proven) or FEASIBLE (the limit
stopped the proof); no solution at all within the limit raises RuntimeError. Sizes measured on
the 2-core machine (loaded): 100 threads, equal begins 0.1 s, random begins 0.15 s; 300 threads,
random begins 7-8 s (5,300 dense constraints, presolve dominates); 1000 threads, equal begins
20 s (deterministic time 5.4) -- meant for the paper's bundle sizes (5-100 threads).

Verification and OPT's allocation: `edf_schedule` builds the time-indexed schedule eta[t-1, k]
of the chosen set (fluid EDF over the unit times: in every unit, the released unfinished threads
in deadline order, ties by index, each take what they still need until the unit is used up),
and `solve_offline_optimum` checks it delivers p_k by d_k to every chosen thread (EDF is optimal
for feasibility, so this also re-checks Horn's condition).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from ortools.sat.python import cp_model

from algorithms.common.cpsat import deterministic_solver
from market.core.threads import Bundle

SCALE = 10**4  # larger coefficients made CP-SAT 9.15 report a wrong optimum (docstring)
TIME_LIMIT = 60.0  # CP-SAT deterministic time units
TOL = 1e-9  # units of compute, for the float checks


@dataclass
class OfflineSolution:
    """OPT on one bundle. `schedule` is (T, K) with T the last deadline: eta[t-1, k], the share
    of unit t given to thread k; `finish_time` is the unit in which a chosen thread has received
    p_k (b_k + 1 when p_k = 0), 0 for the others."""

    selected: np.ndarray  # bool (K,)
    count: int
    status: str  # CP-SAT status name: OPTIMAL or FEASIBLE
    schedule: np.ndarray  # float (T, K)
    finish_time: np.ndarray  # int (K,)
    need_units: np.ndarray  # float (K,): p_k
    bound: float  # CP-SAT's bound on the count
    solve_seconds: float  # wall time of the whole call (model, solve, schedule)
    deterministic_time: float

    @property
    def optimal(self) -> bool:
        return self.status == "OPTIMAL"


def _check(begin, deadline, need_units):
    b = np.asarray(begin).reshape(-1)
    d = np.asarray(deadline).reshape(-1)
    p = np.asarray(need_units, dtype=float).reshape(-1)
    if not (b.size == d.size == p.size):
        raise ValueError(
            f"begin, deadline and need_units need one value per thread, got sizes {b.size}, {d.size}, {p.size}"
        )
    if b.size and (np.any(b != np.round(b)) or np.any(d != np.round(d))):
        raise ValueError("begin and deadline must be whole unit times")
    b, d = b.astype(np.int64), d.astype(np.int64)
    if np.any(b < 0) or np.any(d <= b):
        raise ValueError(f"threads need 0 <= b_k < d_k, got begin {b.tolist()}, deadline {d.tolist()}")
    if not np.all(p >= 0.0):
        raise ValueError(f"need_units must be >= 0 (inf: impossible), got {p.tolist()}")
    return b, d, p


def horn_feasible(begin, deadline, need_units, selected=None, tol: float = TOL) -> bool:
    """Horn's condition in floats: can the threads in `selected` (all if None) all receive p_k
    within b_k + 1..d_k at capacity 1 per unit?"""
    b, d, p = _check(begin, deadline, need_units)
    if selected is not None:
        sel = np.asarray(selected, dtype=bool).reshape(-1)
        b, d, p = b[sel], d[sel], p[sel]
    if p.size == 0:
        return True
    if not np.all(np.isfinite(p)):
        return False
    ends = np.unique(d)
    for r in np.unique(b).tolist():
        later = b >= r
        load = ((d[later][None, :] <= ends[:, None]) * p[later][None, :]).sum(axis=1)
        if np.any(load > np.maximum(ends - r, 0) + tol):
            return False
    return True


def edf_schedule(begin, deadline, need_units, selected=None) -> np.ndarray:
    """Fluid EDF over the unit times 1..max d_k for the threads in `selected` (all if None):
    eta[t-1, k]. Threads that cannot all fit simply end short (the caller checks)."""
    b, d, p = _check(begin, deadline, need_units)
    k = p.size
    horizon = int(d.max()) if k else 0
    eta = np.zeros((horizon, k))
    sel = np.ones(k, dtype=bool) if selected is None else np.asarray(selected, dtype=bool).reshape(-1)
    pending = [j for j in np.lexsort((np.arange(k), d)).tolist() if sel[j] and p[j] > 0.0]
    left = {j: float(p[j]) for j in pending}
    bl, dl = b.tolist(), d.tolist()
    for t in range(1, horizon + 1):
        room = 1.0
        for j in pending:
            if room <= 0.0:
                break
            if bl[j] < t <= dl[j]:
                give = min(left[j], room)
                eta[t - 1, j] = give
                left[j] -= give
                room -= give
        pending = [j for j in pending if left[j] > 0.0 and dl[j] > t]
    return eta


def _scaled(p: float, scale: int) -> int:
    return math.ceil(Fraction(p) * scale)


def _horn_windows(b: np.ndarray, d: np.ndarray, P: np.ndarray, scale: int):
    """The pairs (r, d') of Horn's condition worth a constraint, as (member positions, scaled
    capacity): r a begin, d' a deadline of a thread with b_k >= r, d' at least the earliest
    deadline among the threads with b_k = r (so that r and d' are the smallest begin and the
    largest deadline of the members: every member set appears once, with its tightest window),
    and the members' scaled needs above the capacity (otherwise the constraint cannot bind)."""
    for r in np.unique(b).tolist():
        later = np.flatnonzero(b >= r)
        later = later[np.argsort(d[later], kind="stable")]
        ends = d[later]
        load = np.cumsum(P[later])
        first = int(d[b == r].min())
        for e in np.unique(ends[ends >= first]).tolist():
            n = int(np.searchsorted(ends, e, side="right"))
            cap = scale * (e - r)
            if n >= 2 and int(load[n - 1]) > cap:
                yield later[:n], cap


def solve_offline_optimum(
    begin,
    deadline,
    need_units,
    *,
    scale: int = SCALE,
    time_limit: float | None = TIME_LIMIT,
    seed: int = 0,
    wall_limit: float | None = None,
) -> OfflineSolution:
    """OPT of problem (2.1) from the threads' windows and needs p_k (units of compute)."""
    started = time.perf_counter()
    b, d, p = _check(begin, deadline, need_units)
    k = p.size
    scale = int(scale)
    if scale < 1:
        raise ValueError(f"scale must be a positive integer, got {scale}")
    candidate = np.isfinite(p) & (p <= (d - b) + TOL)
    P = np.zeros(k, dtype=np.int64)
    for j in np.flatnonzero(candidate):
        P[j] = _scaled(float(p[j]), scale)
        if P[j] > scale * int(d[j] - b[j]):
            candidate[j] = False
    model = cp_model.CpModel()
    cand = np.flatnonzero(candidate)
    x = {j: model.new_bool_var(f"x{j}") for j in cand.tolist()}
    for members, cap in _horn_windows(b[cand], d[cand], P[cand], scale):
        js = cand[members]
        model.add(cp_model.LinearExpr.weighted_sum([x[j] for j in js.tolist()], P[js].tolist()) <= cap)
    model.maximize(sum(x.values()))
    solver = deterministic_solver(time_limit, seed, wall_limit)
    status = solver.solve(model)
    name = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(
            f"CP-SAT returned {name} for the offline optimum (selecting no thread is "
            "always feasible: the limit is too small or the model is broken)"
        )
    selected = np.zeros(k, dtype=bool)
    for j, var in x.items():
        selected[j] = solver.boolean_value(var)
    if k and np.all(b == b[0]):  # a safety net: with equal begins Moore-Hodgson is exact
        from algorithms.core.tree_search import adaptive_tree_search

        _, chosen = adaptive_tree_search(np.where(candidate, p, np.inf), d, int(b[0]))
        fits = all(
            int(P[cand[m]][chosen[cand[m]]].sum()) <= cap  # in the scaled model too
            for m, cap in _horn_windows(b[cand], d[cand], P[cand], scale)
        )
        if int(chosen.sum()) > int(selected.sum()) and fits:
            raise RuntimeError(
                f"CP-SAT's offline optimum ({name}, {int(selected.sum())} threads) is below the "
                f"Moore-Hodgson count {int(chosen.sum())} on equal begins: the solver is wrong"
            )
    schedule = edf_schedule(b, d, p, selected)
    finish = _verify(schedule, b, d, p, selected)
    return OfflineSolution(
        selected,
        int(selected.sum()),
        name,
        schedule,
        finish,
        p,
        float(solver.best_objective_bound) if x else 0.0,
        time.perf_counter() - started,
        float(solver.deterministic_time),
    )


def _verify(schedule, b, d, p, selected) -> np.ndarray:
    """Check the EDF schedule serves every chosen thread in its window at capacity 1; return
    the finish times."""
    k = p.size
    t = np.arange(1, schedule.shape[0] + 1)[:, None]
    outside = (t <= b[None, :]) | (t > d[None, :]) | ~selected[None, :]
    if np.any(schedule[outside] != 0.0) or np.any(schedule < 0.0):
        raise AssertionError("OPT's EDF schedule gives compute outside a chosen thread's window")
    if np.any(schedule.sum(axis=1) > 1.0 + TOL):
        raise AssertionError("OPT's EDF schedule exceeds the unit capacity")
    got = schedule.sum(axis=0)
    want = np.where(selected, p, 0.0)
    short = selected & (got < want - TOL * np.maximum(1.0, want))
    if short.any():
        raise AssertionError(
            f"OPT's chosen threads {np.flatnonzero(short).tolist()} do not receive "
            "their need under EDF (the scaled model accepted an infeasible set)"
        )
    finish = np.zeros(k, dtype=np.int64)
    for j in np.flatnonzero(selected):
        given = np.flatnonzero(schedule[:, j] > 0.0)
        finish[j] = int(given[-1]) + 1 if given.size else int(b[j]) + 1
    return finish


def true_needs(bundle: Bundle) -> np.ndarray:
    """S*_k: the least data at which thread k's reported loss reaches eps_k within its data
    limit N_k (d_k - b_k), inf if it never does."""
    return np.array(
        [curve.data_to_reach(th.threshold, th.data_limit) for th, curve in zip(bundle.threads, bundle.curves)],
        dtype=float,
    )


def true_need_units(bundle: Bundle) -> np.ndarray:
    """p_k = S*_k / N_k (inf: never)."""
    return true_needs(bundle) / bundle.arrays().budget


def offline_optimum(bundle: Bundle, **kwargs) -> OfflineSolution:
    """OPT of problem (2.1) for a bundle with known curves (keyword arguments as
    `solve_offline_optimum`)."""
    arrays = bundle.arrays()
    return solve_offline_optimum(arrays.begin, arrays.deadline, true_need_units(bundle), **kwargs)
