"""One job on spot and on-demand instances, slot by slot, with the cloud's billing (paper 003,
Sec. III-A/C, IV-B): the job's allocation is updated every hour (Len slots from its arrival);
at an update the policy splits the parallelism into o on-demand instances for the hour and a
bid b for si spot instances (si + o = delta, rule (iv)).

Timing. The spot price of slot t is known at the start of t. Spot instances run in slot t while
every price of the hour so far is at or below the bid; the first price above it ends them for
the rest of the hour (terminated by the cloud at the end of slot t' = t - 1, Definition 1).
The job reacts in slot t itself (Alg. 2 runs at the start of every slot): if it has no
flexibility at the next update, s^{i+1} = (delta (d_j - i Len)) / z^{i+1} < 1, with z^{i+1} the
work left once this hour's on-demand instances have run to its end, it turns to on-demand for
good (Proposition 4 for the paper's policies, all delta on-demand for the theta policies);
otherwise it waits for the next update with its o on-demand instances.

Billing (Sec. III-A). On-demand: an instance is paid `on_demand` per started hour from its
launch; a paid instance keeps working until its hour ends (up to the parallelism), requested
or not. Spot: an hour of si instances that runs all Len slots costs si x the spot price of the
hour's first slot (the price charged at the i-th allocation, p_j^i); one ended by the cloud
costs nothing; one the tenant stops because the job is done costs the whole hour.

Work: one instance processes one unit of the job's size per slot; a job of size z is done at
the end of the slot in which its processed work reaches z.

The billing and work steps of a slot are `algorithms.iaas.hourly_billing`'s, shared with the
arena's accounting of paper 000's policies (arena/hourly_billing.py).

Model switches (keyword arguments of `run_job`, `run_jobs` and `_run_job`, all off by default,
which is the model above, unchanged), for the measured alternatives of Fig. 4
(`python -m reproduction.iaas.alternatives fig4`):
- `nu_on_size`: Alg. 1 as printed, kappa2 on the remaining work z' (line 1) but nu on the
  job's size z_j (lines 3-5): `proportion_split_on_size`;
- `od_per_slot`: on-demand instances paid `on_demand` / Len per slot each runs, not per
  started hour (and so not kept working to the end of a paid hour);
- `lost_spot_pro_rata`: an hour of spot instances ended by the cloud costs spot_n x the hour's
  price x the slots it ran / Len instead of nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from algorithms.iaas.hourly_billing import TOL, charge_spot_hour, do_work, pay_on_demand

LEN = 12
ON_DEMAND_PRICE = 0.25
# Policy kinds: Proportion / Dynalloc (Alg. 1-2); the theta policies of [6], [7], re-bidding every
# hour while the job has flexibility (THETA) or turning to on-demand at their first spot loss
# (THETA_ONCE, the other reading, measured in reproduction/iaas/alternatives.py).
DYNALLOC, THETA, THETA_ONCE = 0, 1, 2


@njit(cache=True)
def proportion_split(
    work: float, slots_left: int, parallelism: int, beta: float, slots_per_hour: int = LEN
) -> tuple[int, int]:
    """Alg. 1 (Proportion) at an allocation update: (si, o) for a job with `work` left,
    `slots_left` slots to its deadline (this one included) and `parallelism` instances.

    nu = floor((slots_left delta - z') / (Len (1 - beta))) (eq. 9 on the remaining size z', our
    reading of Alg. 1, whose lines 3-5 print z_j), kappa2 = floor(nu / delta): kappa2 >= 1 bids
    for delta spot instances; kappa2 = 0 < nu bids for nu and buys delta - nu on-demand; nu = 0
    bids for delta (Proposition 3, the last update with flexibility)."""
    slack = slots_left * parallelism - work
    nu = 0
    if slack > 0:
        nu = int(math.floor(slack / (slots_per_hour * (1.0 - beta)) + TOL))
    if nu // parallelism >= 1 or nu <= 0:
        return parallelism, 0
    return nu, parallelism - nu


@njit(cache=True)
def proportion_split_on_size(
    work: float, size: float, slots_left: int, parallelism: int, beta: float, slots_per_hour: int = LEN
) -> tuple[int, int]:
    """Alg. 1 as printed (the `nu_on_size` switch): kappa2 = floor(nu(z', .) / delta) on the
    remaining work z' = `work` (line 1), but lines 3-5 on nu(z_j, .) with the job's size
    z_j = `size`: kappa2 >= 1 bids for delta spot instances; else nu(z_j, .) > 0 bids for it and
    buys delta - nu(z_j, .) on-demand; else (nu(z_j, .) = 0, or negative, a case the printed
    algorithm leaves open) bids for delta. As nu(z_j, .) <= nu(z', .), o >= 1 in the middle case."""
    slack = slots_left * parallelism - work
    nu_left = 0
    if slack > 0:
        nu_left = int(math.floor(slack / (slots_per_hour * (1.0 - beta)) + TOL))
    if nu_left // parallelism >= 1:
        return parallelism, 0
    slack_size = slots_left * parallelism - size
    nu = 0
    if slack_size > 0:
        nu = int(math.floor(slack_size / (slots_per_hour * (1.0 - beta)) + TOL))
    if nu <= 0:
        return parallelism, 0
    return nu, parallelism - nu


@njit(cache=True)
def theta_split(parallelism: int, theta: float) -> tuple[int, int]:
    """The theta policies of [6], [7]: theta delta spot instances (rounded half up), the rest
    on-demand."""
    spot = min(parallelism, int(math.floor(theta * parallelism + 0.5)))
    return spot, parallelism - spot


@njit(cache=True)
def fallback_plan(work: float, start: int, end: int, parallelism: int, slots_per_hour: int = LEN) -> tuple[int, int]:
    """Proposition 4: with `work` left from slot `start` to the deadline `end` (inclusive) and
    no flexibility, kappa = floor((end - start + 1) / Len) whole hours of delta on-demand
    instances end at the deadline, from t'' = end + 1 - kappa Len; before them, in the
    t'' - start slots [t' + 1, t'' - 1] (t' = start - 1), o_bar = (work - kappa delta Len) /
    (t'' - start) instances, rounded up. Returns (t'', o_bar)."""
    kappa = (end - start + 1) // slots_per_hour
    t2 = end + 1 - kappa * slots_per_hour
    head = t2 - start
    if head <= 0:
        return t2, 0
    rest = work - kappa * parallelism * slots_per_hour
    return t2, min(parallelism, max(0, int(math.ceil(rest / head - TOL))))


@dataclass(frozen=True)
class JobResult:
    """What one job cost and how its work was processed."""

    spot_cost: float
    on_demand_cost: float
    spot_work: float
    on_demand_work: float
    finish: int  # the slot in which it was done (0: not done)
    fell_back: int  # the slot from which it used on-demand only (0: never)

    @property
    def cost(self) -> float:
        return self.spot_cost + self.on_demand_cost

    @property
    def done(self) -> bool:
        return self.finish > 0


def run_job(
    arrival: int,
    deadline: int,
    size: float,
    parallelism: int,
    prices: np.ndarray,
    kind: int,
    beta: float = 0.5,
    bid: float = 0.1,
    theta: float = 0.0,
    on_demand: float = ON_DEMAND_PRICE,
    slots_per_hour: int = LEN,
    nu_on_size: bool = False,
    od_per_slot: bool = False,
    lost_spot_pro_rata: bool = False,
) -> JobResult:
    """Process one job (already reduced by its self-owned instances: `size` and `parallelism`
    are the remainder's) from slot `arrival` to its deadline `arrival + deadline - 1` under the
    price path `prices` (prices[t - 1] is slot t's spot price); the switches, off by default,
    in the module docstring."""
    out = _run_job(
        int(arrival),
        int(deadline),
        float(size),
        int(parallelism),
        np.asarray(prices, dtype=float),
        int(kind),
        float(beta),
        float(bid),
        float(theta),
        float(on_demand),
        int(slots_per_hour),
        bool(nu_on_size),
        bool(od_per_slot),
        bool(lost_spot_pro_rata),
    )
    return JobResult(*out)


@njit(cache=True)
def run_jobs(
    arrival,
    deadline,
    size,
    parallelism,
    prices,
    kind,
    beta,
    bid,
    theta,
    on_demand,
    slots_per_hour,
    nu_on_size=False,
    od_per_slot=False,
    lost_spot_pro_rata=False,
):
    """`run_job` for every job of a stream under one policy: (K, 4) float array of spot cost,
    on-demand cost, spot work, on-demand work, and (K, 2) int array of finish and fallback slots."""
    k = arrival.size
    money = np.zeros((k, 4))
    slots = np.zeros((k, 2), dtype=np.int64)
    for j in range(k):
        out = _run_job(
            arrival[j],
            deadline[j],
            size[j],
            parallelism[j],
            prices,
            kind,
            beta,
            bid,
            theta,
            on_demand,
            slots_per_hour,
            nu_on_size,
            od_per_slot,
            lost_spot_pro_rata,
        )
        money[j, 0], money[j, 1], money[j, 2], money[j, 3] = out[0], out[1], out[2], out[3]
        slots[j, 0], slots[j, 1] = out[4], out[5]
    return money, slots


@njit(cache=True)
def run_job_policies(arrival, deadline, size, parallelism, prices, kind, beta, bid, theta, on_demand, slots_per_hour):
    """`run_job` of one job under n policies (OptiLearning's counterfactuals): `size` and
    `parallelism` are the job's remainder after each policy's self-owned instances, `kind`,
    `beta`, `bid`, `theta` each policy's; the outputs as `run_jobs`', one row per policy."""
    n = size.size
    money = np.zeros((n, 4))
    slots = np.zeros((n, 2), dtype=np.int64)
    for k in range(n):
        out = _run_job(
            arrival,
            deadline,
            size[k],
            parallelism[k],
            prices,
            kind[k],
            beta[k],
            bid[k],
            theta[k],
            on_demand,
            slots_per_hour,
        )
        money[k, 0], money[k, 1], money[k, 2], money[k, 3] = out[0], out[1], out[2], out[3]
        slots[k, 0], slots[k, 1] = out[4], out[5]
    return money, slots


@njit(cache=True)
def _run_job(
    arrival,
    deadline,
    size,
    parallelism,
    prices,
    kind,
    beta,
    bid,
    theta,
    on_demand,
    slots_per_hour,
    nu_on_size=False,
    od_per_slot=False,
    lost_spot_pro_rata=False,
):
    end = arrival + deadline - 1
    if size <= TOL:
        return 0.0, 0.0, 0.0, 0.0, arrival, 0
    if parallelism <= 0:
        return 0.0, 0.0, 0.0, 0.0, 0, 0
    paid_until = np.zeros(parallelism, dtype=np.int64)  # per on-demand instance, last paid slot
    work = size
    spot_cost = 0.0
    od_cost = 0.0
    spot_work = 0.0
    od_work = 0.0
    fell_back = 0
    t2 = 0
    o_bar = 0
    spot_n = 0
    spot_ran = np.int64(0)  # not 0: a literal has Numba compile the callees once more, for Literal[int]
    spot_alive = False
    hour_price = 0.0
    o = 0
    hour_end = arrival - 1
    for t in range(arrival, end + 1):
        price = prices[t - 1]
        if fell_back == 0 and (t - arrival) % slots_per_hour == 0:
            hour_end = min(t + slots_per_hour - 1, end)
            if kind == DYNALLOC and nu_on_size:
                spot_n, o = proportion_split_on_size(work, size, end - t + 1, parallelism, beta, slots_per_hour)
            elif kind == DYNALLOC:
                spot_n, o = proportion_split(work, end - t + 1, parallelism, beta, slots_per_hour)
            else:
                spot_n, o = theta_split(parallelism, theta)
            spot_alive = spot_n > 0
            spot_ran = np.int64(0)
            hour_price = price
        if spot_alive and price > bid:
            spot_alive = False
            if lost_spot_pro_rata:
                spot_cost += spot_n * hour_price * spot_ran / slots_per_hour
            if fell_back == 0:
                left_next = work - o * (hour_end - t + 1)
                slots_next = end - hour_end
                if kind == THETA_ONCE or (left_next > TOL and parallelism * slots_next < left_next - TOL):
                    fell_back = t
                    if kind == DYNALLOC:
                        t2, o_bar = fallback_plan(work, t, end, parallelism, slots_per_hour)
        spot_now = spot_n if spot_alive else 0
        if fell_back > 0:
            want = parallelism if (kind != DYNALLOC or t >= t2) else o_bar
        else:
            want = o
        want = min(want, parallelism - spot_now)
        if od_per_slot:
            paid = want
            od_cost += want * on_demand / slots_per_hour
        else:
            paid, od_cost = pay_on_demand(paid_until, t, want, on_demand, slots_per_hour, od_cost)
        spot_work, od_work, work = do_work(spot_now, min(paid, parallelism - spot_now), work, spot_work, od_work)
        spot_ran, spot_alive, spot_cost = charge_spot_hour(
            spot_alive, spot_ran, spot_n, hour_price, work, slots_per_hour, spot_cost
        )
        if work <= TOL:
            return spot_cost, od_cost, spot_work, od_work, t, fell_back
    return spot_cost, od_cost, spot_work, od_work, 0, fell_back
