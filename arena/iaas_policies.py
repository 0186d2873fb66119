"""Paper 003's policies on the arena (docs/arena.md, "Paper 003's policies"): Dynalloc
without self-owned instances (Proportion, Alg. 1, and Proposition 4, Sec. IV-B/C) and the
theta policies of [6], [7] (Sec. V-A), run by the family's compiled kernel
(`algorithms.iaas.job_execution.run_jobs`) unchanged.

The arena's market enters the kernel as its price path, relative to the on-demand price 1,
with +inf in the slots where the market is down (arena/world.py: the cloud ends every spot
instance there, and the hour is free); bids are relative to the on-demand price too. The
kernel's timing, billing and fallbacks are paper 003's own: nothing is adapted but the units.
"""

from __future__ import annotations

import numpy as np

from algorithms.iaas.job_execution import run_jobs
from algorithms.iaas.policies import KIND_CODES, Policy
from arena.outcome import StreamOutcome, from_columns
from arena.world import LEN, ON_DEMAND, World


def run_iaas_policy(policy: Policy, world: World) -> StreamOutcome:
    """Every job of `world` under `policy` (its beta0 is ignored: the arena has no self-owned
    instances)."""
    jobs = world.jobs
    money, slots = run_jobs(
        jobs.arrival,
        jobs.deadline,
        np.asarray(jobs.size, dtype=float),
        jobs.parallelism,
        world.cloud_price(),
        KIND_CODES[policy.kind],
        float(policy.beta),
        float(policy.bid),
        float(policy.theta),
        ON_DEMAND,
        LEN,
    )
    return from_columns(money[:, 0], money[:, 1], money[:, 2], money[:, 3], slots[:, 0], slots[:, 1])
