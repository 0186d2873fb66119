"""The offline benchmarks of paper 004: the welfare-maximising schedule in hindsight (Sec. 2)
solved exactly with OR-Tools CP-SAT, its LP relaxation, and the ex-ante LP of the relaxed
problem (Sec. 4.1, Appendix E), an upper bound on the hindsight optimum's expectation.

The model (Sec. 2). N identical nodes, rounds 0, 1, 2, ... Job j (submission order) has birth
b_j, concurrency c_j, a non-increasing value function V_j of its finish round (`sow.value(f)`,
0 at and after b_j + S_max) and, in one realisation, an arrival a_j and a duration d_j. A job
started at round s >= a_j runs in rounds s..s+d_j-1 on c_j nodes and finishes at f = s + d_j
with value V_j(f). Jobs are not preempted; a job need not start; at most N nodes are in use in
any round. Welfare is the sum of V_j(f_j) over the jobs run.

Candidate starts (`candidate_starts`). Job j with arrival a and duration d may start at any
s in [a, b_j + S_max - d] with V_j(s + d) > 0 (S_max = len(sow.values) - 1). A start outside
this set finishes with value 0 (V_j is 0 from b_j + S_max on and non-increasing), so it only
takes nodes: dropping it changes neither the optimum nor the LP relaxations' optima.

1. `hindsight_optimum`: one boolean x[j, s] per candidate start; sum_s x[j, s] <= 1; for
   every round t, sum of c_j x[j, s] over s <= t < s + d_j is at most N (written only where
   the candidates could exceed N); maximise sum V_j(s + d_j) x[j, s]. CP-SAT needs integer
   coefficients: VALUE_SCALE = 10^6 units per unit of value, each V_j(s + d_j) rounded to the
   nearest unit, so the model is exact when every value is a multiple of 10^-6 and otherwise
   each job's value is off by at most 0.5e-6. `welfare` (and `value`) are recomputed in floats
   from the chosen starts, so the reported welfare is that of a real schedule and lies within
   (jobs run in it + jobs run in a true optimum) x 0.5e-6 of the true optimum when `proven`.
   `bound` is CP-SAT's bound on the scaled objective divided by VALUE_SCALE: the true optimum
   is at most `bound` + 0.5e-6 x (jobs with a candidate start). The plan is re-checked
   (`check_schedule`: starts are candidates, capacity holds) before it is returned.
   Solver: `algorithms.common.cpsat.deterministic_solver(time_limit)` (one worker, fixed seed,
   `time_limit` in CP-SAT deterministic time, None = no limit): the same input always gives
   the same starts.

2. `hindsight_lp_bound`: the LP relaxation of 1 (x in [0, 1]) in floats, an upper bound on
   the hindsight optimum for instances too large for CP-SAT to prove.

3. `ex_ante_bound`: the optimum of the relaxed problem (Sec. 4.1; the LP at the start of
   Appendix E, the benchmark OPT of Sec. 4.1). For job j, support point i of P_j (probability
   lambda_i, arrival a_i, duration d_i) and candidate start s, a variable z[j, i, s] >= 0 with
   sum_s z[j, i, s] <= lambda_i; for every round t, sum of c_j z[j, i, s] over s <= t < s + d_i
   is at most N; maximise sum V_j(s + d_i) z[j, i, s]. No realisation is needed.

Both LPs are solved with scipy's HiGHS (`linprog(method="highs")`) on sparse matrices. The
number returned is not HiGHS's primal objective but the objective of a dual solution made
feasible by hand (`_dual_bound`): with y >= 0 the duals of the rows and w = max(0, value -
A^T y) those of the upper bounds x <= u, b^T y + u^T w bounds every feasible point by weak
duality, whatever the solver's tolerances. It equals the LP optimum to HiGHS's tolerance
(~1e-7 relative).

Sizes, measured once during development on a shared, busy 2-core machine (the timing script is
not kept): `tests.sow.worlds.random_sequence` with Bounds(4, 6, 40, 16.0), N = 20, three seeds.
  * one birth a round (light load): 200 jobs: CP-SAT proves the optimum in 0.13-0.16 s, the
    hindsight LP 0.02-0.03 s, the ex-ante LP 0.07-0.08 s; 1,000 jobs: 0.86-0.93 s, 0.14-0.18 s,
    0.44-0.52 s (the hindsight LP is within 0.02% of the optimum).
  * three births a round (jobs compete): 200 jobs: proven in 0.4 s, 1.2 s and 100 s (55
    deterministic units); 1,000 jobs: one seed proven in 456 s (116 units), and with
    time_limit = 10 units (48-122 s) the schedules are within 0.3-1.1% of CP-SAT's bound; the
    LPs stay under 1 s (hindsight) and 2 s (ex ante).
Use the LP bounds, or a time_limit and `bound`, for large loaded worlds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from ortools.sat.python import cp_model
from scipy.optimize import linprog

from algorithms.common.cpsat import deterministic_solver
from algorithms.sow.outcome import NOT_STARTED
from market.sow.statement_of_work import BirthSequence, Realisation, StatementOfWork

__all__ = [
    "VALUE_SCALE",
    "NOT_RUN",
    "HindsightOptimum",
    "PackingSolution",
    "candidate_starts",
    "check_schedule",
    "hindsight_optimum",
    "hindsight_lp_bound",
    "ex_ante_bound",
    "packing_lp",
]

VALUE_SCALE = 10**6  # CP-SAT units per unit of value
NOT_RUN = NOT_STARTED  # -1, as in algorithms.sow.outcome


@dataclass(frozen=True, eq=False)
class HindsightOptimum:
    """The welfare-maximising schedule of one realisation (paper 004, Sec. 2). `start[j]` is
    job j's start round (NOT_RUN = -1 if it does not run), `value[j]` its V_j(start + d_j) (0 if
    not run), `welfare` their sum (floats, recomputed from the starts), `proven` whether CP-SAT
    proved the schedule optimal (status OPTIMAL), `bound` CP-SAT's upper bound on the scaled
    objective over VALUE_SCALE (module docstring)."""

    welfare: float
    start: np.ndarray
    value: np.ndarray
    proven: bool
    bound: float
    status: str
    solve_seconds: float
    deterministic_time: float


def candidate_starts(sow: StatementOfWork, arrival: int, duration: int) -> tuple[np.ndarray, np.ndarray]:
    """The starts s in [arrival, birth + S_max - duration] whose finish s + duration has a
    positive value, and those values (module docstring)."""
    last = sow.birth + len(sow.values) - 1 - int(duration)
    starts = np.arange(int(arrival), last + 1, dtype=np.int64)
    values = sow.value(starts + int(duration))
    keep = values > 0
    return starts[keep], values[keep]


def _check_nodes(sequence: BirthSequence, nodes) -> int:
    if isinstance(nodes, (bool, np.bool_)) or not np.isscalar(nodes) or int(nodes) != nodes or nodes < 1:
        raise ValueError(f"nodes must be a positive integer, got {nodes!r}")
    nodes = int(nodes)
    for j, sow in enumerate(sequence.jobs):
        if sow.concurrency > nodes:
            raise ValueError(f"job {j}: concurrency {sow.concurrency} is above the {nodes} nodes")
    return nodes


def _check_realisation(sequence: BirthSequence, realisation: Realisation) -> tuple[np.ndarray, np.ndarray]:
    arrival = np.asarray(realisation.arrival, dtype=np.int64)
    duration = np.asarray(realisation.duration, dtype=np.int64)
    if arrival.shape != (len(sequence),) or duration.shape != (len(sequence),):
        raise ValueError(
            f"the realisation must give one arrival and one duration per job ({len(sequence)}), "
            f"got {arrival.shape} and {duration.shape}"
        )
    if np.any(duration < 1):
        j = int(np.flatnonzero(duration < 1)[0])
        raise ValueError(f"job {j}: realised duration {int(duration[j])} is below 1")
    return arrival, duration


def _hindsight_candidates(sequence, arrival, duration):
    """Flat arrays over every (job, candidate start) of one realisation."""
    jobs, starts, values = [], [], []
    for j, sow in enumerate(sequence.jobs):
        s, v = candidate_starts(sow, arrival[j], duration[j])
        jobs.append(np.full(s.size, j, dtype=np.int64))
        starts.append(s)
        values.append(v)
    return _concatenate(jobs, np.int64), _concatenate(starts, np.int64), _concatenate(values, float)


def _concatenate(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def check_schedule(sequence: BirthSequence, realisation: Realisation, nodes: int, start) -> np.ndarray:
    """Each job's value V_j(start_j + d_j) under the schedule `start` (NOT_RUN = not run), after
    checking it: a job starts at or after its arrival and at a candidate start (finish with a
    positive value, module docstring), and at most `nodes` nodes are in use in any round.
    ValueError if the schedule breaks one of these."""
    nodes = _check_nodes(sequence, nodes)
    arrival, duration = _check_realisation(sequence, realisation)
    start = np.asarray(start, dtype=np.int64)
    if start.shape != (len(sequence),):
        raise ValueError(f"the schedule must give one start per job ({len(sequence)}), got shape {start.shape}")
    value = np.zeros(len(sequence))
    load: dict[int, int] = {}
    for j, sow in enumerate(sequence.jobs):
        s = int(start[j])
        if s == NOT_RUN:
            continue
        if s < arrival[j]:
            raise ValueError(f"job {j}: starts at round {s}, before its arrival {int(arrival[j])}")
        if s > sow.birth + len(sow.values) - 1 - duration[j] or not sow.value(s + duration[j]) > 0:
            raise ValueError(f"job {j}: starts at round {s} and finishes at {s + int(duration[j])} with no value")
        value[j] = float(sow.value(s + duration[j]))
        for t in range(s, s + int(duration[j])):
            load[t] = load.get(t, 0) + int(sow.concurrency)
    over = sorted(t for t, used in load.items() if used > nodes)
    if over:
        raise ValueError(f"round {over[0]}: {load[over[0]]} nodes in use, above the {nodes} nodes")
    return value


def _running_rounds(start: np.ndarray, duration: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For variables starting at `start` and lasting `duration`: (variable index, round) of every
    round each one runs in."""
    var = np.repeat(np.arange(start.size, dtype=np.int64), duration)
    offset = np.arange(var.size, dtype=np.int64) - np.repeat(np.cumsum(duration) - duration, duration)
    return var, start[var] + offset


