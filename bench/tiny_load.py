"""`debug=tiny` of every experiment, on a quiet machine and beside CPU-bound processes.

    python -m bench.tiny_load [--only spot/fig5,core/table1] [--busy 2] [--limit 30] [--max-ratio 3]
                              [--out bench/results/tiny_load.json]

Each experiment file (conf/experiment/**.yaml: every family's files, demo and smoke) runs as
`python -m sweep -m experiment=<name> debug=tiny tracking=off runner.progress=false` twice, one
run right after the other: once quiet and once while `--busy` processes (`while True: pass`,
default 2) spin; the busy loops start before the run and are killed when it exits. The order of
the pair alternates from one experiment to the next, so that neither condition always runs
first (a first run pays for cold file caches). Every run's outputs go to a fresh temporary
folder, removed after it.

For each run: the wall time from launch to exit, the engine's own time and its simulating time
(its `Done: ... in X s; simulating Y s` line), the moments of `<sweep dir>/timing.json` (seconds
after the command's start: Ray ready, first chunk submitted, simulations done), the load average
before and after, and the rows of results.parquet. A run that exits non-zero or writes no rows
stops the benchmark with its command and the end of its output.

The report gives per experiment the quiet and loaded seconds and their ratio, then the median
and the largest ratio, the number of experiments whose slower run took over `--limit` seconds
(30) and the number whose ratio is over `--max-ratio` (3): the goal is none of either. The
machine's load average is part of the report: the quiet runs are only as quiet as the machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENT_DIR = ROOT / "conf" / "experiment"
DONE = re.compile(r"Done: [\d,]+ cells?, ([\d,]+) simulations? in ([\d.]+) s(?:; simulating ([\d.]+) s)?")
BUSY_LOOP = "while True: pass"
PHASES = ("ray_ready", "first_chunk_submitted", "simulations_done")


def experiments(root: Path = EXPERIMENT_DIR) -> list[str]:
    """Every experiment name as `experiment=` takes it: `spot/fig5`, ..., `demo`, `smoke`."""
    return sorted(str(path.relative_to(root).with_suffix("")) for path in root.rglob("*.yaml"))


def selected(names: list[str], only: str | None) -> list[str]:
    """`--only`'s experiments in the order given (each must exist), else all of them."""
    if not only:
        return names
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise ValueError(f"no experiment {', '.join(unknown)} under conf/experiment")
    return wanted


def conditions(index: int) -> tuple[str, str]:
    """The pair's order for the experiment at ``index``: quiet first at even places, loaded first at odd."""
    return ("quiet", "loaded") if index % 2 == 0 else ("loaded", "quiet")


def command(experiment: str, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sweep",
        "-m",
        f"experiment={experiment}",
        "debug=tiny",
        "tracking=off",
        "runner.progress=false",
        f"hydra.sweep.dir={out}",
    ]


def shown(argv: list[str], tmp: Path) -> str:
    """The command as run, with the interpreter as `python` and the temporary folder as `<tmp>`."""
    return " ".join(["python", *(shlex.quote(arg.replace(str(tmp), "<tmp>")) for arg in argv[1:])])


def parse_done(output: str) -> dict:
    """The engine's last `Done:` line: simulations, its total seconds and its simulating seconds."""
    found = DONE.findall(output)
    if not found:
        return {"simulations": None, "engine_seconds": None, "simulating_seconds": None}
    simulations, total, simulating = found[-1]
    return {
        "simulations": int(simulations.replace(",", "")),
        "engine_seconds": float(total),
        "simulating_seconds": float(simulating) if simulating else None,
    }


def phases(sweep_dir: Path) -> dict:
    """Seconds after the command's start of the engine's moments in timing.json (None if absent)."""
    try:
        timing = json.loads((sweep_dir / "timing.json").read_text())
    except (OSError, ValueError):
        return {name: None for name in PHASES}
    moment = {
        name: value.get("seconds_after_start") if isinstance(value, dict) else None for name, value in timing.items()
    }
    return {name: moment.get(name) for name in PHASES}


def start_busy(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]


def stop_busy(loops: list[subprocess.Popen]) -> None:
    for loop in loops:
        loop.kill()
    for loop in loops:
        loop.wait()


