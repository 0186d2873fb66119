"""Baseline: reserve-in-advance for the worst case (paper 004, Sec. 1), a welfare baseline.

Sec. 1 (the toy example) contrasts probabilistic SoWs with a platform where "the customer [is]
required to reserve blocks of computation time at the moment of submission": a deterministic
request that must cover every (arrival, duration) the job may draw, so that a job which is very
short but whose arrival is uncertain ties up a long block. The paper names this baseline only in
words; the reading below is ours.

Our reading, in the model of Sec. 2 (N nodes, rounds 0..T-1, a job started at s runs in rounds
s..s+d-1 and finishes at f = s + d):
- At its birth b_j, in submission order, job j asks for a block of c_j nodes over the window
  W_j = [min_i a_i, max_i (a_i + d_i) - 1] over its support points i: the smallest block that lets
  it start on arrival and finish whatever (a, d) it draws.
- It is admitted, first come first served, if its expected value when run on arrival,
  sum_i p_i V_j(a_i + d_i), is positive and the nodes reserved by the jobs admitted before it plus
  c_j fit within N in every round of W_j; otherwise it is rejected and never runs.
- An admitted job starts at its realised arrival a_j and finishes at a_j + d_j with value
  V_j(a_j + d_j) (possibly 0); its whole block stays reserved whatever it draws: the waste Sec. 1
  points at. As every realised run lies inside its block, capacity is never exceeded, and no job
  is ever evicted or cancelled.
- The signal of Sec. 2 (footnote 6) plays no part: the block is fixed at birth, before arrival.
- No payments (payment 0 for every job): this is a welfare baseline, not a mechanism.

Readings beyond the issue's: a rejected job reserves nothing (`extra["reserved"]` is 0); the
realised (a_j, d_j) must be one of job j's support points (Sec. 2: it is drawn from P_j), else
ValueError.

`extra` columns (per job, submission order): `admitted` (bool) and `reserved` (node-rounds of
its block, c_j * |W_j|, 0 if rejected).
"""

from __future__ import annotations

import numpy as np

from algorithms.sow.outcome import JobOutcomes
from market.sow.statement_of_work import BirthSequence, Realisation

__all__ = ["check_baseline_inputs", "reserve_worst_case"]


def check_baseline_inputs(sequence: BirthSequence, realisation: Realisation, nodes) -> int:
    """Validate what the welfare baselines need and return `nodes` as an int.

    ValueError if `nodes` is not a positive integer, if a job's concurrency is above it (naming the
    job's index), or if the realisation does not give every job one of its own support points."""
    if isinstance(nodes, (bool, np.bool_)) or not isinstance(nodes, (int, np.integer)) or nodes < 1:
        raise ValueError(f"nodes must be a positive integer, got {nodes!r}")
    nodes = int(nodes)
    jobs = len(sequence)
    for name in ("arrival", "duration"):
        column = np.asarray(getattr(realisation, name))
        if column.shape != (jobs,):
            raise ValueError(f"realisation.{name} has shape {column.shape}, expected ({jobs},) (one per job)")
    for j, sow in enumerate(sequence.jobs):
        if sow.concurrency > nodes:
            raise ValueError(f"job {j}: concurrency {sow.concurrency} is above the {nodes} nodes")
        a, d = int(realisation.arrival[j]), int(realisation.duration[j])
        if not np.any((sow.arrival == a) & (sow.duration == d)):
            raise ValueError(f"job {j}: the realised (arrival {a}, duration {d}) is not a support point of its SoW")
    return nodes


def reserve_worst_case(sequence: BirthSequence, realisation: Realisation, nodes: int) -> JobOutcomes:
    """Reserve-in-advance for the worst case (Sec. 1; reading in the module docstring): each job, at
    its birth and in submission order, reserves c_j nodes over the window covering all its
    support points, admitted if its expected value run on arrival is positive and the block fits
    beside the blocks already reserved. Admitted jobs run on arrival; payments are all 0."""
    nodes = check_baseline_inputs(sequence, realisation, nodes)
    jobs = len(sequence)
    out = JobOutcomes.empty(jobs)
    admitted = np.zeros(jobs, bool)
    reserved = np.zeros(jobs, np.int64)
    usage = np.zeros(sequence.rounds(), np.int64)  # nodes reserved in each round
    for j, sow in enumerate(sequence.jobs):
        ends = sow.arrival + sow.duration  # finish rounds of the support points
        lo, hi = int(sow.arrival.min()), int(ends.max())  # window W_j = [lo, hi - 1]
        expected = float(sow.probability @ sow.value(ends))
        if expected > 0 and int(usage[lo:hi].max()) + sow.concurrency <= nodes:
            usage[lo:hi] += sow.concurrency
            admitted[j] = True
            reserved[j] = sow.concurrency * (hi - lo)
    a = np.asarray(realisation.arrival, np.int64)
    finish = a + np.asarray(realisation.duration, np.int64)
    out.start[admitted] = a[admitted]
    out.finish[admitted] = finish[admitted]
    out.completed[:] = admitted
    out.value[:] = [float(sow.value(f)) if ok else 0.0 for sow, f, ok in zip(sequence.jobs, finish, admitted)]
    out.extra["admitted"] = admitted
    out.extra["reserved"] = reserved
    return out
