"""Baseline: value-density greedy without prices, a welfare baseline beside
first-come greedy (algorithms/sow/first_come_greedy.py).

The scheduler a cluster operator would write once jobs carry values: each round, the waiting jobs
that fit start in order of value per node-round, highest first. Paper 004 does not name it; it is
the usual yardstick for posted prices (a price-free rule that still favours the valuable jobs),
so it tells whether the Reduction's prices add anything beyond "run dense jobs first".

Our reading (the model of Sec. 2: N nodes, a job started at s >= a_j runs rounds s..s+d_j-1 on
c_j nodes and finishes at f = s + d_j with value V_j(f)):
- No reservations, no prices, no foresight: a job is considered from its realised arrival on,
  payment 0 for every job (a welfare baseline, not a mechanism).
- In round t every waiting job (arrived at or before t, not started, not dropped) has the value
  density of starting now,

      rho_j(t) = E[V_j(t + d) | what is known] / (c_j E[d | what is known]),

  with d = d_j under the duration signal (Sec. 2, footnote 6) and, without it, d drawn from the
  support points of P_j with the realised arrival a_j (weights renormalised): the expected value
  of starting now per expected node-round. The queue is scanned by rho_j(t), highest first, ties
  by arrival and then by submission order (first come among ties); every job that fits in the
  nodes still free at t starts at t (list scheduling: a job that does not fit waits, the next one
  in the order may start).
- A waiting job is dropped exactly when first-come greedy drops it (`first_come_greedy.last_start`:
  past the last start round at which the scheduler still expects a positive value), before the
  scan; a started job runs to its end and is never evicted.
So the two greedies differ only in the order of the scan: arrival order there, value density here.

`extra` columns (per job, submission order): `wait` (start - a_j, or drop round - a_j),
`dropped` (bool) and `density` (rho_j at the round it started; 0 if it never did).
"""

from __future__ import annotations

import numpy as np

from algorithms.sow.first_come_greedy import last_start, list_schedule
from algorithms.sow.outcome import NOT_STARTED, JobOutcomes
from algorithms.sow.reserve_worst_case import check_baseline_inputs
from market.sow.statement_of_work import BirthSequence, Realisation

__all__ = ["start_densities", "value_density_greedy"]


def start_densities(sequence: BirthSequence, realisation: Realisation, j: int, rounds: np.ndarray) -> np.ndarray:
    """rho_j(t) for every t in `rounds` (module docstring): the expected value of starting job j at
    t over its expected node-rounds, given its realised arrival (and d_j with the duration signal)."""
    sow = sequence.jobs[j]
    rounds = np.asarray(rounds, dtype=np.int64)
    if sequence.signal == "duration":
        d = np.array([int(realisation.duration[j])])
        weight = np.ones(1)
    else:
        match = sow.arrival == int(realisation.arrival[j])
        d = sow.duration[match]
        weight = sow.probability[match] / sow.probability[match].sum()
    value = sow.value(rounds[:, None] + d[None, :]) @ weight
    return value / (sow.concurrency * float(weight @ d))


def value_density_greedy(sequence: BirthSequence, realisation: Realisation, nodes: int) -> JobOutcomes:
    """List scheduling by value per node-round without prices (module docstring): each round, start
    the waiting jobs that fit, densest first, ties first come; drop a waiting job once it can no
    longer finish with positive value. Payments are all 0."""
    check_baseline_inputs(sequence, realisation, nodes)
    jobs = len(sequence)
    arrived = np.asarray(realisation.arrival, np.int64).tolist()
    deadline = last_start(sequence, realisation).tolist()
    rank = {j: n for n, j in enumerate(np.lexsort((np.arange(jobs), arrived)).tolist())}
    # rho_j(t) over the rounds job j may wait in, computed once per job
    table = {
        j: start_densities(sequence, realisation, j, np.arange(arrived[j], max(deadline[j], arrived[j]) + 1))
        for j in range(jobs)
    }
    out = list_schedule(sequence, realisation, nodes, lambda j, t: (-table[j][t - arrived[j]], rank[j]))
    out.extra["density"] = np.array(
        [table[j][s - arrived[j]] if s != NOT_STARTED else 0.0 for j, s in enumerate(out.start.tolist())]
    )
    return out
