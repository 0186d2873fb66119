"""Paper 002 (LARA), Sec. 4.4 and Fig. 5: the error of the remaining-data prediction against the
number of loss points seen, for the weighted least squares of Sec. 3.1 (WLS), plain least squares
(LS), the M4 estimator and Engression (the paper's four), and a power law with a floor (ours);
and the time of one prediction round (Fig. 5(c)); computed in process (no sweep).

For each thread of a bundle, its first n observed losses are fitted and the data it still needs
to reach eps_k is predicted; the error is |S_hat - S| / S with S the true remaining data, averaged
over threads (Sec. 4.4, measure (i)), for n = 60, 80, ..., 200 (the paper's grid).

Observation design (our reading; the paper does not say where its points sit): a thread reports
its loss once per unit time, and during LARA's exploration it receives 1/|E_t| of the unit, so
with uniform shares among the bundle's K threads (every thread exploring) its i-th point is at
data s_i = i N_k / K, i = 1, 2, ...; the loss is the observed one, `curve.loss(s_i)` (with the
source's noise). After n points the truth is S = curve.data_to_reach(eps_k, limit) - s_n, limit
the thread's data limit N_k (d_k - b_k); a thread whose S is inf (never reaches eps_k within its
limit) or <= 0 (already reached it by s_n) at that n is left out of the average and counted.
With noise, S is where the noisy loss first dips below eps_k; at the parametric calibration's
sigma = 0.01 per data unit that comes 2-10% (median 5%) of the data before the noise-free crossing (the
loss falls by only ~b / s per unit there, and one of thousands of noise cells reaches -3.5 sigma),
an error floor for any curve fit. `thread_errors(truth="noise-free")` measures against the
noise-free crossing of a parametric curve instead (a diagnostic; the report uses the observed S).

Methods (S_hat = ceil(s* - s_n), clipped at 0, with s* where the fitted curve reaches eps; inf
if it never does):
- WLS: the weighted RLS of eq. 3.5 with gamma = 0.9, fed point by point, then S_hat of eq. 3.6
  (`remaining_data`); run for the bundle's K threads at once with `RLSBank` (the same algebra as
  `WeightedRLS`, which the tests check here too);
- LS: the same with gamma = 1 (ordinary least squares on ln l against ln s);
- M4: Alabdulmohsin et al. (2022), (l - l_inf) / (l_0 - l)^alpha = beta s^c, least squares in
  their transformed space from their default start (algorithms/core/m4_estimator.py); s* in
  closed form;
- Engression: Shen and Meinshausen (2023) with their package's default settings, written in
  NumPy (algorithms/core/engression_estimator.py), fitted on (ln s_i, ln l_i); s* where the
  predicted conditional mean of ln l (the package's default prediction) reaches ln eps, found
  exactly on the piecewise-linear mean. Seed of the fit (replicate r, thread j, n points):
  1,000,000 r + 1000 j + n. It costs about 0.2-0.5 s a fit (500 full-batch Adam steps of a
  network with 100 hidden units and 100 noise inputs), so it runs on `ENGRESSION_BUNDLES`
  (the paper's pure and mixed bundles) for replicates 0..`ENGRESSION_REPLICATES`-1 only;
- floor fit (ours, not the paper's): the three-parameter power law with a floor, l(s) =
  a s^(-b) + c, a > 0, b in [FLOOR_B_MIN, FLOOR_B_MAX], 0 <= c <= min_i l_i, fitted on the n points
  by `scipy.optimize.curve_fit` in log space (residuals ln l_hat(s_i) - ln l_i, the surrogate
  noise of eq. 3.2; analytic Jacobian, trust-region reflective under the bounds). Its start is
  the best of a grid of floors c in [0, 0.999 min l], each with (a, b) from the weighted linear
  fit of ln(l - c) on ln s (weights ((l - c) / l)^2, the log residual to first order): a global
  search over c, so the local solver starts in the right basin. With c = 0 it is LS; s* =
  ((eps - c) / a)^(-1/b), inf if eps <= c.

An infinite prediction (WLS/LS: b_hat <= 0; M4: eps <= l_inf; Engression: a mean that levels off
above ln eps; floor fit: eps <= c_hat) has an infinite error: it is counted
(`infinite_predictions`) and kept out of `mean_error` (which would be inf); the median is over
every thread used, infinite ones included (inf sorts last).

Bundles (market/core/bundle_config.py): Table 1 (the pure bundle of Fig. 5(a)), Table 2 with
epsilon sets 1 and 2 (the mixed bundle of Fig. 5(b)), each with this project's parametric
calibration (exact power laws with 1% log-normal noise per data unit, docs/core/calibration.md);
Table 1 with the mis-specified shapes `bend` and `floor`; and real LCDB curves (10 threads).
Each is drawn `replicates` times with `np.random.default_rng(r)`, r = 0, 1, ...; the errors of
all threads of all replicates are pooled (each thread-replicate weighs the same). The table
(`fig5_prediction.csv`) has one row per bundle, method, n and pool of replicates (`replicates`):
every method but Engression over all replicates, and on the Engression bundles all five methods
again over Engression's replicates, so that Engression is compared on the same threads.
The (bundle, replicate) tasks run on `workers` processes (fork; each fit is seeded, so the
numbers do not depend on the split); BLAS runs one thread per process.

Timing (Fig. 5(c)): the median wall time of one prediction round of each method on the Table 1
threads of replicate 0, at n = 60 and n = 200: for WLS and LS one recursive update with the n-th
point plus eq. 3.6 (the one-pass form, Sec. 3.1; the scalar `WeightedRLS`), for the others the
fit on the n points plus the crossing; the median over repeats per thread, then over threads.
Timing varies from run to run (fig5_timing.csv); everything else is deterministic.

Why WLS gets worse with more points (`wls_window`, fig5_wls_window.csv): with s_i = i N_k / K the
points crowd in ln s (ln s_i - ln s_(i-1) ~ 1/i), and the discount gamma keeps an effective
window of about 1 / (1 - gamma) recent points (10 at 0.9), whose span in ln s shrinks like 1/n:
the slope b_hat, which the extrapolation to eps multiplies over a distance that does not shrink
as fast, is estimated from an ever shorter lever arm. The table gives, per gamma in
{0.9, 0.95, 0.99, 1} and n in {60, 120, 200}: the effective number of points sum_i gamma^(n-i),
the most recent points carrying 90% of the weight and the span of ln s they cover, the standard
deviation of the weighted LS slope per unit of log noise, the measured spread of b_hat - b on
the Table 1 threads (exact power laws, 10 replicates), and the mean error on the paper's bundles.
"""

