"""Paper 004 in the overloaded regimes (docs/sow/reproduction.md, "Regimes"): Theorem 4.1
where Alg. 2's relaxed usage nears N' (conf/experiment/sow/theorem41.yaml, births=dense) and a
realistic overloaded day with a value-density greedy beside first-come greedy
(conf/experiment/sow/daily.yaml, births=daily). Reports: reports/sow/{theorem41,daily}.csv and .png.

Every ratio here is a ratio of means over the replicates of a cell, mean(x) / mean(y) with the
paired delta-method interval of `sweep.statistics.paired_ratio_interval` (never a mean of per-run
ratios): the eviction rate is E[evicted + cancelled] / E[started + cancelled] (started = completed
+ evicted), Theorem 4.1's E[welfare] / E[V_ALG] uses the Reduction's `relaxed_value`, and a
competitive ratio is E[OPT] / E[welfare] with both from the same replicates.

The tuple is `REGIMES_EXPERIMENTS`, not `EXPERIMENTS`: reproduction/driver.py takes every module of
this package that defines `EXPERIMENTS` for a family of its own (tests/common/
test_reproduction_driver.py), as reproduction/sow/theorem52.py notes too. reproduction/sow/__init__.py wires
them in (`EXPERIMENTS += REGIMES_EXPERIMENTS`, and `checks` beside its own); `checks(context)`
follows reproduction/experiment.py and reads only the reports of this module's experiments.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from sweep.plots import pyplot, save

from ..experiment import Check, Context, Experiment
from .ratios import epsilon_of, series_ratio

# conf/experiment/sow/theorem41.yaml: bounds.max_value and bounds.max_duration. Eq. (7) prices a
# unit of usage y at p(y) = (1/(2 D_max)) (4 V_bar D_max)^(y/N'), so a job of value density at
# most V_bar buys no usage past y / N' = 1 - log 2 / log(4 V_bar D_max) (13/14 here).
T41_V_BAR, T41_D_MAX = 4096.0, 1
PRICE_CEILING = 1.0 - math.log(2.0) / math.log(4.0 * T41_V_BAR * T41_D_MAX)
USAGE_FLOOR = 0.9  # Theorem 4.1's cells must reach 0.9 N' to test the theorem
GREEDIES = ("FirstComeGreedy", "ValueDensityGreedy")


def _results(context: Context, name: str) -> pd.DataFrame:
    return pd.read_parquet(Path(context.run_dir(name)) / "results.parquet")


def _ratio(numerator: pd.Series, denominator: pd.Series) -> tuple[float, float]:
    """mean(numerator) / mean(denominator) and its 95% half-width (paired over the index)."""
    r = series_ratio(numerator, denominator)
    return r.ratio, r.half_width


def _by_replicate(part: pd.DataFrame, mechanism: str, column: str) -> pd.Series:
    rows = part[part["mechanism"] == mechanism]
    return rows.set_index("replicate")[column] if len(rows) else pd.Series(dtype=float)


def _cell_table(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per cell (the swept `keys`) and mechanism: welfare, the ratios of means of the module
    docstring with their 95% half-widths, the relaxed usage's peak over N' (mean and smallest)."""
    rows = []
    order = list(dict.fromkeys(frame["mechanism"]))
    for values, part in frame.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        for mechanism in order:
            mine = part[part["mechanism"] == mechanism].set_index("replicate")
            if mine.empty:
                continue
            row = dict(
                zip(keys, values), mechanism=mechanism, replicates=len(mine), welfare=float(mine["welfare"].mean())
            )
            if "completions" in mine and mine["completions"].notna().any():
                lost = mine["evictions"] + mine["cancellations"]
                row["eviction_rate"], row["eviction_rate_ci95"] = _ratio(lost, mine["completions"] + lost)
            if "relaxed_value" in mine and mine["relaxed_value"].notna().any():
                row["welfare_over_relaxed"], row["welfare_over_relaxed_ci95"] = _ratio(
                    mine["welfare"], mine["relaxed_value"]
                )
            if "relaxed_peak" in mine and mine["relaxed_peak"].notna().any():
                row["relaxed_peak"] = float(mine["relaxed_peak"].mean())
                row["relaxed_peak_min"] = float(mine["relaxed_peak"].min())
            if (part["mechanism"] == "OPT").any():
                row["opt_ratio"], row["opt_ratio_ci95"] = _ratio(_by_replicate(part, "OPT", "welfare"), mine["welfare"])
                if mechanism == "OPT":
                    row["opt_proven"] = float(mine["opt_proven"].astype(float).mean())
            for greedy, short in zip(GREEDIES, ("fcg", "vdg")):
                if (part["mechanism"] == greedy).any() and mechanism != greedy:
                    row[f"over_{short}"], row[f"over_{short}_ci95"] = _ratio(
                        mine["welfare"], _by_replicate(part, greedy, "welfare")
                    )
            rows.append(row)
    table = pd.DataFrame(rows)
    table["epsilon"] = table["mechanism"].map(epsilon_of)
    return table


