"""Approximate truthfulness of Alg. 1 (paper 004, Sec. 3 "Incentives", Theorem 3.2, Appendix B),
audited one birth at a time.

Why a birth is enough. Under LIFO the chance that job j fails, given its start t' and duration
d, is fixed by the history H^t at its birth t (Lemma 3.1), and so are its prices pi^t (Alg. 1
line 10: it pays the price announced at birth, and only if it completes). Its true expected
utility under any report is therefore known exactly at its birth. Readings, written down:

- The report. For a report SoW' = (V', c', P') born at t the mechanism picks (eq. (2))

      L' = best_plan(SoW', c' pi^t(., 1, .), q_hat(c'), signal),

  q_hat(c') the oracle's estimate for concurrency c' thresholded as in Alg. 2 line 6 (an
  estimate <= eps/10 is set to 0), recomputed here from the oracle's load paths of the earlier
  jobs (`BirthContext.paths`): nothing the earlier jobs did depends on j's report (Lemma 3.1).
- The plan for the true points. The plan is applied to the true (a, d) through
  `plan_for_points`: an (a, sigma) group that the report does not list is never started. Mapped
  so, L' is a launch plan L'' for the true SoW (with signal `none` the points of one true
  arrival share the start of the first reported point of that arrival; with `duration` each
  (a, d) has its own), starting at or after the arrival inside birth..birth + S_max - 1.
- True utility, eq. (1) with the TRUE V and P, the report's concurrency c' (it is charged for
  and can be evicted as c' nodes), the prices pi^t(t', c', d) = c' pi^t(t', 1, d), and the TRUE
  failure probability q^t(t', c', d) of eq. (3) (`true_utility`):

      U_true(L'' | c') = sum_i P_i (1 - q(t_i, c', d_i)) (V(t_i + d_i) - pi(t_i, c', d_i)).

  An evicted or cancelled job earns nothing and pays nothing (Sec. 3, "Cancellations and
  evictions"). The true q is read from the exact oracle on the earlier jobs' residual
  randomness (`exact_paths` on `BirthContext.candidates`), or from load paths given as truth.
- c' < c_j: the job cannot run on fewer nodes, so it earns no value (Appendix B: "the job will
  receive no value from executing"); `true_utility` then counts only the payments (a non-positive
  utility, so such a report never beats the utility-0 plan "never" and hence never beats the
  truthful report, whose utility is >= 0 when q_hat = q). `misreports` does not generate it.
- mu, eq. (4). The paper's mu bounds E|q_hat - q|; per instance we take the largest
  |q_hat - q| over the table (t' = t..t + S_max - 1, d = 1..D_max) of the truthful concurrency
  c_j and of the report's c', so `bound_mu` = 2 mu V_bar is Theorem 3.2's bound read per birth.

The per-instance bound (`bound_plans`). Write U_est(L | c) for eq. (1) with q_hat and U_true for
it with q, and err_c(L) = sum_i P_i |q_hat(t_i, c, d_i) - q(t_i, c, d_i)| |V(t_i + d_i) -
pi(t_i, c, d_i)| over the true points that L runs. Then |U_true(L | c) - U_est(L | c)| <= err_c(L)
(the two differ by sum_i P_i (q_hat - q)(V - pi)). Let L be the truthful plan: it maximises
U_est(. | c_j) over all plans for the true SoW (eq. (2)), and L'' is such a plan, so
U_est(L'' | c_j) <= U_est(L | c_j).

- c' = c_j:  U_true(L'') - U_true(L)
                <= [U_est(L'') + err(L'')] - [U_est(L) - err(L)] <= err(L'') + err(L).
  With q_hat = q (mu = 0) the gain is <= 0: exact truthfulness, Appendix B's first paragraph.
  Since err(L) <= mu sum_i P_i |V - pi|, err(L) <= mu V_bar when every run point has
  |V - pi| <= V_bar (e.g. 0 <= pi <= V), which is how Appendix B gets 2 mu V_bar; a plan may
  run a point whose price exceeds its value by more than V_bar (only its group's sum must be
  positive), and there err can exceed mu V_bar.
- c' > c_j: Appendix B argues that U_true is weakly decreasing in c' because "higher c' only
  increases the price and the (true) failure probability". Prices and failure do rise
  (pi(t', c', d) = c' pi(t', 1, d), and L(s) + c > N implies L(s) + c' > N), but a higher
  failure probability RAISES (1 - q)(V - pi) on a point with V < pi: being evicted is free, so
  a larger eviction chance is an option to walk away from a losing run. Per point,

      (1 - q')(V - pi') - (1 - q)(V - pi) <= (1 - q')(V - pi) - (1 - q)(V - pi)
                                           = (q' - q)(pi - V) <= (q' - q) max(0, pi - V),

  with q' = q(t', c', d) >= q = q(t', c_j, d) and pi' >= pi. Summing (the `option` term),

      U_true(L'' | c') - U_true(L | c_j) <= option(L'') + err_{c_j}(L'') + err_{c_j}(L),

  so `bound_plans` = err(L) + err(L'') + option(L''), option = 0 when c' = c_j. The option is a
  property of the truth, not of the estimator, so with signal `none` (one start for all
  durations of an arrival, some of which may lose money) a concurrency overreport can gain
  strictly even with the exact oracle (mu = 0): Theorem 3.2 / Appendix B do not cover it. With
  signal `duration` every point is its own group, so the plan of a report that changes only c
  runs a point only when V > pi(c') >= pi(c_j): option = 0 there.

`audit_birth` returns, for the truthful report and every `misreports` report, the gain and both
bounds; it is meant to be called from `run_framework(..., on_birth=...)` on the truthful run.
"""

