"""OptiLearning (paper 003, Sec. IV-D, Alg. 3) without self-owned instances: exponential weights
over the policies with feedback delayed by d slots, on the shared policy-selection module
(algorithms/common/policy_selection.py, the exponentiated gradient of paper 000's Alg. 2).

Each job j arriving in slot a_j draws a policy from the current weights (line 4); the weights
learn job j's cost under every policy at slot a_j + d, d the largest relative deadline (lines
5-15), with eta = sqrt(2 ln n / (d (t - d))) at that slot (line 9), i.e. sqrt(2 ln n / (d a_j)).
A policy's cost of a job is its cost re-simulated under the realised price path (the jobs are
independent without self-owned instances, so every policy's cost is `stream_cost`'s).

Costs must lie in [0, 1] (Proposition 6). `normalisation`:
- `bound` (default): c_j / B_j with B_j = delta_j ceil(d_j / Len) (p + b_max), a cost no policy
  can exceed: at most ceil(d_j / Len) hours of delta_j on-demand instances (an instance's paid
  hours do not overlap) and as many of spot instances charged at most the highest bid;
- `job_minmax`: job j's [min, max] over the policies (the shared module's scheme).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.common.policy_selection import (SelectionRun, delays_from_arrivals, draw_policies,
                                                 exponentiated_gradient, job_bounds)
from algorithms.iaas.job_execution import LEN, ON_DEMAND_PRICE
from algorithms.iaas.policies import Policy, stream_cost

NORMALISATIONS = ("bound", "job_minmax")


def cost_bound(jobs, max_bid: float, on_demand: float = ON_DEMAND_PRICE) -> np.ndarray:
    """B_j: no policy of bid at most `max_bid` pays more for job j (module docstring)."""
    hours = np.ceil(jobs.deadline / LEN)
    return jobs.parallelism * hours * (on_demand + max_bid)


def learning_rates(arrival: np.ndarray, lag: int, n_policies: int) -> np.ndarray:
    """Alg. 3 line 9 for each job's feedback: eta = sqrt(2 ln n / (d a_j))."""
    return np.sqrt(2.0 * math.log(n_policies) / (lag * np.asarray(arrival, dtype=float)))


@dataclass(frozen=True, eq=False)
class OptiLearningRun:
    """The costs (K jobs x n policies), the selection run on -cost, and the policies drawn."""

    policies: tuple[Policy, ...]
    costs: np.ndarray
    spot_work: np.ndarray
    selection: SelectionRun
    chosen: np.ndarray
    lag: int

    @property
    def realised_cost(self) -> np.ndarray:
        return self.costs[np.arange(self.costs.shape[0]), self.chosen]

    @property
    def realised_spot_work(self) -> np.ndarray:
        return self.spot_work[np.arange(self.spot_work.shape[0]), self.chosen]

    def unit_cost(self, work: float) -> float:
        """alpha of the realised choices: total cost / total work, per instance-hour of work."""
        return float(self.realised_cost.sum() / work * LEN)


def opti_learning(jobs, prices: np.ndarray, policies, rng: np.random.Generator,
                  normalisation: str = "bound", on_demand: float = ON_DEMAND_PRICE,
                  runs=None) -> OptiLearningRun:
    """Alg. 3 on `jobs` (arrival order) with the candidate `policies`; `rng` draws the policies.
    `runs`: the policies' `stream_cost` on these jobs and prices, when the caller has them."""
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, got {normalisation!r}")
    policies = tuple(policies)
    if runs is None:
        runs = [stream_cost(jobs, prices, p, 0, on_demand) for p in policies]
    costs = np.column_stack([r.cost for r in runs])
    lag = int(jobs.deadline.max())
    if normalisation == "bound":
        upper = cost_bound(jobs, max(p.bid for p in policies), on_demand)
        lower, upper = -upper, np.zeros_like(upper)
    else:
        lower, upper = job_bounds(-costs, "job_minmax", 0.0, 1.0)
    selection = exponentiated_gradient(-costs, lower, upper, eta=learning_rates(jobs.arrival, lag, len(policies)),
                                       delay=delays_from_arrivals(jobs.arrival, lag))
    chosen = draw_policies(selection.weights[:-1], rng)
    return OptiLearningRun(policies, costs, np.column_stack([r.spot_work for r in runs]), selection, chosen, lag)


def proposition6_bound(n_policies: int, lag: int, n_jobs: int, delta: float = 0.05) -> float:
    """Proposition 6: with probability 1 - delta the average normalised regret against the best
    fixed policy is at most 9 sqrt(2 d ln(n / delta) / N')."""
    return 9.0 * math.sqrt(2.0 * lag * math.log(n_policies / delta) / n_jobs)