from __future__ import annotations

import copy
import math
import multiprocessing
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit
from threadpoolctl import threadpool_limits

from algorithms.core.engression_estimator import engression_fit, engression_need
from algorithms.core.m4_estimator import m4_fit, m4_need
from algorithms.core.remaining_data import remaining_data
from algorithms.core.weighted_rls import RLSBank, WeightedRLS
from market.core.bundle_config import BundleConfig, draw_bundle
from sweep.plots import pyplot, save

from ..experiment import Check, Experiment

ROOT = Path(__file__).resolve().parents[2]
POINTS = tuple(range(60, 201, 20))  # n = 60, 80, ..., 200 (Sec. 4.4)
WLS_GAMMA = 0.9  # Sec. 4.4
FLOOR = "floor fit (ours)"  # our own estimator, not one of the paper's
PAPER_METHODS = ("WLS", "LS", "M4", "Engression")
METHODS = (*PAPER_METHODS, FLOOR)
BUNDLES = {  # label -> the `bundle` config section
    "table1": {"kind": "table1"},
    "table2 eps1": {"kind": "table2", "epsilon_set": 1},
    "table2 eps2": {"kind": "table2", "epsilon_set": 2},
    "table1 bend": {"kind": "table1", "shape": "bend"},
    "table1 floor": {"kind": "table1", "shape": "floor"},
    "real": {"kind": "real", "path": str(ROOT / "data" / "core_lcdb_curves.csv"), "threads": 10},
}
PAPER_BUNDLES = ("table1", "table2 eps1", "table2 eps2")  # Fig. 5(a) pure, 5(b) mixed
ENGRESSION_BUNDLES = PAPER_BUNDLES
ENGRESSION_REPLICATES = 2
WORKERS = 2
COLUMNS = [
    "bundle",
    "method",
    "points",
    "replicates",
    "mean_error",
    "median_error",
    "threads_used",
    "threads_left_out",
    "infinite_predictions",
]
MIN_POINTS = {"WLS": 2, "LS": 2, "M4": 5, "Engression": 3, FLOOR: 3}  # fewer: nan (no fit)
FLOOR_B_MIN, FLOOR_B_MAX = 1e-3, 5.0
FLOOR_GRID = 1.0 - np.geomspace(1.0, 1e-3, 32)  # the start: floors c / min_i l_i, 0 to 0.999
TIMING_POINTS = (60, 200)
TIMING_REPEATS = {"WLS": 200, "LS": 200, "M4": 20, "Engression": 1, FLOOR: 20}
WINDOW_GAMMAS = (0.9, 0.95, 0.99, 1.0)
WINDOW_POINTS = (60, 120, 200)
WINDOW_SHARE = 0.9  # the recent points carrying this share of the weight


