"""The `spot` family as the sweep engine sees it (paper 000_17f647b6e3bf630a.txt).

The engine passes a plain dict config with the keys
  job:        FineTuneJob fields (market/finetune_job.py); missing keys take the
              Sec. VI-A defaults, unknown keys are an error;
  market:     {kind: synthetic, <SyntheticMarketParams fields>} or
              {kind: trace, path, capacity: 16, on_demand_price: 1.0, start: null};
  mechanisms: list of names from MECHANISMS, run in that order;
and ignores every other top-level key (seed, replicates, ...). One replicate
draws one world over the job's d slots (a synthetic sample, or a trace window at
market.start or a random start) and runs every mechanism on it (common random
numbers, Sec. VI-A compares them on the same traces).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from algorithms.spot.msu import MaximalSpotUtilization
from algorithms.spot.od_only import OnDemandOnly
from algorithms.spot.simulation import SpotPolicy, simulate
from algorithms.spot.uniform_progress import UniformProgress
from market.finetune_job import FineTuneJob
from market.spot_market import SpotMarket, SyntheticMarketParams
from market.spot_trace import load_spot_trace, sample_window

NAME = "spot"

MECHANISMS: dict[str, type[SpotPolicy]] = {
    OnDemandOnly.name: OnDemandOnly,
    MaximalSpotUtilization.name: MaximalSpotUtilization,
    UniformProgress.name: UniformProgress,
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


def _section(config: Mapping, key: str) -> Mapping:
    section = config.get(key, {} if key == "job" else None)
    if section is None:
        raise ValueError(f"{key}: missing section")
    if not isinstance(section, Mapping):
        raise ValueError(f"{key}: must be a mapping, got {type(section).__name__}")
    return section


def _job(config: Mapping) -> FineTuneJob:
    return FineTuneJob.from_dict(_section(config, "job"))


def _mechanisms(config: Mapping) -> tuple[str, ...]:
    names = config.get("mechanisms")
    if isinstance(names, str) or not isinstance(names, Sequence) or not names:
        raise ValueError(f"mechanisms: must be a non-empty list of names, got {names!r}")
    known = ", ".join(MECHANISMS)
    seen = set()
    for name in names:
        if name not in MECHANISMS:
            raise ValueError(f"mechanisms: unknown mechanism {name!r} (known: {known})")
        if name in seen:
            raise ValueError(f"mechanisms: {name!r} is listed twice")
        seen.add(name)
    return tuple(names)


def _trace_source(market: Mapping, deadline: int) -> TraceSource:
    unknown = sorted(str(k) for k in market if k not in TRACE_KEYS)
    if unknown:
        raise ValueError(
            f"market: unknown key(s) {', '.join(repr(k) for k in unknown)} for kind "
            f"'trace' (known: {', '.join(TRACE_KEYS)})"
        )
    path = market.get("path")
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ValueError(f"market.path must be a file path, got {path!r}")
    capacity = market.get("capacity", 16)
    if isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 1:
        raise ValueError(f"market.capacity must be a positive integer, got {capacity!r}")
    price = market.get("on_demand_price", 1.0)
    if isinstance(price, bool) or not isinstance(price, numbers.Real) or not price > 0:
        raise ValueError(f"market.on_demand_price must be > 0, got {price!r}")
    start = market.get("start")
    if start is not None and (
        isinstance(start, bool) or not isinstance(start, numbers.Integral) or start < 0
    ):
        raise ValueError(f"market.start must be null or an integer >= 0, got {start!r}")
    if not os.path.isfile(path):
        raise ValueError(f"market.path: {os.path.abspath(path)}: file not found")
    trace = load_spot_trace(os.path.abspath(path), int(capacity), float(price))
    if len(trace) < deadline:
        raise ValueError(
            f"market.path: {path}: trace has {len(trace)} slots, job.deadline needs {deadline}"
        )
    if start is not None and start + deadline > len(trace):
        raise ValueError(
            f"market.start ({start}) + job.deadline ({deadline}) exceeds the "
            f"{len(trace)} slots of {path}"
        )
    return TraceSource(trace, None if start is None else int(start))


def _market(config: Mapping, deadline: int) -> SyntheticMarketParams | TraceSource:
    market = _section(config, "market")
    kind = market.get("kind")
    if kind == "synthetic":
        return SyntheticMarketParams.from_dict({k: v for k, v in market.items() if k != "kind"})
    if kind == "trace":
        return _trace_source(market, deadline)
    raise ValueError(f"market.kind must be 'synthetic' or 'trace', got {kind!r}")


def check_inputs(config: dict) -> None:
    """Validate a config; errors name the key (job.deadline, market.path, ...) or
    the trace file and line (TraceError)."""
    prepare(config)


def prepare(config: dict) -> PreparedSpot:
    """Everything shared by the replicates of one cell (the trace is loaded once)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    job = _job(config)
    mechanisms = _mechanisms(config)
    return PreparedSpot(job, _market(config, job.deadline), mechanisms)


def mechanism_names(config: dict) -> list[str]:
    return list(_mechanisms(config))


def draw_market(prepared: PreparedSpot, rng: np.random.Generator) -> SpotMarket:
    """One world of d slots: the only use of rng in a replicate."""
    d = prepared.job.deadline
    source = prepared.market
    if isinstance(source, TraceSource):
        return sample_window(source.trace, rng, d, source.start)
    return source.sample(rng, d)


def simulate_replicate(prepared: PreparedSpot, replicate: int, rng: np.random.Generator) -> list[dict]:
    """Draw one world from rng and run every mechanism on it; one row per mechanism."""
    market = draw_market(prepared, rng)
    rows = []
    for name in prepared.mechanisms:
        outcome = simulate(prepared.job, market, MECHANISMS[name]())
        rows.append(outcome.record(name))
    return rows