# --- Theorem 4.1 -------------------------------------------------------------------------------


def theorem41(context: Context) -> pd.DataFrame:
    table = _cell_table(_results(context, "theorem41"), ["cluster.nodes"])
    table.to_csv(context.out / "theorem41.csv", index=False, float_format="%.4f")
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.2))
    reductions = table[table["epsilon"].notna()]
    for eps, part in reductions.groupby("epsilon"):
        label = f"Reduction, eps = {eps:g}"
        axes[0].plot(part["cluster.nodes"], part["relaxed_peak"], marker="o", label=label)
        axes[1].errorbar(
            part["cluster.nodes"],
            part["eviction_rate"],
            yerr=part["eviction_rate_ci95"],
            marker="o",
            capsize=3,
            label=label,
        )
        axes[1].axhline(eps, linestyle=":", color=axes[1].lines[-1].get_color(), linewidth=1)
        axes[2].errorbar(
            part["cluster.nodes"],
            part["welfare_over_relaxed"],
            yerr=part["welfare_over_relaxed_ci95"],
            marker="o",
            capsize=3,
            label=label,
        )
    axes[0].axhline(USAGE_FLOOR, color="grey", linestyle="--", label="0.9 N' (the check)")
    axes[0].axhline(
        PRICE_CEILING, color="black", linestyle=":", label="eq. (7)'s ceiling 1 - log 2 / log(4 V_bar D_max)"
    )
    axes[0].set_ylabel("peak relaxed usage max_t y_t / N' (mean over replicates)")
    axes[1].set_ylabel("E[evicted + cancelled] / E[started + cancelled]")
    axes[2].set_ylabel("E[welfare] / E[V_ALG]")
    axes[2].axhline(1.0, color="black", linewidth=0.8)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes N (C_max = 1)")
        ax.legend(fontsize=7)
    fig.suptitle("Theorem 4.1 in its regime: dense unit jobs, 1.5 N born per round, V_bar = 4096 (dotted: eps)")
    save(fig, context.out / "theorem41.png", bbox_inches="tight")
    return table


def _falls(part: pd.DataFrame) -> tuple[float, bool]:
    """(rate at the smallest N minus rate at the largest, whether it falls): the first is above the
    last and no step to a larger N rises by more than the larger of the two 95% half-widths."""
    part = part.sort_values("cluster.nodes")
    rate = part["eviction_rate"].to_numpy()
    width = np.nan_to_num(part["eviction_rate_ci95"].to_numpy())
    steps = all(rate[k + 1] <= rate[k] + max(width[k], width[k + 1]) for k in range(len(rate) - 1))
    return float(rate[0] - rate[-1]), bool(rate[0] > rate[-1] and steps)


