"""Baseline: first-come greedy without prices (paper 004, Sec. 1-2), a welfare baseline.

Sec. 1 describes "legacy schedulers [that] are reactive: they have little to no foresight of the
arriving workloads, deal with jobs as they arrive, and do not support submission in advance".
This baseline is such a scheduler in the model of Sec. 2 (N nodes, rounds 0..T-1, a job started
at s >= a_j runs in rounds s..s+d_j-1 on c_j nodes and finishes at f = s + d_j with value
V_j(f)): it ignores the SoWs' distributions, charges no prices and schedules on arrival if
capacity allows. The paper names it only in words; the reading below is ours.

Our reading:
- No reservations and no prices: payment 0 for every job (a welfare baseline, not a mechanism).
- In each round t, the jobs that arrived at or before t and have not started wait in a queue in
  order of arrival (ties by submission order). The queue is scanned in that order and every job
  that fits in the nodes still free at t starts at t (list scheduling: a job that does not fit
  waits, later ones may pass it).
- A waiting job is dropped (it never starts; it is neither evicted nor cancelled) once it can no
  longer finish with positive value as far as the scheduler knows: with the duration signal
  (Sec. 2, footnote 6: d_j is known at arrival) when V_j(t + d_j) = 0; without it when
  V_j(t + d_min) = 0, d_min being the smallest duration among job j's support points with its
  realised arrival (all the scheduler knows of d_j). The check comes before the fit check in the
  scan, so a job is never started in the round it is dropped in.
- A started job runs to its end and is never evicted; without the signal it may finish with
  value 0 (the price of not knowing d).

Readings beyond the issue's: since V_j is non-increasing, a job is dropped in the first round
t >= a_j past its last start round with positive value, b_j + k_j - d (k_j the last k with
V_j(b_j + k) > 0, d = d_j or d_min), which we compute up front; a job whose value is 0 even when
started on arrival is dropped at its arrival. Every job ends started or dropped within the rounds
0..T-1 of `sequence.rounds()`. The realised (a_j, d_j) must be one of job j's support points
(else ValueError).

`extra` columns (per job, submission order): `wait` (rounds waited in the queue: start - a_j for
a started job, drop round - a_j for a dropped one) and `dropped` (bool).
"""

from __future__ import annotations

import numpy as np

from algorithms.sow.outcome import NOT_STARTED, JobOutcomes
from algorithms.sow.reserve_worst_case import check_baseline_inputs
from market.sow.statement_of_work import BirthSequence, Realisation

__all__ = ["first_come_greedy", "last_start", "list_schedule"]


def last_start(sequence: BirthSequence, realisation: Realisation) -> np.ndarray:
    """Per job, the last start round at which the scheduler still expects a positive value:
    b_j + k_j - d with k_j the last k such that V_j(b_j + k) > 0 (-1 if none) and d = d_j with the
    duration signal, else the smallest support duration with the realised arrival. A job waiting
    past this round is dropped."""
    jobs = len(sequence)
    deadline = np.empty(jobs, np.int64)
    for j, sow in enumerate(sequence.jobs):
        positive = np.flatnonzero(sow.values > 0)
        k = int(positive[-1]) if positive.size else -1
        a = int(realisation.arrival[j])
        if sequence.signal == "duration":
            d = int(realisation.duration[j])
        else:
            d = int(sow.duration[sow.arrival == a].min())
        deadline[j] = sow.birth + k - d if k >= 0 else -1
    return deadline


def first_come_greedy(sequence: BirthSequence, realisation: Realisation, nodes: int) -> JobOutcomes:
    """First-come greedy list scheduling without prices (Sec. 1-2; reading in the module
    docstring): start, in order of arrival, every waiting job that fits in the free nodes; drop a
    waiting job once it can no longer finish with positive value. Payments are all 0."""
    return list_schedule(sequence, realisation, nodes)


def list_schedule(sequence: BirthSequence, realisation: Realisation, nodes: int, priority=None) -> JobOutcomes:
    """The price-free list scheduling of the greedy baselines: in each round drop the waiting jobs
    past their `last_start`, then scan the others in `priority(j, t)` order (None: arrival order,
    ties by submission) and start every one that fits in the free nodes; the rest keep waiting in
    arrival order. `extra`: `wait` and `dropped` (module docstring)."""
    nodes = check_baseline_inputs(sequence, realisation, nodes)
    jobs = len(sequence)
    out = JobOutcomes.empty(jobs)
    wait = np.zeros(jobs, np.int64)
    dropped = np.zeros(jobs, bool)
    arrival = np.asarray(realisation.arrival, np.int64)
    duration = np.asarray(realisation.duration, np.int64)
    concurrency = [sow.concurrency for sow in sequence.jobs]
    deadline = last_start(sequence, realisation).tolist()
    order = np.lexsort((np.arange(jobs), arrival)).tolist()  # by arrival, ties by submission
    arrived, runs = arrival.tolist(), duration.tolist()
    rounds = sequence.rounds()
    busy = np.zeros(rounds + sequence.bounds.max_duration + 1, np.int64)  # nodes in use per round
    queue: list[int] = []
    nxt = 0
    for t in range(rounds):
        while nxt < jobs and arrived[order[nxt]] <= t:
            queue.append(order[nxt])
            nxt += 1
        if not queue:
            if nxt == jobs:
                break
            continue
        live = []
        for j in queue:
            if t > deadline[j]:
                dropped[j] = True
                wait[j] = t - arrived[j]
            else:
                live.append(j)
        free = nodes - int(busy[t])
        for j in live if priority is None else sorted(live, key=lambda j: priority(j, t)):
            if concurrency[j] <= free:
                free -= concurrency[j]
                out.start[j] = t
                wait[j] = t - arrived[j]
                busy[t : t + runs[j]] += concurrency[j]
        queue = [j for j in live if out.start[j] == NOT_STARTED]
    if queue:  # cannot happen: every job's last start is before T - 1
        raise AssertionError(f"jobs {queue} still waiting after the last round {rounds - 1}")
    started = out.start != NOT_STARTED
    out.finish[started] = out.start[started] + duration[started]
    out.completed[:] = started
    out.value[:] = [float(sow.value(f)) if ok else 0.0 for sow, f, ok in zip(sequence.jobs, out.finish, started)]
    out.extra["wait"] = wait
    out.extra["dropped"] = dropped
    return out
