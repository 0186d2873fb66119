"""Theorem 5.2's experiment (paper 004, Sec. 5 "Stochastic Variant", Appendix E): the stochastic
variant's competitive ratio against V_bar and D_max (conf/experiment/sow/theorem52.yaml,
docs/sow/reproduction.md).

Theorem 5.2: with each SoW drawn from a known prior and durations revealed on arrival, the
stochastic variant is robustly alpha-competitive with alpha an absolute constant (once N >
Omega(C_max log D_max)); Theorem 5.1's bound for the adversarial Reduction is O(log(V_bar D_max)).
So E[OPT] / E[welfare] of `Stochastic` should not grow with ln(4 V_bar D_max), the log of eq. (7)'s
price range, and stay under a constant.

Report `theorem52.csv` (+ `.png`): per cell (V_bar, D_max) and mechanism, the ratio of means
E[OPT welfare] / E[welfare] over the replicates with its paired 95% half-width
(`sweep.statistics.paired_ratio_interval`, the delta method, as reproduction/sow/__init__.py), the mean
welfare, the FUA's retained share V(z_FUA) / V_LP, the receptive-condition breaks and the share of
replicates whose OPT CP-SAT proved. `theorem52_slopes.csv`: per mechanism, the OLS slope of the
cell ratios against ln(4 V_bar D_max) with its Student-t 95% interval (n - 2 degrees of freedom),
and the two slopes of a fit on ln V_bar and ln D_max together (`partial_slopes`: the grid's D_max
also sets the load, so the single slope can hide opposite trends).

Checks (`checks`): Stochastic's slope interval contains 0 or the slope is below 0.05 per unit of
ln(4 V_bar D_max); Stochastic's ratio in the largest cell (largest V_bar, then largest D_max)
below `report.ratio_limit` of the experiment's config (fixed in the yaml before the first run:
2 x 2 x 2 = 8, the yaml says why); the relaxed usage within N' (relaxed_peak <= 1); no
receptive-condition break (the duration signal makes one impossible, scheduler_framework.py);
information rows: Reduction's slope, the smallest FUA share, OPT's proven share.

The tuple is `THEOREM52_EXPERIMENTS`, not `EXPERIMENTS`: reproduction/driver.py takes every module
of this package that defines `EXPERIMENTS` for a family of its own (tests/common/
test_reproduction_driver.py wants exactly the configured families), so reproduction/sow/__init__.py wires it
in (`EXPERIMENTS += THEOREM52_EXPERIMENTS`, and `checks` beside its own).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from sweep.cell_store import CellStore
from sweep.plots import pyplot, save

from ..experiment import Check, Context, Experiment
from .ratios import series_ratio

NAME = "theorem52"
V_KEY, D_KEY = "bounds.max_value", "bounds.max_duration"
SLOPE_LIMIT = 0.05  # per unit of ln(4 V_bar D_max): the "flat"
STOCHASTIC, REDUCTION = "Stochastic", "Reduction"


def _results(context: Context) -> pd.DataFrame:
    return pd.read_parquet(Path(context.run_dir(NAME)) / "results.parquet")


def ratio_limit(context: Context) -> float:
    """`report.ratio_limit` of the experiment's config (the first cell's)."""
    configs = CellStore(context.run_dir(NAME)).configs()
    if not configs:
        return math.nan
    config = next(iter(configs.values()))
    value = (config.get("report") or {}).get("ratio_limit")
    return float(value) if value is not None else math.nan


def cell_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (V_bar, D_max, mechanism): the ratio of means E[OPT] / E[welfare] (paired 95%
    half-width), mean welfare, mean FUA share, receptive breaks, OPT proven share, the x of the
    slope ln(4 V_bar D_max)."""
    keys = [V_KEY, D_KEY]
    opt = frame[frame["mechanism"] == "OPT"].set_index(keys + ["replicate"])["welfare"]
    rows = []
    order = list(dict.fromkeys(frame["mechanism"]))
    for (v, d, mechanism), part in frame.groupby(keys + ["mechanism"], sort=False):
        r = series_ratio(opt, part.set_index(keys + ["replicate"])["welfare"])
        row = {
            V_KEY: v,
            D_KEY: d,
            "x": math.log(4.0 * v * d),
            "mechanism": mechanism,
            "replicates": len(part),
            "welfare": float(part["welfare"].mean()),
            "opt_ratio": r.ratio,
            "opt_ratio_ci95": r.half_width,
            "opt_ratio_note": r.undefined,
        }
        for column in ("fua_share", "relaxed_peak", "receptive_breaks", "opt_proven", "eviction_rate"):
            if column in part and part[column].notna().any():
                row[column] = (
                    float(part[column].astype(float).mean())
                    if column != "receptive_breaks"
                    else float(part[column].sum())
                )
        if "relaxed_peak" in part and part["relaxed_peak"].notna().any():
            row["relaxed_peak_max"] = float(part["relaxed_peak"].max())
        rows.append(row)
    table = pd.DataFrame(rows)
    table["order"] = table["mechanism"].map({m: i for i, m in enumerate(order)})
    return table.sort_values([V_KEY, D_KEY, "order"]).drop(columns="order").reset_index(drop=True)