from __future__ import annotations

import numpy as np

from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, StatementOfWork, check_sow

from .failure_oracle import LoadPaths, exact_paths
from .launch_plan import NEVER, best_plan, plan_for_points
from .outcome import JobOutcomes
from .scheduler_framework import BirthContext, FrameworkSettings, run_framework

__all__ = ["SCALES", "SHIFTS", "audit_birth", "audit_run", "misreports", "true_utility"]

SCALES = (0.25, 0.5, 0.75, 1.5, 2.0, 4.0)
SHIFTS = (-2, -1, 1, 2)
TOLERANCE = 1e-9


def _true_starts(true_sow: StatementOfWork, plan_start: np.ndarray, report: StatementOfWork, signal: str) -> np.ndarray:
    """The start the report's plan gives each TRUE point (NEVER for an (a, sigma) not reported)."""
    return plan_for_points(plan_start, report, true_sow.arrival, true_sow.duration, signal)


class _Points:
    """The true points a plan runs (starts != NEVER): P_i, V(t_i + d_i) (0 when the job does not
    `earn`: c' < c_j) and the index (t_i - birth, d_i - 1) into the [t' - birth, d - 1] tables."""

    def __init__(self, true_sow: StatementOfWork, starts: np.ndarray, earns: bool = True):
        run = starts != NEVER
        s, d = starts[run], true_sow.duration[run]
        self.probability = true_sow.probability[run]
        self.value = true_sow.value(s + d) if earns else np.zeros(s.size)
        self.index = (s - true_sow.birth, d - 1)

    def utility(self, price: np.ndarray, failure: np.ndarray) -> float:
        """sum_i P_i (1 - q_i) (V_i - pi_i): eq. (1) over these points."""
        return float(np.sum(self.probability * (1.0 - failure[self.index]) * (self.value - price[self.index])))


def true_utility(
    true_sow: StatementOfWork,
    plan_start: np.ndarray,
    report: StatementOfWork,
    price_c: np.ndarray,
    q_true_c: np.ndarray,
    signal: str,
) -> float:
    """Eq. (1) with the TRUE V and P: the expected utility of a job whose true SoW is `true_sow`
    when the mechanism planned `plan_start` for `report`. `price_c` = pi^t(t', c', d) and
    `q_true_c` = q^t(t', c', d) (true failure) are tables [t' - birth, d - 1] for the report's
    concurrency c'. A true (a, sigma) the report does not list is never run (utility 0); with
    c' < c_j the job earns no value but pays for completed runs (Appendix B)."""
    starts = _true_starts(true_sow, plan_start, report, signal)
    return _Points(true_sow, starts, report.concurrency >= true_sow.concurrency).utility(price_c, q_true_c)


def _merged(sow: StatementOfWork, arrival: np.ndarray, duration: np.ndarray) -> StatementOfWork:
    """`sow` with new support points, the probabilities of coinciding points added."""
    table: dict[tuple[int, int], float] = {}
    for a, d, p in zip(arrival.tolist(), duration.tolist(), sow.probability.tolist()):
        table[(a, d)] = table.get((a, d), 0.0) + p
    keys = sorted(table)
    return sow.replace(
        arrival=np.array([a for a, _ in keys], np.int64),
        duration=np.array([d for _, d in keys], np.int64),
        probability=np.array([table[key] for key in keys]),
    )


