"""Paper 000's policies on the arena (docs/arena.md, "Paper 000's policies"): AHAP (Sec. IV-A,
Alg. 1), AHANP (Sec. IV-B, Alg. 3), UP, MSU and OD-Only (Sec. VI-A), the classes of
algorithms/spot, each job seen as paper 000's fine-tuning job with one decision slot per hour.

The job of the stream (size z in instance-slots, parallelism delta, relative deadline d in
slots) is, to the policy, the FineTuneJob (Sec. III-A) with
- L = z / Len (work in instance-hours) and H(n) = n (alpha = 1, beta = 0, eq. 1);
- d' = max(1, floor(d / Len)) decision slots of one hour each: the whole hours of its window
  (a job of d < Len slots gets one hour, cut short by the deadline). In the slots of a last,
  partial hour the policy is not asked and runs nothing; the billing's safety net
  (arena/hourly_billing.py) finishes there whatever the policy left;
- N_min = 1, N_max = delta;
- mu1 = mu2 = 1 (eq. 2): no reconfiguration overhead, as paper 003's model has none;
- V and gamma unused (the arena's deadline is hard and kept by the safety net).
At the start of its hour h the policy sees the price of the hour's first slot and the
availability delta when the market is up there, 0 when it is down (arena/world.py); AHAP reads
an oracle forecast of the same hourly series (its `forecast.kind: oracle`), or, named with
`forecast=persistence`, the observed hour held for the whole window (no foresight). Its decision
(n^o, n^s) is billed by paper 003's rules with the spot instances bid at `bid`
(`adapt.bid`, default the on-demand price: spot whenever it is cheaper).
"""

from __future__ import annotations

import numpy as np

from algorithms.common.user_mechanisms import build, is_import_path
from algorithms.spot.registry import REGISTRY
from algorithms.spot.simulation import MarketInfo, SlotState, SpotPolicy
from arena.hourly_billing import HourlyResult, run_hourly
from arena.outcome import StreamOutcome, from_columns
from arena.world import LEN, ON_DEMAND, World
from market.spot.finetune_job import FineTuneJob
from market.spot.forecast import SpotForecast, oracle_forecast
from market.spot.spot_market import SpotMarket


def finetune_view(size: float, deadline: int, parallelism: int) -> FineTuneJob:
    """The job as paper 000's policies see it (module docstring)."""
    return FineTuneJob(
        workload=size / LEN,
        deadline=max(1, deadline // LEN),
        n_min=1,
        n_max=parallelism,
        alpha=1.0,
        beta=0.0,
        mu1=1.0,
        mu2=1.0,
        value=1.0,
        gamma=2.0,
    )


def make_policy(kind: str, params: dict, sigma_reading: str = "ahead") -> SpotPolicy:
    """A fresh policy of algorithms/spot (its registry, algorithms/spot/registry.py) or a user's own:
    `kind` and `params` as algorithms.spot.registry.parse gives them."""
    if is_import_path(kind):
        return build(kind, params, SpotPolicy)
    return REGISTRY.build(kind, params, sigma_reading=sigma_reading)


def persistence_forecast(price: np.ndarray, avail: np.ndarray, window: int) -> SpotForecast:
    """The forecast made at each hour: the hour's observed price and availability for every hour
    of the window (no foresight; column 0, the observed hour, is exact as SpotForecast requires)."""
    return SpotForecast(np.repeat(price[:, None], window + 1, axis=1), np.repeat(avail[:, None], window + 1, axis=1))


def run_spot_policy(
    policy: SpotPolicy, window: int, world: World, j: int, bid: float, forecast_kind: str = "oracle"
) -> HourlyResult:
    """Job j of `world` under `policy`, one decision per hour, billed by paper 003's rules.
    `window`: the forecast horizon in hours AHAP reads (0 for the others, which get none);
    `forecast_kind`: `oracle` or `persistence`."""
    jobs = world.jobs
    arrival, deadline = int(jobs.arrival[j]), int(jobs.deadline[j])
    size, delta = float(jobs.size[j]), int(jobs.parallelism[j])
    job = finetune_view(size, deadline, delta)
    starts = arrival - 1 + LEN * np.arange(job.deadline)
    price = world.price[starts]
    avail = np.where(world.up[starts], delta, 0).astype(np.int64)
    forecast = None
    if window and forecast_kind == "persistence":
        forecast = persistence_forecast(price, avail, window)
    elif window:
        # AHAP's window never passes the job's deadline (window_problem.window_length): the
        # forecast rows need `window` hours after it, which are never read; the last hour's
        # values stand there, so the world's length does not depend on the windows.
        forecast = oracle_forecast(
            SpotMarket(
                np.pad(price, (0, window), mode="edge"), np.pad(avail, (0, window), mode="edge"), ON_DEMAND, delta
            ),
            job.deadline,
            window,
        )
    policy.reset(job, MarketInfo(ON_DEMAND, delta, job.deadline, forecast))
    previous = [0]

    def plan(hour: int, done: float) -> tuple[int, int]:
        if hour >= job.deadline:
            return 0, 0
        t = hour + 1
        state = SlotState(
            t, done / LEN, previous[0], float(price[hour]), int(avail[hour]), job, ON_DEMAND, price[:t], avail[:t]
        )
        on_demand, spot = policy.decide(t, state)
        spot = min(int(spot), int(avail[hour]))
        previous[0] = int(on_demand) + spot
        return int(on_demand), spot

    return run_hourly(arrival, deadline, size, delta, world.price, world.up, plan, bid, ON_DEMAND, LEN)


def run_spot_stream(kind: str, params: dict, world: World, bid: float, sigma_reading: str = "ahead") -> StreamOutcome:
    """Every job of `world` under one policy of `kind`, reset for each job."""
    params = dict(params)
    forecast_kind = params.pop("forecast", "oracle")
    window = int(params.get("window", 0))
    policy = make_policy(kind, params, sigma_reading)
    results = [run_spot_policy(policy, window, world, j, bid, forecast_kind) for j in range(len(world.jobs))]
    return from_columns(
        *(
            np.array([getattr(r, f) for r in results]) if results else np.zeros(0)
            for f in ("spot_cost", "on_demand_cost", "spot_work", "on_demand_work", "finish", "fell_back")
        )
    )
