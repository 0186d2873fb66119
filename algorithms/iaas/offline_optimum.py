"""The hindsight-optimal cost of a small job stream (paper 003, Sec. III-A billing, IV, V-A),
solved with OR-Tools CP-SAT: a lower bound on the cost of every policy of the family whose bid
is in `bids` (`algorithms.iaas.policies`: Dynalloc {beta0, beta, b} and the theta policies).

The problem. Every job j must process ceil(z_j - 1e-9) instance-slots of work (one instance
processes one unit per slot and a job's processed work only grows by whole instance-slots,
job_execution.py) in its window a_j..e_j, e_j = a_j + d_j - 1, with at most delta_j instances
at once, knowing the whole price path in advance. Its instances are hour-blocks (an hour = Len =
12 slots) launched at any slot s of the window:
  * on-demand: `on_demand` per block, covering s..min(s + 11, e_j) (Sec. III-A: a started hour
    is charged in full; a paid instance may idle);
  * spot at a bid b, allowed only if prices[s - 1] <= b: it runs while every price since s is
    at or below b. If the first price above b comes at a slot k in s + 1..min(s + 11, e_j), the
    cloud ends the block after slot k - 1 and the block is free (Sec. III-A: "a partial hour of
    execution is not charged in the case where its instances are terminated by the cloud");
    otherwise it covers s..min(s + 11, e_j) and costs prices[s - 1], the price of its first
    slot (the price charged at the allocation, p_j^i), whether it runs its whole hour or the
    tenant stops it (job done, deadline);
  * self-owned: R instances shared by all jobs, free, at most R in use in any slot.

Model. Integer n[j, s, c] >= 0: the number of blocks of kind c launched for job j at slot s;
w[j, t] the instance-slots the cloud's blocks do for j in slot t, w[j, t] <= sum of the n of
the blocks covering t; y[j, t] the self-owned instances j uses in t; w + y <= delta_j;
sum_j y[j, t] <= R; sum_t (w + y) >= ceil(z_j - 1e-9); minimise the money of the blocks.

Readings (each one keeps the model a relaxation of job_execution.py's policies, so its optimum
is at most any of their costs; tests/iaas/test_offline_optimum.py checks this on random streams):
  * Blocks start at any slot, not only at the job's hourly updates a_j + i Len (Sec. III-C rule
    (ii) binds the policies, not the optimum), and each block may take its own bid from `bids`
    (a policy bids one b for every hour of every job).
  * A job's instances belong to it (Sec. III-B: instances are allocated to a job): a block is
    never shared with another job, and it lives inside the job's window. A free block must be
    ended by the cloud at or before e_j (k <= e_j): a policy's job is done by e_j and then
    stops its instances, which makes an unterminated spot hour paid (job_execution.py); a
    hindsight tenant who kept an idle instance past the deadline to have it killed for free
    is not modelled.
  * The self-owned instances of a job may change from slot to slot (y[j, t]); the policies
    hold a fixed r_j over the whole window (Sec. IV-A, eq. (2)-(5)).
  * The spot hour's price is the first slot's (the paper's p_j^i, job_execution.py's
    `hour_price`); a price equal to the bid keeps the instances (job_execution.py: lost when
    price > bid).
  * A job whose d_j delta_j < ceil(z_j - 1e-9) cannot finish under any plan: ValueError.

Blocks kept (`start_blocks`). At one start s a spot block is fixed by its last slot and its
cost, so bids giving the same pair are one block; of the remaining blocks (on-demand and spot),
a block is dropped when another at the same start covers at least as many slots for at most
its cost (ties: the first of on-demand, then bids in increasing order). What is left is at
most two blocks per start: the longest free spot block, and the cheaper of on-demand and the
surviving spot hour when that one is not free. Dropping a dominated block cannot raise the
optimum (replace it by the block that dominates it).

Money (CP-SAT needs integers): MONEY_SCALE = 10^6 units per dollar, each block's cost rounded
to the nearest unit. `cost` and `job_cost` are recomputed in dollars from the solution's block
counts. The model is exact when every price is a multiple of 10^-6 dollars; otherwise the
reported cost is within (blocks of the solution + blocks of an optimum) x 0.5e-6 dollars of the
true optimum. `bound` is CP-SAT's bound on the scaled objective, in dollars.

Groups (`independent_groups`). Without self-owned instances every job is its own model; with
R > 0 a model holds a maximal run of jobs whose windows overlap (nothing else links jobs).

Solver: `algorithms.common.cpsat.deterministic_solver` (one worker, fixed seed,
linearization_level 2, `time_limit` in deterministic time per group) plus symmetry_level 4, so
the same input always gives the same answer; `status` is OPTIMAL (every group proven) or
FEASIBLE (a limit stopped a proof: `cost` is then an upper bound of the optimum and `bound` a
lower one); no plan within the limit raises RuntimeError.

Sizes, measured once on the 2-core machine during development (the timing script is not
kept): the first K jobs of
the paper's law (`JobParams()` defaults: delta 20, z_j = 12 delta x, x in [0.5, 10] hours,
x0 = 3, so d_j up to 360 slots), exponential prices of mean MEAN, the default bids, R = 0 and
R = 10, five seeds, the whole call (median / max seconds):
  * mean 0.11 (the family's default): K = 5: 0.09 / 0.11 (R = 0), 0.04 / 0.10 (R = 10);
    K = 10: 0.10 / 0.28, 0.16 / 0.19; K = 20: 0.15 / 0.22, 0.12 / 0.14; K = 50: 0.51 / 0.65,
    0.75 / 0.84; K = 100: 1.5 / 1.9, 1.6 / 2.4; all OPTIMAL.
  * mean 1.1 (the paper's literal mean: most hours start above every bid, spot hours are short
    and free): R = 0 stays easy (K = 20: 0.22 / 0.61 s, OPTIMAL); R > 0 is hard: K = 5: median
    0.47 s but one seed of five FEASIBLE at a 20 s wall limit, K = 10: median 20 s (FEASIBLE,
    the limit) -- expect only bounds there, or use small R, few jobs or short deadlines.
The tests' worlds (1-3 jobs, d_j <= 30, delta_j <= 3) solve in milliseconds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from algorithms.common.cpsat import deterministic_solver
from algorithms.iaas.job_execution import LEN, ON_DEMAND_PRICE
from algorithms.iaas.policies import BIDS

MONEY_SCALE = 10**6  # units per dollar
TIME_LIMIT = 60.0  # CP-SAT deterministic time units
TOL = 1e-9  # work units, as job_execution.TOL
# Blocks and self-owned instances are highly symmetric: level 4 halved the total time of ten
# hard groups (R > 0, prices of mean 1.1 or with spikes; module docstring).
SYMMETRY_LEVEL = 4


@dataclass(frozen=True)
class Block:
    """An hour-block of one job's instances launched at slot `start` (1-based): it covers
    `start`..`last` and costs `price` per instance (0 when the cloud ends it: `free`). `bid` is
    None for on-demand."""

    job: int
    start: int
    last: int
    bid: float | None
    free: bool
    price: float

    @property
    def kind(self) -> str:
        return "on_demand" if self.bid is None else "spot"

    def covers(self, t: int) -> bool:
        return self.start <= t <= self.last


@dataclass(frozen=True, eq=False)
class OfflineOptimum:
    """The hindsight optimum of one job stream. `blocks` and `counts` are the launched blocks
    and how many of each; `cloud_work[j, t - 1]` and `self_owned[j, t - 1]` the instance-slots
    of job j in slot t (t = 1..horizon) done by the cloud's blocks and by self-owned instances."""

    cost: float
    job_cost: np.ndarray
    status: str
    bound: float
    solve_seconds: float
    deterministic_time: float
    total_work: float
    blocks: tuple[Block, ...]
    counts: np.ndarray
    cloud_work: np.ndarray
    self_owned: np.ndarray

    @property
    def optimal(self) -> bool:
        return self.status == "OPTIMAL"

    @property
    def unit_cost(self) -> float:
        """alpha (Sec. V-A) as `StreamCost.unit_cost`: total cost / total work, per
        instance-hour of work."""
        return float(self.cost / self.total_work * LEN) if self.total_work > 0 else 0.0


