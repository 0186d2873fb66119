"""The stochastic variant's mechanism `Stochastic` (paper 004, Sec. 5 "Stochastic Variant",
Theorem 5.2, Appendix E): Alg. 1 with Alg. 2, ALG being Lemma E.2's menu over a fractional unit
allocation of Appendix E's LP. The failure oracle, LIFO eviction and payment of the price announced
at birth on completion are those of the Reduction (scheduler_framework.py), unchanged.

Before the first birth (every SoW's prior D_j is public, market/sow/prior_births.py):
1. Appendix E's LP over the priors with supply C' = N'/2, N' = N (1 - eps/10) Alg. 2's relaxed
   capacity (Appendix E's last paragraph: "under constrained supply C' = C/2 ... for total supply
   2C' = C"): `stochastic_lp.solve_stochastic_lp`.
2. A fractional unit allocation of its z (Definition 1; our construction, no guarantee of Theorem
   E.1): `fractional_unit_allocation.build_fractional_unit_allocation`. Its retained share
   V(z_FUA) / V_LP is the row column `fua_share`.
3. Lemma E.2's prices: bundle k has p_k = V(A_k) / (2 W(A_k)) per unit of width, V(A_k) =
   sum_{A_k} V~(omega) z_omega, W(A_k) = sum_{A_k} w(omega) z_omega.

The menu (Lemma E.2, `BundleMenu`). R_k is the width sold from bundle k so far. An interval
allocation x of width w over rounds [t', t' + d) is feasible for bundle k when x lies in B_k (its
rounds inside the bundle's span) and w + R_k <= 2 C_max; its price is min over feasible k of
w p_k, and +inf if no bundle is feasible. Read for Alg. 1's menu pi^t(t', c, d), which is announced
before the SoW is read except for c (Sec. 3; Alg. 2 line 5 passes ALG's menu on):
- pi^t(t', c, d) = c min{p_k : [t', t' + d) in B_k, R_k + c <= 2 C_max}, +inf if none. Feasibility is
  checked with the full width c, the widest a task of concurrency c can be (its relaxed width is
  lambda_i c <= c), so the menu does not depend on the report's probabilities; a task then pays, in
  the relaxed problem, lambda_i pi^t = w(x) p_k as Lemma E.2 says.
- x_j(L_j) (Alg. 2 line 4): each task i the plan runs goes to the bundle that priced it in the
  menu announced at the job's birth (the cheapest feasible one, ties to the lowest index), and
  R_k grows by lambda_i c. The whole job adds at most c to any R_k, so R_k <= 2 C_max holds after
  it (each task was priced with R_k + c <= 2 C_max before the job).
- Relaxed usage. A bundle spans C_max units of one lane in each of its rounds, at most
  L = floor(C' / C_max) bundles are active in a round, and a bundle's tasks have total width
  R_k <= 2 C_max: the relaxed usage of round t is at most 2 L C_max <= 2 C' = N' (Lemma E.2's
  feasibility argument). `BundleMenu.usage` is it, tested round by round.
Prices never fall: p_k is fixed and R_k only grows (a bundle only leaves the menu). The menu is
weakly increasing in d (fewer bundles contain a longer interval) and in c (c p_k, and a wider job
fits fewer bundles), Sec. 3's invariants.

Theorem 5.2's capacity condition, read from the copy: "Suppose N > Omega(C_max log(D_max))" (the
copy prints the glyph of N, then `�m log(�m)`). The first `�m` multiplies, as C_max does in
Theorem 4.1's N > Omega(C_max eps^-2 log(...)); the one inside the log we read as D_max, not
C_max: footnote 13 says [15]'s result has C_max = 1 and "extends directly" with supply "scaled by
C_max", and with C_max = 1 a log C_max would make [15]'s condition vacuous; Theorem 5.1 prints
D_max the same way inside its log. So N > C_max ln D_max up to the constant (`capacity_condition`);
Theorem E.1 states it as "N > C_max log C_max" in the same glyphs, read the same way. The
mechanism also needs C' >= C_max (one lane) or it has no bundle: `check_stochastic` refuses it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from market.sow.prior_births import PriorBirthSequence
from market.sow.statement_of_work import Realisation

from .fractional_unit_allocation import FractionalUnitAllocation, build_fractional_unit_allocation
from .outcome import JobOutcomes
from .scheduler_framework import BirthContext, FrameworkSettings, run_framework
from .stochastic_lp import StochasticLP, solve_stochastic_lp
from .truthfulness import audit_run

__all__ = [
    "BundleMenu",
    "StochasticRun",
    "audit_stochastic",
    "capacity_condition",
    "check_stochastic",
    "prepare_stochastic",
    "run_stochastic",
    "stochastic_columns",
]

FIT_TOLERANCE = 1e-9


def capacity_condition(max_concurrency: int, max_duration: int) -> float:
    """Theorem 5.2's N > Omega(C_max log D_max) without its constant: C_max ln D_max."""
    return float(max_concurrency) * math.log(max_duration)


