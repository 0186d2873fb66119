"""Paper 002 (LARA), Sec. 4.4 and Fig. 5: the error of the remaining-data prediction against the
number of loss points seen, for the weighted least squares of Sec. 3.1 and two others; computed
in process (no sweep).

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

Methods:
- WLS: the weighted RLS of eq. 3.5 with gamma = 0.9, fed point by point, then S_hat of eq. 3.6
  (`remaining_data`); run for the bundle's K threads at once with `RLSBank` (the same algebra as
  `WeightedRLS`, which the tests check here too);
- LS: the same with gamma = 1 (ordinary least squares on ln l against ln s);
- floor fit: the three-parameter power law with a floor, l(s) = a s^(-b) + c, a > 0, b in
  [FLOOR_B_MIN, FLOOR_B_MAX], 0 <= c <= min_i l_i, fitted on the n points by
  `scipy.optimize.curve_fit` in log space (residuals ln l_hat(s_i) - ln l_i, the surrogate noise
  of eq. 3.2; analytic Jacobian, trust-region reflective under the bounds). Its start is the best
  of a grid of floors c in [0, 0.999 min l], each with (a, b) from the weighted linear fit of
  ln(l - c) on ln s (weights ((l - c) / l)^2, the log residual to first order): a global search
  over c, so the local solver starts in the right basin. Not a power law through the origin:
  the floor lets it bend in log-log, and with c = 0 it is LS. S_hat = ceil(s* - s_n), clipped at
  0, with s* = ((eps - c) / a)^(-1/b) where the fit reaches eps, inf if eps <= c (the fit never
  gets there). The paper's own comparators (the M4 estimator, Engression) are not reproduced.

An infinite prediction (WLS/LS: b_hat <= 0; floor fit: eps <= c_hat) has an infinite error: it
is counted (`infinite_predictions`) and kept out of `mean_error` (which would be inf); the
median is over every thread used, infinite ones included (inf sorts last).

Bundles (market/core/bundle_config.py): Table 1 (the pure bundle of Fig. 5(a)), Table 2 with
epsilon sets 1 and 2 (the mixed bundle of Fig. 5(b)), each with this project's parametric
calibration (exact power laws with 1% log-normal noise per data unit, docs/core/calibration.md);
Table 1 with the mis-specified shapes `bend` and `floor`; and real LCDB curves (10 threads).
Each is drawn `replicates` times with `np.random.default_rng(r)`, r = 0, 1, ...; the errors of
all threads of all replicates are pooled (each thread-replicate weighs the same).

Timing (Fig. 5(c)): the median wall time of one prediction round of each method on the Table 1
threads of replicate 0, at n = 60 and n = 200: for WLS and LS one recursive update with the n-th
point plus eq. 3.6 (the one-pass form, Sec. 3.1; the scalar `WeightedRLS`), for the floor fit the
fit on the n points plus the inversion; the median over repeats per thread, then over threads.
Timing varies from run to run (fig5_timing.csv); everything else is deterministic.
"""
from __future__ import annotations

import copy
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit

from algorithms.core.remaining_data import remaining_data
from algorithms.core.weighted_rls import RLSBank, WeightedRLS
from market.core.bundle_config import BundleConfig, draw_bundle
from sweep.plots import pyplot, save

from .experiment import Check, Experiment

ROOT = Path(__file__).resolve().parent.parent
POINTS = tuple(range(60, 201, 20))      # n = 60, 80, ..., 200 (Sec. 4.4)
WLS_GAMMA = 0.9                         # Sec. 4.4
METHODS = ("WLS", "LS", "floor fit")
BUNDLES = {                             # label -> the `bundle` config section
    "table1": {"kind": "table1"},
    "table2 eps1": {"kind": "table2", "epsilon_set": 1},
    "table2 eps2": {"kind": "table2", "epsilon_set": 2},
    "table1 bend": {"kind": "table1", "shape": "bend"},
    "table1 floor": {"kind": "table1", "shape": "floor"},
    "real": {"kind": "real", "path": str(ROOT / "data" / "core_lcdb_curves.csv"), "threads": 10},
}
COLUMNS = ["bundle", "method", "points", "mean_error", "median_error", "threads_used", "threads_left_out",
           "infinite_predictions"]
FLOOR_B_MIN, FLOOR_B_MAX = 1e-3, 5.0
FLOOR_GRID = 1.0 - np.geomspace(1.0, 1e-3, 32)   # the start: floors c / min_i l_i, 0 to 0.999
TIMING_POINTS = (60, 200)
TIMING_REPEATS = {"WLS": 200, "LS": 200, "floor fit": 20}


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
    return np.log(np.exp(ln_a) * s ** -b + c)