# --- the floor fit -------------------------------------------------------------------------------


def _floor_profile(c: np.ndarray, ln_s: np.ndarray, loss: np.ndarray):
    """For each floor c (< min loss): (ln a, b) of the weighted linear fit ln(l - c) ~ ln a - b ln s
    with weights ((l - c) / l)^2 (the log residual ln(a s^-b + c) - ln l to first order), and the
    exact log-space residual sum of squares of that (a, b, c)."""
    z = loss[None, :] - c[:, None]
    w = (z / loss[None, :]) ** 2
    y = np.log(z)
    sw, sx, sxx = w.sum(1), w @ ln_s, w @ (ln_s * ln_s)
    wy = w * y
    sy, sxy = wy.sum(1), wy @ ln_s
    slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx)
    ln_a = (sy - slope * sx) / sw
    fitted = np.exp(ln_a[:, None] + slope[:, None] * ln_s[None, :]) + c[:, None]
    return ln_a, -slope, ((np.log(fitted) - np.log(loss)[None, :]) ** 2).sum(1)


def _log_model(s, ln_a, b, c):
    return np.log(np.exp(ln_a) * s**-b + c)


def _log_jacobian(s, ln_a, b, c):
    power = np.exp(ln_a) * s**-b
    value = power + c
    return np.column_stack([power / value, -np.log(s) * power / value, 1.0 / value])


def floor_fit(s, loss) -> tuple[float, float, float]:
    """(a, b, c) of l(s) = a s^-b + c fitted to the points in log space (module docstring)."""
    s = np.asarray(s, dtype=float)
    loss = np.asarray(loss, dtype=float)
    if s.size < 3 or np.unique(s).size < 3:
        raise ValueError(f"the floor fit needs at least three distinct data amounts, got {s.size} points")
    top = float(loss.min())
    ln_a, b, residual = _floor_profile(top * FLOOR_GRID, np.log(s), loss)
    residual[~np.isfinite(residual) | ~(b > 0)] = np.inf
    i = int(np.argmin(residual))
    if not np.isfinite(residual[i]):  # every floor gives b <= 0: the loss does not fall
        i = 0
    start = [float(ln_a[i]), min(max(float(b[i]), FLOOR_B_MIN), FLOOR_B_MAX), float(top * FLOOR_GRID[i])]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)  # covariance not estimated: unused
            (ln_a0, b0, c0), _ = curve_fit(
                _log_model,
                s,
                np.log(loss),
                p0=start,
                jac=_log_jacobian,
                bounds=([-np.inf, FLOOR_B_MIN, 0.0], [np.inf, FLOOR_B_MAX, top]),
            )
    except (RuntimeError, ValueError):  # no convergence: keep the start
        ln_a0, b0, c0 = start
    return math.exp(ln_a0), float(b0), float(c0)


def floor_need(params, eps: float, s_n: float) -> float:
    """S_hat = ceil(s* - s_n) >= 0 where a s*^-b + c = eps; inf if eps <= c."""
    a, b, c = params
    if eps <= c:
        return math.inf
    ln_s_star = (math.log(a) - math.log(eps - c)) / b
    if ln_s_star > 700:  # beyond floating point
        return math.inf
    return max(float(math.ceil(math.exp(ln_s_star) - s_n)), 0.0)


# --- predictions -------------------------------------------------------------------------------


def observations(curve, budget: float, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first n points of a thread sharing the unit uniformly with k threads: s_i = i N / k."""
    s = np.arange(1, n + 1) * (float(budget) / k)
    return s, np.array([curve.loss(x) for x in s])


def rls_fits(s, loss, gamma: float, points) -> dict[int, RLSBank]:
    """The fits of eq. 3.5 after each n in `points` for K threads at once: s and loss (K, n_max),
    fed one point per thread per step; per n a copy of the `RLSBank` (theta, last_s, fitted)."""
    s = np.atleast_2d(np.asarray(s, dtype=float))
    loss = np.atleast_2d(np.asarray(loss, dtype=float))
    k = s.shape[0]
    bank = RLSBank(k, gamma)
    every = np.arange(k)
    wanted = set(points)
    out = {}
    for i in range(max(points)):
        bank.update(every, s[:, i], loss[:, i])
        if i + 1 in wanted:
            out[i + 1] = copy.deepcopy(bank)
    return out


def rls_needs(s, loss, eps, gamma: float, points) -> dict[int, np.ndarray]:
    """S_hat of eq. 3.6 after each n in `points` for K threads at once (`rls_fits`)."""
    return {
        n: remaining_data(bank.theta, eps, bank.last_s, fitted=bank.fitted)
        for n, bank in rls_fits(s, loss, gamma, points).items()
    }


def _reach(curve, eps: float, limit: float, truth: str) -> float:
    """The least data reaching eps within the limit: on the observed curve, or (truth "noise-free")
    on a parametric curve's noise-free law (other sources: the observed curve, which has no
    per-point noise)."""
    law = getattr(curve, "law", None)
    if truth == "noise-free" and law is not None:
        s = law.data_to_reach(eps)
        return s if s <= limit else math.inf
    return curve.data_to_reach(eps, limit)


def engression_seed(replicate: int, thread: int, points: int) -> int:
    """The seed of Engression's fit of one thread after `points` points (module docstring)."""
    return 1_000_000 * int(replicate) + 1000 * int(thread) + int(points)


