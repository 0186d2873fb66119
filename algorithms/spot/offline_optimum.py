"""Offline optimum of problem (9) with perfect knowledge, solved with OR-Tools CP-SAT.

Paper paper 000, Sec. III-D and III-E2: problem (5) with the termination configuration
after d, i.e. problem (9) (max V~(Z^ddl) - C^ddl, the utility Alg. 1 line 30 computes):
choose n_t^o, n_t^s for t = 1..d to maximise V(T) - C (eq. 3, 4) subject to (5a)-(5e), knowing every
spot price p_t^s and availability n_t^avail in advance. The result is the
hindsight benchmark "OPT" of Theorem 1 (Sec. IV-A). The accounting is exactly
`simulate`'s (algorithms/spot/simulation.py): integer slots each billed in full,
mu_t of eq. 2 relative to the previous slot's total (n_0 = 0), the job stops in
the slot it completes, and a job unfinished at d runs the termination
configuration of Sec. III-E2 (`FineTuneJob.termination`, V~ of eq. 9).

Reduction to totals. Progress depends only on the totals n_t = n_t^o + n_t^s,
and for a total n the cheapest split is n^s = min(n_t^avail, n) when
p_t^s < p^o, else all on-demand (`cheapest_split`). The model chooses
n_t in {0} U [N_min, N_max] (idle allowed: delta_t = 0 in (5c)-(5d), reading notes).

Model. Booleans x[t, n], exactly one per slot, say "slot t runs a total of n";
the cost of slot t is sum_n c_t(n) x[t, n] with c_t the cheapest split's cost.
The work of eq. 2 / 5a is H(n) x[t, n] minus (1 - mu) H(n) z for a switch
boolean z forced to 1 by z >= x[t, n] - sum_{m keeps mu = 1} x[t-1, m]: one z
per (t, n) for "n_t != n_{t-1}" when mu1 = mu2, else one for "grew" (mu1) and
one for "shrank" (mu2). Nothing rewards z = 1, so at an integer point it is 1
exactly when eq. 2 charges mu < 1. (A flow formulation with a boolean per
transition (n_{t-1}, n_t) has the same LP bound on these instances and was 17x
slower in CP-SAT.)

Completion case (the nonlinear part). V(T) and the termination value are step
functions of the progress. One boolean per case, exactly one true:
  case 0: finished by d, Z_d >= L, value v;
  case k = 1..K: unfinished at d, the termination needs at most k extra slots,
    i.e. Z_d + mu(N_max, n_d) H(N_max) + (k - 1) H(N_max) >= L (the test of
    `FineTuneJob.termination`), value V(d + k) - k N_max p^o;
with K the termination's length from Z_d = 0, n_d = 0. All cases share one
linear constraint, progress + sum_k credit_k case_k + bonus * no_switch >= L
(no_switch: unfinished with n_d = N_max, so the termination's first slot runs
at mu = 1). The cases relax "the job stops at T" and "exactly k": a plan of
case k whose replay finishes earlier, or needs fewer extra slots, only earns
more, so the maximum over the cases is the optimum of (5). Every plan is
replayed through `simulate` with `FixedPlan` ("OPT"), and the reported utility
is that exact accounting.

Scaling (CP-SAT needs integers).
  * Progress: PROGRESS_SCALE = 10**6 units per unit of work. Each work
    coefficient w becomes floor((w + eps) * S) and L becomes ceil((L - eps) * S),
    eps = tol / (terms + 1) with tol = `FineTuneJob.tolerance()` and terms = d + 2
    the most terms a completion constraint has. A plan the model accepts then has
    true progress >= L - tol, which `simulate` counts as complete: the rounding
    never makes the replayed plan miss the case the model chose. The eps absorbs
    float noise (0.9 * 9 = 8.0999...), so the model is exact when every
    mu H(n) and L is a multiple of 1e-6; otherwise it may reject a plan whose
    progress exceeds the threshold by less than (d + 2) * 1e-6.
  * Money: MONEY_SCALE = 10**8 units per currency unit, rounded to nearest. A
    plan's scaled objective is off by at most (d + 1) / 2 units, so the solver's
    optimum is within (d + 1) / MONEY_SCALE (1.1e-7 at d = 10) of the best
    replayed utility.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from algorithms.spot.simulation import SlotState, SpotPolicy, simulate
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket

PROGRESS_SCALE = 10**6
MONEY_SCALE = 10**8


def cheapest_split(n: int, price: float, availability: int, on_demand_price: float) -> tuple[int, int]:
    """(n_on_demand, n_spot) of least eq.-3 cost for a total of n instances in one slot.

    Spot only when strictly cheaper than on-demand, then as much as (5b) allows.
    """
    if price < on_demand_price:
        spot = min(int(availability), n)
        return n - spot, spot
    return n, 0


class FixedPlan(SpotPolicy):
    """Replays a precomputed plan: (n_on_demand[t-1], n_spot[t-1]) in slot t."""

    name = "OPT"

    def __init__(self, n_on_demand, n_spot) -> None:
        self.n_on_demand = [int(x) for x in n_on_demand]
        self.n_spot = [int(x) for x in n_spot]
        if len(self.n_on_demand) != len(self.n_spot):
            raise ValueError(f"FixedPlan: {len(self.n_on_demand)} on-demand and {len(self.n_spot)} spot entries")

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        return self.n_on_demand[t - 1], self.n_spot[t - 1]


@dataclass(frozen=True, eq=False)
class OfflinePlan:
    """The offline optimum as `simulate` accounts it.

    `n_on_demand` / `n_spot` have one entry per slot 1..d (zero after completion);
    `status` is "OPTIMAL" (proved for the scaled model) or "FEASIBLE" (time limit hit).
    """

    utility: float
    cost: float
    completion_time: int
    n_on_demand: np.ndarray
    n_spot: np.ndarray
    status: str


def _up(x: float) -> int:
    return math.ceil(x * PROGRESS_SCALE)


def _down(x: float) -> int:
    return math.floor(x * PROGRESS_SCALE)


def _money(x: float) -> int:
    return round(x * MONEY_SCALE)


def _switches(job: FineTuneJob, n: int, totals: list[int]) -> list[tuple[float, list[int]]]:
    """(mu, previous totals that keep mu = 1) for each mu < 1 of eq. 2 that running n can pay.

    With mu1 = mu2 a single "changed" indicator covers both directions.
    """
    if job.mu1 == job.mu2:
        return [(job.mu1, [n])] if job.mu1 < 1 else []
    out = []
    if job.mu1 < 1:
        out.append((job.mu1, [m for m in totals if m >= n]))
    if job.mu2 < 1:
        out.append((job.mu2, [m for m in totals if m <= n]))
    return out


def plan_totals_to_counts(totals, market: SpotMarket) -> tuple[list[int], list[int]]:
    """Cheapest (n_on_demand, n_spot) per slot for a sequence of totals."""
    on_demand, spot = [], []
    for t, n in enumerate(totals):
        o, s = cheapest_split(int(n), float(market.price[t]), int(market.availability[t]), market.on_demand_price)
        on_demand.append(o)
        spot.append(s)
    return on_demand, spot


def build_model(job: FineTuneJob, market: SpotMarket) -> tuple[cp_model.CpModel, list[dict]]:
    """The CP-SAT model of the module docstring and its one-hot booleans x[t][n]."""
    d = job.deadline
    p_o = market.on_demand_price
    totals = [0, *range(job.n_min, job.n_max + 1)]
    tol = job.tolerance()
    eps = tol / (d + 3)

    model = cp_model.CpModel()
    # x[t][n]: slot t (0-based) runs a total of n instances; exactly one per slot.
    x = [{n: model.new_bool_var(f"x{t}_{n}") for n in totals} for t in range(d)]
    for t in range(d):
        model.add_exactly_one(x[t].values())

    work = []
    cost = []
    for t in range(d):
        price = float(market.price[t])
        avail = int(market.availability[t])
        for n in totals[1:]:
            o, s = cheapest_split(n, price, avail, p_o)
            cost.append(_money(o * p_o + s * price) * x[t][n])
            full = _down(job.throughput(n) + eps)
            work.append(full * x[t][n])
            for mu, same in _switches(job, n, totals):
                # z >= 1 when slot t runs n after a total outside `same`: the
                # slot then does mu H(n) of eq. 2 instead of H(n).
                if t == 0 and 0 in same:
                    continue
                z = model.new_bool_var(f"z{t}_{n}_{mu}")
                if t == 0:
                    model.add(z >= x[0][n])
                else:
                    model.add(z >= x[t][n] - sum(x[t - 1][m] for m in same))
                work.append((_down(mu * job.throughput(n) + eps) - full) * z)
    progress = sum(work)
    target = _up(job.workload - eps)

    h = job.throughput(job.n_max)
    max_extra = job.termination(0.0, 0, p_o)[0]
    cases = [model.new_bool_var(f"case{k}") for k in range(max_extra + 1)]
    model.add_exactly_one(cases)
    values = [_money(job.value)]
    credits = [0]
    for k in range(1, max_extra + 1):
        credits.append(_down(job.mu1 * h + eps) + (_down((k - 1) * h + eps) if k > 1 else 0))
        values.append(_money(job.value_at(d + k) - k * job.n_max * p_o))
    # The termination's first slot runs at mu = 1 instead of mu1 when n_d = N_max.
    no_switch = model.new_bool_var("no_switch")
    model.add_implication(no_switch, cases[0].Not())
    model.add_implication(no_switch, x[d - 1][job.n_max])
    bonus = _down(h + eps) - _down(job.mu1 * h + eps)
    model.add(progress + sum(c * k for c, k in zip(credits, cases)) + bonus * no_switch >= target)
    model.maximize(sum(v * c for v, c in zip(values, cases)) - sum(cost))
    return model, x


def solve_offline(job: FineTuneJob, market: SpotMarket, time_limit: float = 60.0, workers: int = 1) -> OfflinePlan:
    """Best plan of problem (9) over slots 1..d of `market`, replayed through `simulate`.

    `time_limit` is in CP-SAT's deterministic time, not seconds, so that the same world gets the
    same plan however loaded the machine is (a wall-clock limit would stop earlier on a busy
    one); default-size models prove optimality in well under one unit. `workers` is CP-SAT's
    number of search workers (1: deterministic, and the fastest on these small models). Raises
    RuntimeError if CP-SAT finds no plan within `time_limit`.
    """
    d = job.deadline
    if len(market) < d:
        raise ValueError(f"market has {len(market)} slots, the job's deadline needs {d}")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
    model, x = build_model(job, market)
    solver = cp_model.CpSolver()
    solver.parameters.max_deterministic_time = float(time_limit)
    solver.parameters.num_workers = int(workers)
    # Measured on default-size instances: the full LP relaxation without extra
    # cuts proves optimality fastest (median 0.06 s against 0.11 s with the defaults).
    solver.parameters.linearization_level = 2
    solver.parameters.cut_level = 0
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(
            f"CP-SAT found no plan within deterministic time {time_limit} (status {solver.status_name(status)})"
        )
    plan_totals = [next(n for n, var in x[t].items() if solver.boolean_value(var)) for t in range(d)]
    on_demand, spot = plan_totals_to_counts(plan_totals, market)
    out = simulate(job, market, FixedPlan(on_demand, spot))
    return OfflinePlan(
        utility=out.utility,
        cost=out.cost,
        completion_time=out.completion_time,
        n_on_demand=out.n_on_demand,
        n_spot=out.n_spot,
        status="OPTIMAL" if status == cp_model.OPTIMAL else "FEASIBLE",
    )