class BundleMenu:
    """Lemma E.2's menu over a fractional unit allocation (module docstring); a RelaxedAlgorithm of
    scheduler_framework.py."""

    def __init__(self, fua: FractionalUnitAllocation, max_concurrency: int, max_duration: int, rounds: int):
        self.fua = fua
        self.limit = 2.0 * max_concurrency  # R_k + c <= 2 C_max
        self.max_duration = int(max_duration)
        weight = fua.bundle_weight
        self.price = np.where(weight > 0, fua.bundle_value / (2.0 * np.maximum(weight, 1e-300)), np.inf)  # p_k
        self.filled = np.zeros(len(fua))  # R_k
        self.usage = np.zeros(rounds)  # the relaxed usage of every round
        self.sold = np.zeros(len(fua))  # revenue booked in the relaxed problem (lambda c p_k)
        self._announced: tuple | None = None

    def _table(
        self, filled: np.ndarray, first: int, last_start: int, concurrency: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(price table [t' - first, d - 1], the bundle that gives it, -1 for none)."""
        starts = np.arange(first, last_start + 1)
        d = np.arange(1, self.max_duration + 1)
        inside = (self.fua.first[:, None, None] <= starts[None, :, None]) & (
            starts[None, :, None] + d[None, None, :] <= self.fua.stop[:, None, None]
        )
        feasible = inside & (filled + concurrency <= self.limit + FIT_TOLERANCE)[:, None, None]
        unit = np.where(feasible, self.price[:, None, None], np.inf)
        if unit.shape[0] == 0:
            shape = (starts.size, d.size)
            return np.full(shape, np.inf), np.full(shape, -1, np.int64)
        best = np.argmin(unit, axis=0)
        cheapest = np.take_along_axis(unit, best[None], axis=0)[0]
        return concurrency * cheapest, np.where(np.isfinite(cheapest), best, -1)

    def announce(self, first: int, last_start: int) -> Callable[[int], np.ndarray]:
        filled = self.filled.copy()
        self._announced = (filled, first, last_start)
        return lambda concurrency: self._table(filled, first, last_start, int(concurrency))[0]

    def allocate(self, concurrency: int, start: np.ndarray, duration: np.ndarray, weight: np.ndarray) -> None:
        filled, first, last_start = self._announced
        _, bundle = self._table(filled, first, last_start, int(concurrency))
        for s, d, lam in zip(np.asarray(start).tolist(), np.asarray(duration).tolist(), np.asarray(weight).tolist()):
            k = int(bundle[s - first, d - 1])
            if k < 0:
                raise RuntimeError(
                    f"x_j(L_j) runs a task at ({s}, {d}) that no bundle prices (the plan ran an infinite price)"
                )
            width = lam * concurrency
            self.filled[k] += width
            self.sold[k] += width * self.price[k]
            self.usage[s : s + d] += width


@dataclass(frozen=True, eq=False)
class StochasticRun:
    out: JobOutcomes
    lp: StochasticLP
    fua: FractionalUnitAllocation
    menu: BundleMenu


def check_stochastic(nodes: int, epsilon: float, slack: bool, max_concurrency: int, where: str) -> None:
    """The mechanism needs one lane: C' = N'/2 >= C_max (module docstring); ValueError naming `where`."""
    relaxed = nodes * (1.0 - epsilon / 10.0) if slack else float(nodes)
    if relaxed / 2.0 < max_concurrency - 1e-9:
        raise ValueError(
            f"{where}: the stochastic variant's LP supply C' = N'/2 = {relaxed / 2:g} (cluster.nodes = "
            f"{nodes}, reduction.epsilon = {epsilon:g}) is below bounds.max_concurrency = "
            f"{max_concurrency}: Definition 1 has no bundle"
        )


def prepare_stochastic(
    sequence: PriorBirthSequence, settings: FrameworkSettings
) -> tuple[StochasticLP, FractionalUnitAllocation, BundleMenu]:
    """Steps 1-3 of the module docstring: the LP at C' = N'/2, the FUA, the menu."""
    if not isinstance(sequence, PriorBirthSequence):
        raise ValueError("the stochastic variant needs known priors: births.kind must be prior")
    bounds = sequence.bounds
    T = sequence.rounds()
    lp = solve_stochastic_lp(sequence.priors, settings.relaxed_capacity / 2.0)
    fua = build_fractional_unit_allocation(lp, bounds.max_concurrency, T)
    return lp, fua, BundleMenu(fua, bounds.max_concurrency, bounds.max_duration, T)


def run_stochastic(
    sequence: PriorBirthSequence,
    realisation: Realisation,
    settings: FrameworkSettings,
    rng: np.random.Generator,
    on_birth: Callable[[BirthContext], None] | None = None,
) -> StochasticRun:
    """`Stochastic`: Alg. 1 + Alg. 2 with Lemma E.2's menu as ALG, on one birth sequence."""
    lp, fua, menu = prepare_stochastic(sequence, settings)
    out = run_framework(sequence, realisation, settings, rng, on_birth=on_birth, relaxed=menu)
    return StochasticRun(out, lp, fua, menu)


def audit_stochastic(
    sequence: PriorBirthSequence, realisation: Realisation, settings: FrameworkSettings, rng: np.random.Generator
) -> tuple[StochasticRun, list[dict]]:
    """`StochasticAudit`: truthfulness.audit_run on the Stochastic mechanism (the menu a misreport
    of concurrency c' sees is the one announced at the birth, for c')."""
    lp, fua, menu = prepare_stochastic(sequence, settings)
    out, rows = audit_run(sequence, realisation, settings, rng, relaxed=menu)
    return StochasticRun(out, lp, fua, menu), rows


def stochastic_columns(run: StochasticRun, settings: FrameworkSettings) -> dict:
    """The row columns of a Stochastic run: `lp_value` V_LP (at C'), `fua_value` V(z_FUA),
    `fua_share`, `bundles`, `lanes`, `relaxed_peak` (the largest relaxed usage over N')."""
    return {
        "lp_value": run.lp.objective,
        "fua_value": run.fua.value,
        "fua_share": run.fua.share,
        "bundles": len(run.fua),
        "lanes": run.fua.lanes,
        "relaxed_peak": float(run.menu.usage.max(initial=0.0)) / settings.relaxed_capacity,
    }
