"""Paper 004's experiments (docs/sow/reproduction.md): the paper has none, so these are the ones its
theorems imply. `python -m reproduction sow` (make reproduce-sow) runs conf/experiment/sow/*.yaml
and writes reports/sow/{supply,adversarial,toy,epsilon}.csv and .png and checks.csv.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from sweep.plots import pyplot, save
from sweep.statistics import student_t_interval

from .experiment import Check, Context, Experiment

# Default bounds of conf/family/sow.yaml: C_max = 4, D_max = 4, V_bar = 16.
C_MAX, D_MAX, V_BAR = 4, 4, 16.0
# Appendix D: Alg. 3 is robustly (6 ln(4 V_bar D_max) + 6)-competitive once
# N > C_max log2(4 V_bar D_max) (the proof's log comes from integrating eq. (7): natural log).
THEOREM_5_1_RATIO = 6.0 * math.log(4 * V_BAR * D_MAX) + 6.0
CAPACITY_CONDITION = C_MAX * math.log2(4 * V_BAR * D_MAX)


def _results(context: Context, name: str) -> pd.DataFrame:
    return pd.read_parquet(Path(context.run_dir(name)) / "results.parquet")


def _by(frame: pd.DataFrame, key: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """Mean and 95% half-width of `columns` per (key, mechanism), in the frame's mechanism order."""
    rows = []
    order = list(dict.fromkeys(frame["mechanism"]))
    for (value, mechanism), part in frame.groupby([key, "mechanism"], sort=False):
        row = {key: value, "mechanism": mechanism, "replicates": len(part)}
        for column in columns:
            if column in part and part[column].notna().any():
                data = part[column].dropna()
                row[column] = data.mean()
                row[f"{column}_ci95"] = student_t_interval(data).half_width if len(data) > 1 else np.nan
        rows.append(row)
    table = pd.DataFrame(rows)
    table["order"] = table["mechanism"].map({m: i for i, m in enumerate(order)})
    return table.sort_values([key, "order"]).drop(columns="order").reset_index(drop=True)