def work_needed(size: float) -> int:
    """Whole instance-slots a job of size z needs: ceil(z - 1e-9) (job_execution.py counts a
    job done once its work left is <= 1e-9)."""
    return max(0, math.ceil(size - TOL))


def spot_block(prices: np.ndarray, job: int, start: int, end: int, bid: float) -> Block | None:
    """The spot hour launched for `job` at slot `start` with bid `bid`, the job's window ending
    at `end` (Sec. III-A): None if the first price is above the bid; free and ended at k - 1 if
    the first price above the bid is at a slot k <= min(start + 11, end); otherwise paid at the
    first slot's price."""
    first = float(prices[start - 1])
    if first > bid:
        return None
    last = min(start + LEN - 1, end)
    above = np.flatnonzero(prices[start:last] > bid)
    if above.size:
        return Block(job, start, start + int(above[0]), bid, True, 0.0)
    return Block(job, start, last, bid, False, first)


def start_blocks(prices: np.ndarray, job: int, start: int, end: int, bids, on_demand: float) -> list[Block]:
    """The undominated blocks at one start (module docstring): on-demand and every bid's spot
    hour, less those another block covers as long for at most their cost."""
    candidates = [Block(job, start, min(start + LEN - 1, end), None, False, float(on_demand))]
    candidates += [b for b in (spot_block(prices, job, start, end, bid) for bid in sorted(bids)) if b is not None]
    kept: list[Block] = []
    for block in sorted(candidates, key=lambda b: (b.price, -b.last)):
        if all(block.last > other.last for other in kept):
            kept.append(block)
    return kept


