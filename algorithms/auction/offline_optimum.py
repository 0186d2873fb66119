"""Problem (4) of paper 001 (Sec. 2.2) as a CP-SAT model, and its
offline optimum "OPT" with perfect knowledge of every task (the benchmark of the
competitive ratio, Theorem 5, Fig. 12).

`Problem4` builds (4)-(4h) for a subset of the tasks on the capacity a ledger leaves;
`solve_offline` uses it for all tasks on an empty cluster, Titan (titan.py, Sec. 5.1)
for one slot's arrivals with the vendors fixed.

Model. Booleans u_i (admit), z_in (vendor n, f_i = 1 only), x on (task, node, slot):
  (4a) sum_n z_in = u_i if f_i = 1 (a vendor without admission or without
       pre-processing only costs q_in >= 0, so equality loses nothing);
  (4b)+(4c) sum_k x_ikt <= sum_{n: a_i + h_in <= t} z_in (f_i = 1), <= u_i (f_i = 0):
       at most one node per slot, and none before the chosen vendor's delay is over;
  (4d) x exists only for slots t <= d_i;
  (4e) sum steps_k x_ikt >= W_i u_i in chunks (below);
  (4f) sum_i steps_k x_ikt <= compute left in chunks; (4g) sum_i r_i x_ikt <= memory left.
x with u_i = 0 only cost e_ikt >= 0, so tying them to u_i loses nothing either.

Integers (CP-SAT needs them), all exact except money:
- computation: chunk = gcd of the per-task rates s_ik (`schedule_dp.chunk_size`, rates
  must be whole ksamples); a slot on node k is steps_k = s_ik / chunk chunks, task i
  needs W_i = ceil(M_i / chunk) (the work done is a multiple of the chunk, so this is
  (4e) exactly), node k holds floor(left / chunk) chunks (exact for the same reason);
- memory: r_i times the smallest power of ten (up to 10^6) that makes every r_i of the
  model whole (1 for the generator's whole-GB r_i); a node holds floor(scale * (C_km -
  r_b - used)): a sum of whole numbers is <= x iff it is <= floor(x), so a fractional
  r_b is exact;
- money: MONEY_SCALE = 100 units per cent, each b_i, q_in, e_ikt rounded to nearest.
  A plan's scaled objective is off by at most 0.005 cent per term, so the solver's
  optimum is within (number of terms used) * 0.01 cent of the best true welfare; the
  reported welfare is always recomputed from the schedules (AuctionOutcome.metrics).

Exact reductions (`aggregate=True`): x exists only where the task could run alone in
the capacity left (window a_i + min_n f_i h_in .. d_i, node with room for s_ik and
r_i). In each slot the nodes fall into classes of equal type, cost e_kt and capacity
left; nodes of a class are interchangeable. If a class has at least as many nodes as
tasks that could use it in the slot, any subset of those tasks can run there, one per
node: one pooled boolean per task replaces the per-node ones and needs no capacity
constraint. Otherwise the class keeps per-node booleans, with the symmetry broken by
non-increasing task counts along its nodes. `aggregate=False` keeps the literal
per-node model (the tests check both give the same optimum).

Solver: CP-SAT with one worker, a fixed seed and linearization_level 2 (the full LP
relaxation; the default level left large gaps with one worker); the limit is
`max_deterministic_time` (CP-SAT's deterministic work units, not seconds: one unit took
4-8 s of wall time here), so the same inputs always give the same answer even when the
limit stops the search. `Solution.optimal` says whether optimality was proven.
`Problem4.hint` passes a complete starting solution (Titan's greedy).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from algorithms.auction.ledger import EPS, Ledger, Schedule
from algorithms.auction.outcome import AuctionOutcome
from algorithms.auction.schedule_dp import chunk_size
from algorithms.common.cpsat import deterministic_solver
from market.auction.lora_instance import LoraInstance

MONEY_SCALE = 100  # model units per cent
MAX_MEMORY_DIGITS = 6


def money(value: float) -> int:
    return int(round(float(value) * MONEY_SCALE))


def memory_scale(values: np.ndarray) -> int:
    """The smallest 10**d (d <= 6) making every value whole (within 1e-9)."""
    values = np.asarray(values, dtype=float)
    for d in range(MAX_MEMORY_DIGITS + 1):
        scaled = values * 10**d
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 10**d
    raise ValueError(f"task memory needs more than {MAX_MEMORY_DIGITS} decimals: {values}")


def capacity_left(instance: LoraInstance, ledger: Ledger | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(compute, memory) left per node and slot: C_kp - used, C_km - r_b - used (K x T)."""
    c = instance.cluster
    compute = np.repeat(c.compute[:, None], c.horizon, axis=1)
    memory = np.repeat((c.memory - c.base_model_gb)[:, None], c.horizon, axis=1)
    if ledger is not None:
        compute = compute - ledger.compute_used
        memory = memory - ledger.memory_used
    return compute, memory


