"""Paper 002 (LARA) reproduced: Fig. 4(a)-(c) on the bundles of Tables 1 and 2, Fig. 6 (10-100
threads), and the same mechanisms on real learning curves (LCDB) and live scikit-learn
learners (docs/core/reproduction.md). Every experiment is `python -m sweep -m
experiment=core/<name>`; `python -m reproduction core` runs them all."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sweep.plots import grouped_bars, pyplot, save
from sweep.statistics import student_t_interval

from .core_prediction import EXPERIMENT as FIG5_PREDICTION, prediction_checks
from .experiment import Check, Context, Experiment
from .figure import Figure

MECHANISMS = ("LARA", "UA", "STF", "LRF", "ETF", "OPT")
# Sec. 4.1-4.2, Fig. 4: threads completed on one bundle each (eps^2: LRF and ETF not given).
PAPER_COUNTS = {
    ("table1", "-"): {"LARA": 4, "UA": 0, "STF": 0, "LRF": 2, "ETF": 2},
    ("table2", "1"): {"LARA": 8, "UA": 6, "STF": 2, "LRF": 4, "ETF": 4},
    ("table2", "2"): {"LARA": 6, "UA": 3, "STF": 5},
}
COUNT_TOLERANCE = 1.0  # threads: our mean count against the paper's single-bundle count

FIGURES = {
    "table1": Figure("table1", "core/table1", "-", "bundle", "Fig. 4(a): Table 1, threads completed"),
    "table2": Figure("table2", "core/table2", "bundle.epsilon_set", "epsilon set",
                     "Fig. 4(b)-(c): Table 2, threads completed"),
    "scalability": Figure("scalability", "core/scalability", "bundle.threads", "threads",
                          "Fig. 6(a): threads completed against bundle size"),
    "real": Figure("real", "core/real", "-", "bundle", "Real learning curves (LCDB): threads completed"),
    "live": Figure("live", "core/live", "-", "bundle", "Live scikit-learn learners: threads completed"),
    "random": Figure("random", "core/random", "-", "bundle",
                     "Random bundles with staggered begins: threads completed"),
}


def summary(run_dir: Path, x: str) -> pd.DataFrame:
    """Per value of `x` and mechanism: bundles, mean threads completed with its 95% interval,
    success rate, share of OPT's count (mean, min, max), decision time per unit (ms) and the
    unit where exploration ended."""
    frame = pd.read_parquet(Path(run_dir) / "results.parquet")
    if x not in frame:
        frame = frame.assign(**{x: "-"})
    frame[x] = frame[x].astype(str)
    rows = []
    for (value, mechanism), group in frame.groupby([x, "mechanism"], sort=False):
        row = {x: value, "mechanism": mechanism, "bundles": len(group), "completed_mean": group["utility"].mean(),
               "completed_ci95": student_t_interval(group["utility"]).half_width,
               "success_rate": group["success_rate"].mean(), "decision_ms": group["decision_ms"].mean(),
               "exploration_end": group["exploration_end"].mean()}
        if "of_opt" in group:
            row.update(of_opt_mean=group["of_opt"].mean(), of_opt_min=group["of_opt"].min(),
                       of_opt_max=group["of_opt"].max())
        if mechanism == "OPT" and "opt_proven" in group:
            row["opt_unproven"] = int(group["opt_proven"].eq(False).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def allocation_plot(run_dir: Path, path: Path, mechanisms=("LARA", "OPT")) -> None:
    """Fig. 9(a) (Appendix B.2): eta_{k,t} of the first bundle (replicate 0, the `allocations`
    side table), stacked by thread, one panel per mechanism."""
    frame = pd.read_parquet(Path(run_dir) / "allocations.parquet")
    frame = frame[(frame["replicate"] == 0) & (frame["cell_index"] == frame["cell_index"].min())]
    threads = sorted(frame["thread"].unique())  # every panel the same threads, so the same colours
    plt = pyplot()
    fig, axes = plt.subplots(len(mechanisms), 1, figsize=(9, 2.6 * len(mechanisms)), sharex=True)
    for ax, mechanism in zip(np.atleast_1d(axes), mechanisms):
        part = frame[frame["mechanism"] == mechanism]
        if part.empty:
            continue
        wide = part.pivot_table(index="t", columns="thread", values="eta", fill_value=0.0)
        wide = wide.reindex(index=range(1, int(wide.index.max()) + 1), columns=threads, fill_value=0.0)
        ax.stackplot(wide.index, wide.T.values, labels=[f"thread {k}" for k in wide.columns], step="post")
        ax.set_ylabel(f"{mechanism}: eta")
        ax.set_ylim(0, 1.05)
    np.atleast_1d(axes)[0].legend(fontsize=8, ncol=5, loc="upper center", bbox_to_anchor=(0.5, 1.35))
    np.atleast_1d(axes)[-1].set_xlabel("unit time t (seconds)")
    save(fig, path, bbox_inches="tight")


PAPER_UPDATE_MS = 0.7  # Sec. 4.3, Fig. 6(b): "even with 100 threads, a single update period requires only 0.0007 seconds"


def timing_plot(table: pd.DataFrame, path: Path, mechanisms=("LARA", "LRF", "ETF")) -> None:
    """Fig. 6(b): mean time of one unit's prediction and allocation against the bundle size,
    beside the paper's 0.7 ms at 100 threads."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for mechanism in mechanisms:
        part = table[table["mechanism"] == mechanism]
        if not part.empty:
            ax.plot(part["bundle.threads"].astype(int), part["decision_ms"], marker="o", label=mechanism)
    ax.scatter([100], [PAPER_UPDATE_MS], marker="*", s=120, color="black", label="paper, LARA at 100 threads")
    ax.set_yscale("log")
    ax.set_xlabel("threads")
    ax.set_ylabel("ms per unit (prediction + allocation)")
    ax.set_title("Fig. 6(b): time of one update against bundle size")
    ax.legend()
    save(fig, path, bbox_inches="tight")


