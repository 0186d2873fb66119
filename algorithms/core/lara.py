"""LARA, paper 002's Alg. 2 (Learning with Adaptive Resource Allocation): resource prediction by
weighted RLS (Sec. 3.1), explore-then-exploit (Sec. 3.3; explore_then_exploit.py), and after
exploration the allocation of Sec. 3.2: Alg. 1 (adaptive binary tree search, the Moore-Hodgson
rule) on the needs p_k = S_hat_k / N_k of the active threads with d_0 = t - 1, the current
unit's shares by the cascade of eq. 3.8 (line 11), rescaled so that the non-zero shares sum to
1 (line 12: work-conserving).

When Alg. 1 selects no thread with a positive share (every need infinite, or every selected
thread "done by the fit" with S_hat = 0), line 12 has nothing to rescale: `when_none_selected`
says what the unit does, `uniform` (1 / |A_t| to every active thread, the default: the unit is
not wasted and the fits keep learning) or `idle` (nothing). Unknown needs (no fit yet) only
occur with `explore=False`; Alg. 1 then treats them as infinite (never selected).
"""
from __future__ import annotations

import numpy as np

from algorithms.core.explore_then_exploit import ExploreThenExploit
from algorithms.core.simulation import UnitView
from algorithms.core.tree_search import adaptive_tree_search, cascade_shares

WHEN_NONE_SELECTED = ("uniform", "idle")


class LARA(ExploreThenExploit):
    name = "LARA"

    def __init__(self, exploration: float = 8000.0, gamma: float = 0.9, explore: bool = True,
                 ucb_beta: float = 0.0, when_none_selected: str = "uniform", log_predictions: bool = False):
        super().__init__(exploration, gamma, explore, ucb_beta, log_predictions)
        if when_none_selected not in WHEN_NONE_SELECTED:
            raise ValueError(f"lara.when_none_selected must be one of {', '.join(WHEN_NONE_SELECTED)}, "
                             f"got {when_none_selected!r}")
        self.when_none_selected = when_none_selected

    def exploit(self, view: UnitView, need: np.ndarray) -> np.ndarray:
        active = np.flatnonzero(view.active)
        units = need[active] / self.threads.budget[active]
        units = np.where(np.isnan(units), np.inf, units)
        eta_tilde, _ = adaptive_tree_search(units, self.threads.deadline[active], view.t - 1)
        order = np.argsort(self.threads.deadline[active], kind="stable")
        part = cascade_shares(eta_tilde, order)
        shares = np.zeros(view.active.size)
        total = part.sum()
        if total > 0.0:
            shares[active] = part / total
        elif self.when_none_selected == "uniform":
            shares[active] = 1.0 / active.size
        return shares
