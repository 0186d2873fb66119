"""The `iaas` family as the sweep engine sees it (paper 003; docs/iaas/mechanisms.md).

The engine passes a plain dict config with the sections
  jobs:       the job stream (market/iaas/jobs.py, Sec. V-A);
  prices:     the spot price process (market/iaas/spot_prices.py);
  self_owned: R, the self-owned instances;
  policies:   the grids of beta, beta0, bids and theta (Sec. V-A);
  learning:   OptiLearning's cost normalisation;
  mechanisms: BestDynalloc, BestTheta, BestNaive, OptiLearning, OptiLearning(grid=theta),
              Dynalloc(beta0=...,beta=...,b=...), Theta(theta=...,b=...) (config.py).
One replicate draws one job stream and one price path and runs every mechanism on them
(common random numbers). `utility` is minus the average unit cost alpha (dollars per
instance-hour of work), so that higher is better as in every family; `unit_cost` is alpha.
Side tables: `policies` on the BestDynalloc / BestTheta / BestNaive rows (alpha and the self-owned
utilisation of every policy of the grid: Figs. 4-5), `weights` on the OptiLearning rows (the
policy weights after every 5% of the jobs). The OptiLearning rows also carry Proposition 6's
n, d and N' (`learning_policies`, `learning_lag`, `learning_jobs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from algorithms.common.optional_keys import without_null_keys
from algorithms.common.streams import mechanism_stream
from algorithms.iaas.config import (
    BEST,
    LEARNING,
    LearningConfig,
    MechanismSpec,
    PoliciesConfig,
    PolicySettings,
    SelfOwnedConfig,
    mechanism_specs,
)
from algorithms.iaas.opti_learning import opti_learning
from algorithms.iaas.policies import Policy, stream_cost
from market.iaas.jobs import JobParams, JobStream, draw_jobs
from market.iaas.spot_prices import PriceParams, draw_prices, load_price_trace

NAME = "iaas"
PAPER = "003: Towards Designing Cost-Optimal Policies to Utilize IaaS Clouds with Online Learning"
QUESTION = "How should a stream of deadline jobs use self-owned, spot and on-demand instances to cost the least per unit of work?"
UTILITY = "minus alpha, the average cost per instance-hour of work in on-demand prices (OD-Only about -1.07); higher (nearer 0) is cheaper"
SECTIONS = ("jobs", "prices", "self_owned", "policies", "learning")
SUMMARY_COLUMNS = ("unit_cost", "spot_share", "self_owned_utilisation")
INPUT_FILES = {"prices.path": load_price_trace}
WEIGHT_CHECKPOINTS = 20
# Documented keys listed at null in conf/family/iaas.yaml, so that the command line sets them without `+`;
# null is the code's default (algorithms/common/optional_keys.py).
OPTIONAL_KEYS = (
    "jobs.pareto_shape",
    "jobs.pareto_scale",
    "jobs.size_hours",
    "prices.path",
    "prices.trace_slot_minutes",
    "prices.start",
    "policies.betas",
    "policies.bids",
    "policies.thetas",
    "policies.beta0s",
    "policies.beta_per_bid",
)
# The sections declared once (market/common/sections.py): keys, defaults, checks and docs.
DECLARED_SECTIONS = {
    "jobs": JobParams,
    "prices": PriceParams,
    "self_owned": SelfOwnedConfig,
    "policies": PoliciesConfig,
    "learning": LearningConfig,
}


@dataclass(frozen=True)
class PreparedIaas:
    jobs: JobParams
    prices: PriceParams
    settings: PolicySettings
    specs: tuple[MechanismSpec, ...]


def prepare(config: dict) -> PreparedIaas:
    """Validate a config (errors name the key, or the trace's file and line)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    config = without_null_keys(config, OPTIONAL_KEYS)
    settings = PolicySettings.from_config(config)
    return PreparedIaas(
        JobParams.from_config(config.get("jobs")),
        PriceParams.from_config(config.get("prices")),
        settings,
        mechanism_specs(config, settings),
    )


def mechanism_names(config: dict) -> list[str]:
    return [spec.name for spec in prepare(config).specs]


def _row(name: str, cost, policy_name: str, tables: dict | None = None) -> dict:
    work = cost.spot_work.sum() + cost.on_demand_work.sum() + cost.self_owned_work.sum()
    row = {
        "mechanism": name,
        "utility": -cost.unit_cost,
        "unit_cost": cost.unit_cost,
        "spot_share": float(cost.spot_work.sum() / work) if work > 0 else 0.0,
        "self_owned_utilisation": cost.utilisation,
        "policy": policy_name,
        "missed": int(np.count_nonzero(cost.finish == 0)),
    }
    if tables:
        row["tables"] = tables
    return row


def _grid_table(costs) -> dict:
    return {
        "policy": [c.policy.name for c in costs],
        "bid": [c.policy.bid for c in costs],
        "beta": [c.policy.beta if c.policy.kind == "dynalloc" else np.nan for c in costs],
        "beta0": [np.nan if c.policy.beta0 is None else c.policy.beta0 for c in costs],
        "theta": [c.policy.theta if c.policy.kind != "dynalloc" else np.nan for c in costs],
        "unit_cost": [c.unit_cost for c in costs],
        "self_owned_utilisation": [c.utilisation for c in costs],
    }


def _learning_row(
    spec: MechanismSpec,
    prepared: PreparedIaas,
    jobs: JobStream,
    prices,
    rng: np.random.Generator,
    policies: list[Policy],
    runs: list | None,
) -> dict:
    """OptiLearning over `policies`; `runs`: their costs without self-owned instances (the
    BestDynalloc / BestTheta grid's), which are Alg. 3's counterfactuals when R = 0."""
    s = prepared.settings
    run = opti_learning(
        jobs,
        prices,
        policies,
        mechanism_stream(rng, spec.name),
        s.normalisation,
        prepared.prices.on_demand,
        runs,
        s.instances,
    )
    alpha = run.unit_cost(float(jobs.size.sum()))
    rows = np.unique(np.linspace(0, len(jobs), WEIGHT_CHECKPOINTS + 1).astype(int))
    weights = run.selection.weights[rows]
    table = {
        "job": np.repeat(rows, len(policies)).tolist(),
        "policy": [p.name for p in policies] * len(rows),
        "weight": weights.ravel().tolist(),
    }
    spot = float(run.realised_spot_work.sum())
    return {
        "mechanism": spec.name,
        "utility": -alpha,
        "unit_cost": alpha,
        "spot_share": spot / float(jobs.size.sum()),
        "self_owned_utilisation": run.utilisation,
        "policy": policies[int(np.argmax(run.selection.final_weights))].name,
        "missed": run.missed,
        "learning_policies": len(policies),
        "learning_lag": run.lag,
        "learning_jobs": len(jobs),
        "tables": {"weights": table},
    }


class _Grids:
    """The policy grids of one replicate and their costs, each simulated once."""

    def __init__(self, prepared: PreparedIaas, jobs: JobStream, prices: np.ndarray):
        self.settings, self.jobs, self.prices = prepared.settings, jobs, prices
        self.on_demand = prepared.prices.on_demand
        self._costs: dict[str, list] = {}

    def _run(self, key: str, policies: list[Policy], instances: int) -> list:
        if key not in self._costs:
            self._costs[key] = [stream_cost(self.jobs, self.prices, p, instances, self.on_demand) for p in policies]
        return self._costs[key]

    def beta_star(self) -> dict | None:
        """beta*(b): each bid's cheapest beta without self-owned instances (Sec. V-B, Exp. 2)."""
        if self.settings.beta_per_bid != "best":
            return None
        best: dict = {}
        for c in self._run("spot_only", self.settings.spot_only(), 0):
            b = c.policy.bid
            if b not in best or c.unit_cost < best[b].unit_cost:
                best[b] = c
        return {b: c.policy.beta for b, c in best.items()}

    def policies(self, kind: str) -> list[Policy]:
        s = self.settings
        if kind == "BestTheta":
            return s.theta()
        return (s.dynalloc if kind == "BestDynalloc" else s.naive)(self.beta_star())

    def costs(self, kind: str) -> list:
        return self._run(kind, self.policies(kind), self.settings.instances)

    def learning_runs(self, kind: str) -> list | None:
        """The grid's costs when they are Alg. 3's counterfactuals (no self-owned instances)."""
        return self.costs(kind) if self.settings.instances == 0 else None


def simulate_replicate(prepared: PreparedIaas, replicate: int, rng: np.random.Generator) -> list[dict]:
    jobs = draw_jobs(prepared.jobs, rng)
    prices = draw_prices(prepared.prices, max(jobs.horizon(), 1), rng)
    s = prepared.settings
    grids = _Grids(prepared, jobs, prices)
    rows = []
    for spec in prepared.specs:
        if spec.kind in BEST:
            costs = grids.costs(spec.kind)
            best = min(costs, key=lambda c: (c.unit_cost, c.policy.name))
            rows.append(_row(spec.name, best, best.policy.name, {"policies": _grid_table(costs)}))
        elif spec.kind == LEARNING:
            kind = "BestDynalloc" if spec.grid == "dynalloc" else "BestTheta"
            rows.append(
                _learning_row(spec, prepared, jobs, prices, rng, grids.policies(kind), grids.learning_runs(kind))
            )
        else:
            policy: Policy = spec.policy
            rows.append(
                _row(spec.name, stream_cost(jobs, prices, policy, s.instances, prepared.prices.on_demand), policy.name)
            )
    return rows
