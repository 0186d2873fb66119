"""The policies of paper 003 and their costs on a job stream (Sec. IV-C, V-A).

A policy is the tuple {beta0, beta, b} of Sec. IV-C (Alg. 2, Dynalloc: self-owned instances by
eq. (5) with beta0, then Proportion with beta and the bid b, and Proposition 4), or a baseline:
the theta policies of [6], [7] (theta delta spot at the bid b, the rest on-demand), with
self-owned instances by the naive eq. (2) when the user has some (Sec. V-B, Experiment 2).

Sec. V-A's grid: beta and beta0 in {i / 12 : i = 0..11} U {0.9999}, b in {0.10 + 0.03 (i - 1) :
i = 1..7}, theta in {0.0, 0.1, ..., 1.0}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms.iaas.job_execution import DYNALLOC, LEN, ON_DEMAND_PRICE, THETA, THETA_ONCE, run_jobs
from algorithms.iaas.self_owned import allocate_self_owned, self_owned_work, utilisation

BETAS = tuple(i / 12 for i in range(12)) + (0.9999,)
BIDS = tuple(round(0.10 + 0.03 * i, 2) for i in range(7))
THETAS = tuple(round(0.1 * i, 1) for i in range(11))
NAIVE = None  # beta0 of the naive self-owned policy, eq. (2)
# The theta policies' reading (policies.theta_reading): on-demand from their first spot loss
# (`once`, the default: it reproduces Table II's rho, docs/iaas/mechanisms.md) or a new bid every
# hour while the job has flexibility (`rebid`).
THETA_READINGS = {"once": "theta_once", "rebid": "theta"}
KIND_CODES = {"dynalloc": DYNALLOC, "theta": THETA, "theta_once": THETA_ONCE}


@dataclass(frozen=True)
class Policy:
    """One policy: kind `dynalloc` (Dynalloc, Alg. 2, with Proportion), `theta` or `theta_once` (the theta
    policies re-bidding every hour, or on-demand from their first spot loss: job_execution.py);
    beta0 None is eq. (2)."""

    kind: str
    bid: float
    beta: float = 0.0
    beta0: float | None = NAIVE
    theta: float = 0.0

    @property
    def name(self) -> str:
        self_owned = "naive" if self.beta0 is None else f"{self.beta0:.4g}"
        if self.kind == "dynalloc":
            return f"dynalloc(beta0={self_owned},beta={self.beta:.4g},b={self.bid:.2f})"
        return f"{self.kind}(theta={self.theta:.1f},b={self.bid:.2f},self_owned={self_owned})"


def dynalloc(bid: float = 0.19, beta: float = 0.0, beta0: float | None = NAIVE) -> Policy:
    """`Dynalloc(beta0=...,beta=...,b=...)` (algorithms/iaas/registry.py): Alg. 2 with Proportion."""
    return Policy("dynalloc", bid, beta, beta0)


def theta_policy(bid: float = 0.19, theta: float = 0.0, theta_reading: str = "once") -> Policy:
    """`Theta(theta=...,b=...)` (algorithms/iaas/registry.py), read as `policies.theta_reading` says."""
    return Policy(THETA_READINGS[theta_reading], bid, theta=theta)


def dynalloc_grid(betas=BETAS, bids=BIDS, beta0s=(NAIVE,)) -> list[Policy]:
    """Sec. V-B's order: by bid, then beta0, then beta (Fig. 4: 7 groups of 13)."""
    return [Policy("dynalloc", b, beta, beta0) for b in bids for beta0 in beta0s for beta in betas]


def theta_grid(thetas=THETAS, bids=BIDS, kind: str = "theta") -> list[Policy]:
    return [Policy(kind, b, theta=theta) for b in bids for theta in thetas]


@dataclass(frozen=True, eq=False)
class StreamCost:
    """One policy on one job stream: per-job costs and the work each kind of instance did."""

    policy: Policy
    spot_cost: np.ndarray
    on_demand_cost: np.ndarray
    spot_work: np.ndarray
    on_demand_work: np.ndarray
    self_owned_work: np.ndarray
    self_owned: np.ndarray  # r_j
    finish: np.ndarray  # slot the job was done in (0: missed)
    utilisation: float  # of the self-owned instances

    @property
    def cost(self) -> np.ndarray:
        return self.spot_cost + self.on_demand_cost

    @property
    def unit_cost(self) -> float:
        """alpha (Sec. V-A): total cost / total work, in dollars per instance-hour of work."""
        work = self.spot_work.sum() + self.on_demand_work.sum() + self.self_owned_work.sum()
        return float(self.cost.sum() / work * LEN) if work > 0 else 0.0


def stream_cost(
    jobs, prices: np.ndarray, policy: Policy, instances: int = 0, on_demand: float = ON_DEMAND_PRICE
) -> StreamCost:
    """Run `policy` on every job of `jobs` (a market.iaas JobStream) under `prices` (prices[t - 1]
    is slot t's) with `instances` (R) self-owned instances."""
    if prices.size < jobs.horizon():
        raise ValueError(f"the price path covers {prices.size} slots, the jobs need {jobs.horizon()}")
    r = allocate_self_owned(jobs.arrival, jobs.size, jobs.deadline, jobs.parallelism, instances, policy.beta0)
    own = self_owned_work(jobs.size, jobs.deadline, r)
    size = np.maximum(jobs.size - jobs.deadline * r, 0.0)
    parallelism = jobs.parallelism - r
    kind = KIND_CODES[policy.kind]
    money, slots = run_jobs(
        jobs.arrival,
        jobs.deadline,
        size,
        parallelism,
        np.asarray(prices, dtype=float),
        kind,
        float(policy.beta),
        float(policy.bid),
        float(policy.theta),
        float(on_demand),
        LEN,
    )
    return StreamCost(
        policy,
        money[:, 0],
        money[:, 1],
        money[:, 2],
        money[:, 3],
        own,
        r,
        slots[:, 0],
        utilisation(jobs.arrival, jobs.size, jobs.deadline, r, instances),
    )