def hindsight_optimum(
    sequence: BirthSequence, realisation: Realisation, nodes: int, time_limit: float | None = None
) -> HindsightOptimum:
    """The welfare-maximising schedule in hindsight of one realisation (paper 004, Sec. 2: the
    offline benchmark), exact with CP-SAT over one boolean per (job, candidate start); module
    docstring for the model, the value scaling and `bound`. `time_limit`: CP-SAT deterministic
    time (None = until proven). RuntimeError if CP-SAT finds no schedule within the limit or
    returns one that breaks a constraint (it never should)."""
    started = time.perf_counter()
    nodes = _check_nodes(sequence, nodes)
    arrival, duration = _check_realisation(sequence, realisation)
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be > 0 or None, got {time_limit!r}")
    job, start, value = _hindsight_candidates(sequence, arrival, duration)
    concurrency = np.array([sow.concurrency for sow in sequence.jobs], dtype=np.int64)

    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{j}_{s}") for j, s in zip(job.tolist(), start.tolist())]
    by_job: dict[int, list] = {}
    for j, var in zip(job.tolist(), x):
        by_job.setdefault(j, []).append(var)
    for vars_ in by_job.values():
        if len(vars_) > 1:
            model.add_at_most_one(vars_)
    var_of, round_of = _running_rounds(start, duration[job])
    demand = concurrency[job]
    order = np.lexsort((var_of, round_of))
    var_of, round_of = var_of[order], round_of[order]
    if round_of.size:
        rounds, first = np.unique(round_of, return_index=True)
        bounds = np.r_[first, round_of.size]
        for k in range(rounds.size):
            members = var_of[bounds[k] : bounds[k + 1]]
            if int(demand[members].sum()) > nodes:
                model.add(
                    cp_model.LinearExpr.weighted_sum([x[v] for v in members.tolist()], demand[members].tolist())
                    <= nodes
                )
    scaled = np.rint(value * VALUE_SCALE).astype(np.int64)
    model.maximize(cp_model.LinearExpr.weighted_sum(x, scaled.tolist()))

    solver = deterministic_solver(time_limit)
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(
            f"CP-SAT found no schedule within deterministic time {time_limit} (status {solver.status_name(status)})"
        )
    plan = np.full(len(sequence), NOT_RUN, dtype=np.int64)
    for j, s, var in zip(job.tolist(), start.tolist(), x):
        if solver.boolean_value(var):
            plan[j] = s
    try:
        job_value = check_schedule(sequence, realisation, nodes, plan)
    except ValueError as error:
        raise RuntimeError(f"CP-SAT returned a schedule that breaks the model: {error}") from error
    return HindsightOptimum(
        welfare=float(job_value.sum()),
        start=plan,
        value=job_value,
        proven=status == cp_model.OPTIMAL,
        bound=float(solver.best_objective_bound) / VALUE_SCALE if x else 0.0,
        status=solver.status_name(status),
        solve_seconds=time.perf_counter() - started,
        deterministic_time=float(solver.deterministic_time),
    )


