"""The cloud's billing for one job, one slot at a time (paper 003, Sec. III-A): the steps shared
by paper 003's kernel (`algorithms.iaas.job_execution._run_job`) and the arena's accounting of
paper 000's policies (`arena.hourly_billing.run_hourly`), compiled with Numba.

Sec. III-A's rules, as the steps below apply them in slot t:
- on-demand (`pay_on_demand`): an instance is paid `on_demand` per started hour (Len slots)
  from its launch and keeps working until that hour ends, requested or not; when fewer than
  the wanted instances are paid for slot t, new ones are launched (a new hour paid for each);
- work (`do_work`): one instance processes one unit of the job's size per slot; the job is done
  at the end of the slot in which its processed work reaches its size, the spot instances
  counted first;
- spot (`charge_spot_hour`): an hour of si spot instances that runs all Len slots costs si x
  the spot price of the hour's first slot, and so does one the tenant stops because the job is
  done; one ended by the cloud costs nothing.

A slot is billed by these steps in this order: `pay_on_demand`, `do_work` with the spot
instances running and the paid on-demand ones the parallelism leaves room for, then
`charge_spot_hour`. Money and work are accumulated by the steps themselves (the running totals
in, the new totals out), one addition per charge or part, so that every caller's totals are
the same floating-point sums.
"""

from __future__ import annotations

import numpy as np
from numba import njit

TOL = 1e-9  # work at or below it is done


@njit(cache=True)
def paid_instances(paid_until: np.ndarray, t: int) -> int:
    """On-demand instances already paid for slot t (Sec. III-A): those whose paid hour ends at
    or after t. `paid_until[i]` is the last slot paid for instance i (0: never launched)."""
    paid = 0
    for i in range(paid_until.size):
        if paid_until[i] >= t:
            paid += 1
    return paid


@njit(cache=True)
def pay_on_demand(
    paid_until: np.ndarray, t: int, want: int, on_demand: float, slots_per_hour: int, cost: float
) -> tuple[int, float]:
    """Sec. III-A's on-demand billing in slot t: count the instances still paid for t and, while
    fewer than `want`, launch one (the first instance in `paid_until` whose hour has ended),
    paying `on_demand` for its hour t .. t + slots_per_hour - 1. `paid_until` is updated in
    place. Returns (instances paid for slot t, `cost` plus what was paid); the instances paid
    may exceed `want`: a paid instance keeps working until its hour ends."""
    paid = paid_instances(paid_until, t)
    i = 0
    while paid < want and i < paid_until.size:  # as a for loop with break, _run_job ran 20% slower
        if paid_until[i] < t:
            paid_until[i] = t + slots_per_hour - 1
            cost += on_demand
            paid += 1
        i += 1
    return paid, cost


@njit(cache=True)
def do_work(spot_now: int, od_now: int, work: float, spot_work: float, od_work: float) -> tuple[float, float, float]:
    """Sec. III-A's work in one slot: `spot_now` spot and `od_now` on-demand instances each
    process one unit of the `work` left. The work processed is at most what was left (the job
    done mid-slot), the spot part first. Returns (`spot_work` plus the spot part, `od_work` plus
    the on-demand part, work left): the work left is `work` minus the slot's capacity, at or
    below TOL once the job is done."""
    done_now = spot_now + od_now
    used = min(float(done_now), work)
    spot_part = min(float(spot_now), used)
    return spot_work + spot_part, od_work + (used - spot_part), work - done_now


@njit(cache=True)
def charge_spot_hour(
    spot_alive: bool, spot_ran: int, spot_n: int, hour_price: float, work: float, slots_per_hour: int, cost: float
) -> tuple[int, bool, float]:
    """Sec. III-A's spot billing at the end of a slot, `work` left after it. When the hour's
    `spot_n` spot instances ran in it (`spot_alive`, `spot_ran` slots before it), the hour costs
    spot_n x `hour_price` (the price of its first slot) once it has run all `slots_per_hour`
    slots or the job is done (the tenant stops them); either ends the instances. Instances not
    running (ended by the cloud, or none) cost nothing more. Returns (slots run this hour,
    whether they still run, `cost` plus the charge)."""
    if not spot_alive:
        return spot_ran, False, cost
    spot_ran += 1
    if spot_ran == slots_per_hour or work <= TOL:
        return spot_ran, False, cost + spot_n * hour_price
    return spot_ran, True, cost
