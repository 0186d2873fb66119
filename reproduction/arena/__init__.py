"""The spot arena (docs/arena.md): which paper's spot-allocation mechanisms win where,
and the meta-learner against the best fixed mechanism. Every experiment is
`python -m sweep -m experiment=arena/<name>`; `python -m reproduction arena` runs them all and
writes reports/arena/: `<market>.csv` (alpha of every mechanism in every cell, all replicates),
`wins.csv` and `wins.png` (per cell, on held-out replicates: each paper's best mechanism picked
on tuning replicates, the two papers' all-on-demand gap, the verdicts, the meta-learners)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sweep.plots import pyplot, save
from sweep.statistics import student_t_interval

from ..experiment import Check, Context, Experiment

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
        rows.append(
            {
                **dict(zip(keys, key)),
                "replicates": len(part),
                "unit_cost": part["unit_cost"].mean(),
                "unit_cost_ci95": student_t_interval(part["unit_cost"]).half_width,
                "spot_share": part["spot_share"].mean(),
                "fallback_share": part["fallback_share"].mean(),
                "missed": int(part["missed"].sum()),
            }
        )
    return pd.DataFrame(rows)


def oracle(mechanism: str) -> bool:
    """Whether a mechanism plans with an oracle forecast (AHAP unless named with a forecast)."""
    return mechanism.startswith("AHAP(") and "forecast=" not in mechanism


def all_on_demand(mechanism: str) -> bool:
    """Paper 003's all-on-demand policies, Theta(theta=0,b=...) (the bid never matters)."""
    return mechanism.startswith("Theta(theta=0,")