def _same(a: StatementOfWork, b: StatementOfWork) -> bool:
    if a.concurrency != b.concurrency or not np.array_equal(a.values, b.values):
        return False
    pa = {(x, y): p for x, y, p in zip(a.arrival.tolist(), a.duration.tolist(), a.probability.tolist())}
    pb = {(x, y): p for x, y, p in zip(b.arrival.tolist(), b.duration.tolist(), b.probability.tolist())}
    return pa.keys() == pb.keys() and all(abs(pa[key] - pb[key]) <= 1e-12 for key in pa)


def misreports(true_sow: StatementOfWork, bounds: Bounds, nodes: int) -> list[tuple[str, float, StatementOfWork]]:
    """The misreports audited (kind, parameter, report), each a valid SoW (`check_sow`) that differs
    from the truth:
    - `value` s: V' = s V for s in SCALES, clipped to V_bar, values below 1 set to 0 (so V' stays
      in {0} U [1, V_bar], non-increasing, with V'(birth + S_max) = 0);
    - `concurrency` c_j + k for k = 1..C_max - c_j with c_j + k <= N (c' < c_j never pays:
      module docstring);
    - `arrival` k: every arrival shifted by k in SHIFTS, clipped to [birth, birth + S_max - 1];
    - `duration` k: every duration shifted by k in (-1, +1), clipped to [1, D_max];
    - `narrow` 1: only the most likely point, with probability 1;
    - `widen` n: the probabilities flattened to uniform over the n support points.
    Shifted points that coincide are merged, their probabilities added."""
    out: list[tuple[str, float, StatementOfWork]] = []
    S, D = bounds.horizon, bounds.max_duration
    candidates: list[tuple[str, float, StatementOfWork]] = []
    for s in SCALES:
        v = np.minimum(true_sow.values * s, bounds.max_value)
        candidates.append(("value", s, true_sow.replace(values=np.where(v < 1.0, 0.0, v))))
    for c in range(true_sow.concurrency + 1, min(bounds.max_concurrency, nodes) + 1):
        candidates.append(("concurrency", float(c - true_sow.concurrency), true_sow.replace(concurrency=c)))
    for k in SHIFTS:
        a = np.clip(true_sow.arrival + k, true_sow.birth, true_sow.birth + S - 1)
        candidates.append(("arrival", float(k), _merged(true_sow, a, true_sow.duration)))
    for k in (-1, 1):
        d = np.clip(true_sow.duration + k, 1, D)
        candidates.append(("duration", float(k), _merged(true_sow, true_sow.arrival, d)))
    top = int(np.argmax(true_sow.probability))
    candidates.append(
        (
            "narrow",
            1.0,
            true_sow.replace(
                arrival=true_sow.arrival[top : top + 1],
                duration=true_sow.duration[top : top + 1],
                probability=np.ones(1),
            ),
        )
    )
    n = true_sow.probability.size
    candidates.append(("widen", float(n), true_sow.replace(probability=np.full(n, 1.0 / n))))
    for kind, parameter, report in candidates:
        if _same(report, true_sow):
            continue
        try:
            check_sow(report, bounds, f"misreport {kind} {parameter:g}", nodes)
        except ValueError:
            continue
        out.append((kind, parameter, report))
    return out


