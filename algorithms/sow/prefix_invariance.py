"""Lemma 3.1 of paper 004 (Sec. 3), simulated: under LIFO eviction a job's fate does not depend on
the jobs submitted after it.

Lemma 3.1 says job j's failure probability q^t(t', c, d) is fixed by the history at its birth;
run by run the stronger statement holds: with the same realisation and the same oracle draws, removing
every job submitted after j leaves the start, completion, eviction, cancellation and payment of
jobs 0..j as they were. Under LIFO a later job is always evicted before an earlier one and only
raises the prices later jobs see; FIFO and evict-all (the baselines of Sec. 3, "LIFO eviction")
let a later job push an earlier one out.

`prefix_changes` cuts the sequence after each job of `cuts` and counts the earlier jobs whose
fate differs between the full run and the cut run. The sampled oracle draws its replays in
birth order from `seed`'s generator, so the cut run draws the same replays for jobs 0..j.
"""

from __future__ import annotations

import numpy as np

from market.sow.statement_of_work import BirthSequence, Realisation

from .outcome import JobOutcomes
from .scheduler_framework import FrameworkSettings, run_framework

__all__ = ["FATE", "cut_points", "prefix_changes"]

FATE = ("start", "completed", "evicted", "cancelled", "payment")


def cut_points(jobs: int, fractions: tuple[float, ...] = tuple(k / 10 for k in range(1, 10))) -> tuple[int, ...]:
    """The last kept job of each cut: the job at each fraction of the sequence (distinct, < jobs - 1)."""
    return tuple(sorted({min(jobs - 2, int(f * jobs)) for f in fractions if jobs >= 2}))


def prefix_changes(
    sequence: BirthSequence, realisation: Realisation, settings: FrameworkSettings, seed: int, cuts: tuple[int, ...]
) -> tuple[JobOutcomes, dict]:
    """For every cut m in `cuts`, run jobs 0..m alone and compare their fates with the full run's.

    Returns the full run's outcomes and the counts: cuts (how many), compared (job fates
    compared, summed over cuts), changed (those that differ in any of FATE) and cuts_changed
    (cuts with at least one change)."""
    full = run_framework(sequence, realisation, settings, np.random.default_rng(seed))
    compared = changed = cuts_changed = 0
    for m in cuts:
        keep = slice(0, m + 1)
        part = run_framework(
            BirthSequence(sequence.jobs[keep], sequence.bounds, sequence.signal),
            Realisation(realisation.point[keep], realisation.arrival[keep], realisation.duration[keep]),
            settings,
            np.random.default_rng(seed),
        )
        differs = np.zeros(m + 1, bool)
        for name in FATE:
            differs |= getattr(full, name)[keep] != getattr(part, name)
        compared += m + 1
        changed += int(differs.sum())
        cuts_changed += bool(differs.any())
    return full, {"cuts": len(cuts), "compared": compared, "changed": changed, "cuts_changed": cuts_changed}