@dataclass(frozen=True, eq=False)
class PackingSolution:
    """`packing_lp`'s answer: HiGHS's primal x (clipped to [0, upper]), its objective value^T x,
    and the dual bound of the module docstring (an upper bound on the LP optimum)."""

    x: np.ndarray
    objective: float
    bound: float


def _packing_lp(
    value: np.ndarray,
    upper: np.ndarray,
    group: np.ndarray,
    group_cap: np.ndarray,
    demand: np.ndarray,
    start: np.ndarray,
    duration: np.ndarray,
    nodes: int,
) -> float:
    """max value^T x s.t. sum of x over each group <= group_cap, for every round the sum of
    demand x over the variables running in it <= nodes, 0 <= x <= upper; returns the dual bound
    of the module docstring (an upper bound on the optimum)."""
    return packing_lp(value, upper, group, group_cap, demand, start, duration, nodes).bound


def packing_lp(
    value: np.ndarray,
    upper: np.ndarray,
    group: np.ndarray,
    group_cap: np.ndarray,
    demand: np.ndarray,
    start: np.ndarray,
    duration: np.ndarray,
    nodes: float,
) -> PackingSolution:
    """The LP of `_packing_lp` with its primal solution (the stochastic variant's LP of Appendix E,
    algorithms/sow/stochastic_lp.py, needs z); `demand` and `nodes` may be fractional."""
    n = value.size
    if n == 0:
        return PackingSolution(np.zeros(0), 0.0, 0.0)
    var_of, round_of = _running_rounds(start, duration)
    first = int(round_of.min())
    rows = round_of - first
    cap_matrix = sp.csr_matrix((demand[var_of].astype(float), (rows, var_of)), shape=(int(rows.max()) + 1, n))
    # rows the variables can never fill (at their upper bounds) are left out
    binding = np.flatnonzero(cap_matrix @ upper > nodes + 1e-12)
    cap_matrix = cap_matrix[binding]
    group_matrix = sp.csr_matrix((np.ones(n), (group, np.arange(n))), shape=(group_cap.size, n))
    a_ub = sp.vstack([group_matrix, cap_matrix], format="csr")
    b_ub = np.r_[group_cap, np.full(binding.size, float(nodes))]
    result = linprog(-value, A_ub=a_ub, b_ub=b_ub, bounds=np.column_stack([np.zeros(n), upper]), method="highs")
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the LP: {result.message}")
    x = np.clip(np.asarray(result.x, dtype=float), 0.0, upper)
    return PackingSolution(
        x, float(value @ x), _dual_bound(value, upper, a_ub, b_ub, -np.asarray(result.ineqlin.marginals, dtype=float))
    )