def job_blocks(prices: np.ndarray, job: int, arrival: int, deadline: int, bids, on_demand: float) -> list[Block]:
    end = arrival + deadline - 1
    return [b for s in range(arrival, end + 1) for b in start_blocks(prices, job, s, end, bids, on_demand)]


def _money(x: float) -> int:
    return round(x * MONEY_SCALE)


def _check_inputs(jobs, prices, instances, bids, on_demand, time_limit) -> tuple[np.ndarray, tuple[float, ...]]:
    prices = np.asarray(prices, dtype=float)
    if prices.ndim != 1:
        raise ValueError(f"prices must be one price per slot (1-D), got shape {prices.shape}")
    if prices.size < jobs.horizon():
        raise ValueError(f"prices covers {prices.size} slots, the jobs need {jobs.horizon()}")
    if not np.all(np.isfinite(prices)) or np.any(prices < 0):
        raise ValueError("prices must be finite and >= 0")
    bids = tuple(float(b) for b in bids)
    if not bids:
        raise ValueError("bids must hold at least one bid")
    if not all(math.isfinite(b) and b >= 0 for b in bids):
        raise ValueError(f"bids must be finite and >= 0, got {list(bids)}")
    if isinstance(instances, bool) or int(instances) != instances or instances < 0:
        raise ValueError(f"instances (R) must be an integer >= 0, got {instances!r}")
    if not (math.isfinite(on_demand) and on_demand >= 0):
        raise ValueError(f"on_demand must be a finite price >= 0, got {on_demand!r}")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
    if len(jobs) and (
        np.any(jobs.arrival < 1) or np.any(jobs.deadline < 1) or np.any(jobs.parallelism < 0) or np.any(jobs.size < 0)
    ):
        raise ValueError("jobs need arrival >= 1, deadline >= 1, parallelism >= 0 and size >= 0")
    short = [j for j in range(len(jobs)) if jobs.deadline[j] * jobs.parallelism[j] < work_needed(jobs.size[j])]
    if short:
        raise ValueError(f"jobs {short} cannot finish by their deadlines (d_j delta_j < z_j)")
    return prices, bids


def independent_groups(jobs, instances: int) -> list[list[int]]:
    """The jobs that must be solved together. Without self-owned instances nothing links two
    jobs (a block serves one job): each job alone. With R > 0 the self-owned constraint links
    jobs whose windows overlap, so a group is a maximal run of jobs (by arrival) whose windows
    overlap, transitively."""
    order = sorted(range(len(jobs)), key=lambda j: (int(jobs.arrival[j]), j))
    if instances == 0:
        return [[j] for j in order]
    groups: list[list[int]] = []
    reach = 0
    for j in order:
        end = int(jobs.arrival[j] + jobs.deadline[j] - 1)
        if groups and int(jobs.arrival[j]) <= reach:
            groups[-1].append(j)
            reach = max(reach, end)
        else:
            groups.append([j])
            reach = end
    return groups


@dataclass
class _Model:
    model: cp_model.CpModel
    blocks: list[Block]
    counts: list[cp_model.IntVar]
    cloud: dict[tuple[int, int], cp_model.IntVar]
    own: dict[tuple[int, int], cp_model.IntVar]


