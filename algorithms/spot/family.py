"""The `spot` family as the sweep engine sees it (paper 000).

The engine passes a plain dict config with the keys
  job:          FineTuneJob fields (market/spot/finetune_job.py); missing keys take the
                Sec. VI-A defaults, unknown keys are an error;
  market:       {kind: synthetic, <SyntheticMarketParams fields>} or
                {kind: trace, path, capacity: 16, on_demand_price: 1.0, start: null};
  mechanisms:   names (algorithms/spot/registry.py): OD-Only, MSU, UP, OPT, AHAP(...),
                AHANP(...), or the groups AHAP / AHANP expanded over `pool`;
  pool:         algorithms/spot/config.py (window, commitment, threshold, sigma_reading, ahanp_start);
  forecast, noise, job_sampling, selection: algorithms/spot/config.py;
(SECTIONS; the engine rejects any other top-level key but its own). One replicate is one
job: it draws one world (forecast.history slots before the job, d slots of the job
and forecast.horizon slots after, so that forecasts near d exist), the job's
parameters if job_sampling says so, and the forecasts with their noise, then runs
every mechanism on that world (common random numbers, as Sec. VI-A compares them).
Online policy selection (Alg. 2) runs over a cell's jobs in `cell_outputs`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from algorithms.common.mechanism_names import listed_names
from algorithms.common.optimum_columns import add_optimum_columns
from algorithms.common.optional_keys import without_null_keys
from algorithms.common.selection_outputs import selection_outputs
from algorithms.common.user_mechanisms import build, is_import_path
from algorithms.spot import registry as spot_names
from algorithms.spot.ahanp_batch import AHANPPool
from algorithms.spot.ahap import MAX_LINE_WINDOW
from algorithms.spot.ahap_batch import AHAPPool
from algorithms.spot.config import ForecastConfig, JobSampling, NoiseConfig, PoolConfig, SelectionConfig
from algorithms.spot.offline_optimum import FixedPlan, solve_offline
from algorithms.spot.simulation import SpotPolicy, simulate
from algorithms.spot.window_problem import WindowSolver
from market.common.fields import as_section, in_range, integer, real, reject_unknown_keys
from market.common.sections import memoized
from market.spot.finetune_job import FineTuneJob
from market.spot.forecast import SpotForecast, oracle_forecast
from market.spot.spot_market import SpotMarket, SyntheticMarketParams
from market.spot.spot_trace import load_spot_trace, sample_window, spot_trace_values

NAME = "spot"
PAPER = "000: Deadline-Aware Online Scheduling for LLM Fine-Tuning with Spot Market Predictions"
QUESTION = "When should one fine-tuning job with a deadline buy spot or on-demand GPUs, given price forecasts?"
UTILITY = "the job's value at its completion time minus what it paid for GPUs (eq. 5), in the paper's price units; higher is better"
SECTIONS = ("job", "market", "pool", "forecast", "noise", "job_sampling", "selection")
SUMMARY_COLUMNS = ("cost", "completion_time")
RATE_COLUMNS = ("met_deadline",)
INPUT_FILES = {"market.path": spot_trace_values}
# Documented keys listed at null in conf/family/spot.yaml and conf/market/synthetic.yaml,
# so that the command line sets them without `+`; null is the code's default
# (algorithms/common/optional_keys.py).
OPTIONAL_KEYS = (
    "market.outage_fraction",
    "market.outage_slots",
    "pool.sigma_reading",
    "pool.ahanp_start",
    "noise.growth",
    "selection.normalisation",
)

# The sections declared once (market/common/sections.py): keys, defaults, checks and docs.
DECLARED_SECTIONS = {
    "job": FineTuneJob,
    "pool": PoolConfig,
    "forecast": ForecastConfig,
    "noise": NoiseConfig,
    "job_sampling": JobSampling,
    "selection": SelectionConfig,
}
TRACE_KEYS = ("kind", "path", "capacity", "on_demand_price", "start")


@dataclass(frozen=True)
class TraceSource:
    trace: SpotMarket
    start: int | None


@dataclass(frozen=True)
class PreparedSpot:
    job: FineTuneJob
    market: SyntheticMarketParams | TraceSource
    mechanisms: tuple[str, ...]
    forecast: ForecastConfig = ForecastConfig()
    noise: NoiseConfig = NoiseConfig()
    job_sampling: JobSampling = JobSampling()
    selection: tuple[str, ...] = ()
    selection_normalisation: str = "worst_case"
    sigma_reading: str = "ahead"

    @property
    def world_slots(self) -> int:
        return self.forecast.history + self.job.deadline + self.forecast.horizon

    @property
    def predictive(self) -> bool:
        return any(name.startswith("AHAP(") for name in self.mechanisms)


def _section(config: Mapping, key: str) -> dict:
    if key not in config and key != "job":
        raise ValueError(f"{key}: missing section")
    return as_section(config.get(key), key)


def _job(config: Mapping) -> FineTuneJob:
    return FineTuneJob.from_dict(_section(config, "job"))


def _mechanisms(config: Mapping, pool: PoolConfig) -> tuple[str, ...]:
    names = listed_names(config)
    return tuple(spot_names.expand(names, pool))


def _trace_source(market: Mapping, deadline: int) -> TraceSource:
    """`deadline` here is the number of slots one world needs (history + d + horizon)."""
    reject_unknown_keys(TRACE_KEYS, market, "market", " for kind 'trace'")
    path = market.get("path")
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ValueError(f"market.path must be a file path, got {path!r}")
    capacity = integer(market.get("capacity", 16), "market.capacity", 1, allow_float=False)
    price = in_range(
        real(market.get("on_demand_price", 1.0), "market.on_demand_price"), "market.on_demand_price", 0, strict_min=True
    )
    start = integer(market.get("start"), "market.start", 0, allow_float=False, optional=True)
    if os.path.isdir(path):
        raise ValueError(f"market.path: {os.path.abspath(path)}: is a directory, not a CSV file")
    if not os.path.isfile(path):
        raise ValueError(f"market.path: {os.path.abspath(path)}: file not found")
    trace = load_spot_trace(os.path.abspath(path), capacity, price)
    if len(trace) < deadline:
        raise ValueError(
            f"market.path: {path}: trace has {len(trace)} slots, a world needs {deadline} "
            "(forecast.history + job.deadline + forecast.horizon)"
        )
    if start is not None and start + deadline > len(trace):
        raise ValueError(
            f"market.start ({start}) + a world's {deadline} slots exceeds the {len(trace)} slots of {path}"
        )
    return TraceSource(trace, start)


def _market(config: Mapping, deadline: int) -> SyntheticMarketParams | TraceSource:
    market = _section(config, "market")
    kind = market.get("kind")
    if kind == "synthetic":  # the same market in most cells of a grid: built and checked once
        return memoized(
            SyntheticMarketParams,
            market,
            "market",
            lambda: SyntheticMarketParams.from_dict({k: v for k, v in market.items() if k != "kind"}),
        )
    if kind == "trace":
        return _trace_source(market, deadline)
    raise ValueError(f"market.kind must be 'synthetic' or 'trace', got {kind!r}")


def prepare(config: dict) -> PreparedSpot:
    """Validate a config (errors name the key, e.g. job.deadline or market.path, or the trace
    file and line: TraceError) and build everything its replicates share (the trace is loaded
    once)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    config = without_null_keys(config, OPTIONAL_KEYS)
    job = _job(config)
    mechanisms, selection, widest, normalisation, sigma_reading = _named_mechanisms(
        _section_key(config, "pool", "mechanisms", "selection")
    )
    forecast = ForecastConfig.from_dict(config.get("forecast"))
    noise = NoiseConfig.from_dict(config.get("noise"))
    sampling = JobSampling.from_dict(config.get("job_sampling"))
    if widest > forecast.horizon:
        raise ValueError(f"forecast.horizon ({forecast.horizon}) must cover the largest AHAP window ({widest})")
    if sampling.n_min and sampling.n_min[1] > (sampling.n_max or (job.n_max, job.n_max))[0]:
        raise ValueError("job_sampling.n_min can exceed the job's n_max")
    slots = forecast.history + job.deadline + forecast.horizon
    return PreparedSpot(
        job, _market(config, slots), mechanisms, forecast, noise, sampling, selection, normalisation, sigma_reading
    )