def audit_birth(
    ctx: BirthContext,
    true_sow: StatementOfWork,
    signal: str,
    bounds: Bounds,
    nodes: int,
    epsilon: float,
    truth_paths: LoadPaths | None = None,
    max_outcomes: int = 200_000,
) -> list[dict]:
    """Theorem 3.2 at one birth: for the truthful report and every misreport, the true utility
    gain over the truthful report and the two bounds (module docstring).

    `ctx` is what `run_framework(on_birth=...)` saw at the birth of a job that reported
    `true_sow` (the truthful run); `epsilon` is the framework's (threshold eps/10); `truth_paths`
    are the true load paths of the earlier jobs (default: the exact oracle on `ctx.candidates`).

    Each dict: job, kind (`truthful` or a `misreports` kind), parameter, concurrency (c'),
    utility (true, of the report's plan), estimated (the report's U_est of its own plan), gain,
    mu, bound_mu = 2 mu V_bar, err_truthful = err_c(L), err_report = err_c(L''), option,
    margin = max |V - pi(., c_j, .)| over the points L and L'' run (bound_plans <= bound_mu when
    option = 0 and margin <= V_bar), bound_plans = err_truthful + err_report + option, within_mu
    and within_plans (gain <= that bound + 1e-9) and holds (both)."""
    S, D = bounds.horizon, bounds.max_duration
    if truth_paths is None:
        truth_paths = exact_paths(ctx.candidates, ctx.round, S + D, nodes, max_outcomes)
    threshold = epsilon / 10.0
    estimate: dict[int, np.ndarray] = {}
    truth: dict[int, np.ndarray] = {}

    def tables(conc: int):
        """pi^t(., conc, .), q_hat (Alg. 2 line 6's threshold) and the true q, [t' - t, d - 1]."""
        if conc not in estimate:
            raw = ctx.paths.failure(conc, nodes, S, D)
            estimate[conc] = np.where(raw > threshold, raw, 0.0)
            truth[conc] = truth_paths.failure(conc, nodes, S, D)
        price_c = ctx.menu(conc) if ctx.menu is not None else conc * ctx.unit_price  # Lemma E.2's is not linear in c
        return price_c, estimate[conc], truth[conc]

    c = true_sow.concurrency
    price, q_hat, q_true = tables(c)
    honest = best_plan(true_sow, price, q_hat, signal)
    honest_utility = true_utility(true_sow, honest.start, true_sow, price, q_true, signal)

    def err(points: _Points) -> float:
        """err_{c_j}(L'') = sum_i P_i |q_hat - q| |V - pi| at the true concurrency c_j."""
        gap = np.abs(q_hat[points.index] - q_true[points.index])
        return float(np.sum(points.probability * gap * np.abs(points.value - price[points.index])))

    def margin(points: _Points) -> float:
        """max_i |V - pi(t_i, c_j, d_i)| over the points: err <= mu times it."""
        return float(np.abs(points.value - price[points.index]).max(initial=0.0))

    honest_points = _Points(true_sow, _true_starts(true_sow, honest.start, true_sow, signal))
    err_truthful = err(honest_points)
    rows = []
    for kind, parameter, report in [("truthful", 0.0, true_sow)] + misreports(true_sow, bounds, nodes):
        price_r, q_hat_r, q_true_r = tables(report.concurrency)
        plan = honest if report is true_sow else best_plan(report, price_r, q_hat_r, signal)
        points = _Points(true_sow, _true_starts(true_sow, plan.start, report, signal))  # c' >= c_j: it earns
        utility = points.utility(price_r, q_true_r)
        gain = utility - honest_utility
        mu = float(max(np.abs(q_hat - q_true).max(), np.abs(q_hat_r - q_true_r).max()))
        err_report = err(points)
        widest = max(margin(honest_points), margin(points))
        option = 0.0
        if report.concurrency > c:  # the free walk-away option of a higher eviction chance
            rise = np.maximum(q_true_r[points.index] - q_true[points.index], 0.0)
            loss = np.maximum(price[points.index] - points.value, 0.0)
            option = float(np.sum(points.probability * rise * loss))
        bound_mu = 2.0 * mu * bounds.max_value
        bound_plans = err_truthful + err_report + option
        within_mu = bool(gain <= bound_mu + TOLERANCE)
        within_plans = bool(gain <= bound_plans + TOLERANCE)
        rows.append(
            dict(
                job=ctx.job,
                kind=kind,
                parameter=parameter,
                concurrency=report.concurrency,
                utility=utility,
                estimated=plan.estimated_utility,
                gain=gain,
                mu=mu,
                bound_mu=bound_mu,
                err_truthful=err_truthful,
                err_report=err_report,
                option=option,
                margin=widest,
                bound_plans=bound_plans,
                within_mu=within_mu,
                within_plans=within_plans,
                holds=within_mu and within_plans,
            )
        )
    return rows


def audit_run(
    sequence: BirthSequence,
    realisation: Realisation,
    settings: FrameworkSettings,
    rng: np.random.Generator,
    relaxed=None,
) -> tuple[JobOutcomes, list[dict]]:
    """Theorem 3.2 over a whole birth sequence: the truthful run of Alg. 1 (`run_framework`), every
    birth audited by `audit_birth` with the true failure probabilities of the exact oracle (so the
    earlier jobs' residual randomness must fit `settings.max_outcomes`). Returns the run's
    outcomes and the audit's rows (one per job and report). `relaxed`: ALG (run_framework's; the
    stochastic variant's menu for `StochasticAudit`, algorithms/sow/stochastic_menu.py)."""
    rows: list[dict] = []

    def audit(ctx: BirthContext) -> None:
        rows.extend(
            audit_birth(
                ctx,
                sequence.jobs[ctx.job],
                sequence.signal,
                sequence.bounds,
                settings.nodes,
                settings.epsilon,
                max_outcomes=settings.max_outcomes,
            )
        )

    return run_framework(sequence, realisation, settings, rng, on_birth=audit, relaxed=relaxed), rows
