"""Paper 003's accounting for a job whose allocation a paper-000 policy decides hour by hour
(docs/arena.md, "One accounting"): the adapter that puts AHAP, AHANP, UP, MSU and OD-Only on
the same billing as Dynalloc and the theta policies (algorithms/iaas/job_execution.py), with
the same per-slot steps (algorithms/iaas/hourly_billing.py).

At each hour of the job (every Len slots from its arrival, paper 003 Sec. III-A/C) the plan
gives (o, s): o on-demand instances for the hour and s spot instances bid at `bid`. The rules
are paper 003's (Sec. III-A); each slot's billing and work are the steps of
`algorithms.iaas.hourly_billing`, the same as in paper 003's kernel:
- spot instances run while every price of their hour so far is at or below the bid and the
  market is up; the first slot that breaks this ends them for the rest of the hour (ended by
  the cloud: the hour is free); an hour they run to its end costs s times the price of its
  first slot, and so does one the tenant ends because the job is done;
- an on-demand instance is paid `on_demand` per started hour from its launch and keeps working
  until its hour ends, requested or not (up to the parallelism);
- one instance does one unit of work per slot; the job is done at the end of the slot in which
  its work reaches its size.

The hard deadline (paper 003's jobs must finish by a_j + d_j - 1; paper 000's policies would
instead finish late on N_max on-demand instances, Sec. III-E2) is kept by one safety net, the
arena's counterpart of paper 003's Proposition 4: in the first slot after which the work left
would no longer fit into the parallelism times the slots left, the job takes delta instances
(every spot instance still running, on-demand for the rest) to the end, and the plan is not
asked again. From the start a job fits (d_j >= z_j / delta_j), so every job meets its deadline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from algorithms.iaas.hourly_billing import TOL, charge_spot_hour, do_work, paid_instances, pay_on_demand


@dataclass(frozen=True)
class HourlyResult:
    """What one job cost and how its work was processed (the fields of paper 003's JobResult)."""

    spot_cost: float
    on_demand_cost: float
    spot_work: float
    on_demand_work: float
    finish: int  # the slot in which it was done (0: not done)
    fell_back: int  # the slot from which the safety net ran it (0: never)

    @property
    def cost(self) -> float:
        return self.spot_cost + self.on_demand_cost


Plan = Callable[[int, float], tuple[int, int]]
"""plan(hour, work_done) -> (on_demand, spot) for hour `hour` (0-based) of the job, given the
work done before it."""


def run_hourly(
    arrival: int,
    deadline: int,
    size: float,
    parallelism: int,
    price: np.ndarray,
    up: np.ndarray,
    plan: Plan,
    bid: float,
    on_demand: float = 1.0,
    slots_per_hour: int = 12,
) -> HourlyResult:
    """Run one job from slot `arrival` to `arrival + deadline - 1` (module docstring);
    `price[t - 1]` and `up[t - 1]` are slot t's spot price and whether spot is obtainable."""
    end = arrival + deadline - 1
    if size <= TOL:
        return HourlyResult(0.0, 0.0, 0.0, 0.0, arrival, 0)
    paid_until = np.zeros(parallelism, dtype=np.int64)  # per on-demand instance, the last slot paid for
    work = float(size)
    on_demand = float(on_demand)
    spot_cost = od_cost = spot_work = od_work = 0.0
    fell_back = 0
    spot_n = spot_ran = od_target = 0
    spot_alive = False
    hour_price = 0.0
    for t in range(arrival, end + 1):
        p = float(price[t - 1])
        if not fell_back and (t - arrival) % slots_per_hour == 0:
            o, s = plan((t - arrival) // slots_per_hour, size - work)
            spot_n = max(0, min(int(s), parallelism))
            od_target = max(0, min(int(o), parallelism - spot_n))
            spot_alive = spot_n > 0
            spot_ran = 0
            hour_price = p
        if spot_alive and (not up[t - 1] or p > bid):
            spot_alive = False
        spot_now = spot_n if spot_alive else 0
        if not fell_back:
            paid = paid_instances(paid_until, t)
            planned = spot_now + min(max(paid, od_target), parallelism - spot_now)
            if work - planned > parallelism * (end - t) + TOL:
                fell_back = t
        want = parallelism - spot_now if fell_back else od_target
        paid, od_cost = pay_on_demand(paid_until, t, want, on_demand, slots_per_hour, od_cost)
        spot_work, od_work, work = do_work(spot_now, min(paid, parallelism - spot_now), work, spot_work, od_work)
        spot_ran, spot_alive, spot_cost = charge_spot_hour(
            spot_alive, spot_ran, spot_n, hour_price, work, slots_per_hour, spot_cost
        )
        if work <= TOL:
            return HourlyResult(spot_cost, od_cost, spot_work, od_work, t, fell_back)
    return HourlyResult(spot_cost, od_cost, spot_work, od_work, 0, fell_back)
