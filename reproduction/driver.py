"""Run a family's paper-reproduction grids and build their reports.

    python -m reproduction spot                      # every experiment, paper-sized
    python -m reproduction auction                   # paper 001: Figs. 4-13
    python -m reproduction spot --only fig5,fig9     # a subset
    python -m reproduction spot --replicates 20      # a quick, smaller run
    python -m reproduction spot --report-only        # rebuild reports from finished runs

Each experiment is one `python -m sweep -m +sweep=<config>` multirun into
`<runs>/<experiment>` (default `multirun/reproduce/spot/`), logged to MLflow like any
sweep; a rerun resumes it (completed cells are not simulated again). The reports
(CSV + PNG, one pair per figure, and `checks.csv`) go to `reports/<family>/`.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

from . import auction, spot

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = {figure.name.split("_")[0]: figure for figure in spot.COMPARISONS}
SELECTION = {"fig9": "paper_000_fig9", "fig10": "paper_000_fig10"}
AUCTION = {figure.name.split("_")[0]: figure for figure in auction.COMPARISONS}
AUCTION_DERIVED = ("fig10", "fig11", "fig13")  # computed in-process or from other experiments' runs


def _sweep(config: str, run_dir: Path, extra: list[str], multirun: bool = True) -> None:
    command = [sys.executable, "-m", "sweep"] + (["-m"] if multirun else []) + [f"+sweep={config}"]
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    command += [f"{key}={run_dir}"] + extra
    print("$", " ".join(command[1:]), flush=True)
    subprocess.run(command, check=True, cwd=ROOT)


def write_checks(out_dir: Path, rows: list[dict], chosen: list[str], known: list[str]) -> pd.DataFrame:
    """Write ``checks.csv``: these rows, plus the earlier file's rows of experiments not run now
    (so a run of a subset does not drop the other experiments' checks), in experiment order."""
    table = pd.DataFrame(rows, columns=["experiment", "check", "value", "holds"])
    path = out_dir / "checks.csv"
    try:
        earlier = pd.read_csv(path)
    except (OSError, pd.errors.EmptyDataError, pd.errors.ParserError):
        earlier = pd.DataFrame()  # none yet, or not one this function wrote: start afresh
    if "experiment" in earlier:
        fresh = set(chosen) | set(table["experiment"])
        kept = earlier[~earlier["experiment"].isin(fresh) & earlier["experiment"].isin(known)]
        table = pd.concat([kept, table], ignore_index=True) if len(kept) else table
    rank = {name: i for i, name in enumerate(known)}
    table = table.sort_values("experiment", key=lambda e: e.map(rank), kind="stable").reset_index(drop=True)
    table.to_csv(path, index=False, float_format="%.4f")
    return table


def checks(out_dir: Path, runs: Path, tables: dict[str, pd.DataFrame], selection: pd.DataFrame | None,
           chosen: list[str]) -> pd.DataFrame:
    """The issue's "what must hold" list, evaluated on the reproduced numbers."""
    rows = []

    def add(experiment: str, name: str, value: float, holds: bool) -> None:
        rows.append({"experiment": experiment, "check": name, "value": value, "holds": bool(holds)})

    if "fig5" in tables:
        t = tables["fig5"]
        d10 = t[(t["job.deadline"] == 10) & (t["forecast.kind"] == "oracle")]
        for other in ("OD-Only", "MSU", "UP", "AHANP"):
            value = spot.improvement(d10, other)
            add("fig5", f"d=10 oracle: AHAP over {other} (%; paper {spot.PAPER_HEADLINE[other]})", value,
                value > 0 if other != "AHANP" else True)
    for name in ("fig5", "fig6", "fig7", "fig8", "noise", "trace"):
        if name in tables:
            value = spot.regret_vs_opt_min(runs / name)
            add(name, f"{name}: min over jobs of OPT - online policy (>= 0: OPT never beaten)", value, value >= -1e-6)
    if "fig6" in tables:
        t = tables["fig6"].set_index(["job.mu1", "group"])["utility_mean"]
        drop = {g: t[(0.9, g)] - t[(0.2, g)] for g in ("AHAP", "AHANP")}
        add("fig6", "fig6: AHAP utility drop from mu=0.9 to mu=0.2", drop["AHAP"], True)
        add("fig6", "fig6: AHANP utility drop from mu=0.9 to mu=0.2 (paper: smaller than AHAP's)", drop["AHANP"],
            drop["AHANP"] < drop["AHAP"])
    if "noise" in tables:
        # % of OPT: cells differ in their worlds (the seed hashes the whole config), OPT pairs them
        t = tables["noise"].set_index(["noise.level", "group"])["pct_of_opt"]
        add("noise", "noise: best AHAP's % of OPT with oracle minus with 200% noise (>= 0)",
            t[(0.0, "AHAP")] - t[(2.0, "AHAP")], t[(0.0, "AHAP")] >= t[(2.0, "AHAP")])
    if selection is not None:
        full = selection[selection["pool"].str.startswith("full")]
        for _, row in full.iterrows():
            label = f"{row['noise.kind']} {row['noise.level']:g}"
            add("fig9", f"fig9 {label}: average regret K=100 minus K=1000 (> 0: falls with K)",
                row["average_regret_K100"] - row["average_regret_K1000"],
                row["average_regret_K100"] > row["average_regret_K1000"])
            add("fig9", f"fig9 {label}: final weight on policies within 2% of the best fixed",
                row["final_weight_within_2pct"], row["final_weight_within_2pct"] >= 0.5)
    return write_checks(out_dir, rows, chosen, [*EXPERIMENTS, *SELECTION])


def auction_checks(out_dir: Path, tables: dict[str, pd.DataFrame], derived: dict, chosen: list[str]) -> pd.DataFrame:
    """The auction issue's "what must hold" list and the paper's headline claims, on the reproduced numbers."""
    rows = []

    def add(experiment: str, name: str, value: float, holds: bool) -> None:
        rows.append({"experiment": experiment, "check": name, "value": value, "holds": bool(holds)})

    for name, x, value, paper in (("fig8", "tasks.load", "high", auction.PAPER_HIGH_LOAD),
                                  ("fig4", "cluster.nodes", 50, auction.PAPER_50_NODES)):
        if name not in tables:
            continue
        for mechanism in (auction.PDFTSP, auction.CALIBRATED):
            for base, claim in paper.items():
                gain = auction.improvement(tables[name], x, value, mechanism, base)
                add(name, f"{name} {x}={value}: {auction.SHORT[mechanism]} over {base} (%; paper +{claim})", gain, gain > 0)
    if "fig12" in tables:
        t = tables["fig12"]
        online = t[t["mechanism"] != "OPT"]
        add("fig12", "fig12: smallest OPT / online welfare over all worlds (>= 1: OPT never beaten)",
            float(online["opt_ratio_min"].min()), bool(online["opt_ratio_min"].min() >= 1 - 1e-9))
        for mechanism in (auction.PDFTSP, auction.CALIBRATED):
            worst = float(online[online["mechanism"] == mechanism]["opt_ratio_max"].max())
            add("fig12", f"fig12: largest OPT / {auction.SHORT[mechanism]} over all worlds (paper: <= 3)", worst, worst <= 3)
    if "fig11" in derived:
        worst = float(derived["fig11"]["max_payment_over_bid_all"].iloc[0])
        add("fig11", "fig11: largest payment / bid of an admitted pdFTSP task (<= 1: individually rational)", worst, worst <= 1 + 1e-12)
    if "fig10" in derived:
        gap = auction.truthful_gap(derived["fig10"])
        add("fig10", "fig10: largest gain from misreporting, critical payment (0: truthful)", float(gap["critical"]),
            gap["critical"] <= 1e-9)
        add("fig10", "fig10: largest gain from misreporting, eq. 14 as printed (> 0 shows the gap, reading 3)",
            float(gap["eq14"]), True)
    return write_checks(out_dir, rows, chosen, [*AUCTION, *AUCTION_DERIVED])


def run_auction(args, chosen: list[str], extra: list[str]) -> pd.DataFrame:
    tables: dict[str, pd.DataFrame] = {}
    derived: dict[str, pd.DataFrame] = {}
    for name in chosen:
        if name in AUCTION:
            figure = AUCTION[name]
            run_dir = args.runs / name
            if not args.report_only:
                _sweep(figure.config, run_dir, extra)
            tables[name] = auction.comparison_report(run_dir, figure, args.out)
        elif name == "fig10":
            derived[name] = auction.truthfulness_report(args.out)
        elif name == "fig11":
            if (args.runs / "fig8" / "tasks.parquet").exists():
                derived[name] = auction.payments_report(args.runs / "fig8", args.out)
            else:
                print("fig11: needs the fig8 run's tasks.parquet; run fig8 first", flush=True)
        elif name == "fig13":
            for source in ("fig4", "fig8"):
                if source not in tables and (args.runs / source / "results.parquet").exists():
                    tables[source] = auction.summary(args.runs / source, AUCTION[source].x)
            auction.decision_time_report({AUCTION[k].name: v for k, v in tables.items() if k in ("fig4", "fig8")},
                                         args.out)
        print(f"report: {args.out}/{name}*", flush=True)
    return auction_checks(args.out, tables, derived, chosen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reproduction", description=__doc__.split("\n\n")[0])
    parser.add_argument("family", choices=["spot", "auction"])
    parser.add_argument("--only", default="", help="comma-separated experiments (default: all): spot: "
                        + ", ".join([*EXPERIMENTS, *SELECTION]) + "; auction: "
                        + ", ".join([*AUCTION, *AUCTION_DERIVED]))
    parser.add_argument("--replicates", type=int, default=None, help="override every grid's replicates")
    parser.add_argument("--runs", type=Path, default=None, help="default: multirun/reproduce/<family>")
    parser.add_argument("--out", type=Path, default=None, help="default: reports/<family>")
    parser.add_argument("--report-only", action="store_true", help="do not run sweeps, only rebuild reports")
    parser.add_argument("overrides", nargs="*", help="extra overrides for every sweep, e.g. tracking=off")
    args = parser.parse_intermixed_args(argv)
    args.runs = args.runs or ROOT / "multirun" / "reproduce" / args.family
    args.out = args.out or ROOT / "reports" / args.family

    known = [*AUCTION, *AUCTION_DERIVED] if args.family == "auction" else [*EXPERIMENTS, *SELECTION]
    chosen = [name for name in args.only.split(",") if name] or known
    unknown = [name for name in chosen if name not in known]
    if unknown:
        parser.error(f"--only: unknown experiment(s) {', '.join(unknown)} (known: {', '.join(known)})")
    if args.replicates is not None and args.replicates < 1:
        parser.error("--replicates must be >= 1")
    extra = list(args.overrides) + ([f"replicates={args.replicates}"] if args.replicates else [])
    args.out.mkdir(parents=True, exist_ok=True)
    if args.family == "auction":
        _print_checks(run_auction(args, chosen, extra), args.out)
        return 0

    tables: dict[str, pd.DataFrame] = {}
    selection = None
    for name in chosen:
        run_dir = args.runs / name
        if name in EXPERIMENTS:
            figure = EXPERIMENTS[name]
            if not args.report_only:
                _sweep(figure.config, run_dir, extra)
            tables[name] = spot.comparison_report(run_dir, figure, args.out)
        elif name == "fig9":
            if not args.report_only:
                _sweep(SELECTION[name], run_dir, extra)
            selection = spot.fig9_report(run_dir, args.out)
        else:
            if not args.report_only:
                _sweep(SELECTION[name], run_dir, extra, multirun=False)
            spot.fig10_report(run_dir, args.out)
        print(f"report: {args.out}/{name}*", flush=True)
    _print_checks(checks(args.out, args.runs, tables, selection, chosen), args.out)
    return 0


def _print_checks(table: pd.DataFrame, out: Path) -> None:
    with pd.option_context("display.width", 160, "display.max_colwidth", 100):
        print(table.to_string(index=False))
    print(f"Reports (CSV + PNG) in {out}")


if __name__ == "__main__":
    raise SystemExit(main())
