"""Uniform Allocation (UA), a baseline of paper 002, Sec. 4.1: every active thread gets the same
share of the unit, 1 / |A_t|, whatever its needs or deadline."""

from __future__ import annotations

import numpy as np

from algorithms.core.simulation import UnitView
from market.core.threads import ThreadArrays


class UniformAllocation:
    name = "UA"

    def reset(self, threads: ThreadArrays) -> None:
        self.k = len(threads)

    def allocate(self, view: UnitView) -> np.ndarray:
        return view.active / view.active.sum()
