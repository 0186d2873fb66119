"""Alg. 1 of paper 004 (SchedulerFramework, Sec. 3) instantiated by Alg. 2 (the reduction,
Sec. 4.2) with Alg. 3's exponential prices (Sec. 5) as the relaxed algorithm ALG.

Each round t:
1. every job born at t, in submission order (Remark 1), gets the menu pi^t (Alg. 3's prices for
   the usage so far, with capacity N' = N (1 - eps/10)) and the failure estimates q^t from the
   oracle (Lemma 3.1, Appendix F), estimates at or below eps/10 set to 0 (Alg. 2 line 6); its
   launch plan maximises eq. (1) (eq. (2)); ALG is told to use the plan's expected allocation
   x_j(L_j) (Alg. 2 line 4), which raises the prices (Alg. 3 lines 6-8);
2. every active job that arrives at t is scheduled at L_j(a_j, sigma_j) (never: it leaves);
3. while the committed load exceeds N, the most recently born active job is evicted or
   cancelled (lines 6-7; `eviction` also offers the FIFO and evict-all baselines);
4. jobs scheduled at t start; a job whose last round is t completes, finishing at f = t + 1, and
   pays pi^{b_j}(L_j(a_j), c_j, d_j), the price announced at its birth (line 10).
A job runs rounds s..s+d-1 and finishes at f = s + d (Sec. 2); it completes at the end of its
last round, so it is never active, and never cancelled, in the round f.

The mechanism plans with the reported SoWs (`reported`, default the true ones) and lives with
the true realisation. `on_birth` sees every birth's announced information (for the experiments:
truthfulness, Lemma 3.1).

ALG is pluggable (`relaxed`, a `RelaxedAlgorithm`: Sec. 4.1's menu-based algorithm as Alg. 2 uses
it): `announce(t, last_start)` gives the menu pi^t for every concurrency, frozen at the birth, and
`allocate(c, starts, durations, weights)` is Alg. 2 line 4 (x_j(L_j), task i of weight lambda_i).
The default is Alg. 3 (`ExponentialALG`); the stochastic variant's Lemma E.2 menu is
algorithms/sow/stochastic_menu.py.

Receptive condition (Sec. 4.1): ALG must accept an allocation forced on it only when
V~_j(x_j) >= pi~^t(x_j). Line 4 forces x_j(L_j), chosen by eq. (2) with the failure estimates, so
it can break that when an estimate is positive: with signal `none` an arrival group's terms
sum_i P_i (1 - q_i)(V_i - pi_i) can be positive while sum_i P_i (V_i - pi_i) is negative. Per job,
`extra["relaxed_price"]` is pi~^t(x_j(L_j)) = sum_i P_i pi^t(t_i, c_j, d_i) over the points the plan
runs and `extra["receptive_break"]` whether relaxed_value < relaxed_price (by more than 1e-9);
with signal `duration` every point runs only when (1 - q)(V - pi) > 0, so never.
`extra["relaxed_usage"]` (one value per round, not per job) is ALG's usage y_t after the last birth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from market.sow.statement_of_work import BirthSequence, Realisation, StatementOfWork

from .eviction import RULES, removed_jobs
from .exponential_prices import STARTS, ExponentialPrices
from .failure_oracle import Candidates, LoadPaths, exact_paths, sampled_paths, zero_paths
from .launch_plan import NEVER, LaunchPlan, best_plan, plan_for_points
from .outcome import JobOutcomes

__all__ = ["ORACLES", "BirthContext", "ExponentialALG", "FrameworkSettings", "RelaxedAlgorithm", "run_framework"]

ORACLES = ("sampled", "exact", "none")
RECEPTIVE_TOLERANCE = 1e-9
WAITING, SCHEDULED, RUNNING, DONE = 0, 1, 2, 3


@dataclass(frozen=True)
class FrameworkSettings:
    nodes: int
    epsilon: float = 0.1
    slack: bool = True  # ALG's capacity N' = N (1 - eps/10); False: N' = N
    eviction: str = "lifo"
    oracle: str = "sampled"  # sampled (Appendix F) | exact | none (q = 0: no eviction foresight)
    samples: int = 100  # R of the sampled oracle
    max_outcomes: int = 200_000  # the exact oracle's limit
    price_start: str = "paper"  # p(0) = 1/(2 D_max) | concurrency: 1/(2 C_max D_max)

    def __post_init__(self):
        if not 0 < self.epsilon < 1:
            raise ValueError(f"reduction.epsilon must be in (0, 1), got {self.epsilon!r}")
        if self.eviction not in RULES:
            raise ValueError(f"reduction.eviction must be one of {', '.join(RULES)}, got {self.eviction!r}")
        if self.oracle not in ORACLES:
            raise ValueError(f"oracle.kind must be one of {', '.join(ORACLES)}, got {self.oracle!r}")
        if self.price_start not in STARTS:
            raise ValueError(f"prices.start must be one of {', '.join(STARTS)}, got {self.price_start!r}")

    @property
    def relaxed_capacity(self) -> float:
        return self.nodes * (1.0 - self.epsilon / 10.0) if self.slack else float(self.nodes)

    @property
    def threshold(self) -> float:
        return self.epsilon / 10.0


@dataclass(frozen=True)
class BirthContext:
    """What Alg. 1 announced to job `job` at its birth, and the plan it got."""

    job: int
    round: int
    unit_price: np.ndarray  # pi^t(t', 1, d), [t' - t, d - 1]
    paths: LoadPaths  # the oracle's load paths of the earlier jobs
    candidates: Candidates  # the earlier active jobs' residual randomness
    failure: np.ndarray  # q^t(t', c_j, d) after the eps/10 threshold
    raw_failure: np.ndarray  # the oracle's estimate before it
    plan: LaunchPlan
    menu: Callable[[int], np.ndarray] | None = None  # pi^t(t', c, d) [t' - t, d - 1] for any c, as announced


class RelaxedAlgorithm(Protocol):
    """ALG of Alg. 2 (module docstring): a menu announced at each birth, then the forced allocation."""

    def announce(self, first: int, last_start: int) -> Callable[[int], np.ndarray]:
        """pi^t(t', c, d) for t' = first..last_start, d = 1..D_max ([t' - first, d - 1]) as a function
        of c, frozen now (later allocations do not change it)."""

    def allocate(self, concurrency: int, start: np.ndarray, duration: np.ndarray, weight: np.ndarray) -> None:
        """Alg. 2 line 4 for the job just announced to: task i runs `duration[i]` rounds from
        `start[i]` with width weight[i] * concurrency."""


class ExponentialALG:
    """Alg. 3 as ALG: pi^t(t', c, d) = c sum_s p(y_s) (exponential_prices.py), x_j(L_j) added to y."""

    def __init__(self, prices: ExponentialPrices):
        self.prices = prices

    def announce(self, first: int, last_start: int) -> Callable[[int], np.ndarray]:
        unit = self.prices.unit_menu(first, last_start)
        return lambda concurrency: concurrency * unit

    def allocate(self, concurrency: int, start: np.ndarray, duration: np.ndarray, weight: np.ndarray) -> None:
        rounds = np.concatenate([np.arange(s, s + n) for s, n in zip(start, duration)])
        amount = np.repeat(weight * concurrency, duration)
        inside = rounds < self.prices.rounds
        self.prices.allocate(rounds[inside], amount[inside])


class _State:
    """The history: every submitted job's plan, status and realised run."""

    def __init__(self, sequence: BirthSequence, realisation: Realisation, reported: tuple[StatementOfWork, ...]):
        J = len(sequence)
        self.sequence, self.reported = sequence, reported
        self.true_arrival, self.true_duration = realisation.arrival, realisation.duration
        self.plan: list[np.ndarray | None] = [None] * J
        self.price: list[np.ndarray | None] = [None] * J
        self.phase = np.full(J, WAITING)
        self.active = np.zeros(J, bool)
        self.start = np.full(J, NEVER, np.int64)
        self.concurrency = np.array([sow.concurrency for sow in reported], np.int64)
        self.out = JobOutcomes.empty(J)
        self.out.extra.update(
            estimated_utility=np.zeros(J),
            relaxed_value=np.zeros(J),
            max_failure=np.zeros(J),
            planned=np.zeros(J, bool),
            stopped=np.full(J, NEVER, np.int64),
            relaxed_price=np.zeros(J),
            receptive_break=np.zeros(J, bool),
        )

    def candidates(self, t: int, signal: str) -> Candidates:
        """The residual randomness of the active jobs born so far (module docstring of
        failure_oracle), from their reported SoWs and what round t's history shows."""
        runs = []
        jobs = np.flatnonzero(self.active)
        for j in jobs:
            sow, plan = self.reported[j], self.plan[j]
            a, d = sow.arrival, sow.duration
            phase = self.phase[j]
            if phase == WAITING:
                keep = a >= t
                start = plan
            else:
                keep = a == self.true_arrival[j]
                if signal == "duration":
                    keep &= d == self.true_duration[j]
                start = np.full(a.size, self.start[j])
                if phase == RUNNING:
                    keep &= self.start[j] + d - 1 >= t
            if not keep.any():  # the history contradicts the report: keep what is known for sure
                keep = np.zeros(a.size, bool)
                keep[0] = True
                start = np.full(a.size, self.start[j] if phase != WAITING else NEVER)
            runs.append((start[keep], d[keep], sow.probability[keep]))
        return Candidates.build(runs, self.concurrency[jobs])


def _paths(state: _State, settings: FrameworkSettings, t: int, width: int, rng) -> tuple[Candidates, LoadPaths]:
    candidates = state.candidates(t, state.sequence.signal)
    if settings.oracle == "none" or len(candidates) == 0:
        return candidates, zero_paths(t, width)
    if settings.oracle == "exact":
        return candidates, exact_paths(candidates, t, width, settings.nodes, settings.max_outcomes)
    return candidates, sampled_paths(candidates, t, width, settings.nodes, settings.samples, rng)


def _birth(
    state: _State, j: int, t: int, settings: FrameworkSettings, relaxed: RelaxedAlgorithm, rng, on_birth
) -> None:
    bounds = state.sequence.bounds
    sow = state.reported[j]
    S, D = bounds.horizon, bounds.max_duration
    candidates, paths = _paths(state, settings, t, S + D, rng)
    raw = paths.failure(sow.concurrency, settings.nodes, S, D)
    failure = np.where(raw > settings.threshold, raw, 0.0)
    menu = relaxed.announce(t, t + S - 1)
    unit = menu(1)
    price = menu(sow.concurrency)
    plan = best_plan(sow, price, failure, state.sequence.signal)
    state.plan[j], state.price[j] = plan.start, price
    runs = plan.start != NEVER
    state.active[j] = bool(runs.any())  # a job no arrival of which runs holds nothing: it leaves at once
    state.phase[j] = WAITING if runs.any() else DONE
    extra = state.out.extra
    extra["estimated_utility"][j] = plan.estimated_utility
    extra["planned"][j] = bool(runs.any())
    extra["relaxed_value"][j] = float(sow.probability[runs] @ sow.value(plan.start[runs] + sow.duration[runs]))
    extra["relaxed_price"][j] = (
        float(sow.probability[runs] @ price[plan.start[runs] - sow.birth, sow.duration[runs] - 1])
        if runs.any()
        else 0.0
    )
    extra["receptive_break"][j] = extra["relaxed_value"][j] < extra["relaxed_price"][j] - RECEPTIVE_TOLERANCE
    extra["max_failure"][j] = float(raw.max()) if raw.size else 0.0
    if runs.any():  # Alg. 2 line 4 / Alg. 3 lines 6-8: x_j(L_j), the expected allocation
        relaxed.allocate(sow.concurrency, plan.start[runs], sow.duration[runs], sow.probability[runs])
    if on_birth is not None:
        on_birth(BirthContext(j, t, unit, paths, candidates, failure, raw, plan, menu))


def run_framework(
    sequence: BirthSequence,
    realisation: Realisation,
    settings: FrameworkSettings,
    rng: np.random.Generator,
    reported: tuple[StatementOfWork, ...] | None = None,
    on_birth: Callable[[BirthContext], None] | None = None,
    relaxed: RelaxedAlgorithm | None = None,
) -> JobOutcomes:
    """Alg. 1 with Alg. 2 and ALG (default Alg. 3: `ExponentialALG`) over one birth sequence and
    its realisation."""
    reported = tuple(sequence.jobs) if reported is None else tuple(reported)
    if len(reported) != len(sequence):
        raise ValueError(f"{len(reported)} reported SoWs for {len(sequence)} jobs")
    for j, sow in enumerate(reported):
        if sow.concurrency > settings.nodes:
            raise ValueError(f"jobs[{j}]: concurrency {sow.concurrency} is above the {settings.nodes} nodes")
    bounds = sequence.bounds
    T = sequence.rounds()
    if relaxed is None:
        relaxed = ExponentialALG(
            ExponentialPrices(
                settings.relaxed_capacity,
                bounds.max_value,
                bounds.max_duration,
                bounds.max_concurrency,
                T,
                settings.price_start,
            )
        )
    state = _State(sequence, realisation, reported)
    births = np.array([sow.birth for sow in sequence.jobs], np.int64)
    out = state.out
    next_job = 0
    for t in range(T):
        while next_job < len(sequence) and births[next_job] == t:
            _birth(state, next_job, t, settings, relaxed, rng, on_birth)
            next_job += 1
        _arrivals(state, t)
        _evict(state, t, settings)
        starting = state.active & (state.phase == SCHEDULED) & (state.start == t)
        state.phase[starting] = RUNNING
        out.start[starting] = t
        _complete(state, t)
        if next_job >= len(sequence) and not state.active.any():
            break
    out.extra["planned_start"] = np.array(
        [
            plan_for_points(
                state.plan[j], reported[j], realisation.arrival[j], realisation.duration[j], sequence.signal
            )[0]
            for j in range(len(sequence))
        ],
        dtype=np.int64,
    )
    # per round, not per job: ALG's relaxed usage y_t at the end of the run (Alg. 3's `prices.usage`,
    # or a menu's own `usage`); the family reports its peak over N' (`relaxed_peak`)
    usage = getattr(getattr(relaxed, "prices", relaxed), "usage", None)
    if usage is not None:
        out.extra["relaxed_usage"] = np.array(usage, dtype=float)
    return out


def _arrivals(state: _State, t: int) -> None:
    arriving = np.flatnonzero(state.active & (state.phase == WAITING) & (state.true_arrival == t))
    for j in arriving:
        start = plan_for_points(
            state.plan[j], state.reported[j], state.true_arrival[j], state.true_duration[j], state.sequence.signal
        )[0]
        if start == NEVER:
            state.active[j] = False
            state.phase[j] = DONE
        else:
            state.phase[j] = SCHEDULED
            state.start[j] = start


def _evict(state: _State, t: int, settings: FrameworkSettings) -> None:
    running = (state.phase == RUNNING) | ((state.phase == SCHEDULED) & (state.start == t))
    load = np.where(running, state.concurrency, 0)
    removed, _ = removed_jobs(load, state.active, settings.nodes, settings.eviction)
    if not removed.any():
        return
    out = state.out
    out.evicted |= removed & (state.phase == RUNNING)
    out.cancelled |= removed & (state.phase != RUNNING)
    out.extra["stopped"][removed] = t
    state.active &= ~removed
    state.phase[removed] = DONE


def _complete(state: _State, t: int) -> None:
    done = np.flatnonzero(state.active & (state.phase == RUNNING) & (state.start + state.true_duration - 1 == t))
    out = state.out
    for j in done:
        sow = state.sequence.jobs[j]
        d = int(state.true_duration[j])
        out.completed[j] = True
        out.finish[j] = t + 1
        out.value[j] = float(sow.value(t + 1))
        out.payment[j] = float(state.price[j][state.start[j] - sow.birth, d - 1])
    state.active[done] = False
    state.phase[done] = DONE