def _ratio_figure(table: pd.DataFrame, path: Path, title: str) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for mechanism, part in table.groupby("mechanism", sort=False):
        if mechanism in ("OPT", "ExAnte") or "opt_ratio" not in part:
            continue
        ax.errorbar(part["cluster.nodes"], part["opt_ratio"], yerr=part.get("opt_ratio_ci95"), marker="o",
                    capsize=3, label=mechanism)
    ax.axvline(CAPACITY_CONDITION, color="grey", linestyle=":", label="N = C_max log2(4 V_bar D_max)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("nodes N (C_max = 4)")
    ax.set_ylabel("OPT welfare / mechanism welfare")
    ax.set_title(title)
    ax.legend(fontsize=8)
    save(fig, path, bbox_inches="tight")


def _supply_report(context: Context, name: str, title: str) -> pd.DataFrame:
    table = _by(_results(context, name), "cluster.nodes",
                ("welfare", "opt_ratio", "payments", "completions", "evictions", "cancellations", "eviction_rate"))
    table.to_csv(context.out / f"{name}.csv", index=False, float_format="%.4f")
    _ratio_figure(table, context.out / f"{name}.png", title)
    return table


def supply(context: Context) -> pd.DataFrame:
    return _supply_report(context, "supply", "Competitive ratio against supply: recurring pipelines")


def adversarial(context: Context) -> pd.DataFrame:
    return _supply_report(context, "adversarial", "Competitive ratio against supply: adversarial bursts")


def toy(context: Context) -> pd.DataFrame:
    frame = _results(context, "toy")
    frame["welfare_per_job"] = frame["welfare"] / frame["jobs"]
    table = _by(frame, "births.X", ("welfare_per_job", "completions"))
    table["on_arrival_expectation"] = table["births.X"] + 2.0 ** -table["births.X"]
    table.to_csv(context.out / "toy.csv", index=False, float_format="%.4f")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for mechanism, part in table.groupby("mechanism", sort=False):
        ax.errorbar(part["births.X"], part["welfare_per_job"], yerr=part["welfare_per_job_ci95"], marker="o",
                    capsize=3, label=mechanism)
    xs = np.array(sorted(table["births.X"].unique()))
    ax.plot(xs, xs + 2.0 ** -xs, color="black", linestyle="--", label="X + 2^-X (on arrival, one job alone)")
    ax.set_xlabel("X")
    ax.set_ylabel("welfare per job")
    ax.set_title("Sec. 1's toy example: 40 jobs on 4 nodes")
    ax.legend(fontsize=8)
    save(fig, context.out / "toy.png", bbox_inches="tight")
    return table


def epsilon(context: Context) -> pd.DataFrame:
    table = _by(_results(context, "epsilon"), "reduction.epsilon",
                ("welfare", "opt_ratio", "evictions", "cancellations", "eviction_rate"))
    table.to_csv(context.out / "epsilon.csv", index=False, float_format="%.4f")
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for mechanism, part in table.groupby("mechanism", sort=False):
        if mechanism == "OPT":
            continue
        axes[0].errorbar(part["reduction.epsilon"], part["welfare"], yerr=part["welfare_ci95"], marker="o",
                         capsize=3, label=mechanism)
        axes[1].plot(part["reduction.epsilon"], part["eviction_rate"], marker="o", label=mechanism)
    opt = table[table["mechanism"] == "OPT"]
    axes[0].plot(opt["reduction.epsilon"], opt["welfare"], color="black", linestyle="--", label="OPT")
    axes[0].set_ylabel("welfare")
    axes[1].set_ylabel("evicted or cancelled / jobs that started or were cancelled")
    for ax in axes:
        ax.set_xlabel("epsilon")
        ax.legend(fontsize=7)
    fig.suptitle("Eviction and slack against epsilon (12 pipelines, N = 12)")
    save(fig, context.out / "epsilon.png", bbox_inches="tight")
    return table


EXPERIMENTS = (Experiment("supply", "sow/supply", supply), Experiment("adversarial", "sow/adversarial", adversarial),
               Experiment("toy", "sow/toy", toy), Experiment("epsilon", "sow/epsilon", epsilon))


def _row(table: pd.DataFrame, key: str, value, mechanism: str) -> pd.Series:
    return table[(table[key] == value) & (table["mechanism"] == mechanism)].iloc[0]


def checks(context: Context) -> list[Check]:
    out: list[Check] = []
    for name in ("supply", "adversarial"):
        table = context.reports.get(name)
        if table is None:
            continue
        red = table[table["mechanism"] == "Reduction"]
        above = red[red["cluster.nodes"] > CAPACITY_CONDITION]
        if len(above):
            worst = float(above["opt_ratio"].max())
            out.append(Check(name, "Theorem 5.1: OPT / Reduction at every N > C_max log2(4 V_bar D_max), "
                                   "against Appendix D's 6 ln(4 V_bar D_max) + 6", worst,
                             worst <= THEOREM_5_1_RATIO, f"<= {THEOREM_5_1_RATIO:.2f}"))
        low, high = red["cluster.nodes"].min(), red["cluster.nodes"].max()
        gap = float(_row(table, "cluster.nodes", low, "Reduction")["opt_ratio"]
                    - _row(table, "cluster.nodes", high, "Reduction")["opt_ratio"])
        out.append(Check(name, f"OPT / Reduction falls as supply grows (N = {low:g} minus N = {high:g})", gap,
                         gap >= 0, ">= 0"))
        greedy = float(_row(table, "cluster.nodes", high, "FirstComeGreedy")["opt_ratio"])
        out.append(Check(name, f"OPT / FirstComeGreedy at N = {high:g} (information)", greedy, None))
    table = context.reports.get("toy")
    if table is not None:
        X = table["births.X"].max()
        greedy = _row(table, "births.X", X, "FirstComeGreedy")
        expected = X + 2.0 ** -X
        out.append(Check("toy", f"on-arrival welfare per job at X = {X:g} against X + 2^-X", float(greedy["welfare_per_job"]),
                         abs(greedy["welfare_per_job"] - expected) <= 0.15 * expected, "within 15% of X + 2^-X",
                         float(expected)))
        reserve = float(_row(table, "births.X", X, "ReserveWorstCase")["welfare_per_job"])
        out.append(Check("toy", f"reserving in advance at X = {X:g}: welfare per job over on-arrival's",
                         reserve / float(greedy["welfare_per_job"]), reserve < 0.5 * greedy["welfare_per_job"],
                         "< 0.5"))
        red = float(_row(table, "births.X", X, "Reduction")["welfare_per_job"])
        out.append(Check("toy", f"Reduction's welfare per job at X = {X:g} over on-arrival's",
                         red / float(greedy["welfare_per_job"]), red >= 0.5 * greedy["welfare_per_job"], ">= 0.5"))
    table = context.reports.get("epsilon")
    if table is not None:
        for eps in sorted(table["reduction.epsilon"].unique()):
            sampled = _row(table, "reduction.epsilon", eps, "Reduction")
            exact = _row(table, "reduction.epsilon", eps, "Reduction(oracle=exact)")
            diff = float(sampled["welfare"] - exact["welfare"])
            tol = float(np.hypot(sampled["welfare_ci95"], exact["welfare_ci95"]))
            out.append(Check("epsilon", f"eps = {eps:g}: welfare with the sampled oracle minus the exact one", diff,
                             abs(diff) <= tol, f"|diff| <= {tol:.2f} (combined 95% interval)"))
    return out
