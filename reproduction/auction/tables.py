"""The tables of docs/auction/reproduction.md, printed as Markdown from the reports in a folder
(default reports/auction/), so the document's numbers are the reports' own:

    python -m reproduction.auction.tables [--reports reports/auction] [--only headline,fig8,...]

Comparison figures give the mean welfare a day per mechanism (cents), then the leads of the
paper's pdFTSP (tuned kappa) and of the fitting variant (our extension) over each baseline
(% of the baseline's mean welfare); the headline gives ratios of mean welfare with paired 95%
intervals beside the ratio the paper's gains imply.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from reproduction.auction import (
    CALIBRATED,
    CALIBRATED_A40,
    COMPARISONS,
    PAPER_TUNED,
    PAPER_TUNED_A40,
    SHORT,
    SHORT_PROJECT,
    labels,
)

REPORTS = Path(__file__).resolve().parents[2] / "reports" / "auction"
FIGURES = {figure.name.split("_")[0]: figure for figure in COMPARISONS}
ECONOMICS = {"fig8": ("high",), "fig4": (50,)}  # the paper's headline cells


def _label(mechanism: str, figure: str) -> str:
    return labels(figure).get(mechanism, SHORT_PROJECT.get(mechanism, mechanism))


def welfare_table(table: pd.DataFrame, x: str, figure: str, column: str = "welfare_mean", digits: int = 0) -> str:
    mechanisms = list(dict.fromkeys(table["mechanism"]))
    lines = [
        f"| {x} | " + " | ".join(_label(m, figure) for m in mechanisms) + " |",
        "|---|" + "---:|" * len(mechanisms),
    ]
    for value, part in table.groupby(x, sort=False):
        rows = part.set_index("mechanism")
        if column == "opt_ratio_mean":
            cells = [f"{rows.loc[m, 'opt_ratio_mean']:.3f} ({rows.loc[m, 'opt_ratio_max']:.2f})" for m in mechanisms]
        else:
            cells = [f"{rows.loc[m, column]:,.{digits}f}" for m in mechanisms]
        lines.append(f"| {value} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def leads_table(table: pd.DataFrame, x: str) -> str:
    """Per cell, the lead of each tuned pdFTSP row over each baseline (% of its mean welfare)."""
    bases = [b for b in ("Titan", "EFT", "NTM", "ZeroPrice", "EFT(admit=positive)") if f"vs_{b}_pct" in table]
    variants = [m for m in (PAPER_TUNED, PAPER_TUNED_A40, CALIBRATED, CALIBRATED_A40) if m in set(table["mechanism"])]
    lines = [f"| {x} | row | " + " | ".join(f"over {b}" for b in bases) + " |", "|---|---|" + "---:|" * len(bases)]
    for value, part in table.groupby(x, sort=False):
        rows = part.set_index("mechanism")
        for m in variants:
            gains = [rows.loc[m, f"vs_{b}_pct"] for b in bases]
            lines.append(
                f"| {value} | {SHORT[m]} | "
                + " | ".join(f"{g:+.1f}%" if np.isfinite(g) else "undefined (baseline <= 0)" for g in gains)
                + " |"
            )
    return "\n".join(lines)


def headline_table(table: pd.DataFrame) -> str:
    lines = ["| cell | ratio of mean welfare | paper | ours (95% CI) | per day |", "|---|---|---:|---:|---|"]
    for _, r in table.iterrows():
        per_day = "" if pd.isna(r.get("per_day", "")) else str(r.get("per_day", ""))
        if r["numerator"] == "EFT's admitted tasks below cost":
            lines.append(
                f"| {r['experiment']} {r['cell']} | share of EFT's admitted tasks worth less than their cost "
                f"| | {r['ratio']:.1%} | |"
            )
            continue
        if " - " in r["numerator"]:
            name = f"share of the lead of {SHORT[CALIBRATED]} over Titan from fitting"
            paper = ""
        else:
            name = f"{SHORT.get(r['numerator'], r['numerator'])} / {r['denominator']}"
            paper = f"{r['paper_ratio']:.3f}"
        ours = f"{r['ratio']:.3f} ±{r['ci95']:.3f}" if np.isfinite(r["ratio"]) else f"undefined ({r['note']})"
        lines.append(f"| {r['experiment']} {r['cell']} | {name} | {paper} | {ours} | {per_day} |")
    return "\n".join(lines)


def kappa_table(table: pd.DataFrame) -> str:
    swept = table[table["kappa"].notna()]
    loads = list(dict.fromkeys(swept["tasks.load"]))
    lines = ["| schedule space | kappa | " + " | ".join(loads) + " |", "|---|---:|" + "---|" * len(loads)]
    for (space, kappa), part in swept.groupby(["schedule_space", "kappa"], sort=False):
        lead = part.set_index(["seed", "tasks.load"])["lead_over_ZeroPrice"]
        cells = [f"{lead[(1, load)]:+.2f} / {lead[(2, load)]:+.2f}" for load in loads]
        name = "paper" if space == "paper" else "fitting (ours)"
        lines.append(f"| {name} | {kappa:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def bid_law_table(table: pd.DataFrame) -> str:
    ratios = (
        [f"{SHORT[PAPER_TUNED]} / {b}" for b in ("Titan", "EFT", "NTM")]
        + [f"{SHORT[CALIBRATED]} / {b}" for b in ("Titan", "EFT", "NTM")]
        + ["Titan / EFT", "EFT / NTM"]
    )
    lines = [
        "| value law (cents per ksample) | EFT's admitted tasks below cost | EFT admits | " + " | ".join(ratios) + " |",
        "|---|---:|---:|" + "---:|" * len(ratios),
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['tasks.value_per_ksample']} | {r['eft_admitted_below_cost']:.1%} | "
            f"{r['eft_admission_rate']:.1%} | " + " | ".join(f"{r[c]:.2f} ±{r[f'{c} ci95']:.2f}" for c in ratios) + " |"
        )
    return "\n".join(lines)


def economics_table(table: pd.DataFrame, x: str, value, figure: str) -> str:
    """One cell's mechanisms: admitted share, utilisation, provider's and users' utility a day."""
    part = table[table[x].astype(str) == str(value)]
    lines = [
        f"| {x} = {value} | admitted | utilisation | provider utility | users' utility |",
        "|---|---:|---:|---:|---:|",
    ]
    for _, r in part.iterrows():
        lines.append(
            f"| {_label(r['mechanism'], figure)} | {r['admission_rate']:.1%} | {r['utilisation']:.2f} | "
            f"{r['provider_utility']:,.0f} | {r['users_utility']:,.0f} |"
        )
    titan = part[part["mechanism"] == "Titan"]
    if len(titan) and "titan_limited_slots" in part:
        r = titan.iloc[0]
        lines.append(
            f"\nTitan: CP-SAT stopped at its limit in {r['titan_limited_slots']:.0f} of {r['titan_slots']:.0f} slots;"
            f" the greedy start was kept in {r['titan_greedy_slots']:.0f}."
        )
    return "\n".join(lines)


