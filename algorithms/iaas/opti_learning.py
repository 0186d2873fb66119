"""OptiLearning (paper 003, Sec. IV-D, Alg. 3): exponential weights over the policies with
feedback delayed by d slots, on the shared policy-selection module
(algorithms/common/policy_selection.py, the exponentiated gradient of paper 000's Alg. 2).

Each job j arriving in slot a_j draws a policy from the current weights (line 4); the weights
learn job j's cost under every policy at slot a_j + d, d the largest relative deadline (lines
5-15), with eta = sqrt(2 ln n / (d (t - d))) at that slot (line 9), i.e. sqrt(2 ln n / (d a_j)).
A policy's cost of a job is its cost re-simulated under the realised price path. Without
self-owned instances the jobs are independent, so every policy's cost is `stream_cost`'s and
the weights are one `exponentiated_gradient` call. With R > 0 self-owned instances the idle
count N(t) a job meets depends on the policies drawn for the jobs before it, so the jobs are
played in arrival order (`OnlineWeights`): job j's counterfactual under policy k takes r_j from
k's beta0 against the realised N(t) (eq. 5, or eq. 2 for the theta and naive policies), and
only the drawn policy's r_j is taken from N(t).

Proposition 6 needs costs in [0, 1]; Alg. 3 as printed (lines 11-12) weighs the raw costs.
`normalisation`:
- `bound` (default): c_j / B_j with B_j = delta_j ceil(d_j / Len) (p + b_max), a cost no policy
  can exceed: at most ceil(d_j / Len) hours of delta_j on-demand instances (an instance's paid
  hours do not overlap) and as many of spot instances charged at most the highest bid;
- `job_minmax`: job j's [min, max] over the policies (the shared module's scheme);
- `none`: Alg. 3 as printed, w <- w exp(-eta c_j) on dollar costs. The shared module takes
  utilities in [0, 1], so job j runs with its [min, max] bounds and eta_j times its cost spread
  (max - min): eta_j spread_j z_j = eta_j (c_max - c_j), the printed update up to a constant per
  job, which no weight sees. With one bound B for every job, `none` is `bound` with eta times B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.common.policy_selection import (
    OnlineWeights,
    SelectionRun,
    delays_from_arrivals,
    draw_policies,
    exponentiated_gradient,
    job_bounds,
    policies_at,
)
from algorithms.iaas.job_execution import LEN, ON_DEMAND_PRICE, run_job_policies
from algorithms.iaas.policies import KIND_CODES, Policy, stream_cost
from algorithms.iaas.self_owned import idle_minimum, utilisation, wanted_instances

NORMALISATIONS = ("bound", "job_minmax", "none")


def cost_bound(jobs, max_bid: float, on_demand: float = ON_DEMAND_PRICE) -> np.ndarray:
    """B_j: no policy of bid at most `max_bid` pays more for job j (module docstring)."""
    hours = np.ceil(jobs.deadline / LEN)
    return jobs.parallelism * hours * (on_demand + max_bid)


def learning_rates(arrival: np.ndarray, lag: int, n_policies: int) -> np.ndarray:
    """Alg. 3 line 9 for each job's feedback: eta = sqrt(2 ln n / (d a_j))."""
    return np.sqrt(2.0 * math.log(n_policies) / (lag * np.asarray(arrival, dtype=float)))


@dataclass(frozen=True, eq=False)
class OptiLearningRun:
    """The costs (K jobs x n policies), the selection run on -cost, the policies drawn, and the
    realised self-owned instances r_j of the drawn policies (zeros without self-owned ones)."""

    policies: tuple[Policy, ...]
    costs: np.ndarray
    spot_work: np.ndarray
    selection: SelectionRun
    chosen: np.ndarray
    lag: int
    self_owned: np.ndarray
    finish: np.ndarray
    utilisation: float = 0.0

    @property
    def realised_cost(self) -> np.ndarray:
        return self.costs[np.arange(self.costs.shape[0]), self.chosen]

    @property
    def realised_spot_work(self) -> np.ndarray:
        return self.spot_work[np.arange(self.spot_work.shape[0]), self.chosen]

    @property
    def missed(self) -> int:
        return int(np.count_nonzero(self.finish == 0))

    def unit_cost(self, work: float) -> float:
        """alpha of the realised choices: total cost / total work, per instance-hour of work."""
        return float(self.realised_cost.sum() / work * LEN)


def _bounds(jobs, policies, costs: np.ndarray | None, normalisation: str, on_demand: float):
    """[lower, upper] of -cost per job: (-B_j, 0), or job j's [min, max] over the policies
    (`job_minmax` and `none`)."""
    if normalisation == "bound":
        upper = cost_bound(jobs, max(p.bid for p in policies), on_demand)
        return -upper, np.zeros_like(upper)
    return job_bounds(-costs, "job_minmax", 0.0, 1.0)


def _eta_scale(costs: np.ndarray, normalisation: str) -> np.ndarray:
    """The factor on eta_j that turns the normalised update into the printed one (`none`: each
    job's cost spread; 1 for a job every policy pays alike, whose z is constant) or 1."""
    if normalisation != "none":
        return np.ones(costs.shape[0])
    spread = costs.max(axis=1) - costs.min(axis=1)
    return np.where(spread > 0, spread, 1.0)