def split_replicates(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tuning replicates (the first half of the replicate numbers) and held-out ones (the rest):
    each paper's best mechanism is picked on the first and scored on the second."""
    replicates = np.sort(frame["replicate"].unique())
    tuning = set(replicates[: len(replicates) // 2].tolist())
    chosen = frame["replicate"].isin(tuning)
    return frame[chosen], frame[~chosen]


def best_on(tuning: pd.DataFrame, keep) -> tuple[str, int]:
    """The mechanism of lowest mean alpha on the tuning replicates among those `keep` accepts,
    and how many candidates there were."""
    means = tuning[tuning["mechanism"].map(keep)].groupby("mechanism", sort=False)["unit_cost"].mean()
    return str(means.sort_values(kind="stable").index[0]), len(means)


def paired_difference(cell: pd.DataFrame, first: str, second: str) -> tuple[float, float]:
    """Mean alpha of `first` minus `second`, replicate by replicate (common random numbers),
    with its 95% half-width."""
    by = cell.pivot_table(index="replicate", columns="mechanism", values="unit_cost")
    difference = by[first] - by[second]
    return float(difference.mean()), student_t_interval(difference).half_width


def verdict(margin: float, ci95: float, gap: float) -> str:
    """Paper 000's best minus paper 003's on held-out replicates: a win is claimed only where the
    margin exceeds the all-on-demand adapter gap and its paired 95% interval excludes 0."""
    if not abs(margin) > abs(gap):
        return "none (within the adapter gap)"
    if not abs(margin) > ci95:
        return "none (interval holds 0)"
    return "paper 000" if margin < 0 else "paper 003"


CANDIDATES = {"000": lambda m: True, "000_without_oracle": lambda m: not oracle(m), "003": lambda m: True}


def win_row(cell: pd.DataFrame) -> dict:
    """One cell: each paper's best picked on tuning replicates, scored on held-out ones; the
    adapter gap, paper 003's all-on-demand Theta(theta=0) minus paper 000's OD-Only (the
    adapters bill one plan identically, tests/arena/test_accounting.py: the gap is how the two
    policies size their on-demand instances, and the yardstick a win must exceed); the
    verdicts, with the gap and by the interval alone; and the meta-learners on held-out
    replicates against the best and worst fixed candidate in hindsight per replicate."""
    tuning, held_out = split_replicates(cell)
    row = {"tuning_replicates": tuning["replicate"].nunique(), "held_out_replicates": held_out["replicate"].nunique()}
    for name, keep in CANDIDATES.items():
        paper = name[:3]
        pool = tuning[tuning["paper"] == paper]
        row[f"best_{name}"], row[f"candidates_{name}"] = best_on(pool, keep)
        row[f"alpha_{name}"] = float(held_out.loc[held_out["mechanism"] == row[f"best_{name}"], "unit_cost"].mean())
    theta0, _ = best_on(tuning, all_on_demand)
    row["alpha_od_only"] = float(held_out.loc[held_out["mechanism"] == "OD-Only", "unit_cost"].mean())
    row["alpha_theta0"] = float(held_out.loc[held_out["mechanism"] == theta0, "unit_cost"].mean())
    row["adapter_gap"], row["adapter_gap_ci95"] = paired_difference(held_out, theta0, "OD-Only")
    for suffix, best in (("", "best_000"), ("_without_oracle", "best_000_without_oracle")):
        margin, ci95 = paired_difference(held_out, row[best], row["best_003"])
        row[f"margin{suffix}"], row[f"margin{suffix}_ci95"] = margin, ci95
        row[f"margin{suffix}_net_of_gap"] = abs(margin) - abs(row["adapter_gap"])
        row[f"verdict{suffix}"] = verdict(margin, ci95, row["adapter_gap"])
        row[f"verdict{suffix}_by_interval"] = verdict(margin, ci95, 0.0)
    for column, name in LEARNERS.items():
        row[column] = float(held_out.loc[held_out["mechanism"] == name, "unit_cost"].mean())
    meta = held_out[held_out["paper"] == "meta"]
    row["best_fixed_in_hindsight"] = float(meta["best_fixed_unit_cost"].mean()) if len(meta) else np.nan
    row["worst_fixed_in_hindsight"] = float(meta["worst_fixed_unit_cost"].mean()) if len(meta) else np.nan
    for column in LEARNERS:
        row[f"{column}_above_best_fixed_percent"] = 100.0 * (row[column] / row["best_fixed_in_hindsight"] - 1.0)
    return row


def win_table(frame: pd.DataFrame) -> pd.DataFrame:
    """`win_row` for every cell of the labelled results."""
    cells = ["market", "deadline", "price", "spot"]
    return pd.DataFrame([{**dict(zip(cells, key)), **win_row(part)} for key, part in frame.groupby(cells, sort=False)])


def plot_wins(wins: pd.DataFrame, path: Path) -> None:
    """One panel per market: on held-out replicates, alpha of each paper's best mechanism (picked
    on tuning replicates), of the two all-on-demand policies and of the meta-learners per cell."""
    plt = pyplot()
    markets = list(dict.fromkeys(wins["market"]))
    fig, axes = plt.subplots(1, len(markets), figsize=(5.5 * len(markets), 4.8), squeeze=False)
    series = (
        ("alpha_000", "best of paper 000", "tab:blue"),
        ("alpha_000_without_oracle", "best of paper 000, AHAP without oracle", "tab:cyan"),
        ("alpha_003", "best of paper 003", "tab:orange"),
        ("alpha_od_only", "OD-Only (paper 000: just enough on-demand)", "tab:purple"),
        ("alpha_theta0", "Theta(theta=0) (paper 003: delta on-demand)", "tab:pink"),
        ("alpha_meta", "Meta (bound)", "tab:green"),
        ("alpha_meta_job_minmax", "Meta (job_minmax)", "tab:olive"),
        ("best_fixed_in_hindsight", "best fixed in hindsight (per replicate)", "tab:gray"),
    )
    for ax, market in zip(axes[0], markets):
        part = wins[wins["market"] == market]
        labels = [" ".join(x for x in (r.deadline, r.price, r.spot) if x) for r in part.itertuples()]
        x = np.arange(len(part))
        width = 0.8 / len(series)
        for j, (column, label, color) in enumerate(series):
            ax.bar(x + j * width, part[column], width, label=label, color=color)
        for i, r in enumerate(part.itertuples()):
            claim = r.verdict[-3:] if r.verdict.startswith("paper") else "-"
            ax.text(
                x[i] + 0.4 - width / 2,
                max(r.alpha_000, r.alpha_003, r.alpha_theta0) * 1.01,
                claim,
                ha="center",
                fontsize=8,
            )
        ax.axhline(1.0, color="black", linewidth=0.6, linestyle=":")
        ax.set_xticks(x + 0.4 - width / 2)
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        ax.set_title(f"market: {market} (label: claimed winner, - none)")
        ax.set_ylabel("average unit cost alpha (on-demand = 1)")
    axes[0][0].legend(fontsize=8, ncol=4, loc="upper left", bbox_to_anchor=(0.0, -0.32), frameon=False)
    fig.suptitle(
        "The spot arena on held-out replicates: each paper's best (picked on tuning replicates), "
        "the two all-on-demand policies, the meta-learners"
    )
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
        frames = [
            labelled(pd.read_parquet(context.run_dir(m) / "results.parquet"), m)
            for m in MARKETS
            if (context.run_dir(m) / "results.parquet").exists()
        ]
    frame = pd.concat(frames, ignore_index=True)
    table = win_table(frame)
    table.to_csv(context.out / "wins.csv", index=False, float_format="%.4f")
    plot_wins(table, context.out / "wins.png")
    return table


EXPERIMENTS = tuple(Experiment(m, f"arena/{m}", market_report(m)) for m in MARKETS) + (Experiment("wins", None, wins),)


def checks(context: Context) -> list[Check]:
    out: list[Check] = []
    table = context.reports.get("wins")
    if table is None:
        return out
    for paper in PAPERS:
        for suffix, label in (("", ""), ("_without_oracle", " when AHAP has no oracle forecast")):
            won = float((table[f"verdict{suffix}"] == f"paper {paper}").sum())
            out.append(
                Check(
                    "wins",
                    f"cells won by paper {paper}{label} (of {len(table)}; held-out replicates, margin "
                    f"beyond the adapter gap, paired 95% interval excluding 0; information)",
                    won,
                    None,
                )
            )
        won = float((table["verdict_by_interval"] == f"paper {paper}").sum())
        out.append(
            Check(
                "wins",
                f"cells won by paper {paper} by the held-out paired 95% interval alone, the gap "
                f"not required (of {len(table)}; information)",
                won,
                None,
            )
        )
    out.append(
        Check(
            "wins",
            f"cells with no claimed winner (of {len(table)}; information)",
            float((~table["verdict"].str.startswith("paper")).sum()),
            None,
        )
    )
    out.append(
        Check(
            "wins",
            "adapter gap: Theta(theta=0) minus OD-Only, mean over cells (alpha; information)",
            float(table["adapter_gap"].mean()),
            None,
        )
    )
    for column, name in LEARNERS.items():
        out.append(
            Check(
                "wins",
                f"{name} above the best fixed policy in hindsight, mean over cells (%; information)",
                float(table[f"{column}_above_best_fixed_percent"].mean()),
                None,
            )
        )
        below_worst = bool((table[column] <= table["worst_fixed_in_hindsight"]).all())
        out.append(
            Check(
                "wins",
                f"{name} at or below the worst fixed policy in every cell",
                float(below_worst),
                below_worst,
                "== 1",
            )
        )
    frames = [context.reports[m] for m in MARKETS if isinstance(context.reports.get(m), pd.DataFrame)]
    if frames:
        missed = float(sum(int(f["missed"].sum()) for f in frames))
        out.append(
            Check("wins", "jobs that missed their deadline, every mechanism and cell", missed, missed == 0, "== 0")
        )
    return out