def _theorem41_checks(table: pd.DataFrame) -> list[Check]:
    out: list[Check] = []
    reductions = table[table["epsilon"].notna()]
    low, high = table["cluster.nodes"].min(), table["cluster.nodes"].max()
    for eps, part in reductions.groupby("epsilon"):
        worst = float(part["relaxed_peak_min"].min())
        out.append(
            Check(
                "theorem41",
                f"eps = {eps:g}: smallest peak relaxed usage max_t y_t / N' over every cell and "
                f"replicate (N = {low:g}..{high:g}; below 0.9 the cells do not test Theorem 4.1)",
                worst,
                worst >= USAGE_FLOOR,
                f">= {USAGE_FLOOR:g}",
            )
        )
        gap, falls = _falls(part)
        out.append(
            Check(
                "theorem41",
                f"eps = {eps:g}: the eviction rate falls with N (rate at N = {low:g} minus rate "
                f"at N = {high:g}; no rise beyond the 95% half-widths between neighbours)",
                gap,
                falls,
                "> 0 and no significant rise",
            )
        )
        for nodes in (low, high):
            row = part[part["cluster.nodes"] == nodes].iloc[0]
            out.append(
                Check(
                    "theorem41",
                    f"eps = {eps:g}, N = {nodes:g}: eviction rate (Theorem 4.1: O(eps); "
                    f"95% half-width {row['eviction_rate_ci95']:.4f}; information)",
                    float(row["eviction_rate"]),
                    None,
                )
            )
            out.append(
                Check(
                    "theorem41",
                    f"eps = {eps:g}, N = {nodes:g}: E[welfare] / E[V_ALG] (Theorem 4.1: "
                    f">= 1 - O(eps); 95% half-width {row['welfare_over_relaxed_ci95']:.4f}; "
                    "information)",
                    float(row["welfare_over_relaxed"]),
                    None,
                )
            )
    for mechanism in ("FirstComeGreedy",) + tuple(reductions["mechanism"].unique()):
        row = table[(table["cluster.nodes"] == high) & (table["mechanism"] == mechanism)]
        if len(row) and "opt_ratio" in row:
            row = row.iloc[0]
            out.append(
                Check(
                    "theorem41",
                    f"N = {high:g}: E[OPT] / E[welfare] of {mechanism} (95% half-width "
                    f"{row['opt_ratio_ci95']:.4f}; information)",
                    float(row["opt_ratio"]),
                    None,
                )
            )
    out.append(
        Check(
            "theorem41",
            "eq. (7)'s ceiling on the relaxed usage, 1 - log 2 / log(4 V_bar D_max) of N' "
            "(V_bar = 4096, D_max = 1; information)",
            PRICE_CEILING,
            None,
        )
    )
    return out


# --- the daily workload ------------------------------------------------------------------------


def daily(context: Context) -> pd.DataFrame:
    table = _cell_table(_results(context, "daily"), ["cluster.nodes", "births.peak_load"])
    table.to_csv(context.out / "daily.csv", index=False, float_format="%.4f")
    plt = pyplot()
    sizes = sorted(table["cluster.nodes"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(6.5 * len(sizes), 4.2), squeeze=False)
    for ax, nodes in zip(axes[0], sizes):
        part = table[(table["cluster.nodes"] == nodes) & ~table["mechanism"].isin(["OPT"])]
        for mechanism, rows in part.groupby("mechanism", sort=False):
            # 1 / (E[OPT] / E[welfare]): E[welfare] / E[OPT], the interval carried over by the delta method
            share = 1.0 / rows["opt_ratio"]
            ax.errorbar(
                rows["births.peak_load"],
                share,
                yerr=rows["opt_ratio_ci95"] * share**2,
                marker="o",
                capsize=3,
                label=mechanism,
            )
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel("busiest hour's offered load / N")
        ax.set_ylabel("E[welfare] / E[OPT]")
        ax.set_title(f"N = {nodes:g}")
        ax.legend(fontsize=7)
    fig.suptitle("A day on an overloaded GPU cluster (births=daily: Helios-sized classes, daily cycle)")
    save(fig, context.out / "daily.png", bbox_inches="tight")
    return table


def _daily_checks(table: pd.DataFrame) -> list[Check]:
    out: list[Check] = []
    red = table[table["mechanism"] == "Reduction"]
    for _, row in red.sort_values(["cluster.nodes", "births.peak_load"]).iterrows():
        where = f"N = {row['cluster.nodes']:g}, busiest hour {row['births.peak_load']:g} N"
        for short, greedy in (("fcg", "FirstComeGreedy"), ("vdg", "ValueDensityGreedy")):
            if f"over_{short}" in row and not pd.isna(row[f"over_{short}"]):
                out.append(
                    Check(
                        "daily",
                        f"{where}: E[Reduction welfare] / E[{greedy} welfare] (95% half-width "
                        f"{row[f'over_{short}_ci95']:.3f}; information)",
                        float(row[f"over_{short}"]),
                        None,
                    )
                )
    opt = table[table["mechanism"] == "OPT"]
    if len(opt) and "opt_proven" in opt:
        out.append(
            Check(
                "daily",
                "share of replicates whose OPT CP-SAT proved optimal (information)",
                float(opt["opt_proven"].mean()),
                None,
            )
        )
    return out


REGIMES_EXPERIMENTS = (Experiment("theorem41", "sow/theorem41", theorem41), Experiment("daily", "sow/daily", daily))


def checks(context: Context) -> list[Check]:
    out: list[Check] = []
    table = context.reports.get("theorem41")
    if table is not None:
        out += _theorem41_checks(table)
    table = context.reports.get("daily")
    if table is not None:
        out += _daily_checks(table)
    return out
