"""The `arena` family as the sweep engine sees it (docs/arena.md).

The engine passes a plain dict config with the sections
  jobs:      paper 003's job stream (market/iaas/jobs.py);
  market:    the spot market: synthetic (paper 000), trace (the bundled real trace) or
             exponential (paper 003), on 5-minute slots (arena/world.py);
  pool:      the AHAP / AHANP pool the groups AHAP and AHANP expand to (algorithms/spot/config.py);
  policies:  the Dynalloc / Theta grids the groups Dynalloc and Theta expand to (betas, bids,
             thetas, theta_reading; arena/config.py, with algorithms/iaas/config.py's checks);
  adapt:     `bid`, the bid of paper 000's policies (arena/spot_policies.py);
  learning:  the meta-learner's `candidates`, `feedback` and `normalisation` (arena/meta_learner.py);
  mechanisms: names of arena/config.py.
One replicate draws one job stream and one price path and runs every mechanism on all of its
jobs (common random numbers). `utility` is minus alpha, the average unit cost in on-demand
prices (arena/outcome.py). A `Meta` row runs the meta-learner over `learning.candidates`,
whatever else the cell runs; its side table `meta` holds each candidate's final weight, alpha
and the jobs it was chosen for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from algorithms.common.optional_keys import without_null_keys
from algorithms.common.streams import mechanism_stream
from algorithms.spot.config import PoolConfig
from arena.config import (
    LEARNER,
    META,
    PAPER_000,
    USER,
    AdaptConfig,
    ArenaPoliciesConfig,
    MetaLearningConfig,
    Settings,
    Spec,
    mechanism_specs,
    spec_of,
)
from arena.iaas_policies import run_iaas_policy
from arena.meta_learner import meta_learner
from arena.outcome import StreamOutcome
from arena.spot_policies import run_spot_stream
from arena.world import MarketConfig, World, WorldParams, draw_world
from market.iaas.jobs import JobParams
from market.spot.spot_trace import spot_trace_values

NAME = "arena"
PAPER = "000 and 003 on one spot market: the spot mechanisms of both papers, one job stream, hourly billing"
QUESTION = (
    "Which paper's spot mechanism costs least on which market, and does a meta-learner over both keep up with the best?"
)
UTILITY = "minus alpha, the cost per instance-hour of work in on-demand prices (OD-Only about -1.07); higher (nearer 0) is cheaper"
SECTIONS = ("jobs", "market", "pool", "policies", "adapt", "learning")
SUMMARY_COLUMNS = ("unit_cost", "spot_share", "missed", "fallback_share")
INPUT_FILES = {"market.trace.path": spot_trace_values}
# Documented keys listed at null in conf/family/arena.yaml, so that the command line sets them without `+`;
# null is the code's default (algorithms/common/optional_keys.py).
OPTIONAL_KEYS = ("jobs.pareto_shape", "jobs.pareto_scale", "jobs.size_hours", "pool.sigma_reading", "pool.ahanp_start")
# The sections declared once (market/common/sections.py): keys, defaults, checks and docs.
DECLARED_SECTIONS = {
    "jobs": JobParams,
    "pool": PoolConfig,
    "policies": ArenaPoliciesConfig,
    "adapt": AdaptConfig,
    "learning": MetaLearningConfig,
}


@dataclass(frozen=True)
class PreparedArena:
    world: WorldParams
    settings: Settings
    specs: tuple[Spec, ...]
    candidates: tuple[Spec, ...]


def prepare(config: dict) -> PreparedArena:
    """Validate a config (errors name the key, or the trace's file and line)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    config = without_null_keys(config, OPTIONAL_KEYS)
    jobs = JobParams.from_config(config.get("jobs"))
    market = MarketConfig.from_config(config.get("market"))
    settings = Settings.from_config(config)
    specs = mechanism_specs(config, settings)
    candidates = tuple(spec_of(name, settings) for name in settings.candidates)
    return PreparedArena(WorldParams(jobs, market), settings, specs, candidates)


def mechanism_names(config: dict) -> list[str]:
    return [spec.name for spec in prepare(config).specs]


def run_fixed(spec: Spec, world: World, settings: Settings) -> StreamOutcome:
    """One fixed mechanism of either paper (or a user's spot policy) on every job of `world`."""
    if spec.paper in (PAPER_000, USER):
        return run_spot_stream(spec.kind, dict(spec.params), world, settings.bid, settings.pool.sigma_reading)
    return run_iaas_policy(spec.policy, world)


def simulate_replicate(prepared: PreparedArena, replicate: int, rng: np.random.Generator) -> list[dict]:
    world = draw_world(prepared.world, rng)
    done: dict[str, StreamOutcome] = {}

    def outcome(spec: Spec) -> StreamOutcome:
        if spec.name not in done:
            done[spec.name] = run_fixed(spec, world, prepared.settings)
        return done[spec.name]

    rows = []
    for spec in prepared.specs:
        if spec.kind != META:
            rows.append(outcome(spec).row(spec.name, spec.paper))
            continue
        names = [c.name for c in prepared.candidates]
        normalisation = dict(spec.params).get("normalisation", prepared.settings.normalisation)
        realised, info = meta_learner(
            world,
            names,
            [outcome(c) for c in prepared.candidates],
            prepared.settings.feedback,
            prepared.settings.max_bid(),
            mechanism_stream(rng, spec.name),
            normalisation,
        )
        row = realised.row(spec.name, LEARNER)
        row.update(info["extra"])
        row["tables"] = {"meta": info["table"]}
        rows.append(row)
    return rows