def report(name: str):
    figure = FIGURES[name]

    def build(context: Context) -> pd.DataFrame:
        table = summary(context.run_dir(name), figure.x)
        table.to_csv(context.out / f"{name}.csv", index=False, float_format="%.4f")
        grouped_bars(table, figure.x, "completed_mean", xlabel=figure.xlabel, ylabel="threads completed (mean)",
                     title=figure.title, path=context.out / f"{name}.png", errors="completed_ci95")
        if name == "table1" and (context.run_dir(name) / "allocations.parquet").is_file():
            allocation_plot(context.run_dir(name), context.out / "table1_allocation.png")
        if name == "scalability":
            timing_plot(table, context.out / "scalability_timing.png")
        return table
    return build


# Fig. 11 (Appendix B.3): LARA against one swept setting, one line per epsilon set of Table 2.
SENSITIVITY = {
    "exploration": Figure("exploration", "core/exploration", "lara.exploration", "exploration threshold H_k",
                          "Fig. 11(a): LARA on Table 2 against H_k", facet="bundle.epsilon_set"),
    "discount": Figure("discount", "core/discount", "lara.gamma", "discount gamma (H_k = 6000)",
                       "Fig. 11(b): LARA on Table 2 against gamma", facet="bundle.epsilon_set"),
}


def sensitivity(name: str):
    figure = SENSITIVITY[name]

    def build(context: Context) -> pd.DataFrame:
        frame = pd.read_parquet(context.run_dir(name) / "results.parquet")
        rows = []
        for (series, value), group in frame.groupby([figure.facet, figure.x], sort=True):
            rows.append({figure.facet: series, figure.x: float(value), "bundles": len(group),
                         "completed_mean": group["utility"].mean(),
                         "completed_ci95": student_t_interval(group["utility"]).half_width})
        table = pd.DataFrame(rows)
        table.to_csv(context.out / f"{name}.csv", index=False, float_format="%.4f")
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 4))
        for series, part in table.groupby(figure.facet):
            ax.errorbar(part[figure.x], part["completed_mean"], yerr=part["completed_ci95"], marker="o", capsize=3,
                        label=f"eps^{series}")
        ax.set_xlabel(figure.xlabel)
        ax.set_ylabel("threads completed by LARA (mean)")
        ax.set_title(figure.title)
        ax.legend()
        save(fig, context.out / f"{name}.png", bbox_inches="tight")
        return table
    return build