@dataclass
class Solution:
    status: str  # CP-SAT status name: OPTIMAL, FEASIBLE, UNKNOWN, ...
    optimal: bool
    objective: float  # model objective in cents (0 without a solution)
    bound: float  # CP-SAT's best bound in cents
    schedules: list[Schedule]
    wall_seconds: float
    deterministic_time: float

    @property
    def limited(self) -> bool:
        """Stopped by the limit (a solution that is not proven optimal, or none)."""
        return not self.optimal


class Problem4:
    """Problem (4) for `tasks` on the capacity left (`compute_left`, `memory_left`, K x T).

    `vendors[i]`: the vendors task i may use (f_i = 1; Titan passes one), ignored if f_i = 0.
    """

    def __init__(
        self,
        instance: LoraInstance,
        tasks: Sequence[int],
        compute_left: np.ndarray,
        memory_left: np.ndarray,
        vendors: dict[int, Sequence[int]] | None = None,
        aggregate: bool = True,
    ):
        self.instance = instance
        self.tasks = [int(i) for i in tasks]
        c, job = instance.cluster, instance.tasks
        self.model = m = cp_model.CpModel()
        chunk = chunk_size(c.task_rate)
        steps = np.rint(c.task_rate / chunk).astype(np.int64)
        cap_p = np.floor(compute_left / chunk + 1e-9).astype(np.int64)
        scale = memory_scale(job.memory[self.tasks]) if self.tasks else 1
        cap_m = np.floor((memory_left + EPS) * scale).astype(np.int64)
        cost = c.task_cost()
        horizon = c.horizon

        self.u: dict[int, cp_model.IntVar] = {}
        self.z: dict[int, dict[int, cp_model.IntVar]] = {}
        gates: dict[int, list[tuple[int, cp_model.LinearExprT]]] = {}  # task -> [(first slot, gate)]
        mem: dict[int, int] = {}
        objective = []
        windows: dict[int, tuple[int, int]] = {}
        for i in self.tasks:
            u = self.u[i] = m.new_bool_var(f"u{i}")
            objective.append(money(job.bid[i]) * u)
            mem[i] = int(round(job.memory[i] * scale))
            a, d = int(job.arrival[i]), min(int(job.deadline[i]), horizon - 1)
            if job.preprocess[i]:
                allowed = list(range(instance.vendors)) if vendors is None else [int(n) for n in vendors[i]]
                if not allowed or min(allowed) < 0:
                    raise ValueError(f"task {i} needs a vendor (4a), got {allowed}")
                if len(allowed) == 1:
                    self.z[i] = {allowed[0]: u}
                else:
                    self.z[i] = {n: m.new_bool_var(f"z{i}_{n}") for n in allowed}
                    m.add(sum(self.z[i].values()) == u)
                for n, zn in self.z[i].items():
                    objective.append(-money(instance.vendor_price[i, n]) * zn)
                starts = sorted({a + int(instance.vendor_delay[i, n]) for n in allowed})
                gates[i] = [
                    (s, sum(zn for n, zn in self.z[i].items() if a + int(instance.vendor_delay[i, n]) <= s))
                    for s in starts
                ]
            else:
                gates[i] = [(a, u)]
            windows[i] = (gates[i][0][0], d)

        # x variables by slot: per node class, pooled or per node.
        self.pooled: list[tuple[int, int, np.ndarray, dict[int, cp_model.IntVar]]] = []  # (t, _, nodes, {i: var})
        self.per_node: list[tuple[int, int, dict[int, cp_model.IntVar]]] = []  # (t, k, {i: var})
        self.node_classes: list[list[int]] = []  # indices into per_node of one class each
        in_slot: dict[tuple[int, int], list] = {}  # (i, t) -> vars
        work: dict[int, list] = {i: [] for i in self.tasks}
        first = min((w[0] for w in windows.values()), default=0)
        last = max((w[1] for w in windows.values()), default=-1)
        for t in range(max(first, 0), last + 1):
            live = [i for i in self.tasks if windows[i][0] <= t <= windows[i][1]]
            if not live:
                continue
            classes: dict[tuple, list[int]] = {}
            for k in range(c.nodes):
                if steps[k] <= cap_p[k, t]:
                    key = (int(c.node_type[k]), float(cost[k, t]), int(cap_p[k, t]), int(cap_m[k, t]))
                    classes.setdefault(key, []).append(k)
            for (_, e, cp, cm), nodes in classes.items():
                fit = [i for i in live if mem[i] <= cm]
                if not fit:
                    continue
                k0 = nodes[0]
                e_units = money(e)
                if aggregate and len(nodes) >= len(fit):
                    xs = {i: m.new_bool_var(f"p{i}_{t}_{k0}") for i in fit}
                    self.pooled.append((t, k0, np.array(nodes), xs))
                    groups = [xs]
                else:
                    used = nodes[: len(fit)] if aggregate else nodes
                    groups = []
                    self.node_classes.append(list(range(len(self.per_node), len(self.per_node) + len(used))))
                    for k in used:
                        xs = {i: m.new_bool_var(f"x{i}_{k}_{t}") for i in fit}
                        self.per_node.append((t, k, xs))
                        groups.append(xs)
                        if steps[k] * len(fit) > cp:
                            m.add(sum(int(steps[k]) * x for x in xs.values()) <= int(cp))
                        if sum(mem[i] for i in fit) > cm:
                            m.add(sum(mem[i] * x for i, x in xs.items()) <= int(cm))
                    if aggregate:
                        for g, h in zip(groups, groups[1:]):
                            m.add(sum(g.values()) >= sum(h.values()))
                for xs in groups:
                    for i, x in xs.items():
                        in_slot.setdefault((i, t), []).append(x)
                        work[i].append(int(steps[k0]) * x)
                        if e_units:
                            objective.append(-e_units * x)
        for (i, t), xs in in_slot.items():
            gate = [g for s, g in gates[i] if s <= t][-1]
            m.add(sum(xs) <= gate)
        self.need = {}
        for i in self.tasks:
            need = max(1, math.ceil(job.work[i] / chunk - 1e-9))
            self.need[i] = need
            if work[i]:
                m.add(sum(work[i]) >= need * self.u[i])
            else:
                m.add(self.u[i] == 0)
        m.maximize(sum(objective))

    def hint(self, schedules: Sequence[Schedule]) -> None:
        """A complete solution hint from schedules of the model's tasks that fit the
        capacity left together (each with an allowed vendor). Nodes of a class are
        relabelled by decreasing load, so the hint meets the symmetry breaking."""
        runs = {s.task: s for s in schedules}
        at: dict[tuple[int, int], set[int]] = {}
        for s in schedules:
            for t, k in zip(s.slots, s.nodes):
                at.setdefault((int(t), int(k)), set()).add(s.task)
        values: dict[int, tuple[cp_model.IntVar, bool]] = {}
        for i, u in self.u.items():
            values[u.index] = (u, i in runs)
        for i, zs in self.z.items():
            for n, zn in zs.items():
                values[zn.index] = (zn, i in runs and runs[i].vendor == n)
        for t, _, nodes, xs in self.pooled:
            inside = set().union(*(at.get((t, int(k)), set()) for k in nodes))
            for i, x in xs.items():
                values[x.index] = (x, i in inside)
        for group in self.node_classes:
            t = self.per_node[group[0]][0]
            nodes = sorted((self.per_node[j][1] for j in group), key=lambda k: -len(at.get((t, k), ())))
            for j, k in zip(group, nodes):
                here = at.get((t, k), set())
                for i, x in self.per_node[j][2].items():
                    values[x.index] = (x, i in here)
        for var, value in values.values():
            self.model.add_hint(var, int(value))

    def solve(self, time_limit: float | None = None, seed: int = 0, wall_limit: float | None = None) -> Solution:
        """`time_limit`: CP-SAT deterministic time (deterministic); `wall_limit`: seconds
        (breaks determinism when it binds, a safety net only)."""
        solver = deterministic_solver(time_limit, seed, wall_limit)
        started = time.perf_counter()
        status = solver.solve(self.model)
        wall = time.perf_counter() - started
        name = solver.status_name(status)
        found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        if status == cp_model.INFEASIBLE or status == cp_model.MODEL_INVALID:
            raise RuntimeError(f"problem (4) model is {name}: rejecting every task is always feasible")
        schedules = self._decode(solver) if found else []
        return Solution(
            name,
            status == cp_model.OPTIMAL,
            solver.objective_value / MONEY_SCALE if found else 0.0,
            solver.best_objective_bound / MONEY_SCALE if found else math.inf,
            schedules,
            wall,
            solver.deterministic_time,
        )

    def _decode(self, solver: cp_model.CpSolver) -> list[Schedule]:
        job = self.instance.tasks
        runs: dict[int, list[tuple[int, int]]] = {i: [] for i in self.tasks if solver.boolean_value(self.u[i])}
        for t, k, xs in self.per_node:
            for i, x in xs.items():
                if i in runs and solver.boolean_value(x):
                    runs[i].append((t, k))
        for t, _, nodes, xs in self.pooled:
            chosen = [i for i, x in xs.items() if i in runs and solver.boolean_value(x)]
            for i, k in zip(chosen, nodes):  # one node each (the class has enough)
                runs[i].append((t, int(k)))
        schedules = []
        for i, pairs in runs.items():
            pairs.sort()
            vendor = -1
            if job.preprocess[i]:
                vendor = next(n for n, zn in self.z[i].items() if solver.boolean_value(zn))
            schedules.append(
                Schedule(
                    i,
                    vendor,
                    np.array([t for t, _ in pairs], dtype=np.int64),
                    np.array([k for _, k in pairs], dtype=np.int64),
                )
            )
        return schedules


