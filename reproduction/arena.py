"""The spot arena (issue 13, docs/arena.md): which paper's spot-allocation mechanisms win where,
and the meta-learner against the best fixed mechanism. Every experiment is
`python -m sweep -m experiment=arena/<name>`; `python -m reproduction arena` runs them all and
writes reports/arena/: `<market>.csv` (alpha of every mechanism in every cell), `wins.csv` and
`wins.png` (the best mechanism of each paper and the meta-learner in every cell)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sweep.plots import pyplot, save
from sweep.statistics import student_t_interval

from .experiment import Check, Context, Experiment

MARKETS = ("synthetic", "exponential", "trace")
# Each grid key and the label of its values (conf/experiment/arena/*.yaml).
AXES = {
    "jobs.slackness_max": ("deadline", {1.5: "tight", 6.0: "loose"}),
    "market.synthetic.mean_price": ("price", {0.5: "cheap", 1.0: "expensive"}),
    "market.exponential.mean": ("price", {0.3: "cheap", 0.7: "expensive"}),
    "market.price_scale": ("price", {1.0: "cheap", 2.5: "expensive"}),
    "market.synthetic.price_noise": ("spot", {0.1: "stable", 0.6: "volatile"}),
    "market.exponential.hold": ("spot", {12: "stable", 1: "volatile"}),
}
PAPERS = {"000": "paper 000 (AHAP, AHANP, UP, MSU, OD-Only)", "003": "paper 003 (Dynalloc, Theta)"}
LEARNERS = {"alpha_meta": "Meta", "alpha_meta_job_minmax": "Meta(normalisation=job_minmax)"}


def labelled(frame: pd.DataFrame, market: str) -> pd.DataFrame:
    """The results with columns market, deadline, price and spot naming each cell's setting."""
    frame = frame.copy()
    frame["market"] = market
    frame["spot"] = "as traced" if market == "trace" else ""
    for key, (axis, names) in AXES.items():
        if key in frame:
            frame[axis] = frame[key].map(lambda v, names=names: names.get(float(v), f"{v:g}"))
    return frame


def cell_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean alpha (95% interval half-width) of every mechanism in every cell."""
    rows = []
    keys = ["market", "deadline", "price", "spot", "mechanism", "paper"]
    for key, part in frame.groupby(keys, sort=False):
        rows.append({**dict(zip(keys, key)), "replicates": len(part), "unit_cost": part["unit_cost"].mean(),
                     "unit_cost_ci95": student_t_interval(part["unit_cost"]).half_width,
                     "spot_share": part["spot_share"].mean(), "fallback_share": part["fallback_share"].mean(),
                     "missed": int(part["missed"].sum())})
    return pd.DataFrame(rows)


def oracle(mechanism: str) -> bool:
    """Whether a mechanism plans with an oracle forecast (AHAP unless named with a forecast)."""
    return mechanism.startswith("AHAP(") and "forecast=" not in mechanism


def win_table(means: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the best mechanism of each paper by mean alpha (paper 000's also without the
    oracle-forecast AHAP, and the winner then), the winner, the paired
    difference of the two (common random numbers: replicate by replicate) with its 95% interval
    and whether the interval excludes 0 (`clear`), OD-Only, the meta-learners, and the best and
    worst fixed candidate in hindsight per replicate (the meta-learner's own yardstick)."""
    rows = []
    cells = ["market", "deadline", "price", "spot"]
    for key, part in means.groupby(cells, sort=False):
        row = dict(zip(cells, key))
        for paper in PAPERS:
            fixed = part[part["paper"] == paper].sort_values("unit_cost", kind="stable")
            row[f"best_{paper}"] = fixed["mechanism"].iloc[0]
            row[f"alpha_{paper}"] = fixed["unit_cost"].iloc[0]
        blind = part[(part["paper"] == "000") & ~part["mechanism"].map(oracle)].sort_values("unit_cost", kind="stable")
        row["best_000_without_oracle"] = blind["mechanism"].iloc[0]
        row["alpha_000_without_oracle"] = blind["unit_cost"].iloc[0]
        row["winner_without_oracle"] = "paper 000" if row["alpha_000_without_oracle"] < row["alpha_003"] else "paper 003"
        row["winner"] = "paper 000" if row["alpha_000"] < row["alpha_003"] else "paper 003"
        cell = frame[(frame[cells] == pd.Series(dict(zip(cells, key)))).all(axis=1)]
        paired = (cell[cell["mechanism"] == row["best_000"]].set_index("replicate")["unit_cost"]
                  - cell[cell["mechanism"] == row["best_003"]].set_index("replicate")["unit_cost"])
        row["difference_000_minus_003"] = float(paired.mean())
        row["difference_ci95"] = student_t_interval(paired).half_width if len(paired) > 1 else np.nan
        row["clear"] = bool(abs(row["difference_000_minus_003"]) > row["difference_ci95"])
        row["alpha_od_only"] = float(part.loc[part["mechanism"] == "OD-Only", "unit_cost"].mean())
        for column, name in LEARNERS.items():
            row[column] = float(part.loc[part["mechanism"] == name, "unit_cost"].mean())
        replicates = cell[cell["paper"] == "meta"]
        row["best_fixed_in_hindsight"] = float(replicates["best_fixed_unit_cost"].mean()) if len(replicates) else np.nan
        row["worst_fixed_in_hindsight"] = float(replicates["worst_fixed_unit_cost"].mean()) if len(replicates) else np.nan
        for column in LEARNERS:
            row[f"{column}_above_best_fixed_percent"] = 100.0 * (row[column] / row["best_fixed_in_hindsight"] - 1.0)
        rows.append(row)
    return pd.DataFrame(rows)