def fitted_need(method: str, s, loss, eps: float, seed: int = 0) -> float:
    """S_hat of M4, Engression or the floor fit from the points (s_i, l_i), i = 1..n; nan with
    fewer points than the method has parameters to fit (`MIN_POINTS`)."""
    s = np.asarray(s, dtype=float)
    loss = np.asarray(loss, dtype=float)
    if s.size < MIN_POINTS[method]:
        return math.nan
    s_n = float(s[-1])
    if method == "M4":
        return m4_need(m4_fit(s, loss), eps, s_n)
    if method == "Engression":
        return engression_need(engression_fit(np.log(s), np.log(loss), seed=seed), eps, s_n)
    if method == FLOOR:
        return floor_need(floor_fit(s, loss), eps, s_n)
    raise ValueError(f"no fitted method {method!r}; known: M4, Engression, {FLOOR}")


def _threads(bundle, n_max: int, truth: str):
    """Per thread: observed s and losses (first n_max points), threshold and the data reaching it."""
    k = len(bundle)
    pairs = [observations(curve, thread.budget, k, n_max) for thread, curve in zip(bundle.threads, bundle.curves)]
    s = np.array([pair[0] for pair in pairs])
    loss = np.array([pair[1] for pair in pairs])
    eps = np.array([thread.threshold for thread in bundle.threads])
    reach = np.array(
        [
            _reach(curve, thread.threshold, thread.data_limit, truth)
            for thread, curve in zip(bundle.threads, bundle.curves)
        ]
    )
    return s, loss, eps, reach


def bundle_predictions(
    bundle, points=POINTS, truth: str = "observed", methods=METHODS, replicate: int = 0
) -> list[dict]:
    """Per thread and n in `points`: the true remaining data S and each method's S_hat (rows; the
    methods are nan where the thread is left out, S inf or <= 0). `replicate` enters
    Engression's seeds only."""
    if truth not in ("observed", "noise-free"):
        raise ValueError(f"truth must be 'observed' or 'noise-free', got {truth!r}")
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; known: {list(METHODS)}")
    s, loss, eps, reach = _threads(bundle, max(points), truth)
    fits = {
        method: rls_needs(s, loss, eps, gamma, points)
        for method, gamma in (("WLS", WLS_GAMMA), ("LS", 1.0))
        if method in methods
    }
    rows = []
    for j in range(len(bundle)):
        for n in points:
            s_n = float(s[j, n - 1])
            row = {"thread": j, "points": n, "truth": reach[j] - s_n}
            if math.isfinite(row["truth"]) and row["truth"] > 0:
                for method in methods:
                    row[method] = (
                        float(fits[method][n][j])
                        if method in fits
                        else fitted_need(method, s[j, :n], loss[j, :n], float(eps[j]), engression_seed(replicate, j, n))
                    )
            else:
                row.update(dict.fromkeys(methods, math.nan))
            rows.append(row)
    return rows


# --- the report ----------------------------------------------------------------------------------

_CONFIGS: dict[str, BundleConfig] = {}


def _config(label: str) -> BundleConfig:
    if label not in _CONFIGS:
        _CONFIGS[label] = BundleConfig.from_config(BUNDLES[label])
    return _CONFIGS[label]


def _replicate_errors(label: str, replicate: int, methods: tuple, truth: str, points: tuple) -> list[dict]:
    """The error rows of one bundle replicate (one task of `thread_errors`)."""
    bundle = draw_bundle(_config(label), np.random.default_rng(replicate))
    rows = []
    with threadpool_limits(1):
        for row in bundle_predictions(bundle, points=points, truth=truth, methods=methods, replicate=replicate):
            truth_value = row["truth"]
            for method in methods:
                guess = row[method]
                error = abs(guess - truth_value) / truth_value if not math.isnan(guess) else math.nan
                rows.append(
                    {
                        "bundle": label,
                        "replicate": replicate,
                        "thread": row["thread"],
                        "points": row["points"],
                        "method": method,
                        "truth": truth_value,
                        "prediction": guess,
                        "error": error,
                    }
                )
    return rows


