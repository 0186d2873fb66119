"""A scheduler of the sow family: the interface of a user's own mechanism (docs/extending.md).

A `Scheduler` is given one replicate's birth sequence, its realisation, the cluster's N nodes and a
random stream of its own, and returns one start round per job (`NOT_STARTED`, -1, for a job it
never starts). The family does the accounting (`account`): a started job runs rounds s..s+d_j-1
on c_j nodes, is never evicted, finishes at f = s + d_j with value V_j(f) (Sec. 2) and pays 0, so
a scheduler is a price-free welfare baseline like the built-in greedies, which fit the interface
(`FirstComeGreedy`, `ValueDensityGreedy` below: their functions' start rounds, accounted, are
their outcomes). The accounting refuses an infeasible schedule (a start before the job's realised
arrival or past the last round, more than N nodes in use in a round).

The realisation holds every job's (arrival, duration) in hindsight; an online scheduler reads job
j's arrival only from round a_j on and its duration only at its end, or at arrival with the
duration signal (`sequence.signal`), as the built-in greedies do. The family does not check it.
"""

from __future__ import annotations

import numpy as np

from market.sow.statement_of_work import BirthSequence, Realisation

from .first_come_greedy import first_come_greedy
from .outcome import NOT_STARTED, JobOutcomes
from .reserve_worst_case import check_baseline_inputs
from .value_density_greedy import value_density_greedy

__all__ = ["FirstComeGreedy", "Scheduler", "ValueDensityGreedy", "account"]


class Scheduler:
    """Subclass and implement `schedule`; the constructor takes the name's parameters."""

    def schedule(
        self, sequence: BirthSequence, realisation: Realisation, nodes: int, rng: np.random.Generator
    ) -> np.ndarray:
        """One start round per job, in submission order (NOT_STARTED: never started). `rng` is the
        mechanism's own stream (the same for the same replicate and name)."""
        raise NotImplementedError


class FirstComeGreedy(Scheduler):
    """The built-in baseline as a Scheduler (first_come_greedy.py)."""

    def schedule(self, sequence, realisation, nodes, rng):
        return first_come_greedy(sequence, realisation, nodes).start


class ValueDensityGreedy(Scheduler):
    """The built-in baseline as a Scheduler (value_density_greedy.py)."""

    def schedule(self, sequence, realisation, nodes, rng):
        return value_density_greedy(sequence, realisation, nodes).start


def account(sequence: BirthSequence, realisation: Realisation, nodes: int, starts, where: str) -> JobOutcomes:
    """The outcome of a schedule (module docstring); ValueError naming `where` if it is infeasible."""
    nodes = check_baseline_inputs(sequence, realisation, nodes)
    jobs = len(sequence)
    start = np.asarray(starts)
    if start.shape != (jobs,) or not (start.size == 0 or np.issubdtype(start.dtype, np.integer)):
        raise ValueError(f"{where}: schedule must return {jobs} integer start rounds, got {start.dtype} {start.shape}")
    start = start.astype(np.int64)
    arrival = np.asarray(realisation.arrival, np.int64)
    duration = np.asarray(realisation.duration, np.int64)
    started = start != NOT_STARTED
    rounds = sequence.rounds()
    wrong = np.flatnonzero(started & ((start < arrival) | (start >= rounds)))
    if wrong.size:
        j = int(wrong[0])
        raise ValueError(f"{where}: job {j} starts at {start[j]}, outside its arrival {arrival[j]}..{rounds - 1}")
    busy = np.zeros(rounds + sequence.bounds.max_duration + 1, np.int64)
    for j in np.flatnonzero(started).tolist():
        busy[start[j] : start[j] + duration[j]] += sequence.jobs[j].concurrency
    if busy.max(initial=0) > nodes:
        t = int(np.argmax(busy > nodes))
        raise ValueError(f"{where}: {busy[t]} nodes in use in round {t}, above the {nodes} nodes")
    out = JobOutcomes.empty(jobs)
    out.start[:] = start
    out.finish[started] = start[started] + duration[started]
    out.completed[:] = started
    out.value[:] = [float(sow.value(f)) if ok else 0.0 for sow, f, ok in zip(sequence.jobs, out.finish, started)]
    return out
