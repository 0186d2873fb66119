"""Titan adapted to the online setting (paper 001, Sec. 5.1,
baseline i): at the start of each slot, solve the MILP of problem (4) (Sec. 2.2) over
the tasks that arrived in that slot only, on the capacity the tasks admitted before
leave (the ledger), maximising their welfare
    sum_i b_i u_i - sum_i q_in u_i f_i - sum e_ikt x_ikt
subject to (4b)-(4g), with each task's vendor n drawn uniformly at random. OR-Tools
CP-SAT replaces Gurobi; the model, its integer scaling and its exact reductions are
offline_optimum.Problem4 (pooled symmetric nodes, variables only where a task fits).

- Vendors: one draw `rng.integers(N)` per task, in task order, before any solve, for
  every task (also f_i = 0, where it is unused), so the number of draws, and with it
  the generator's state after the run, does not depend on the outcome.
- Limit: `time_limit` is CP-SAT's deterministic time per slot (work units, one worker,
  fixed seed), so the same inputs give the same outputs even when it binds. It is not
  wall-clock: on the project's 2-core machine one unit took about 4-8 s of wall time
  (100 A100s, medium load). The solver starts from a greedy hint (tasks by decreasing
  b_i - q_in, earliest finish, `greedy`). CP-SAT does not always keep a hint when the
  limit stops it (at high load on 100 nodes most slots ended worse than their greedy
  start), so a limited slot keeps the better of the solver's solution and the greedy
  start (`last_stats.greedy_slots` counts the slots where the greedy won): Titan is then
  never worse than its own starting heuristic, and exact where CP-SAT proves optimality.
  A slot where CP-SAT did not prove optimality counts in `last_stats.limited_slots`;
  one where it had no solution at all (its tasks are then rejected) also in
  `no_solution_slots`. `wall_limit` (seconds, default None) is a safety net that
  breaks determinism when it binds.
- Variants (ours, to measure the solver's share): `start="cheapest"` places each task of the
  greedy start at its cheapest schedule that fits (Alg. 2's DP with zero duals on the free
  (k, t): the time-of-use tariff that the MILP prices), not at its earliest finish;
  `solve=False` keeps the greedy start and never calls CP-SAT (Titan's greedy alone).
- Decision time: the slot's model building plus solving time divided by the number of
  its tasks, stored for each of them (Fig. 13 averages the solver time the same way).
- Payment: pay-as-bid (no pricing, outcome.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from algorithms.auction.earliest_finish import earliest_finish
from algorithms.auction.ledger import Ledger, Schedule
from algorithms.auction.offline_optimum import Problem4, capacity_left
from algorithms.auction.outcome import AuctionOutcome
from algorithms.auction.schedule_dp import find_schedule
from market.auction.lora_instance import LoraInstance


@dataclass
class TitanStats:
    slots: int = 0                    # slots with arrivals (one MILP each)
    limited_slots: int = 0            # the limit stopped CP-SAT before a proof of optimality
    no_solution_slots: int = 0        # ... and before any solution
    greedy_slots: int = 0             # limited slots where the greedy start was better and was kept
    solve_seconds: list[float] = field(default_factory=list)  # per slot, building + solving
    deterministic_time: list[float] = field(default_factory=list)  # per slot, CP-SAT's units


STARTS = ("earliest", "cheapest")


def _cheapest(instance: LoraInstance, ledger: Ledger, task: int, vendor: int, zero: np.ndarray) -> Schedule | None:
    """The schedule of least operating cost that fits next to `ledger` (`zero` duals in Alg. 2's DP)."""
    return find_schedule(instance, task, vendor, zero, zero, ledger.free_mask(task))[1]


def greedy(instance: LoraInstance, ledger: Ledger, batch: np.ndarray,
           vendors: dict[int, list[int]], start: str = "earliest") -> list[Schedule]:
    """The solver's starting point: tasks by decreasing b_i - q_in, each at its earliest
    finish (`start="cheapest"`: its cheapest fitting schedule) next to the ledger and the ones
    placed before, kept if its welfare is > 0."""
    trial = Ledger(instance)
    trial.compute_used, trial.memory_used = ledger.compute_used.copy(), ledger.memory_used.copy()
    trial.tasks_on = ledger.tasks_on.copy()
    tasks = instance.tasks
    vendor = {i: (vendors[i][0] if tasks.preprocess[i] else -1) for i in map(int, batch)}
    price = {i: (instance.vendor_price[i, n] if n >= 0 else 0.0) for i, n in vendor.items()}
    zero = np.zeros((instance.cluster.nodes, instance.cluster.horizon)) if start == "cheapest" else None
    placed = []
    for i in sorted(vendor, key=lambda i: (-(tasks.bid[i] - price[i]), i)):
        s = (earliest_finish(instance, trial, i, vendor[i]) if start == "earliest"
             else _cheapest(instance, trial, i, vendor[i], zero))
        if s is not None and tasks.bid[i] - price[i] - s.operating_cost(instance) > 0:
            trial.commit(s)
            placed.append(s)
    return placed


def _welfare(instance: LoraInstance, schedules: list[Schedule]) -> float:
    bids = instance.tasks.bid
    return float(sum(bids[s.task] - s.vendor_cost(instance) - s.operating_cost(instance) for s in schedules))


class Titan:
    name = "Titan"

    def __init__(self, time_limit: float = 2.0, seed: int = 0, wall_limit: float | None = None,
                 aggregate: bool = True, start: str = "earliest", solve: bool = True):
        if not time_limit > 0:
            raise ValueError(f"Titan time_limit must be > 0, got {time_limit!r}")
        if start not in STARTS:
            raise ValueError(f"Titan start must be one of {STARTS}, got {start!r}")
        self.start, self.solve = start, bool(solve)
        self.time_limit, self.seed = float(time_limit), int(seed)
        self.wall_limit, self.aggregate = wall_limit, aggregate
        self.last_stats = TitanStats()

    def run(self, instance: LoraInstance, rng: np.random.Generator) -> AuctionOutcome:
        out = AuctionOutcome.empty(instance)
        tasks = instance.tasks
        draws = rng.integers(instance.vendors, size=len(tasks))
        stats = self.last_stats = TitanStats()
        for slot in np.unique(tasks.arrival):
            started = time.perf_counter()
            batch = np.flatnonzero(tasks.arrival == slot)
            vendors = {int(i): [int(draws[i])] for i in batch}
            start = greedy(instance, out.ledger, batch, vendors, self.start)
            if self.solve:
                compute, memory = capacity_left(instance, out.ledger)
                problem = Problem4(instance, batch, compute, memory, vendors, self.aggregate)
                problem.hint(start)
                solution = problem.solve(self.time_limit, self.seed, self.wall_limit)
                chosen = solution.schedules
                if solution.limited and _welfare(instance, start) > _welfare(instance, chosen) + 1e-9:
                    chosen = start
                    stats.greedy_slots += 1
            else:
                solution, chosen = None, start
            for s in sorted(chosen, key=lambda s: s.task):
                if not out.ledger.fits(s):
                    raise AssertionError(f"Titan's schedule of task {s.task} exceeds a capacity (model bug)")
                out.admit(s, float(tasks.bid[s.task]))
            elapsed = time.perf_counter() - started
            out.decision_seconds[batch] = elapsed / len(batch)
            stats.slots += 1
            stats.solve_seconds.append(elapsed)
            if solution is not None:
                stats.limited_slots += int(solution.limited)
                stats.no_solution_slots += int(not solution.schedules
                                               and solution.status not in ("OPTIMAL", "FEASIBLE"))
                stats.deterministic_time.append(solution.deterministic_time)
        return out