def _run(tasks: list[tuple], workers: int, cost: list[float]) -> list:
    """`_replicate_errors` on each task, in `workers` forked processes (the costliest first), in
    task order; in this process when workers <= 1 or fork is not available."""
    if workers <= 1 or len(tasks) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_replicate_errors(*task) for task in tasks]
    order = sorted(range(len(tasks)), key=lambda i: -cost[i])
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = {i: pool.submit(_replicate_errors, *tasks[i]) for i in order}
        return [futures[i].result() for i in range(len(tasks))]


def thread_errors(
    replicates: int = 10,
    truth: str = "observed",
    engression_replicates: int = ENGRESSION_REPLICATES,
    engression_bundles=ENGRESSION_BUNDLES,
    points=POINTS,
    workers: int = 1,
    bundles=None,
) -> pd.DataFrame:
    """One row per bundle, replicate, thread, n and method: truth S, prediction S_hat and error
    |S_hat - S| / S (nan where the thread is left out). Engression only on `engression_bundles`
    for replicates below `engression_replicates`."""
    tasks, cost = [], []
    for label in BUNDLES if bundles is None else bundles:
        for r in range(replicates):
            engression = label in engression_bundles and r < engression_replicates
            methods = METHODS if engression else tuple(m for m in METHODS if m != "Engression")
            tasks.append((label, r, methods, truth, tuple(points)))
            cost.append(100.0 if engression else 1.0)
    return pd.DataFrame([row for rows in _run(tasks, workers, cost) for row in rows])


def summarise(errors: pd.DataFrame) -> pd.DataFrame:
    """Per bundle, method and n: the mean error over threads with a finite prediction, the median
    over all threads used, threads used / left out, infinite predictions, and how many
    replicates the rows pool."""
    rows = []
    for (label, method, n), part in errors.groupby(["bundle", "method", "points"], sort=False):
        used = part["error"].dropna().to_numpy()
        finite = used[np.isfinite(used)]
        rows.append(
            {
                "bundle": label,
                "method": method,
                "points": int(n),
                "replicates": int(part["replicate"].nunique()),
                "mean_error": float(finite.mean()) if finite.size else math.nan,
                "median_error": float(np.median(used)) if used.size else math.nan,
                "threads_used": int(used.size),
                "threads_left_out": int(len(part) - used.size),
                "infinite_predictions": int(used.size - finite.size),
            }
        )
    return _ordered(pd.DataFrame(rows, columns=COLUMNS))


def _ordered(table: pd.DataFrame) -> pd.DataFrame:
    bundles = {b: i for i, b in enumerate(dict.fromkeys([*BUNDLES, *table["bundle"]]))}
    methods = {m: i for i, m in enumerate(dict.fromkeys([*METHODS, *table["method"]]))}
    key = table["bundle"].map(bundles) * 10**9 - table["replicates"] * 1000 + table["method"].map(methods)
    return (
        table.assign(_key=key)
        .sort_values(["_key", "points"], kind="stable")
        .drop(columns="_key")
        .reset_index(drop=True)
    )


def prediction_table(errors: pd.DataFrame) -> pd.DataFrame:
    """The report's table: every method but Engression pooled over all its replicates, and where
    Engression ran, all methods again pooled over Engression's (bundle, replicate) pairs."""
    others = errors[errors["method"] != "Engression"]
    parts = [summarise(others)] if len(others) else []
    ran = errors.loc[errors["method"] == "Engression", ["bundle", "replicate"]].drop_duplicates()
    if len(ran):
        parts.append(summarise(errors.merge(ran, on=["bundle", "replicate"])))
    table = pd.concat(parts, ignore_index=True).drop_duplicates(["bundle", "method", "points", "replicates"])
    return _ordered(table)


def _median_us(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e6)


