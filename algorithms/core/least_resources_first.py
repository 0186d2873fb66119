"""Least Resources First (LRF), a baseline of paper 002, Sec. 4.1: the unit goes first to the
thread predicted to need the least data S_hat (eq. 3.6, the same prediction as LARA's), then to
the next (explore_then_exploit.priority_cascade). It explores first like LARA unless
`explore=False` (docs/core/model.md)."""

from __future__ import annotations

import numpy as np

from algorithms.core.explore_then_exploit import ExploreThenExploit, priority_cascade
from algorithms.core.simulation import UnitView


class LeastResourcesFirst(ExploreThenExploit):
    name = "LRF"

    def exploit(self, view: UnitView, need: np.ndarray) -> np.ndarray:
        key = np.where(np.isnan(need), np.inf, need)
        return priority_cascade(view, need, self.threads.budget, key)