def run_once(experiment: str, busy: int, timeout: float) -> dict:
    """One `debug=tiny` run of ``experiment`` beside ``busy`` busy loops (0: quiet)."""
    with tempfile.TemporaryDirectory(prefix="tiny-load-") as folder:
        tmp = Path(folder)
        argv = command(experiment, tmp / "sweep")
        loops = start_busy(busy)
        try:
            load_before = os.getloadavg()
            started = time.perf_counter()
            proc = subprocess.run(
                argv,
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
            wall = time.perf_counter() - started
        finally:
            stop_busy(loops)
        output = proc.stdout + proc.stderr
        rows = _rows(tmp / "sweep" / "results.parquet")
        if proc.returncode != 0 or not rows:
            raise SystemExit(
                f"{experiment} ({'loaded' if busy else 'quiet'}): exit status {proc.returncode}, "
                f"{rows} rows\n$ {shown(argv, tmp)}\n{output[-3000:]}"
            )
        return {
            "wall_seconds": round(wall, 3),
            **parse_done(output),
            "phases": phases(tmp / "sweep"),
            "rows": rows,
            "busy": busy,
            "load_average_before": list(load_before),
            "load_average_after": list(os.getloadavg()),
            "command": shown(argv, tmp),
        }


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except OSError:
        return 0


def summarize(seconds: dict[str, dict[str, float]], limit: float, max_ratio: float) -> dict:
    """Per experiment {quiet, loaded} seconds -> ratios, their median and largest, and the
    experiments over ``limit`` seconds (either run) or over ``max_ratio``."""
    ratios = {name: pair["loaded"] / pair["quiet"] for name, pair in seconds.items()}
    over_limit = sorted(name for name, pair in seconds.items() if max(pair.values()) > limit)
    over_ratio = sorted(name for name, ratio in ratios.items() if ratio > max_ratio)
    worst = max(ratios, key=ratios.get) if ratios else None
    return {
        "ratios": {name: round(value, 3) for name, value in ratios.items()},
        "median_ratio": round(statistics.median(ratios.values()), 3) if ratios else None,
        "max_ratio": {"experiment": worst, "ratio": round(ratios[worst], 3)} if worst else None,
        "max_seconds": max((max(pair.values()) for pair in seconds.values()), default=None),
        "over_limit": {"seconds": limit, "count": len(over_limit), "experiments": over_limit},
        "over_ratio": {"ratio": max_ratio, "count": len(over_ratio), "experiments": over_ratio},
    }


def table(seconds: dict[str, dict[str, float]], summary: dict) -> str:
    lines = ["| experiment | quiet s | loaded s | ratio |", "|---|---:|---:|---:|"]
    for name, pair in seconds.items():
        lines.append(f"| {name} | {pair['quiet']:.1f} | {pair['loaded']:.1f} | {summary['ratios'][name]:.2f} |")
    return "\n".join(lines)


def parse_args(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.tiny_load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated experiments (default: every one)")
    parser.add_argument("--busy", type=int, default=2, help="busy-loop processes beside the loaded run")
    parser.add_argument("--limit", type=float, default=30.0, help="seconds a run may take")
    parser.add_argument("--max-ratio", type=float, default=3.0, help="loaded / quiet a run may take")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a run is stopped as failed")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "tiny_load.json")
    args = parser.parse_args(argv)
    try:
        args.names = selected(experiments(), args.only)
    except ValueError as err:
        parser.error(str(err))
    return args


def report_header(args: argparse.Namespace, argv) -> dict:
    """What the JSON says about the run before any experiment: the command, the machine."""
    return {
        "benchmark": "bench/tiny_load.py",
        "invocation": " ".join(
            ["python -m bench.tiny_load", *map(shlex.quote, sys.argv[1:] if argv is None else argv)]
        ),
        "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_at_start": list(os.getloadavg()),
        },
        "busy_loops": args.busy,
        "experiments": args.names,
    }


def time_experiments(args: argparse.Namespace) -> tuple[dict, dict]:
    """Each experiment quiet and loaded, in the rotating order of `conditions`: (runs, seconds)."""
    names = args.names
    runs: dict[str, dict[str, dict]] = {}
    seconds: dict[str, dict[str, float]] = {}
    for index, name in enumerate(names):
        runs[name] = {}
        for condition in conditions(index):
            runs[name][condition] = run_once(name, args.busy if condition == "loaded" else 0, args.timeout)
        seconds[name] = {condition: runs[name][condition]["wall_seconds"] for condition in ("quiet", "loaded")}
        quiet, loaded = seconds[name]["quiet"], seconds[name]["loaded"]
        print(
            f"{index + 1:3d}/{len(names)} {name:28s} quiet {quiet:6.1f} s  loaded {loaded:6.1f} s  "
            f"ratio {loaded / quiet:5.2f}  load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
    return runs, seconds


def print_verdict(seconds: dict, summary: dict, args: argparse.Namespace) -> None:
    print("\n" + table(seconds, summary))
    worst = summary["max_ratio"]
    print(
        f"\nmedian ratio {summary['median_ratio']:.2f}, largest {worst['ratio']:.2f} ({worst['experiment']}); "
        f"slowest run {summary['max_seconds']:.1f} s; over {args.limit:g} s: {summary['over_limit']['count']}, "
        f"over {args.max_ratio:g}x: {summary['over_ratio']['count']}"
    )


def main(argv=None) -> int:
    args = parse_args(argv)
    report = report_header(args, argv)
    print(
        f"{len(args.names)} experiments at debug=tiny, quiet and beside {args.busy} busy loops; "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    runs, seconds = time_experiments(args)
    summary = summarize(seconds, args.limit, args.max_ratio)
    report.update(
        {
            "runs": runs,
            "seconds": seconds,
            "summary": summary,
            "finished_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
    )
    report["machine"]["load_average_at_end"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print_verdict(seconds, summary, args)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
