"""Easiest Thread First (ETF), a baseline of paper 002, Sec. 4.1: threads in increasing order of
the ratio of required data to their time constraint, S_hat_k / (d_k - b_k) (as printed), each
given what it is predicted to need (explore_then_exploit.priority_cascade). It explores first
like LARA unless `explore=False`."""

from __future__ import annotations

import numpy as np

from algorithms.core.explore_then_exploit import ExploreThenExploit, priority_cascade
from algorithms.core.simulation import UnitView


class EasiestThreadFirst(ExploreThenExploit):
    name = "ETF"

    def exploit(self, view: UnitView, need: np.ndarray) -> np.ndarray:
        span = (self.threads.deadline - self.threads.begin).astype(float)
        key = np.where(np.isnan(need), np.inf, need / span)
        return priority_cascade(view, need, self.threads.budget, key)