def mechanism_names(config: dict) -> list[str]:
    config = without_null_keys(config, OPTIONAL_KEYS)
    return list(_named_mechanisms(_section_key(config, "pool", "mechanisms"))[0])


def _section_key(config: Mapping, *keys: str) -> str:
    return _KEY_JSON.encode({key: config[key] for key in keys if key in config})


_KEY_JSON = json.JSONEncoder(sort_keys=True)  # json.dumps(..., sort_keys=True) without building one a call


@functools.lru_cache(maxsize=64)
def _named_mechanisms(sections: str) -> tuple[tuple[str, ...], tuple[str, ...], int, str, str]:
    """(mechanisms, selection.mechanisms, the widest AHAP window, selection.normalisation,
    pool.sigma_reading) of the `pool`, `mechanisms` and `selection` sections (as JSON): the same
    in every cell of most grids, so parsed once."""
    config = json.loads(sections)
    pool = PoolConfig.from_dict(as_section(config.get("pool"), "pool"))
    mechanisms = _mechanisms(config, pool)
    chosen = SelectionConfig.from_dict(config.get("selection"))
    selection = tuple(spot_names.expand(chosen.mechanisms, pool))
    missing = [name for name in selection if name not in mechanisms]
    if missing:
        raise ValueError(f"selection.mechanisms: {missing[0]} is not among the cell's mechanisms")
    if selection and chosen.normalisation == "job_opt" and spot_names.OPTIMUM not in mechanisms:
        raise ValueError(f"selection.normalisation: job_opt needs {spot_names.OPTIMUM} among the cell's mechanisms")
    for name in mechanisms:  # a user's own policies: imported and built once here, before any work
        kind, params = spot_names.parse(name)
        if is_import_path(kind):
            build(kind, params, SpotPolicy)
    parsed = [spot_names.parse(name) for name in mechanisms]
    widest = max((params["window"] for kind, params in parsed if kind == "AHAP"), default=0)
    if pool.sigma_reading == "line" and widest > MAX_LINE_WINDOW:
        raise ValueError(
            f"pool.sigma_reading: 'line' supports AHAP windows up to {MAX_LINE_WINDOW} slots, the widest is {widest}"
        )
    return mechanisms, selection, widest, chosen.normalisation, pool.sigma_reading