def timing(repeats: dict[str, int] | None = None, points=TIMING_POINTS) -> pd.DataFrame:
    """Fig. 5(c): median microseconds of one prediction round per method and n (module docstring)."""
    repeats = {**TIMING_REPEATS, **(repeats or {})}
    bundle = draw_bundle(_config("table1"), np.random.default_rng(0))
    k = len(bundle)
    rows = []
    with threadpool_limits(1):
        for n in points:
            samples = {method: [] for method in METHODS}
            for j, (thread, curve) in enumerate(zip(bundle.threads, bundle.curves)):
                s, loss = observations(curve, thread.budget, k, n)
                eps = thread.threshold
                for method, gamma in (("WLS", WLS_GAMMA), ("LS", 1.0)):
                    rls = WeightedRLS(gamma)
                    for x, y in zip(s[:-1], loss[:-1]):
                        rls.update(x, y)
                    copies = [copy.deepcopy(rls) for _ in range(repeats[method])]  # made outside the timing

                    def one_round(copies=copies, x=s[-1], y=loss[-1]):
                        fit = copies.pop()
                        fit.update(x, y)
                        return remaining_data(fit.theta, eps, fit.last_s)

                    samples[method].append(_median_us(one_round, repeats[method]))
                for method in ("M4", "Engression", FLOOR):
                    samples[method].append(
                        _median_us(
                            lambda method=method: fitted_need(method, s, loss, eps, engression_seed(0, j, n)),
                            repeats[method],
                        )
                    )
            for method in METHODS:
                rows.append(
                    {
                        "method": method,
                        "points": n,
                        "median_us": float(np.median(samples[method])),
                        "threads": k,
                        "repeats": repeats[method],
                    }
                )
    return pd.DataFrame(rows)


def wls_window(replicates: int = 10, gammas=WINDOW_GAMMAS, points=WINDOW_POINTS) -> pd.DataFrame:
    """Why the discounted fit gets worse with more points (module docstring): per gamma and n, the
    window of eq. 3.3's weights on the observation design s_i ~ i, the slope's spread, and the
    error on the paper's bundles (against the observed and the noise-free crossing)."""
    data = []
    for label in PAPER_BUNDLES:
        for r in range(replicates):
            bundle = draw_bundle(_config(label), np.random.default_rng(r))
            s, loss, eps, reach = _threads(bundle, max(points), "observed")
            free = np.array(
                [
                    _reach(curve, thread.threshold, thread.data_limit, "noise-free")
                    for thread, curve in zip(bundle.threads, bundle.curves)
                ]
            )
            b = np.array([curve.law.exponent for curve in bundle.curves])
            data.append((label, s, loss, eps, reach, free, b))
    rows = []
    for gamma in gammas:
        errors = {n: {} for n in points}
        slopes = {n: [] for n in points}
        for label, s, loss, eps, reach, free, b in data:
            for n, bank in rls_fits(s, loss, gamma, points).items():
                need = remaining_data(bank.theta, eps, bank.last_s, fitted=bank.fitted)
                slopes[n].extend(-bank.theta[:, 0] / b - 1.0)
                for key, truth in ((label, reach), (f"{label} noise-free", free)):
                    remaining = truth - s[:, n - 1]
                    used = np.isfinite(remaining) & (remaining > 0) & np.isfinite(need)
                    errors[n].setdefault(key, []).extend(np.abs(need[used] - remaining[used]) / remaining[used])
        for n in points:
            weight = gamma ** (n - np.arange(1, n + 1))
            x = np.log(np.arange(1, n + 1))  # ln s_i up to a constant
            centre = (weight @ x) / weight.sum()
            spread = weight @ (x - centre) ** 2
            recent = np.cumsum(weight[::-1])
            window = int(np.searchsorted(recent, WINDOW_SHARE * recent[-1]) + 1)
            row = {
                "gamma": gamma,
                "points": n,
                "effective_points": float(weight.sum()),
                "window_points_90": window,
                "window_span_ln_s": float(math.log(n / (n - window + 1))),
                "slope_sd_per_noise": float(math.sqrt(weight**2 @ (x - centre) ** 2) / spread),
                "slope_relative_error_sd": float(np.std(slopes[n])),
            }
            for label in PAPER_BUNDLES:
                row[f"mean_error {label}"] = float(np.mean(errors[n][label]))
            row["mean_error table1 noise-free"] = float(np.mean(errors[n]["table1 noise-free"]))
            rows.append(row)
    return pd.DataFrame(rows)