def opti_learning(
    jobs,
    prices: np.ndarray,
    policies,
    rng: np.random.Generator,
    normalisation: str = "bound",
    on_demand: float = ON_DEMAND_PRICE,
    runs=None,
    instances: int = 0,
) -> OptiLearningRun:
    """Alg. 3 on `jobs` (arrival order) with the candidate `policies` and `instances` (R)
    self-owned instances; `rng` draws the policies. `runs`: the policies' `stream_cost` on
    these jobs and prices without self-owned instances, when the caller has them."""
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, got {normalisation!r}")
    policies = tuple(policies)
    if instances > 0:
        return _opti_learning_self_owned(jobs, prices, policies, rng, normalisation, on_demand, instances)
    if runs is None:
        runs = [stream_cost(jobs, prices, p, 0, on_demand) for p in policies]
    costs = np.column_stack([r.cost for r in runs])
    lag = int(jobs.deadline.max())
    lower, upper = _bounds(jobs, policies, costs, normalisation, on_demand)
    eta = learning_rates(jobs.arrival, lag, len(policies)) * _eta_scale(costs, normalisation)
    selection = exponentiated_gradient(-costs, lower, upper, eta=eta, delay=delays_from_arrivals(jobs.arrival, lag))
    chosen = draw_policies(selection.weights[:-1], rng)
    finish = np.column_stack([r.finish for r in runs])[np.arange(len(jobs)), chosen]
    return OptiLearningRun(
        policies,
        costs,
        np.column_stack([r.spot_work for r in runs]),
        selection,
        chosen,
        lag,
        np.zeros(len(jobs), dtype=np.int64),
        finish,
    )


def _opti_learning_self_owned(jobs, prices, policies, rng, normalisation, on_demand, instances) -> OptiLearningRun:
    """Alg. 3 job by job with R > 0 (module docstring); its draws and weights are those of the
    batch path whenever r_j = 0 for every job."""
    n, k_jobs = len(policies), len(jobs)
    if prices.size < jobs.horizon():
        raise ValueError(f"the price path covers {prices.size} slots, the jobs need {jobs.horizon()}")
    lag = int(jobs.deadline.max())
    eta = learning_rates(jobs.arrival, lag, n)
    delay = delays_from_arrivals(jobs.arrival, lag)
    release = np.arange(1, k_jobs + 1) + delay
    order = np.argsort(release, kind="stable")
    beta0s = list(dict.fromkeys(p.beta0 for p in policies))
    column = np.array([beta0s.index(p.beta0) for p in policies])
    want = np.column_stack([wanted_instances(jobs.size, jobs.deadline, jobs.parallelism, b0) for b0 in beta0s])
    kind = np.array([KIND_CODES[p.kind] for p in policies], dtype=np.int64)
    beta = np.array([p.beta for p in policies], dtype=float)
    bid = np.array([p.bid for p in policies], dtype=float)
    theta = np.array([p.theta for p in policies], dtype=float)
    prices = np.asarray(prices, dtype=float)
    fixed_bound = normalisation == "bound"
    bound = cost_bound(jobs, float(bid.max()), on_demand) if fixed_bound else None
    uniforms = rng.random(k_jobs)
    idle = np.full(jobs.horizon(), instances, dtype=np.int64)
    online = OnlineWeights(n)
    costs, spot_work, z = np.empty((k_jobs, n)), np.empty((k_jobs, n)), np.empty((k_jobs, n))
    chosen, r_chosen, finish = (np.zeros(k_jobs, dtype=np.int64) for _ in range(3))
    scale = np.ones(k_jobs)
    learnt = 0
    for j in range(k_jobs):
        while learnt < k_jobs and release[order[learnt]] <= j:
            online.learn(z[order[learnt]], eta[order[learnt]] * scale[order[learnt]])
            learnt += 1
        a, d, delta = int(jobs.arrival[j]), int(jobs.deadline[j]), int(jobs.parallelism[j])
        r = np.minimum(want[j], idle_minimum(idle, a, a + d - 1))[column]
        money, slots = run_job_policies(
            a,
            d,
            np.maximum(jobs.size[j] - d * r, 0.0),
            delta - r,
            prices,
            kind,
            beta,
            bid,
            theta,
            float(on_demand),
            LEN,
        )
        costs[j] = money[:, 0] + money[:, 1]
        spot_work[j] = money[:, 2]
        u = -costs[j]
        if fixed_bound:
            lower, upper = -bound[j], 0.0
        else:
            upper = u.max()
            lower = u.min() if u.min() < upper else upper - 1.0
            if normalisation == "none" and u.min() < upper:
                scale[j] = upper - u.min()
        # `normalise`'s map; its bound checks run once on every row in `exponentiated_gradient`
        z[j] = (u - lower) / (upper - lower)
        k = int(policies_at(online.weights[None, :], uniforms[j : j + 1])[0])
        chosen[j], r_chosen[j], finish[j] = k, r[k], slots[k, 0]
        idle[a - 1 : a + d - 1] -= r[k]
    lower, upper = _bounds(jobs, policies, costs, normalisation, on_demand)
    selection = exponentiated_gradient(-costs, lower, upper, eta=eta * scale, delay=delay)
    return OptiLearningRun(
        policies,
        costs,
        spot_work,
        selection,
        chosen,
        lag,
        r_chosen,
        finish,
        utilisation(jobs.arrival, jobs.size, jobs.deadline, r_chosen, instances),
    )


def proposition6_bound(n_policies: int, lag: int, n_jobs: int, delta: float = 0.05) -> float:
    """Proposition 6: with probability 1 - delta the average normalised regret against the best
    fixed policy is at most 9 sqrt(2 d ln(n / delta) / N')."""
    return 9.0 * math.sqrt(2.0 * lag * math.log(n_policies / delta) / n_jobs)