def baseline_ratios_table(table: pd.DataFrame, x: str) -> str:
    """Per cell: Titan / EFT and EFT / NTM (ratios of mean welfare; undefined when the denominator
    is not positive) and the utilisation of EFT and NTM."""
    lines = [f"| {x} | Titan / EFT | EFT / NTM | EFT utilisation | NTM utilisation |", "|---|---:|---:|---:|---:|"]
    for value, part in table.groupby(x, sort=False):
        w = part.set_index("mechanism")["welfare_mean"]
        u = part.set_index("mechanism")["utilisation"]
        ratio = [
            f"{w[a] / w[b]:.2f}" if w[b] > 0 else "undefined (denominator <= 0)"
            for a, b in (("Titan", "EFT"), ("EFT", "NTM"))
        ]
        lines.append(f"| {value} | {ratio[0]} | {ratio[1]} | {u['EFT']:.2f} | {u['NTM']:.2f} |")
    return "\n".join(lines)


def runtime_table(table: pd.DataFrame) -> str:
    mechanisms = list(dict.fromkeys(table["mechanism"]))
    lines = [
        "| run | setting | " + " | ".join(SHORT.get(m, m) for m in mechanisms) + " | Titan / slowest pdFTSP row |",
        "|---|---|" + "---:|" * (len(mechanisms) + 1),
    ]
    for (experiment, setting), part in table.groupby(["experiment", "setting"], sort=False):
        ms = part.set_index("mechanism")["decision_ms_per_task"]
        slowest = max(v for m, v in ms.items() if m != "Titan")
        lines.append(
            f"| {experiment} | {setting} | "
            + " | ".join(f"{ms[m]:.2f}" for m in mechanisms)
            + f" | {ms['Titan'] / slowest:.0f} |"
        )
    return "\n".join(lines)


def tables(reports: Path, only: set[str] | None = None) -> list[tuple[str, str]]:
    out = []

    def wanted(name: str) -> bool:
        return only is None or name in only

    if wanted("headline") and (reports / "headline.csv").exists():
        out.append(("headline", headline_table(pd.read_csv(reports / "headline.csv"))))
    for name, figure in FIGURES.items():
        path = reports / f"{figure.name}.csv"
        if not wanted(name) or not path.exists():
            continue
        table = pd.read_csv(path)
        if name in ("fig12", "fig12c"):  # OPT / online welfare, not welfare
            out.append(
                (name, welfare_table(table[table["mechanism"] != "OPT"], figure.x, figure.name, "opt_ratio_mean"))
            )
            continue
        out.append((name, welfare_table(table, figure.x, figure.name)))
        for cell in ECONOMICS.get(name, ()):
            out.append((f"{name} economics {cell}", economics_table(table, figure.x, cell, figure.name)))
        if PAPER_TUNED in set(table["mechanism"]):
            out.append((f"{name} leads", leads_table(table, figure.x)))
        if name == "overload":
            out.append((f"{name} baselines", baseline_ratios_table(table, figure.x)))
    for name in ("kappa", "kappa_a40"):
        if wanted(name) and (reports / f"{name}.csv").exists():
            out.append((name, kappa_table(pd.read_csv(reports / f"{name}.csv"))))
    for name in ("bid_law", "bid_law_50"):
        if wanted(name) and (reports / f"{name}.csv").exists():
            out.append((name, bid_law_table(pd.read_csv(reports / f"{name}.csv"))))
    if wanted("fig13") and (reports / "fig13_runtime.csv").exists():
        out.append(("fig13", runtime_table(pd.read_csv(reports / "fig13_runtime.csv"))))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=Path, default=REPORTS)
    parser.add_argument("--only", default=None, help="comma-separated: headline, fig4, ..., kappa, bid_law")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    for name, text in tables(args.reports, only):
        print(f"### {name}\n\n{text}\n")


if __name__ == "__main__":
    main()