def slope(table: pd.DataFrame, mechanism: str) -> dict:
    """OLS of the cell ratios on ln(4 V_bar D_max): slope, its 95% Student-t interval, intercept."""
    from scipy import stats

    part = table[(table["mechanism"] == mechanism) & table["opt_ratio"].notna()]
    x, y = part["x"].to_numpy(float), part["opt_ratio"].to_numpy(float)
    n = x.size
    if n < 3 or np.ptp(x) == 0:
        return {
            "mechanism": mechanism,
            "cells": n,
            "slope": math.nan,
            "low": math.nan,
            "high": math.nan,
            "intercept": math.nan,
        }
    sxx = float(((x - x.mean()) ** 2).sum())
    b = float(((x - x.mean()) * (y - y.mean())).sum() / sxx)
    a = float(y.mean() - b * x.mean())
    residual = y - a - b * x
    se = math.sqrt(float((residual**2).sum()) / (n - 2) / sxx)
    half = float(stats.t.ppf(0.975, n - 2)) * se
    return {"mechanism": mechanism, "cells": n, "slope": b, "low": b - half, "high": b + half, "intercept": a}


def partial_slopes(table: pd.DataFrame, mechanism: str) -> dict:
    """OLS of the cell ratios on ln V_bar and ln D_max together: each slope with its 95% Student-t
    interval (n - 3 degrees of freedom). The grid's D_max also sets the load (durations spread over
    [1, D_max] at fixed N), so the two directions need not agree (docs/sow/reproduction.md)."""
    from scipy import stats

    part = table[(table["mechanism"] == mechanism) & table["opt_ratio"].notna()]
    y = part["opt_ratio"].to_numpy(float)
    X = np.column_stack([np.ones(y.size), np.log(part[V_KEY].to_numpy(float)), np.log(part[D_KEY].to_numpy(float))])
    out = {"mechanism": mechanism}
    if y.size < 4 or np.linalg.matrix_rank(X) < 3:
        return out | {f"{k}{s}": math.nan for k in ("ln_v", "ln_d") for s in ("", "_low", "_high")}
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ beta
    cov = float(residual @ residual) / (y.size - 3) * np.linalg.inv(X.T @ X)
    half = float(stats.t.ppf(0.975, y.size - 3)) * np.sqrt(np.diag(cov))
    for k, i in (("ln_v", 1), ("ln_d", 2)):
        out |= {k: float(beta[i]), f"{k}_low": float(beta[i] - half[i]), f"{k}_high": float(beta[i] + half[i])}
    return out


