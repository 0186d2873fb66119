"""Run a family's paper-reproduction experiments and build their reports.

    python -m reproduction spot                      # every experiment, paper-sized
    python -m reproduction auction                   # paper 001: Figs. 4-13
    python -m reproduction spot --only fig5,fig9     # a subset
    python -m reproduction spot --replicates 20      # a quick, smaller run
    python -m reproduction spot --report-only        # rebuild reports from finished runs

A family's experiments and checks live in the package `reproduction/<family>/` (its `__init__`;
reproduction/experiment.py says what it declares); this driver knows no family. Each experiment that runs is one
`python -m sweep -m experiment=<family>/<name>` multirun into `<runs>/<experiment>` (default
`multirun/reproduce/<family>/`), logged to MLflow like any sweep; a rerun resumes it (completed
cells are not simulated again). The reports (CSV + PNG, one pair per figure, and `checks.csv`)
go to `reports/<family>/`.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd

from .experiment import Context, write_checks

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(__file__).resolve().parent


def families() -> list[str]:
    """The families with a reproduction package, `reproduction/<family>/` (its `__init__` declares
    EXPERIMENTS); the modules beside the packages are the driver's own."""
    return sorted(info.name for info in pkgutil.iter_modules([str(PACKAGE)]) if info.ispkg)


def family_module(name: str) -> ModuleType:
    return importlib.import_module(f"reproduction.{name}")


def run_sweep(experiment: str, run_dir: Path, extra: list[str], multirun: bool = True) -> None:
    command = [sys.executable, "-m", "sweep"] + (["-m"] if multirun else []) + [f"experiment={experiment}"]
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    command += [f"{key}={run_dir}"] + extra
    print("$", " ".join(command[1:]), flush=True)
    code = subprocess.run(command, cwd=ROOT).returncode
    if code != 0:  # the sweep said why (a refused dir, a signal, a bad override): no traceback here
        sys.stderr.write(
            f"Error: the sweep of experiment {experiment} into {run_dir} ended with status {code}; "
            f"the reports were not rebuilt (a dir the sweep refuses: choose other ones with --runs DIR)\n"
        )
        raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    known_families = families()
    parser = argparse.ArgumentParser(prog="python -m reproduction", description=__doc__.split("\n\n")[0])
    parser.add_argument("family", choices=known_families)
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated experiments (default: all); "
        + "; ".join(f"{f}: {', '.join(e.name for e in family_module(f).EXPERIMENTS)}" for f in known_families),
    )
    parser.add_argument("--replicates", type=int, default=None, help="override every grid's replicates")
    parser.add_argument("--runs", type=Path, default=None, help="default: multirun/reproduce/<family>")
    parser.add_argument("--out", type=Path, default=None, help="default: reports/<family>")
    parser.add_argument("--report-only", action="store_true", help="do not run sweeps, only rebuild reports")
    parser.add_argument("overrides", nargs="*", help="extra overrides for every sweep, e.g. tracking=off")
    args = parser.parse_intermixed_args(argv)
    module = family_module(args.family)
    experiments = {experiment.name: experiment for experiment in module.EXPERIMENTS}
    chosen = [name for name in args.only.split(",") if name] or list(experiments)
    unknown = [name for name in chosen if name not in experiments]
    if unknown:
        parser.error(f"--only: unknown experiment(s) {', '.join(unknown)} (known: {', '.join(experiments)})")
    if args.replicates is not None and args.replicates < 1:
        parser.error("--replicates must be >= 1")
    extra = list(args.overrides) + ([f"replicates={args.replicates}"] if args.replicates else [])
    context = Context(
        runs=args.runs or ROOT / "multirun" / "reproduce" / args.family, out=args.out or ROOT / "reports" / args.family
    )
    context.out.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        experiment = experiments[name]
        if experiment.experiment and not args.report_only:
            run_sweep(experiment.experiment, context.run_dir(name), extra, experiment.multirun)
        context.reports[name] = experiment.report(context)
        print(f"report: {context.out}/{name}*", flush=True)
    table = write_checks(context.out, module.checks(context), chosen, list(experiments))
    with pd.option_context("display.width", 160, "display.max_colwidth", 100):
        print(table.to_string(index=False))
    print(f"Reports (CSV + PNG) in {context.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