def _log_jacobian(s, ln_a, b, c):
    power = np.exp(ln_a) * s ** -b
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
    if not np.isfinite(residual[i]):        # every floor gives b <= 0: the loss does not fall
        i = 0
    start = [float(ln_a[i]), min(max(float(b[i]), FLOOR_B_MIN), FLOOR_B_MAX), float(top * FLOOR_GRID[i])]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)   # covariance not estimated: unused
            (ln_a0, b0, c0), _ = curve_fit(_log_model, s, np.log(loss), p0=start, jac=_log_jacobian,
                                           bounds=([-np.inf, FLOOR_B_MIN, 0.0], [np.inf, FLOOR_B_MAX, top]))
    except (RuntimeError, ValueError):      # no convergence: keep the start
        ln_a0, b0, c0 = start
    return math.exp(ln_a0), float(b0), float(c0)


def floor_need(params, eps: float, s_n: float) -> float:
    """S_hat = ceil(s* - s_n) >= 0 where a s*^-b + c = eps; inf if eps <= c."""
    a, b, c = params
    if eps <= c:
        return math.inf
    ln_s_star = (math.log(a) - math.log(eps - c)) / b
    if ln_s_star > 700:                     # beyond floating point
        return math.inf
    return max(float(math.ceil(math.exp(ln_s_star) - s_n)), 0.0)


# --- predictions -------------------------------------------------------------------------------


