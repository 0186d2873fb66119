"""Determinism and resume at 100,000 cells (issue 37's grid, `bench/grid_scale.py` grid_100k):

    python -m bench.grid_100k_checks [--cells 1000] [--out bench/results/grid_100k_checks.json]

Runs, each a subprocess into a fresh temporary folder (removed afterwards), tracking off:

1. the grid with `runner.num_workers=2`;
2. the same with `runner.num_workers=1`;
3. the same with 2 workers, stopped with SIGINT once the store holds a committed batch and at
   least a third of the simulations have had time to run, then the resume command it prints.

Checks: `results.parquet` and `summary.csv` of 2 and 3 are byte for byte those of 1; the stopped
run ended with status 130 and a resume line, with some but not all cells complete. `--cells N`
scales the grid as in `bench/grid_scale.py` (100N cells). A failed check exits 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.grid_scale import grid_overrides, python
from sweep.sweep_dir import completion

ROOT = Path(__file__).resolve().parents[1]
FILES = ("results.parquet", "summary.csv")


def grid(cells: int) -> list[str]:
    mean_prices = ",".join(f"{p / 10:.1f}" for p in range(5, 15))
    return [*grid_overrides(cells), "job.n_max=range(8,18)", f"market.mean_price={mean_prices}", "replicates=1"]


def command(cells: int, sweep_dir: Path, workers: int) -> list[str]:
    return [
        python(),
        "-m",
        "sweep",
        "-m",
        *grid(cells),
        "tracking=off",
        "runner.progress=false",
        f"runner.num_workers={workers}",
        f"hydra.sweep.dir={sweep_dir}",
    ]


def digests(folder: Path) -> dict[str, str]:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in FILES}


def run(args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{shlex.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started, done


def interrupted_and_resumed(cells: int, sweep_dir: Path, after: float) -> dict:
    args = command(cells, sweep_dir, 2)
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None and (time.perf_counter() - started < after or not (completion(sweep_dir) or (0, 0))[0]):
        time.sleep(0.5)
    if proc.poll() is not None:
        sys.exit("the sweep finished before it could be stopped; raise --stop-after's share")
    sent = time.perf_counter() - started
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        sys.exit("the sweep finished before the stop reached it: run a bigger grid (--cells)")
    if not err.strip():
        sys.exit(f"the stopped sweep said nothing on stderr (status {proc.returncode}); stdout:\n{out[-2000:]}")
    last = err.strip().splitlines()[-1]
    complete, total = completion(sweep_dir) or (0, 0)
    resume = shlex.split(last.split("resume with: ", 1)[1]) if "resume with: " in last else []
    resumed_seconds, resumed = run([python(), *resume[1:]]) if resume else (0.0, None)
    return {
        "signal_sent_after_seconds": round(sent, 1),
        "returncode": proc.returncode,
        "last_line": last.replace(str(sweep_dir.parent), "<tmp>"),  # the temporary folder, not a path to keep
        "complete_at_stop": complete,
        "cells": total,
        "resume_seconds": round(resumed_seconds, 1),
        "resume_done_line": next((line for line in resumed.stdout.splitlines() if line.startswith("Done:")), "")
        if resumed
        else "",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.grid_100k_checks", description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--out", default="bench/results/grid_100k_checks.json")
    args = parser.parse_args(argv)
    report: dict = {
        "benchmark": "bench/grid_100k_checks.py",
        "invocation": shlex.join(["python", "-m", "bench.grid_100k_checks", *(argv or sys.argv[1:])]),
        "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "revision": subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "grid": grid(args.cells),
    }
    with tempfile.TemporaryDirectory(prefix="grid100k-") as tmp:
        tmp = Path(tmp)
        two_seconds, two = run(command(args.cells, tmp / "two", 2))
        one_seconds, _ = run(command(args.cells, tmp / "one", 1))
        stopped = interrupted_and_resumed(args.cells, tmp / "stopped", after=two_seconds / 2)
        sums = {name: digests(tmp / name) for name in ("two", "one", "stopped")}
    report["runs"] = {
        "two_workers": {"seconds": round(two_seconds, 1), "sha256": sums["two"]},
        "one_worker": {"seconds": round(one_seconds, 1), "sha256": sums["one"]},
        "stopped_and_resumed": {**stopped, "sha256": sums["stopped"]},
    }
    checks = {
        "1 and 2 workers: the same files": sums["one"] == sums["two"],
        "stopped and resumed: the same files as uninterrupted": sums["stopped"] == sums["two"],
        "the stop ended with 130 and a resume command": stopped["returncode"] == 130
        and bool(stopped["resume_done_line"]),
        "some but not all cells were complete at the stop": 0 < stopped["complete_at_stop"] < stopped["cells"],
    }
    report["checks"] = checks
    print(json.dumps(report["runs"], indent=1))
    for name, holds in checks.items():
        print(f"{'PASS' if holds else 'FAIL'}  {name}")
    if args.out != "-":
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"written to {args.out}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