def draw_market(prepared: PreparedSpot, rng: np.random.Generator) -> SpotMarket:
    """One world: forecast.history + d + forecast.horizon slots. The first use of rng."""
    source = prepared.market
    if isinstance(source, TraceSource):
        return sample_window(source.trace, rng, prepared.world_slots, source.start)
    return source.sample(rng, prepared.world_slots)


def draw_job(prepared: PreparedSpot, rng: np.random.Generator) -> FineTuneJob:
    """The job of this replicate: the configured job, or a Fig. 9 draw (the second use of rng)."""
    sampling = prepared.job_sampling
    if not sampling.active:
        return prepared.job
    changes = {}
    if sampling.workload:
        changes["workload"] = float(rng.uniform(*sampling.workload))
    if sampling.n_min:
        changes["n_min"] = int(rng.integers(sampling.n_min[0], sampling.n_min[1] + 1))
    if sampling.n_max:
        changes["n_max"] = int(rng.integers(sampling.n_max[0], sampling.n_max[1] + 1))
    return dataclasses.replace(prepared.job, **changes)


def make_forecast(
    prepared: PreparedSpot, world: SpotMarket, job: FineTuneJob, replicate: int, rng: np.random.Generator
) -> SpotForecast:
    """Forecasts made at each of the job's slots (oracle or ARIMA), then the noise in force
    for this job (the third use of rng)."""
    start, horizon = prepared.forecast.history, prepared.forecast.horizon
    if prepared.forecast.kind == "oracle":
        forecast = oracle_forecast(world.window(start, job.deadline + horizon), job.deadline, horizon)
    else:
        from market.spot.arima_forecast import arima_forecast

        forecast = arima_forecast(
            world,
            start,
            job.deadline,
            horizon,
            order=prepared.forecast.order,
            refit_every=prepared.forecast.refit_every,
        )
    kind, level = prepared.noise.at(replicate)
    if kind == "none" or level == 0:
        return forecast
    from market.spot.prediction_noise import apply_noise, noise_scales

    availability_scale, price_scale = noise_scales(world.window(start, job.deadline + horizon))
    return apply_noise(
        forecast,
        kind,
        level,
        rng,
        capacity=world.capacity,
        availability_scale=availability_scale,
        price_scale=price_scale,
        growth=prepared.noise.growth,
    )


