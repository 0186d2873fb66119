"""The tables of docs/spot/reproduction.md, printed as Markdown from the reports in a folder
(default reports/spot/), so the document's numbers are the reports' own:

    python -m reproduction.spot.tables [--reports reports/spot] [--only fig5,headline,...]

Each comparison table gives, per cell and reading, "cost / OPT's cost +- 95%" first (paired, the
figure v does not move) and the mean utility after it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from reproduction.spot import GROUPS, label

COMPARISONS = {  # report CSV -> the keys of its rows (beyond the group)
    "fig5": ("fig5_deadline.csv", ["market", "forecast.kind", "job.deadline"]),
    "fig6": ("fig6_reconfiguration.csv", ["job.mu1"]),
    "fig7": ("fig7_availability.csv", ["market.mean_availability"]),
    "fig8": ("fig8_price.csv", ["market.mean_price"]),
    "noise": ("noise_robustness.csv", ["noise.level"]),
    "trace": ("trace_v100.csv", ["market.path", "forecast.kind"]),
    "value": ("value_v.csv", ["market", "job.value"]),
}


def _short(value) -> str:
    text = str(value)
    return Path(text).stem.replace("market_aws_", "") if "/" in text else text


def comparison_table(table: pd.DataFrame, keys: list[str]) -> str:
    """One row per cell: each reading's "cost ratio [utility]", then the best AHAP policy."""
    groups = [g for g in GROUPS if g in set(table["group"])]
    head = " / ".join(keys)
    lines = [
        f"| {head} | " + " | ".join(label(g) for g in groups) + " | best AHAP |",
        "|---|" + "---:|" * len(groups) + "---|",
    ]
    for cell, part in table.groupby(keys, sort=True):
        cell = cell if isinstance(cell, tuple) else (cell,)
        rows = part.set_index("group")
        entries = []
        for g in groups:
            r = rows.loc[g]
            ratio = f"{r['cost_ratio_to_opt']:.3f}" + ("" if g == "OPT" else f" ±{r['cost_ratio_ci95']:.3f}")
            entries.append(f"{ratio} [{r['utility_mean']:.1f}]")
        policy = rows.loc["AHAP", "policy"].removeprefix("AHAP")
        lines.append("| " + " / ".join(_short(c) for c in cell) + " | " + " | ".join(entries) + f" | {policy} |")
    return "\n".join(lines)


def deadline_rates(table: pd.DataFrame, keys: list[str], groups: tuple[str, ...]) -> str:
    present = [g for g in groups if g in set(table["group"])]
    lines = [
        f"| {' / '.join(keys)} | " + " | ".join(label(g) for g in present) + " |",
        "|---|" + "---:|" * len(present),
    ]
    for cell, part in table.groupby(keys, sort=True):
        cell = cell if isinstance(cell, tuple) else (cell,)
        rows = part.set_index("group")
        lines.append(
            "| "
            + " / ".join(_short(c) for c in cell)
            + " | "
            + " | ".join(f"{rows.loc[g, 'met_deadline_rate']:.2f} [{rows.loc[g, 'utility_mean']:.1f}]" for g in present)
            + " |"
        )
    return "\n".join(lines)


def headline_table(headline: pd.DataFrame) -> str:
    lines = [
        "| market / forecast | AHAP over | AHAP's cost / OPT | its cost / OPT | paper | ours (95% CI) | within x1.5 |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for _, r in headline.iterrows():
        ours = (
            f"undefined ({r['undefined']})"
            if isinstance(r["undefined"], str) and r["undefined"]
            else f"{r['gain_pct']:+.1f}% ±{r['gain_ci95']:.1f}"
        )
        verdict = "" if pd.isna(r["within_factor"]) else ("yes" if bool(r["within_factor"]) else "**no**")
        lines.append(
            f"| {r['market']} / {r['forecast.kind']} | {r['label']} | {r['ahap_cost_ratio']:.3f} "
            f"| {r['baseline_cost_ratio']:.3f} | +{r['paper_gain_pct']:.1f}% | {ours} | {verdict} |"
        )
    return "\n".join(lines)


def checks_table(checks: pd.DataFrame, experiments: list[str] | None = None) -> str:
    rows = checks if experiments is None else checks[checks["experiment"].isin(experiments)]
    lines = ["| check | paper | ours | rule | holds |", "|---|---:|---:|---|---|"]
    for _, r in rows.iterrows():
        paper = "" if pd.isna(r["paper"]) else f"{r['paper']:g}"
        ours = "" if pd.isna(r["ours"]) else f"{r['ours']:.4g}"
        holds = "" if pd.isna(r["holds"]) else ("yes" if str(r["holds"]) == "True" else "**no**")
        lines.append(f"| {r['check']} | {paper} | {ours} | {r['rule']} | {holds} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=Path, default=Path("reports/spot"))
    parser.add_argument(
        "--only", default="", help="comma-separated: " + ", ".join([*COMPARISONS, "headline", "deadline", "checks"])
    )
    args = parser.parse_args(argv)
    chosen = [name for name in args.only.split(",") if name] or [*COMPARISONS, "headline", "deadline", "checks"]
    for name in chosen:
        print(f"### {name}\n")
        if name in COMPARISONS:
            file, keys = COMPARISONS[name]
            print(comparison_table(pd.read_csv(args.reports / file), keys))
        elif name == "headline":
            print(
                headline_table(pd.read_csv(args.reports / "fig5_headline.csv", keep_default_na=False, na_values=[""]))
            )
        elif name == "deadline":
            for file, keys in (COMPARISONS["fig5"], COMPARISONS["fig6"]):
                table = pd.read_csv(args.reports / file)
                print(deadline_rates(table, keys, ("AHANP", "AHANP(start=fresh)", "AHANP(start=cold)", "AHAP")))
                print()
        elif name == "checks":
            print(checks_table(pd.read_csv(args.reports / "checks.csv")))
        print()


if __name__ == "__main__":
    main()