EXPERIMENTS = (*(Experiment(name, figure.config, report(name)) for name, figure in FIGURES.items()),
               *(Experiment(name, figure.config, sensitivity(name)) for name, figure in SENSITIVITY.items()),
               FIG5_PREDICTION)


def _value(table: pd.DataFrame, x: str, value: str, mechanism: str, column: str) -> float:
    row = table[(table[x].astype(str) == value) & (table["mechanism"] == mechanism)]
    return float(row[column].iloc[0]) if len(row) else float("nan")


def _mean(table: pd.DataFrame, x: str, value: str, mechanism: str) -> float:
    return _value(table, x, value, mechanism, "completed_mean")


def checks(context: Context) -> list[Check]:
    """The paper's counts (Fig. 4) against our means over bundles drawn like the tables, LARA
    against the best baseline, and OPT never beaten."""
    out: list[Check] = []
    for (name, value), counts in PAPER_COUNTS.items():
        table = context.reports.get(name)
        if table is None:
            continue
        x = FIGURES[name].x
        label = name if value == "-" else f"{name} eps^{value}"
        for mechanism, paper in counts.items():
            ours = _mean(table, x, value, mechanism)
            out.append(Check(name, f"{label}: {mechanism} threads completed (mean over bundles)", ours,
                             bool(abs(ours - paper) <= COUNT_TOLERANCE), f"|ours - paper| <= {COUNT_TOLERANCE:g}",
                             float(paper)))
    for name, best_range in (("exploration", (4000, 6000)), ("discount", (0.85, 0.95))):
        table = context.reports.get(name)
        if table is None:
            continue
        x = SENSITIVITY[name].x
        for series, part in table.groupby(SENSITIVITY[name].facet):
            inside = part[part[x].between(*best_range)]["completed_mean"].max()
            outside = part[~part[x].between(*best_range)]["completed_mean"].max()
            out.append(Check(name, f"{name} eps^{series}: best LARA count in {x} {best_range[0]:g}-{best_range[1]:g} "
                             "minus the best outside (the paper: best inside)", float(inside - outside),
                             bool(inside >= outside), ">= 0"))
    for name, table in context.reports.items():
        if name not in FIGURES or table is None:
            continue
        x = FIGURES[name].x
        for value in dict.fromkeys(table[x]):
            part = table[table[x] == value]
            online = part[~part["mechanism"].str.startswith(("OPT", "LARA"))]
            if "LARA" in set(part["mechanism"]) and len(online):
                lara = _mean(table, x, value, "LARA")
                best = float(online["completed_mean"].max())
                suffix = "" if value == "-" else f" {x}={value}"
                out.append(Check(name, f"{name}{suffix}: LARA minus the best baseline (threads)", lara - best,
                                 bool(lara - best >= 0), ">= 0"))
        if "of_opt_max" in table:
            online = table[table["mechanism"] != "OPT"]
            worst = float(online["of_opt_max"].max())
            out.append(Check(name, f"{name}: largest count / OPT's count of an online mechanism (OPT never beaten)",
                             worst, bool(worst <= 1 + 1e-9), "<= 1"))
    scalability = context.reports.get("scalability")
    if scalability is not None:
        ms = _value(scalability, "bundle.threads", "100", "LARA", "decision_ms")
        out.append(Check("scalability", "Fig. 6(b): LARA ms per unit at 100 threads (prediction + allocation)", ms,
                         bool(ms <= PAPER_UPDATE_MS), "<= paper", PAPER_UPDATE_MS))
    if context.reports.get("fig5") is not None:
        out += prediction_checks(context.reports["fig5"])
    return out