def plot_wins(wins: pd.DataFrame, path: Path) -> None:
    """One panel per market: alpha of each paper's best mechanism and of the meta-learner per cell."""
    plt = pyplot()
    markets = list(dict.fromkeys(wins["market"]))
    fig, axes = plt.subplots(1, len(markets), figsize=(5.5 * len(markets), 4.8), squeeze=False)
    series = (("alpha_000", "best of paper 000", "tab:blue"),
              ("alpha_000_without_oracle", "best of paper 000, AHAP without oracle", "tab:cyan"),
              ("alpha_003", "best of paper 003", "tab:orange"),
              ("alpha_meta", "Meta (bound)", "tab:green"), ("alpha_meta_job_minmax", "Meta (job_minmax)", "tab:olive"),
              ("best_fixed_in_hindsight", "best fixed in hindsight (per replicate)", "tab:gray"))
    for ax, market in zip(axes[0], markets):
        part = wins[wins["market"] == market]
        labels = [" ".join(x for x in (r.deadline, r.price, r.spot) if x) for r in part.itertuples()]
        x = np.arange(len(part))
        width = 0.8 / len(series)
        for j, (column, label, color) in enumerate(series):
            ax.bar(x + j * width, part[column], width, label=label, color=color)
        for i, r in enumerate(part.itertuples()):
            ax.text(x[i] + 0.4 - width / 2, max(r.alpha_000, r.alpha_003) * 1.01, r.winner[-3:], ha="center",
                    fontsize=8)
        ax.axhline(1.0, color="black", linewidth=0.6, linestyle=":")
        ax.set_xticks(x + 0.4 - width / 2)
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        ax.set_title(f"market: {market} (label: winning paper)")
        ax.set_ylabel("average unit cost alpha (on-demand = 1)")
    axes[0][0].legend(fontsize=8, ncol=6, loc="upper left", bbox_to_anchor=(0.0, -0.32), frameon=False)
    fig.suptitle("The spot arena: the best mechanism of each paper, the meta-learner, the best fixed policy")
    save(fig, path, bbox_inches="tight")


def market_report(market: str):
    def report(context: Context) -> pd.DataFrame:
        frame = labelled(pd.read_parquet(context.run_dir(market) / "results.parquet"), market)
        means = cell_means(frame)
        means.to_csv(context.out / f"{market}.csv", index=False, float_format="%.4f")
        return frame
    return report


def wins(context: Context) -> pd.DataFrame:
    frames = [context.reports[m] for m in MARKETS if isinstance(context.reports.get(m), pd.DataFrame)]
    if not frames:
        frames = [labelled(pd.read_parquet(context.run_dir(m) / "results.parquet"), m) for m in MARKETS
                  if (context.run_dir(m) / "results.parquet").exists()]
    frame = pd.concat(frames, ignore_index=True)
    table = win_table(cell_means(frame), frame)
    table.to_csv(context.out / "wins.csv", index=False, float_format="%.4f")
    plot_wins(table, context.out / "wins.png")
    return table


EXPERIMENTS = tuple(Experiment(m, f"arena/{m}", market_report(m)) for m in MARKETS) + (
    Experiment("wins", None, wins),)


def checks(context: Context) -> list[Check]:
    out: list[Check] = []
    table = context.reports.get("wins")
    if table is None:
        return out
    for paper in PAPERS:
        won = table["winner"] == f"paper {paper}"
        out.append(Check("wins", f"cells won by paper {paper}", float(won.sum()), None))
        out.append(Check("wins", f"cells won by paper {paper}, the paired 95% interval excluding 0",
                         float((won & table["clear"]).sum()), None))
        out.append(Check("wins", f"cells won by paper {paper} when AHAP has no oracle forecast",
                         float((table["winner_without_oracle"] == f"paper {paper}").sum()), None))
    for column, name in LEARNERS.items():
        out.append(Check("wins", f"{name} above the best fixed policy in hindsight, mean over cells (%)",
                         float(table[f"{column}_above_best_fixed_percent"].mean()), None))
        below_worst = bool((table[column] <= table["worst_fixed_in_hindsight"]).all())
        out.append(Check("wins", f"{name} at or below the worst fixed policy in every cell",
                         float(below_worst), below_worst, "== 1"))
    frames = [context.reports[m] for m in MARKETS if isinstance(context.reports.get(m), pd.DataFrame)]
    if frames:
        missed = float(sum(int(f["missed"].sum()) for f in frames))
        out.append(Check("wins", "jobs that missed their deadline, every mechanism and cell", missed, missed == 0,
                         "== 0"))
    return out
