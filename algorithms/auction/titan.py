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
- Objective (`objective`; docs/auction/model.md): the paper states none for its
  Titan, only that Titan [4] "targets the offline scenario and ignores the pricing, deadline,
  and data pre-processing issues" (Sec. 1). `welfare` (the default, the name `Titan`) is
  problem (4)'s objective above, ours. `throughput` is bid-blind: the most tasks admitted
  (each one finishing by its deadline), then, among plans admitting as many, the least vendor
  plus operating cost. It is problem (4) with every bid of the slot replaced by one constant B
  larger than the batch's largest possible cost (sum over its tasks of q_in plus the dearest
  node of every slot of its window, doubled, plus a dollar), so one more task outweighs any
  cost: `throughput_instance`. The greedy start takes the tasks by increasing work M_i (then
  q_in, then index: the fewest slots first, which fits the most tasks) and keeps every one that
  fits; "the better of the solver and the greedy" compares the same count-then-cost objective.
  Welfare and payments are still reported with the true bids.
- Payment: pay-as-bid (no pricing, outcome.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from algorithms.auction.earliest_finish import earliest_finish
from algorithms.auction.ledger import Ledger, Schedule
from algorithms.auction.offline_optimum import Problem4, capacity_left
from algorithms.auction.outcome import AuctionOutcome
from algorithms.auction.schedule_dp import find_schedule
from market.auction.lora_instance import LoraInstance


@dataclass
class TitanStats:
    slots: int = 0  # slots with arrivals (one MILP each)
    limited_slots: int = 0  # the limit stopped CP-SAT before a proof of optimality
    no_solution_slots: int = 0  # ... and before any solution
    greedy_slots: int = 0  # limited slots where the greedy start was better and was kept
    solve_seconds: list[float] = field(default_factory=list)  # per slot, building + solving
    deterministic_time: list[float] = field(default_factory=list)  # per slot, CP-SAT's units


STARTS = ("earliest", "cheapest")
OBJECTIVES = ("welfare", "throughput")
ORDERS = ("value", "work")


def _cheapest(instance: LoraInstance, ledger: Ledger, task: int, vendor: int, zero: np.ndarray) -> Schedule | None:
    """The schedule of least operating cost that fits next to `ledger` (`zero` duals in Alg. 2's DP)."""
    return find_schedule(instance, task, vendor, zero, zero, ledger.free_mask(task))[1]


def greedy(
    instance: LoraInstance,
    ledger: Ledger,
    batch: np.ndarray,
    vendors: dict[int, list[int]],
    start: str = "earliest",
    order: str = "value",
) -> list[Schedule]:
    """The solver's starting point: tasks by decreasing b_i - q_in (`order="work"`: by
    increasing M_i, then q_in), each at its earliest finish (`start="cheapest"`: its cheapest
    fitting schedule) next to the ledger and the ones placed before, kept if its welfare is > 0."""
    trial = Ledger(instance)
    trial.compute_used, trial.memory_used = ledger.compute_used.copy(), ledger.memory_used.copy()
    trial.tasks_on = ledger.tasks_on.copy()
    tasks = instance.tasks
    vendor = {i: (vendors[i][0] if tasks.preprocess[i] else -1) for i in map(int, batch)}
    price = {i: (instance.vendor_price[i, n] if n >= 0 else 0.0) for i, n in vendor.items()}
    zero = np.zeros((instance.cluster.nodes, instance.cluster.horizon)) if start == "cheapest" else None
    placed = []
    if order == "value":
        ranked = sorted(vendor, key=lambda i: (-(tasks.bid[i] - price[i]), i))
    elif order == "work":
        ranked = sorted(vendor, key=lambda i: (tasks.work[i], price[i], i))
    else:
        raise ValueError(f"greedy order must be one of {ORDERS}, got {order!r}")
    for i in ranked:
        s = (
            earliest_finish(instance, trial, i, vendor[i])
            if start == "earliest"
            else _cheapest(instance, trial, i, vendor[i], zero)
        )
        if s is not None and tasks.bid[i] - price[i] - s.operating_cost(instance) > 0:
            trial.commit(s)
            placed.append(s)
    return placed


def _welfare(instance: LoraInstance, schedules: list[Schedule]) -> float:
    bids = instance.tasks.bid
    return float(sum(bids[s.task] - s.vendor_cost(instance) - s.operating_cost(instance) for s in schedules))


def throughput_instance(instance: LoraInstance, batch: np.ndarray, vendors: dict[int, list[int]]) -> LoraInstance:
    """The world with every task of `batch` bidding one constant B and every other task 0:
    B = 2 x (sum over the batch of the vendor price plus, for every slot of the task's window
    from its earliest start to its deadline, the dearest node's e_kt) + 100 cents. A task runs
    on at most one node per slot (4b), so the sum bounds the cost of any plan for the batch,
    and problem (4) on this world maximises the number of admitted tasks first and minimises
    their cost second (the doubling and the dollar cover the rounding of money to whole units
    in `offline_optimum.money`)."""
    tasks, c = instance.tasks, instance.cluster
    dearest = np.concatenate(([0.0], np.cumsum(c.task_cost().max(axis=0))))
    bound = 0.0
    for i in map(int, batch):
        n = vendors[i][0] if tasks.preprocess[i] else -1
        first = int(tasks.arrival[i]) + (int(instance.vendor_delay[i, n]) if n >= 0 else 0)
        last = min(int(tasks.deadline[i]), c.horizon - 1)
        bound += float(instance.vendor_price[i, n]) if n >= 0 else 0.0
        if first <= last:
            bound += float(dearest[last + 1] - dearest[first])
    bids = np.zeros(len(tasks))
    bids[batch] = 2.0 * bound + 100.0
    return replace(instance, tasks=replace(tasks, bid=bids))


class Titan:
    name = "Titan"

    def __init__(
        self,
        time_limit: float = 2.0,
        seed: int = 0,
        wall_limit: float | None = None,
        aggregate: bool = True,
        start: str = "earliest",
        solve: bool = True,
        objective: str = "welfare",
    ):
        if not time_limit > 0:
            raise ValueError(f"Titan time_limit must be > 0, got {time_limit!r}")
        if start not in STARTS:
            raise ValueError(f"Titan start must be one of {STARTS}, got {start!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"Titan objective must be one of {OBJECTIVES}, got {objective!r}")
        self.start, self.solve, self.objective = start, bool(solve), objective
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
            if self.objective == "welfare":
                model, order = instance, "value"
            else:
                model, order = throughput_instance(instance, batch, vendors), "work"
            start = greedy(model, out.ledger, batch, vendors, self.start, order)
            if self.solve:
                compute, memory = capacity_left(instance, out.ledger)
                problem = Problem4(model, batch, compute, memory, vendors, self.aggregate)
                problem.hint(start)
                solution = problem.solve(self.time_limit, self.seed, self.wall_limit)
                chosen = solution.schedules
                if solution.limited and _welfare(model, start) > _welfare(model, chosen) + 1e-9:
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
                stats.no_solution_slots += int(
                    not solution.schedules and solution.status not in ("OPTIMAL", "FEASIBLE")
                )
                stats.deterministic_time.append(solution.deterministic_time)
        return out
