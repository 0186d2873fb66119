"""Shortest Thread First (STF), a baseline of paper 002, Sec. 4.1: the whole unit goes to the
active thread with the nearest deadline (the lowest index among equal deadlines), until it
succeeds or its deadline passes. It uses no prediction, so it never gives up on a thread."""

from __future__ import annotations

import numpy as np

from algorithms.core.simulation import UnitView
from market.core.threads import ThreadArrays


class ShortestThreadFirst:
    name = "STF"

    def reset(self, threads: ThreadArrays) -> None:
        self.deadline = threads.deadline

    def allocate(self, view: UnitView) -> np.ndarray:
        shares = np.zeros(view.active.size)
        candidates = np.flatnonzero(view.active)
        first = candidates[np.argmin(self.deadline[candidates])]  # argmin: the lowest index on ties
        shares[first] = 1.0
        return shares