def build_model(jobs, members: list[int], blocks: list[Block], instances: int) -> _Model:
    """The CP-SAT model of the module docstring for the jobs `members` over their candidate
    `blocks`."""
    model = cp_model.CpModel()
    counts = [model.new_int_var(0, int(jobs.parallelism[b.job]), f"n{i}") for i, b in enumerate(blocks)]
    covering: dict[tuple[int, int], list[cp_model.IntVar]] = {}
    for block, n in zip(blocks, counts):
        for t in range(block.start, block.last + 1):
            covering.setdefault((block.job, t), []).append(n)
    cloud, own = {}, {}
    for j in members:
        delta = int(jobs.parallelism[j])
        slots = range(int(jobs.arrival[j]), int(jobs.arrival[j] + jobs.deadline[j]))
        for t in slots:
            cloud[j, t] = model.new_int_var(0, delta, f"w{j}_{t}")
            model.add(cloud[j, t] <= sum(covering.get((j, t), [])))
            if instances > 0:
                own[j, t] = model.new_int_var(0, min(delta, instances), f"y{j}_{t}")
                model.add(cloud[j, t] + own[j, t] <= delta)
        model.add(sum(cloud[j, t] + own.get((j, t), 0) for t in slots) >= work_needed(jobs.size[j]))
    users: dict[int, list[cp_model.IntVar]] = {}
    for (_, t), y in own.items():
        users.setdefault(t, []).append(y)
    for ys in users.values():
        if len(ys) > 1:
            model.add(sum(ys) <= instances)
    model.minimize(sum((_money(b.price) * n for b, n in zip(blocks, counts) if b.price > 0), start=0))
    return _Model(model, blocks, counts, cloud, own)


@dataclass
class _Solved:
    """The solution of every group, gathered."""

    counts: dict[Block, int]
    cloud: dict[tuple[int, int], int]
    own: dict[tuple[int, int], int]
    optimal: bool = True
    bound: float = 0.0
    deterministic_time: float = 0.0


def _solve_group(
    jobs, members: list[int], prices, instances, bids, on_demand, time_limit, wall_limit, out: _Solved
) -> None:
    blocks = [
        b for j in members for b in job_blocks(prices, j, int(jobs.arrival[j]), int(jobs.deadline[j]), bids, on_demand)
    ]
    built = build_model(jobs, members, blocks, instances)
    solver = deterministic_solver(time_limit, wall_limit=wall_limit)
    solver.parameters.symmetry_level = SYMMETRY_LEVEL
    status = solver.solve(built.model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(
            f"CP-SAT found no plan for jobs {members} within deterministic time {time_limit} "
            f"(status {solver.status_name(status)})"
        )
    out.counts.update((b, solver.value(n)) for b, n in zip(built.blocks, built.counts))
    out.cloud.update((key, solver.value(v)) for key, v in built.cloud.items())
    out.own.update((key, solver.value(v)) for key, v in built.own.items())
    out.optimal &= status == cp_model.OPTIMAL
    out.bound += solver.best_objective_bound / MONEY_SCALE
    out.deterministic_time += solver.deterministic_time


def offline_optimum(
    jobs,
    prices,
    instances: int = 0,
    bids=BIDS,
    on_demand: float = ON_DEMAND_PRICE,
    time_limit: float = TIME_LIMIT,
    wall_limit: float | None = None,
) -> OfflineOptimum:
    """The hindsight-optimal cost of `jobs` (a market.iaas JobStream) under the realised price
    path `prices` (prices[t - 1] is slot t's), with `instances` (R) self-owned instances and
    spot bids from `bids` (module docstring). Each group of `independent_groups` is one CP-SAT
    model; `time_limit` is the CP-SAT deterministic time of each, `wall_limit` an optional
    safety net in seconds per group (breaks determinism when it binds)."""
    started = time.perf_counter()
    prices, bids = _check_inputs(jobs, prices, instances, bids, on_demand, time_limit)
    instances = int(instances)
    solved = _Solved({}, {}, {})
    for members in independent_groups(jobs, instances):
        _solve_group(jobs, members, prices, instances, bids, on_demand, time_limit, wall_limit, solved)
    return _solution(jobs, solved, time.perf_counter() - started)


def _solution(jobs, solved: _Solved, seconds: float) -> OfflineOptimum:
    blocks = tuple(solved.counts)
    counts = np.array([solved.counts[b] for b in blocks], dtype=np.int64)
    job_cost = np.zeros(len(jobs))
    for block, n in zip(blocks, counts):
        job_cost[block.job] += n * block.price
    horizon = jobs.horizon()
    cloud = np.zeros((len(jobs), horizon), dtype=np.int64)
    own = np.zeros((len(jobs), horizon), dtype=np.int64)
    for (j, t), v in solved.cloud.items():
        cloud[j, t - 1] = v
    for (j, t), v in solved.own.items():
        own[j, t - 1] = v
    return OfflineOptimum(
        cost=float(job_cost.sum()),
        job_cost=job_cost,
        status="OPTIMAL" if solved.optimal else "FEASIBLE",
        bound=solved.bound,
        solve_seconds=seconds,
        deterministic_time=solved.deterministic_time,
        total_work=float(np.asarray(jobs.size, dtype=float).sum()),
        blocks=blocks,
        counts=counts,
        cloud_work=cloud,
        self_owned=own,
    )