def _dual_bound(value, upper, a_ub, b_ub, y) -> float:
    """Weak duality for max value^T x, A x <= b, 0 <= x <= u: any y >= 0 with w = max(0, value -
    A^T y) gives b^T y + u^T w >= value^T x for every feasible x."""
    y = np.maximum(y, 0.0)
    w = np.maximum(value - a_ub.T @ y, 0.0)
    return float(b_ub @ y + upper @ w)


def hindsight_lp_bound(sequence: BirthSequence, realisation: Realisation, nodes: int) -> float:
    """The LP relaxation (x in [0, 1]) of `hindsight_optimum`'s model (paper 004, Sec. 2's
    offline benchmark): an upper bound on the hindsight optimum of this realisation, for
    instances too large to prove with CP-SAT (module docstring)."""
    nodes = _check_nodes(sequence, nodes)
    arrival, duration = _check_realisation(sequence, realisation)
    job, start, value = _hindsight_candidates(sequence, arrival, duration)
    concurrency = np.array([sow.concurrency for sow in sequence.jobs], dtype=np.int64)
    return _packing_lp(
        value, np.ones(value.size), job, np.ones(len(sequence)), concurrency[job], start, duration[job], nodes
    )


def ex_ante_bound(sequence: BirthSequence, nodes: int) -> float:
    """The optimum of the relaxed problem (paper 004, Sec. 4.1: tasks (a_i, d_i) of weight
    lambda_i, supply binding in expectation; the LP at the start of Appendix E, whose optimum is
    the benchmark OPT of Sec. 4.1): max sum V_j(s + d_i) z[j, i, s] over z >= 0 with
    sum_s z[j, i, s] <= lambda_i and, in every round, sum c_j z[j, i, s] over the tasks running
    in it <= N (module docstring).

    It bounds the expectation over realisations of the hindsight optimum. Proof: let s*_j be
    the start of job j in the hindsight optimum of each realisation (fixed tie-breaking) and
    z[j, i, s] = Pr[j draws point i and s*_j = s]; then sum_s z[j, i, s] <= Pr[point i] =
    lambda_i, each round's constraint is the expected load of feasible schedules (<= N), and
    the objective is E[welfare]: z is feasible, so the LP optimum is at least E[OPT]. (The same
    argument with the hindsight LP's solutions shows E[hindsight_lp_bound] <= ex_ante_bound.)"""
    nodes = _check_nodes(sequence, nodes)
    values, uppers, tasks, caps, demands, starts, durations = [], [], [], [], [], [], []
    for sow in sequence.jobs:
        for a, d, p in zip(sow.arrival.tolist(), sow.duration.tolist(), sow.probability.tolist()):
            s, v = candidate_starts(sow, a, d)
            if s.size == 0:
                continue
            values.append(v)
            uppers.append(np.full(s.size, p))
            tasks.append(np.full(s.size, len(caps), dtype=np.int64))
            caps.append(p)
            demands.append(np.full(s.size, sow.concurrency, dtype=np.int64))
            starts.append(s)
            durations.append(np.full(s.size, d, dtype=np.int64))
    if not values:
        return 0.0
    return _packing_lp(
        np.concatenate(values),
        np.concatenate(uppers),
        np.concatenate(tasks),
        np.array(caps),
        np.concatenate(demands),
        np.concatenate(starts),
        np.concatenate(durations),
        nodes,
    )