@functools.cache
def _parsed(name: str) -> tuple[str, dict]:
    """`spot_names.parse`, once per name (every replicate builds the same policies);
    callers must not change the returned dict."""
    return spot_names.parse(name)


def make_policy(name: str, solver: WindowSolver | None = None, sigma_reading: str = "ahead") -> SpotPolicy:
    """A fresh policy for `name`: a built-in one from algorithms/spot/registry.py, or a user's own."""
    kind, params = _parsed(name)
    if is_import_path(kind):
        return build(kind, params, SpotPolicy)
    return spot_names.REGISTRY.build(kind, params, solver=solver, sigma_reading=sigma_reading)


@functools.lru_cache(maxsize=32)
def _pools(
    mechanisms: tuple[str, ...], sigma_reading: str
) -> tuple[AHAPPool, tuple[int, ...], AHANPPool, tuple[int, ...]]:
    """The AHAP policies among `mechanisms` as one `AHAPPool`, the AHANP ones as one
    `AHANPPool`, and their positions."""
    ahap = tuple(i for i, name in enumerate(mechanisms) if _parsed(name)[0] == "AHAP")
    ahanp = tuple(i for i, name in enumerate(mechanisms) if _parsed(name)[0] == "AHANP")
    params = [_parsed(mechanisms[i])[1] for i in ahap]
    ahanp_params = [_parsed(mechanisms[i])[1] for i in ahanp]  # no `start` key: literal (registry.parse)
    return (
        AHAPPool([(p["window"], p["commitment"], p["threshold"]) for p in params], sigma_reading),
        ahap,
        AHANPPool([p["threshold"] for p in ahanp_params], [p.get("start", "literal") for p in ahanp_params]),
        ahanp,
    )