def _panel(ax, part: pd.DataFrame, label: str, methods, note: str = "") -> None:
    colours = dict(zip(METHODS, ("C0", "C3", "C2", "C4", "C7")))
    widest = int(part["replicates"].max())
    drawn = []
    for method in methods:
        rows_of = part[part["method"] == method]
        if not len(rows_of):
            continue
        pool = int(rows_of["replicates"].max())
        line = rows_of[rows_of["replicates"] == pool].sort_values("points")
        name = method if pool == widest else f"{method} ({pool} repl.)"
        ax.plot(
            line["points"], line["mean_error"], marker="o", markersize=3, color=colours[method], label=f"{name} mean"
        )
        ax.plot(
            line["points"],
            line["median_error"],
            linestyle="--",
            linewidth=0.9,
            color=colours[method],
            label=f"{name} median",
        )
        drawn.append(line)
    values = pd.concat(drawn)[["mean_error", "median_error"]].to_numpy().ravel() if drawn else np.array([])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size and values.max() / values.min() > 10:
        ax.set_yscale("log")
    used = part[(part["method"] == "WLS") & (part["replicates"] == widest)].sort_values("points")
    ax.set_title(
        f"{label}{note}\n{widest} replicates, threads used {int(used['threads_used'].iloc[0])} "
        f"(n={int(used['points'].iloc[0])}) to {int(used['threads_used'].iloc[-1])} "
        f"(n={int(used['points'].iloc[-1])})",
        fontsize=8,
    )
    ax.set_xlabel("data points n")
    ax.set_ylabel("|S_hat - S| / S")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=5.5, ncol=2)


def plot(table: pd.DataFrame, path: Path) -> None:
    """One panel per bundle; the bundles where Engression ran once more without it (its errors
    are orders of magnitude above the others')."""
    plt = pyplot()
    labels = list(dict.fromkeys(table["bundle"]))
    with_engression = [b for b in labels if (table.loc[table["bundle"] == b, "method"] == "Engression").any()]
    panels = [(b, METHODS, "") for b in with_engression]
    others = tuple(m for m in METHODS if m != "Engression")
    panels += [(b, others, ", without Engression (zoom)") for b in with_engression]
    panels += [(b, METHODS, "") for b in labels if b not in with_engression]
    cols = 3
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 3.9 * rows), squeeze=False)
    for ax, (label, methods, note) in zip(axes.flat, panels):
        _panel(ax, table[table["bundle"] == label], label, methods, note)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(
        "Fig. 5(a)-(b): remaining-data prediction error against points seen (s_i = i N_k / K); "
        "WLS, LS, M4, Engression (the paper's) and a floor fit (ours)",
        fontsize=10,
    )
    fig.tight_layout()
    save(fig, path)


def prediction_report(
    out: Path,
    replicates: int = 10,
    timing_repeats: dict[str, int] | None = None,
    engression_replicates: int = ENGRESSION_REPLICATES,
    engression_bundles=ENGRESSION_BUNDLES,
    points=POINTS,
    timing_points=TIMING_POINTS,
    workers: int = WORKERS,
) -> pd.DataFrame:
    """Write fig5_prediction.csv / .png, fig5_timing.csv and fig5_wls_window.csv into `out`;
    return the prediction table (`attrs["timing"]` and `attrs["window"]` hold the other two)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    errors = thread_errors(
        replicates,
        engression_replicates=engression_replicates,
        engression_bundles=engression_bundles,
        points=points,
        workers=workers,
    )
    table = prediction_table(errors)
    table.to_csv(out / "fig5_prediction.csv", index=False, float_format="%.6g")
    plot(table, out / "fig5_prediction.png")
    window = wls_window(replicates)
    window.to_csv(out / "fig5_wls_window.csv", index=False, float_format="%.6g")
    times = timing(timing_repeats, timing_points)
    times.to_csv(out / "fig5_timing.csv", index=False, float_format="%.2f")
    table.attrs["timing"] = times
    table.attrs["window"] = window
    return table


EXPERIMENT = Experiment("fig5", None, lambda context: prediction_report(context.out))


# --- checks --------------------------------------------------------------------------------------


def _rows(table: pd.DataFrame, bundle: str, method: str, replicates: int | None = None) -> pd.DataFrame:
    """A method's rows on a bundle, pooled over `replicates` (None: its widest pool)."""
    part = table[(table["bundle"] == bundle) & (table["method"] == method)]
    if not len(part):
        return part
    return part[part["replicates"] == (part["replicates"].max() if replicates is None else replicates)]


def _average(
    table: pd.DataFrame, bundle: str, method: str, replicates: int | None = None, column: str = "mean_error"
) -> float:
    """The error averaged over the n grid."""
    part = _rows(table, bundle, method, replicates)
    return float(part[column].mean()) if len(part) else math.nan


def _at(table: pd.DataFrame, bundle: str, method: str, n: int) -> float:
    part = _rows(table, bundle, method)
    part = part[part["points"] == n]
    return float(part["mean_error"].iloc[0]) if len(part) else math.nan


def _engression_pool(table: pd.DataFrame, bundle: str) -> int | None:
    part = _rows(table, bundle, "Engression")
    return int(part["replicates"].iloc[0]) if len(part) else None