def observations(curve, budget: float, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first n points of a thread sharing the unit uniformly with k threads: s_i = i N / k."""
    s = np.arange(1, n + 1) * (float(budget) / k)
    return s, np.array([curve.loss(x) for x in s])


def rls_needs(s, loss, eps, gamma: float, points) -> dict[int, np.ndarray]:
    """S_hat of eq. 3.6 after each n in `points` for K threads at once: s and loss (K, n_max), the
    threads' fits (`RLSBank`, the same algebra as `WeightedRLS`) fed one point per thread per step."""
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
            out[i + 1] = remaining_data(bank.theta, eps, bank.last_s, fitted=bank.fitted)
    return out


def _reach(curve, eps: float, limit: float, truth: str) -> float:
    """The least data reaching eps within the limit: on the observed curve, or (truth "noise-free")
    on a parametric curve's noise-free law (other sources: the observed curve, which has no
    per-point noise)."""
    law = getattr(curve, "law", None)
    if truth == "noise-free" and law is not None:
        s = law.data_to_reach(eps)
        return s if s <= limit else math.inf
    return curve.data_to_reach(eps, limit)


def bundle_predictions(bundle, points=POINTS, truth: str = "observed") -> list[dict]:
    """Per thread and n in `points`: the true remaining data S and each method's S_hat (rows; the
    methods are nan where the thread is left out, S inf or <= 0)."""
    if truth not in ("observed", "noise-free"):
        raise ValueError(f"truth must be 'observed' or 'noise-free', got {truth!r}")
    k = len(bundle)
    n_max = max(points)
    pairs = [observations(curve, thread.budget, k, n_max) for thread, curve in zip(bundle.threads, bundle.curves)]
    s = np.array([pair[0] for pair in pairs])
    loss = np.array([pair[1] for pair in pairs])
    eps = np.array([thread.threshold for thread in bundle.threads])
    fits = {method: rls_needs(s, loss, eps, gamma, points) for method, gamma in (("WLS", WLS_GAMMA), ("LS", 1.0))}
    rows = []
    for j, (thread, curve) in enumerate(zip(bundle.threads, bundle.curves)):
        reach = _reach(curve, thread.threshold, thread.data_limit, truth)
        for n in points:
            s_n = float(s[j, n - 1])
            row = {"thread": j, "points": n, "truth": reach - s_n}
            if math.isfinite(row["truth"]) and row["truth"] > 0:
                row.update({method: float(fits[method][n][j]) for method in fits})
                row["floor fit"] = (floor_need(floor_fit(s[j, :n], loss[j, :n]), thread.threshold, s_n)
                                    if n >= 3 else math.nan)   # three parameters: three points at least
            else:
                row.update(dict.fromkeys(METHODS, math.nan))
            rows.append(row)
    return rows


# --- the report ----------------------------------------------------------------------------------


def _bundles(replicates: int):
    for label, section in BUNDLES.items():
        config = BundleConfig.from_config(section)
        for r in range(replicates):
            yield label, r, draw_bundle(config, np.random.default_rng(r))


def thread_errors(replicates: int = 10, truth: str = "observed") -> pd.DataFrame:
    """One row per bundle, replicate, thread, n and method: truth S, prediction S_hat and error
    |S_hat - S| / S (nan where the thread is left out)."""
    rows = []
    for label, r, bundle in _bundles(replicates):
        for row in bundle_predictions(bundle, truth=truth):
            truth_value = row["truth"]
            for method in METHODS:
                guess = row[method]
                error = abs(guess - truth_value) / truth_value if not math.isnan(guess) else math.nan
                rows.append({"bundle": label, "replicate": r, "thread": row["thread"], "points": row["points"],
                             "method": method, "truth": truth_value, "prediction": guess, "error": error})
    return pd.DataFrame(rows)


def summarise(errors: pd.DataFrame) -> pd.DataFrame:
    """Per bundle, method and n: the mean error over threads with a finite prediction, the median
    over all threads used, threads used / left out, infinite predictions."""
    rows = []
    for (label, method, n), part in errors.groupby(["bundle", "method", "points"], sort=False):
        used = part["error"].dropna().to_numpy()
        finite = used[np.isfinite(used)]
        rows.append({"bundle": label, "method": method, "points": int(n),
                     "mean_error": float(finite.mean()) if finite.size else math.nan,
                     "median_error": float(np.median(used)) if used.size else math.nan,
                     "threads_used": int(used.size), "threads_left_out": int(len(part) - used.size),
                     "infinite_predictions": int(used.size - finite.size)})
    table = pd.DataFrame(rows, columns=COLUMNS)
    bundles = {b: i for i, b in enumerate(dict.fromkeys([*BUNDLES, *table["bundle"]]))}
    key = table["bundle"].map(bundles) * 1000 + table["method"].map({m: i for i, m in enumerate(METHODS)})
    return table.assign(_key=key).sort_values(["_key", "points"], kind="stable").drop(columns="_key") \
        .reset_index(drop=True)


def _median_us(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e6)


def timing(repeats: dict[str, int] | None = None) -> pd.DataFrame:
    """Fig. 5(c): median microseconds of one prediction round per method and n (module docstring)."""
    repeats = {**TIMING_REPEATS, **(repeats or {})}
    bundle = draw_bundle(BundleConfig.from_config(BUNDLES["table1"]), np.random.default_rng(0))
    k = len(bundle)
    rows = []
    for n in TIMING_POINTS:
        samples = {method: [] for method in METHODS}
        for thread, curve in zip(bundle.threads, bundle.curves):
            s, loss = observations(curve, thread.budget, k, n)
            eps = thread.threshold
            for method, gamma in (("WLS", WLS_GAMMA), ("LS", 1.0)):
                rls = WeightedRLS(gamma)
                for x, y in zip(s[:-1], loss[:-1]):
                    rls.update(x, y)
                copies = [copy.deepcopy(rls) for _ in range(repeats[method])]   # made outside the timing

                def one_round(copies=copies, x=s[-1], y=loss[-1]):
                    fit = copies.pop()
                    fit.update(x, y)
                    return remaining_data(fit.theta, eps, fit.last_s)
                samples[method].append(_median_us(one_round, repeats[method]))
            samples["floor fit"].append(_median_us(lambda: floor_need(floor_fit(s, loss), eps, s[-1]),
                                                   repeats["floor fit"]))
        for method in METHODS:
            rows.append({"method": method, "points": n, "median_us": float(np.median(samples[method])),
                         "threads": k, "repeats": repeats[method]})
    return pd.DataFrame(rows)


def plot(table: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    labels = list(dict.fromkeys(table["bundle"]))
    cols = 3
    rows = math.ceil(len(labels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, label in zip(axes.flat, labels):
        part = table[table["bundle"] == label]
        for method in METHODS:
            line = part[part["method"] == method].sort_values("points")
            drawn, = ax.plot(line["points"], line["mean_error"], marker="o", markersize=3, label=f"{method} mean")
            ax.plot(line["points"], line["median_error"], linestyle="--", linewidth=0.9, color=drawn.get_color(),
                    label=f"{method} median")
        values = part[["mean_error", "median_error"]].to_numpy().ravel()
        values = values[np.isfinite(values) & (values > 0)]
        if values.size and values.max() / values.min() > 10:
            ax.set_yscale("log")
        used = part[part["method"] == METHODS[0]].sort_values("points")
        ax.set_title(f"{label}: threads used {int(used['threads_used'].iloc[0])} (n={int(used['points'].iloc[0])})"
                     f" to {int(used['threads_used'].iloc[-1])} (n={int(used['points'].iloc[-1])})", fontsize=9)
        ax.set_xlabel("data points n")
        ax.set_ylabel("|S_hat - S| / S")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(labels):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7, ncol=2)
    fig.suptitle("Fig. 5(a)-(b): remaining-data prediction error against points seen (s_i = i N_k / K)")
    fig.tight_layout()
    save(fig, path)


def prediction_report(out: Path, replicates: int = 10, timing_repeats: dict[str, int] | None = None) -> pd.DataFrame:
    """Write fig5_prediction.csv / .png and fig5_timing.csv into `out`; return the prediction
    table (its `attrs["timing"]` holds the timing table)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = summarise(thread_errors(replicates))
    table.to_csv(out / "fig5_prediction.csv", index=False, float_format="%.6g")
    plot(table, out / "fig5_prediction.png")
    times = timing(timing_repeats)
    times.to_csv(out / "fig5_timing.csv", index=False, float_format="%.2f")
    table.attrs["timing"] = times
    return table


EXPERIMENT = Experiment("fig5", None, lambda context: prediction_report(context.out))


# --- checks --------------------------------------------------------------------------------------


def _average(table: pd.DataFrame, bundle: str, method: str) -> float:
    """The mean error averaged over the n grid."""
    part = table[(table["bundle"] == bundle) & (table["method"] == method)]
    return float(part["mean_error"].mean()) if len(part) else math.nan


def _at(table: pd.DataFrame, bundle: str, method: str, n: int) -> float:
    part = table[(table["bundle"] == bundle) & (table["method"] == method) & (table["points"] == n)]
    return float(part["mean_error"].iloc[0]) if len(part) else math.nan


def prediction_checks(table: pd.DataFrame | None, experiment: str = "fig5") -> list[Check]:
    """Sec. 4.4's statements on our table (mean error averaged over n = 60..200), and information
    rows. Our extrapolation method is the power law with a floor, not the paper's M4/Engression."""
    if table is None or not len(table):
        return []
    out: list[Check] = []

    def diff(bundle, first, second):
        return _average(table, bundle, first) - _average(table, bundle, second)

    if "table1" in set(table["bundle"]):
        d = diff("table1", "WLS", "LS")
        out.append(Check(experiment, "Fig. 5(a) table1: WLS mean error minus LS's (WLS below LS)", d,
                         bool(d < 0), "< 0"))
        d = diff("table1", "WLS", "floor fit")
        out.append(Check(experiment, "Fig. 5(a) table1: WLS minus the extrapolation fit's (ours: power law + floor; "
                         "WLS below it)", d, bool(d < 0), "< 0"))
        first, last = _at(table, "table1", "WLS", min(POINTS)), _at(table, "table1", "WLS", max(POINTS))
        d = last - first
        out.append(Check(experiment, f"Fig. 8(b) table1: WLS error at n={max(POINTS)} minus at n={min(POINTS)} "
                         "(falls with more points)", d, bool(d < 0), "< 0"))
    for bundle in ("table2 eps1", "table2 eps2"):
        if bundle not in set(table["bundle"]):
            continue
        d = diff(bundle, "WLS", "LS")
        out.append(Check(experiment, f"Fig. 5(b) {bundle}: WLS mean error minus LS's (WLS well below LS)", d,
                         bool(d < 0), "< 0"))
        d = diff(bundle, "floor fit", "WLS")
        out.append(Check(experiment, f"Fig. 5(b) {bundle}: extrapolation fit minus WLS (ours: power law + floor; "
                         "the extrapolation methods slightly below WLS)", d, bool(d < 0), "< 0"))
    for bundle in ("table1 bend", "table1 floor", "real"):
        if bundle not in set(table["bundle"]):
            continue
        # real curves: a few threads with a near-flat fit give errors of 1e3..1e12 that swamp the
        # mean, so the median over threads is shown there
        column = "median_error" if bundle == "real" else "mean_error"
        for method in METHODS:
            part = table[(table["bundle"] == bundle) & (table["method"] == method)]
            out.append(Check(experiment, f"{bundle}: {method} {column.split('_')[0]} error over threads "
                             f"(average over n)", float(part[column].mean()), None))
    times = table.attrs.get("timing")
    if times is not None and len(times):
        at = times[times["points"] == max(TIMING_POINTS)].set_index("method")["median_us"]
        if {"WLS", "floor fit"} <= set(at.index):
            ratio = float(at["floor fit"] / at["WLS"])
            out.append(Check(experiment, f"Fig. 5(c): time of one floor-fit prediction / one WLS prediction "
                             f"(n={max(TIMING_POINTS)}; WLS faster)", ratio, bool(ratio > 1), "> 1"))
            out.append(Check(experiment, "Fig. 5(c): WLS one prediction round, median microseconds",
                             float(at["WLS"]), None))
    return out