@dataclass
class OfflineOptimum:
    outcome: AuctionOutcome
    solution: Solution

    @property
    def optimal(self) -> bool:
        return self.solution.optimal

    @property
    def welfare(self) -> float:
        return self.outcome.metrics()["welfare"]


class NotProvenOptimal(RuntimeError):
    pass


def offline_optimum(
    instance: LoraInstance, time_limit: float | None = 60.0, seed: int = 0, aggregate: bool = True
) -> OfflineOptimum:
    """Problem (4) over all tasks on the empty cluster, every vendor allowed; pay-as-bid."""
    started = time.perf_counter()
    out = AuctionOutcome.empty(instance)
    compute, memory = capacity_left(instance)
    problem = Problem4(instance, range(len(instance.tasks)), compute, memory, None, aggregate)
    solution = problem.solve(time_limit, seed)
    for s in sorted(solution.schedules, key=lambda s: s.task):
        if not out.ledger.fits(s):
            raise AssertionError(f"OPT's schedule of task {s.task} exceeds a capacity (model bug)")
        out.admit(s, float(instance.tasks.bid[s.task]))
    out.extra_seconds = time.perf_counter() - started
    return OfflineOptimum(out, solution)


def solve_offline(
    instance: LoraInstance,
    time_limit: float | None = 60.0,
    seed: int = 0,
    aggregate: bool = True,
    require_optimal: bool = True,
) -> AuctionOutcome:
    """The offline optimum "OPT" of problem (4); raises NotProvenOptimal if the limit
    stopped CP-SAT before proving optimality (unless `require_optimal=False`).
    Meant for small instances (say <= 6 nodes, <= 30 slots, <= 40 tasks)."""
    result = offline_optimum(instance, time_limit, seed, aggregate)
    if require_optimal and not result.optimal:
        sol = result.solution
        raise NotProvenOptimal(
            f"CP-SAT stopped with status {sol.status} (objective {sol.objective:.2f}, bound {sol.bound:.2f} cents)"
        )
    return result.outcome


def optimal_welfare(instance: LoraInstance, **kwargs) -> float:
    """OPT's social welfare (eq. 3), proven optimal (raises otherwise)."""
    return solve_offline(instance, **kwargs).metrics()["welfare"]


def competitive_ratio(instance: LoraInstance, online: AuctionOutcome, **kwargs) -> float:
    """Empirical competitive ratio OPT / online welfare (Fig. 12): 1 if both are 0,
    inf if the online welfare is <= 0 < OPT."""
    opt = optimal_welfare(instance, **kwargs)
    got = online.metrics()["welfare"]
    if got > 0:
        return opt / got
    return 1.0 if opt <= 1e-9 else math.inf


class OPT:
    """The offline optimum as a mechanism (same interface as the online ones)."""

    name = "OPT"

    def __init__(self, time_limit: float | None = 60.0, seed: int = 0, require_optimal: bool = True):
        self.time_limit, self.seed, self.require_optimal = time_limit, seed, require_optimal

    def run(self, instance: LoraInstance, rng: np.random.Generator | None = None) -> AuctionOutcome:
        return solve_offline(instance, self.time_limit, self.seed, require_optimal=self.require_optimal)