def prediction_checks(table: pd.DataFrame | None, experiment: str = "fig5") -> list[Check]:
    """Sec. 4.4's statements (the paper gives no numbers, only the ordering) on our table: the mean
    error averaged over n = 60..200; comparisons with Engression on Engression's replicates, the
    others on all replicates. The floor fit is ours and gets information rows only."""
    if table is None or not len(table):
        return []
    out: list[Check] = []
    present = set(table["bundle"])

    def check(text, value, rule):
        holds = None if math.isnan(value) else bool(value < 0 if rule == "< 0" else value > 0)
        out.append(Check(experiment, text, value, holds, rule))

    if "table1" in present:
        r = _engression_pool(table, "table1")
        check(
            "Fig. 5(a) table1 (pure): WLS mean error minus M4's (paper: WLS below the extrapolation methods)",
            _average(table, "table1", "WLS") - _average(table, "table1", "M4"),
            "< 0",
        )
        if r:
            check(
                f"Fig. 5(a) table1 (pure): WLS mean error minus Engression's, on Engression's {r} replicates "
                "(paper: WLS below the extrapolation methods)",
                _average(table, "table1", "WLS", r) - _average(table, "table1", "Engression", r),
                "< 0",
            )
        others = ("WLS", "M4", "Engression") if r else ("WLS", "M4")
        check(
            f"Fig. 5(a) table1 (pure): LS mean error minus the largest of {', '.join(others)}"
            + (f" (on Engression's {r} replicates)" if r else "")
            + " (paper: LS the worst)",
            _average(table, "table1", "LS", r) - max(_average(table, "table1", m, r) for m in others),
            "> 0",
        )
        first, last = _at(table, "table1", "WLS", min(POINTS)), _at(table, "table1", "WLS", max(POINTS))
        check(
            f"Fig. 8(b) table1: WLS error at n={max(POINTS)} minus at n={min(POINTS)} (falls with more points)",
            last - first,
            "< 0",
        )
    for bundle in ("table2 eps1", "table2 eps2"):
        if bundle not in present:
            continue
        r = _engression_pool(table, bundle)
        if r:
            check(
                f"Fig. 5(b) {bundle} (mixed): Engression mean error minus the smallest of WLS, LS, M4, on "
                f"Engression's {r} replicates (paper: Engression the best)",
                _average(table, bundle, "Engression", r)
                - min(_average(table, bundle, m, r) for m in ("WLS", "LS", "M4")),
                "< 0",
            )
        check(
            f"Fig. 5(b) {bundle} (mixed): WLS mean error minus M4's (paper: WLS slightly worse than the "
            "extrapolation methods)",
            _average(table, bundle, "WLS") - _average(table, bundle, "M4"),
            "> 0",
        )
        if r:
            check(
                f"Fig. 5(b) {bundle} (mixed): WLS mean error minus Engression's, on Engression's {r} replicates "
                "(paper: WLS slightly worse than the extrapolation methods)",
                _average(table, bundle, "WLS", r) - _average(table, bundle, "Engression", r),
                "> 0",
            )
        check(
            f"Fig. 5(b) {bundle} (mixed): WLS mean error minus LS's (paper: WLS significantly better than LS)",
            _average(table, bundle, "WLS") - _average(table, bundle, "LS"),
            "< 0",
        )
    for bundle in dict.fromkeys(table["bundle"]):
        # real curves: a few threads with a near-flat fit give errors of 1e3..1e12 that swamp the
        # mean, so the median over threads is shown there
        column = "median_error" if bundle == "real" else "mean_error"
        methods = (FLOOR,) if bundle in PAPER_BUNDLES else METHODS
        for method in methods:
            part = _rows(table, bundle, method)
            if len(part):
                out.append(
                    Check(
                        experiment,
                        f"{bundle}: {method} {column.split('_')[0]} error over threads "
                        f"(average over n, {int(part['replicates'].iloc[0])} replicates)",
                        float(part[column].mean()),
                        None,
                    )
                )
    times = table.attrs.get("timing")
    if times is not None and len(times):
        at = times[times["points"] == times["points"].max()].set_index("method")["median_us"]
        n = int(times["points"].max())
        for method in ("M4", "Engression"):
            if {"WLS", method} <= set(at.index):
                ratio = float(at[method] / at["WLS"])
                out.append(
                    Check(
                        experiment,
                        f"Fig. 5(c): time of one {method} prediction / one WLS prediction "
                        f"(n={n}; paper: WLS significantly faster)",
                        ratio,
                        bool(ratio > 1),
                        "> 1",
                    )
                )
        for method in METHODS:
            if method in at.index:
                out.append(
                    Check(
                        experiment,
                        f"Fig. 5(c): {method} one prediction round, median microseconds (n={n})",
                        float(at[method]),
                        None,
                    )
                )
    return out
