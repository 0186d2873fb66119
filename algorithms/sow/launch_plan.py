"""Launch plans (paper 004, Sec. 3, eq. (1)-(2) and "Computation").

A launch plan L maps every arrival a (and signal sigma) of a job born at b to a start round
t' >= a, or to "never" (-1 here, infinity in the paper). Its estimated utility under the menu
pi^b and the estimated failure probabilities q^b is eq. (1):

    U(L | V, c, P) = E_{(a,d)~P} [ (1 - q(t_{a,sigma}, c, d)) (V(t_{a,sigma} + d) - pi(t_{a,sigma}, c, d)) ],

and eq. (2) picks the plan that maximises it. As "Computation" says, the choice separates over
(a, sigma): for each, enumerate the start rounds b..b+S_max-1 and keep the best, or "never" when
no start has a positive estimated utility. With signal `none` the points of one arrival share
a start; with signal `duration` (sigma = d) each point has its own. Ties go to the earliest
start; "never" wins a tie at 0 (a job only runs when it expects to gain).

Prices and failure estimates are tables [t' - b, d - 1] for t' = b..b+S_max-1, d = 1..D_max,
for the job's (reported) concurrency.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from market.sow.statement_of_work import StatementOfWork

from .outcome import NOT_STARTED

__all__ = ["NEVER", "LaunchPlan", "best_plan", "point_utilities", "plan_for_points"]

NEVER = NOT_STARTED  # -1: the plan does not run that (a, sigma)


@dataclass(frozen=True)
class LaunchPlan:
    """The start round of each support point of the reported SoW (NEVER: not run)."""

    start: np.ndarray
    estimated_utility: float


def point_utilities(sow: StatementOfWork, starts: np.ndarray, price: np.ndarray, failure: np.ndarray) -> np.ndarray:
    """P_i (1 - q(t', c, d_i)) (V(t' + d_i) - pi(t', c, d_i)) for every point i (rows) and start
    t' = starts (absolute rounds, columns); a start before a_i or past the tables is -inf."""
    offset = np.asarray(starts)[None, :] - sow.birth
    d = sow.duration[:, None]
    inside = (offset >= 0) & (offset < price.shape[0])
    k = np.clip(offset, 0, price.shape[0] - 1)
    pi = price[k, d - 1]
    survive = 1.0 - failure[k, d - 1]
    gain = sow.value(np.asarray(starts)[None, :] + d) - pi
    with np.errstate(invalid="ignore"):
        term = np.where(survive > 0, survive * gain, 0.0) * sow.probability[:, None]
    allowed = inside & (np.asarray(starts)[None, :] >= sow.arrival[:, None])
    return np.where(allowed, term, -np.inf)


def _groups(sow: StatementOfWork, signal: str) -> np.ndarray:
    """The index of each point's (a, sigma) group."""
    if signal == "duration":
        return np.arange(sow.arrival.size)
    return np.unique(sow.arrival, return_inverse=True)[1].ravel()


def best_plan(sow: StatementOfWork, price: np.ndarray, failure: np.ndarray, signal: str) -> LaunchPlan:
    """Eq. (2): the plan maximising eq. (1), one (a, sigma) group at a time."""
    starts = sow.birth + np.arange(price.shape[0])
    terms = point_utilities(sow, starts, price, failure)
    group = _groups(sow, signal)
    sums = np.zeros((group.max() + 1, starts.size))
    np.add.at(sums, group, terms)
    best = np.argmax(sums, axis=1)
    value = sums[np.arange(sums.shape[0]), best]
    run = value > 0
    chosen = np.where(run, starts[best], NEVER)
    return LaunchPlan(chosen[group].astype(np.int64), float(value[run].sum()))


def plan_for_points(plan_start: np.ndarray, reported: StatementOfWork, arrival, duration, signal: str) -> np.ndarray:
    """The start a plan made for `reported` gives to (arrival, duration) pairs, which need not be
    in the reported support (a misreport): the start of the matching (a, sigma) group, else NEVER."""
    arrival = np.atleast_1d(np.asarray(arrival))
    duration = np.atleast_1d(np.asarray(duration))
    out = np.full(arrival.size, NEVER, dtype=np.int64)
    for n, (a, d) in enumerate(zip(arrival.tolist(), duration.tolist())):
        match = reported.arrival == a
        if signal == "duration":
            match &= reported.duration == d
        hits = np.flatnonzero(match)
        if hits.size:
            out[n] = plan_start[hits[0]]
    return out