def theorem52(context: Context) -> pd.DataFrame:
    table = cell_ratios(_results(context))
    table.to_csv(context.out / f"{NAME}.csv", index=False, float_format="%.4f")
    mechanisms = [m for m in dict.fromkeys(table["mechanism"]) if m not in ("OPT", "ExAnte")]
    slopes = pd.DataFrame([slope(table, m) | partial_slopes(table, m) for m in mechanisms])
    slopes.to_csv(context.out / f"{NAME}_slopes.csv", index=False, float_format="%.4f")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for mechanism, fit in zip(mechanisms, slopes.to_dict("records")):
        part = table[table["mechanism"] == mechanism].sort_values("x")
        line = ax.errorbar(
            part["x"],
            part["opt_ratio"],
            yerr=part["opt_ratio_ci95"],
            marker="o",
            linestyle="none",
            capsize=2,
            label=f"{mechanism} (slope {fit['slope']:.3f} [{fit['low']:.3f}, {fit['high']:.3f}])",
        )
        if np.isfinite(fit["slope"]):
            xs = np.array([part["x"].min(), part["x"].max()])
            ax.plot(xs, fit["intercept"] + fit["slope"] * xs, color=line[0].get_color(), linewidth=1)
    limit = ratio_limit(context)
    if np.isfinite(limit):
        ax.axhline(limit, color="grey", linestyle=":", label=f"report.ratio_limit = {limit:g}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("ln(4 V_bar D_max)  (V_bar 4..1024, D_max 2..8; the same worlds' quantiles in every cell)")
    ax.set_ylabel("E[OPT welfare] / E[mechanism welfare]")
    ax.set_title("Theorem 5.2: the stochastic variant's ratio against the price range")
    ax.legend(fontsize=7)
    save(fig, context.out / f"{NAME}.png", bbox_inches="tight")
    return table


THEOREM52_EXPERIMENTS = (Experiment(NAME, "sow/theorem52", theorem52),)


def checks(context: Context) -> list[Check]:
    table = context.reports.get(NAME)
    if table is None:
        return []
    out: list[Check] = []
    fit = slope(table, STOCHASTIC)
    flat = (fit["low"] <= 0.0 <= fit["high"]) or fit["slope"] < SLOPE_LIMIT
    out.append(
        Check(
            NAME,
            f"Theorem 5.2: slope of E[OPT] / E[Stochastic] against ln(4 V_bar D_max) (95% interval "
            f"[{fit['low']:.3f}, {fit['high']:.3f}] over {fit['cells']} cells)",
            fit["slope"],
            bool(flat),
            f"interval holds 0 or < {SLOPE_LIMIT:g}",
        )
    )
    stoch = table[table["mechanism"] == STOCHASTIC]
    largest = stoch.sort_values([V_KEY, D_KEY]).iloc[-1]
    limit = ratio_limit(context)
    ratio = float(largest["opt_ratio"])
    out.append(
        Check(
            NAME,
            f"Theorem 5.2: E[OPT] / E[Stochastic] in the largest cell (V_bar = {largest[V_KEY]:g}, "
            f"D_max = {largest[D_KEY]:g}) below report.ratio_limit",
            ratio,
            bool(ratio < limit) if np.isfinite(limit) and np.isfinite(ratio) else False,
            f"< {limit:g}",
        )
    )
    if "relaxed_peak_max" in stoch:
        peak = float(stoch["relaxed_peak_max"].max())
        out.append(
            Check(
                NAME,
                "Lemma E.2: the Stochastic menu's largest relaxed usage over N' = N (1 - eps/10)",
                peak,
                bool(peak <= 1.0 + 1e-9),
                "<= 1",
            )
        )
    framework = table[table["mechanism"].isin([STOCHASTIC, REDUCTION])]
    if "receptive_breaks" in framework:
        breaks = float(framework["receptive_breaks"].sum())
        out.append(
            Check(
                NAME,
                "allocations x_j(L_j) that break Alg. 2's receptive condition, Stochastic and "
                "Reduction (none can with the duration signal)",
                breaks,
                bool(breaks == 0),
                "= 0",
            )
        )
    red = slope(table, REDUCTION)
    if np.isfinite(red["slope"]):
        out.append(
            Check(
                NAME,
                f"slope of E[OPT] / E[Reduction] against ln(4 V_bar D_max) (95% interval "
                f"[{red['low']:.3f}, {red['high']:.3f}]; information)",
                red["slope"],
                None,
            )
        )
    for mechanism in (STOCHASTIC, REDUCTION):
        both = partial_slopes(table, mechanism)
        if np.isfinite(both.get("ln_v", math.nan)):
            out.append(
                Check(
                    NAME,
                    f"{mechanism}: slopes of E[OPT] / E[welfare] against ln V_bar and ln D_max fitted "
                    f"together: ln V_bar {both['ln_v']:.3f} [{both['ln_v_low']:.3f}, "
                    f"{both['ln_v_high']:.3f}], ln D_max {both['ln_d']:.3f} [{both['ln_d_low']:.3f}, "
                    f"{both['ln_d_high']:.3f}] (the ln D_max one; D_max also sets the load; "
                    "information)",
                    both["ln_d"],
                    None,
                )
            )
    if "fua_share" in stoch and stoch["fua_share"].notna().any():
        out.append(
            Check(
                NAME,
                "the fractional unit allocation's retained share V(z_FUA) / V_LP, smallest cell mean (information)",
                float(stoch["fua_share"].min()),
                None,
            )
        )
    if "opt_proven" in table:
        proven = float(table[table["mechanism"] == "OPT"]["opt_proven"].mean())
        out.append(Check(NAME, "share of replicates whose OPT CP-SAT proved optimal (information)", proven, None))
    return out