def simulate_replicate(prepared: PreparedSpot, replicate: int, rng: np.random.Generator) -> list[dict]:
    """Draw one world from rng and run every mechanism on it; one row per mechanism.

    The AHAP policies run together (`ahap_batch.AHAPPool`, the compiled fast path, the
    same outcomes bit for bit as `simulate` with `AHAP`), so do the AHANP ones
    (`ahanp_batch.AHANPPool`); the others one by one through `simulate`. When OPT is among
    the mechanisms, rows carry `regret_vs_opt` (the offline optimum's utility minus the row's)
    and `opt_proven` (whether CP-SAT proved the plan optimal)."""
    world = draw_market(prepared, rng)
    job = draw_job(prepared, rng)
    forecast = make_forecast(prepared, world, job, replicate, rng) if prepared.predictive else None
    if forecast is not None:  # read-only: nothing below may change what every mechanism reads
        forecast.price.setflags(write=False)
        forecast.availability.setflags(write=False)
    job_market = world.window(prepared.forecast.history, job.deadline + prepared.forecast.horizon)
    ahap, ahap_at, ahanp, ahanp_at = _pools(prepared.mechanisms, prepared.sigma_reading)
    rows: list = [None] * len(prepared.mechanisms)
    if ahap_at:
        result = ahap.run(job, job_market, forecast)
        for q, i in enumerate(ahap_at):
            rows[i] = result.record(q, prepared.mechanisms[i])
    if ahanp_at:
        result = ahanp.run(job, job_market)
        for q, i in enumerate(ahanp_at):
            rows[i] = result.record(q, prepared.mechanisms[i])
    solver = None
    proven = None
    for i, name in enumerate(prepared.mechanisms):
        if rows[i] is not None:
            continue
        if name == spot_names.OPTIMUM:
            plan = solve_offline(job, job_market.window(0, job.deadline))
            proven = plan.status == "OPTIMAL"
            outcome = simulate(job, job_market, FixedPlan(plan.n_on_demand, plan.n_spot))
        else:
            outcome = simulate(job, job_market, make_policy(name, solver, prepared.sigma_reading), forecast)
        rows[i] = outcome.record(name)
    add_optimum_columns(rows, spot_names.OPTIMUM, regret=True, proven=proven)
    if prepared.job_sampling.active:
        for row in rows:
            row.update(job_workload=job.workload, job_n_min=job.n_min, job_n_max=job.n_max)
    return rows


def utility_bounds(prepared: PreparedSpot) -> tuple[float, float]:
    """[lower, upper] for normalising utilities in Alg. 2 (docs/spot/policy-selection.md).

    upper = v (no job earns more than its value, costs are >= 0); lower = minus the most
    any job of the cell can spend: N_max instances at the dearest price in every slot up
    to d, then the termination configuration from zero progress (1 + ceil((L - mu1 H) / H)
    slots of N_max on-demand instances, Sec. III-E2), with the widest L and N_max the
    cell's job sampling allows."""
    job, sampling = prepared.job, prepared.job_sampling
    n_max = sampling.n_max[1] if sampling.n_max else job.n_max
    workload = sampling.workload[1] if sampling.workload else job.workload
    widest = dataclasses.replace(job, workload=workload, n_max=n_max, n_min=min(job.n_min, n_max))
    source = prepared.market
    if isinstance(source, TraceSource):
        dearest, p_o = float(np.max(source.trace.price)), source.trace.on_demand_price
    else:
        dearest, p_o = SyntheticMarketParams.PRICE_CAP * source.on_demand_price, source.on_demand_price
    full = widest.throughput(n_max)
    extra_slots = 1 + max(0, int(np.ceil((workload - widest.mu1 * full) / full - 1e-12)))
    lower = -(n_max * job.deadline * max(dearest, p_o) + extra_slots * n_max * p_o)
    return lower, job.value


def has_cell_outputs(config: dict) -> bool:
    """Only a cell with `selection.mechanisms` has cell outputs (`cell_outputs`)."""
    return bool((config.get("selection") or {}).get("mechanisms"))


def cell_outputs(config: dict, frame) -> dict:
    """Online policy selection (Alg. 2, Sec. V) over the cell's jobs in replicate order, among
    `selection.mechanisms` (algorithms/common/selection_outputs.py), with utilities normalised
    by `utility_bounds` (`selection.normalisation: worst_case`) or job by job. A cell without
    `selection.mechanisms` has none, known without preparing its config again."""
    if not has_cell_outputs(config):
        return {}
    prepared = prepare(config)
    if not prepared.selection:
        return {}
    lower, upper = utility_bounds(prepared)
    return selection_outputs(
        frame,
        prepared.selection,
        lower,
        upper,
        optimum=spot_names.OPTIMUM,
        normalisation=prepared.selection_normalisation,
    )
