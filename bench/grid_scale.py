"""Grid scale: the same simulations as one big cell, as a 1,000-cell grid, through Hydra's stock
sweeper and launcher, and through Ray Tune; optionally a 10,000-cell grid.

    python -m bench.grid_scale [--repeats 3] [--cells 1000] [--variants one_cell,grid,...]
                               [--out bench/results/grid_scale.json]

Every variant is a subprocess launched from here, with its outputs in a fresh temporary
folder (`hydra.run.dir` / `hydra.sweep.dir`, and `tracking.uri=sqlite:///<tmp>/mlflow.db`
where MLflow is on), removed after the run. For each run: the wall time from launch to
exit, the subprocess's peak RSS as `os.wait4` reports it (`ru_maxrss`, KiB on Linux: the
larger of the driver's own peak and that of any descendant it reaped, e.g. Ray's GCS or
raylet at shutdown) and the driver's own peak (`VmHWM` of /proc/<pid>/status, read every
0.2 s until it exits), the load average before and after, the engine's own `Done: ... in
X s` time (its last such line), and a check of what the run wrote (rows of results.parquet, or the trials of
Ray Tune). A subprocess that exits non-zero, or writes the wrong number of rows, stops
the benchmark with its command and the end of its stderr.

Variants (`--cells N`, default 1000, scales them all; the grid is `job.deadline` x
`job.workload`, see `grid_axes`; 20 replicates a cell, 3 mechanisms):

- one_cell / one_cell_off: `python -m sweep replicates=20N tracking=sqlite|off`: one cell
  with the grid's number of simulations (60,000 at N=1000);
- grid / grid_off: `python -m sweep -m 'job.deadline=range(6,26)' 'job.workload=range(40,140,2)'
  replicates=20 tracking=sqlite|off` (at N=1000): the engine's `ray_queue` launcher;
- hydra_stock: the same grid with `hydra/sweeper=basic hydra/launcher=basic` and MLflow on:
  Hydra's basic launcher calls the task function `sweep.__main__.main` once per job, one
  cell each, one after the other, in this one process (Ray is started by the first job and
  reused by the next); each job writes `<sweep dir>/<job>/results.parquet`, checked here;
- ray_tune: `python -m bench.grid_tune --cells N` (Ray Tune, default settings, one trial per
  cell, see that module);
- grid_10k (only when named in `--variants`): the grid x `market.capacity=8,12,16,20,24` x
  `market.mean_price=0.5,1.0`, 5 replicates: 10N cells (10,000 and 150,000 simulations at
  N=1000). Also reports the sizes of results.parquet and summary.csv and the time from
  launch to the engine's first simulation, read from `<sweep dir>/timing.json` (wall-clock
  epoch seconds, e.g. `first_chunk_submitted`, as numbers or as `{"epoch": ...}`) when the
  engine writes one; null when not. Every engine variant's timing.json, if any, is kept in
  its run record, with each moment's offset from this benchmark's launch of the process.
- grid_100k and one_cell_100k (only when named): issue 37's grid, the grid x
  `job.n_max=range(8,18)` x `market.mean_price=0.5,...,1.4`, one replicate a cell, tracking off:
  100N cells (100,000 cells and 300,000 simulations at N=1000), against the same simulations
  as one cell (`replicates=100N`). For every engine variant the run records the bytes and the
  entries (files and folders) of its output folder.

Every repeat runs every variant once, the order rotated from one repeat to the next, and
the report gives each variant's median and all its runs, and the median of the per-repeat
ratios grid/one_cell, grid_off/one_cell_off, hydra_stock/grid and ray_tune/grid. One
untimed warm-up run (`python -m sweep replicates=2 tracking=off`) comes first
(`--no-warmup` skips it). The JSON names the commands exactly as run, with the temporary
folder written `<tmp>`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DONE = re.compile(
    r"Done: ([\d,]+) cells?(?:\(s\))?, ([\d,]+) simulations? in ([\d.]+) s"
)  # "1 cell", "4 cells", older trees "4 cell(s)"
REPLICATES = 20  # a grid cell's replicates
REPLICATES_10K = 5  # a grid_10k cell's replicates
MECHANISMS = 3  # conf/family/spot.yaml: OD-Only, MSU, UP
EXTRA_10K = ["market.capacity=8,12,16,20,24", "market.mean_price=0.5,1.0"]  # x10 cells
# x100 cells: issue 37's grid, job.deadline x job.workload x job.n_max x market.mean_price
EXTRA_100K = ["job.n_max=range(8,18)", "market.mean_price=0.5,0.6,0.7,0.8,0.9,1.0,1.1,1.2,1.3,1.4"]
DEFAULT_VARIANTS = ["one_cell", "one_cell_off", "grid", "grid_off", "hydra_stock", "ray_tune"]
ALL_VARIANTS = DEFAULT_VARIANTS + ["grid_10k", "grid_100k", "one_cell_100k"]
RATIOS = [
    ("grid", "one_cell"),
    ("grid_off", "one_cell_off"),
    ("hydra_stock", "grid"),
    ("ray_tune", "grid"),
    ("grid_100k", "one_cell_100k"),
]


def grid_axes(cells: int) -> tuple[range, range]:
    """`job.deadline` and `job.workload` values of an N-cell grid: 20 x 50 at N=1000
    (range(6,26) x range(40,140,2)), 10 x 10 at N=100 (range(6,16) x range(40,60,2)), 5 x 10 at 50.
    The number of deadlines is the largest divisor of N at most min(20, sqrt N)."""
    if cells < 1:
        raise ValueError("--cells must be at least 1")
    n_deadline = max(d for d in range(1, min(20, math.isqrt(cells)) + 1) if cells % d == 0)
    n_workload = cells // n_deadline
    if n_workload > 50:
        raise ValueError(f"--cells {cells}: no grid of at most 20 deadlines x 50 workloads has that many cells")
    return range(6, 6 + n_deadline), range(40, 40 + 2 * n_workload, 2)


def grid_overrides(cells: int) -> list[str]:
    deadlines, workloads = grid_axes(cells)
    return [
        f"job.deadline=range({deadlines.start},{deadlines.stop})",
        f"job.workload=range({workloads.start},{workloads.stop},{workloads.step})",
    ]


def python() -> str:
    return sys.executable


def variant_spec(name: str, cells: int, tmp: Path) -> dict:
    """The command of one variant, where it writes, and what it must have written."""
    sqlite = [f"tracking.uri=sqlite:///{tmp}/mlflow.db"]
    sweep = [python(), "-m", "sweep"]
    grid = grid_overrides(cells)
    if name in ("one_cell", "one_cell_off"):
        tracking = ["tracking=sqlite", *sqlite] if name == "one_cell" else ["tracking=off"]
        command = [*sweep, f"replicates={REPLICATES * cells}", tracking[0], f"hydra.run.dir={tmp}/run", *tracking[1:]]
        return {"command": command, "out": tmp / "run", "cells": 1, "simulations": REPLICATES * cells * MECHANISMS}
    if name in ("grid", "grid_off", "hydra_stock"):
        tracking = ["tracking=off"] if name == "grid_off" else ["tracking=sqlite"]
        stock = ["hydra/sweeper=basic", "hydra/launcher=basic"] if name == "hydra_stock" else []
        command = [
            *sweep,
            "-m",
            *grid,
            f"replicates={REPLICATES}",
            *tracking,
            *stock,
            f"hydra.sweep.dir={tmp}/sweep",
            *([] if name == "grid_off" else sqlite),
        ]
        return {
            "command": command,
            "out": tmp / "sweep",
            "cells": cells,
            "simulations": REPLICATES * cells * MECHANISMS,
            "per_job": name == "hydra_stock",
        }
    if name == "grid_10k":
        command = [
            *sweep,
            "-m",
            *grid,
            *EXTRA_10K,
            f"replicates={REPLICATES_10K}",
            "tracking=sqlite",
            f"hydra.sweep.dir={tmp}/sweep",
            *sqlite,
        ]
        return {
            "command": command,
            "out": tmp / "sweep",
            "cells": 10 * cells,
            "simulations": REPLICATES_10K * 10 * cells * MECHANISMS,
        }
    if name in ("grid_100k", "one_cell_100k"):  # one replicate a cell, tracking off (issue 37)
        if name == "grid_100k":
            command = [*sweep, "-m", *grid, *EXTRA_100K, "replicates=1", "tracking=off", f"hydra.sweep.dir={tmp}/sweep"]
            return {
                "command": command,
                "out": tmp / "sweep",
                "cells": 100 * cells,
                "simulations": 100 * cells * MECHANISMS,
            }
        command = [*sweep, f"replicates={100 * cells}", "tracking=off", f"hydra.run.dir={tmp}/run"]
        return {"command": command, "out": tmp / "run", "cells": 1, "simulations": 100 * cells * MECHANISMS}
    if name == "ray_tune":
        command = [
            python(),
            "-m",
            "bench.grid_tune",
            "--cells",
            str(cells),
            "--replicates",
            str(REPLICATES),
            "--storage",
            f"{tmp}/tune",
            "--summary",
            f"{tmp}/tune_summary.json",
        ]
        return {
            "command": command,
            "out": None,
            "tune_summary": tmp / "tune_summary.json",
            "cells": cells,
            "simulations": REPLICATES * cells * MECHANISMS,
        }
    raise ValueError(f"unknown variant {name!r}; choose from {', '.join(ALL_VARIANTS)}")


def shown(command: list[str], tmp: Path) -> str:
    """The command as run, with the interpreter relative to the repository and the temporary folder `<tmp>`."""
    exe = Path(command[0])
    try:
        head = str(exe.relative_to(ROOT))
    except ValueError:
        head = "python"
    return " ".join([head, *(shlex.quote(arg.replace(str(tmp), "<tmp>")) for arg in command[1:])])


def _vmhwm_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def launch(command: list[str], tmp: Path) -> dict:
    """Run ``command`` in the repository; wall time, wait4 peak RSS, the driver's polled VmHWM, its outputs."""
    stdout_path, stderr_path = tmp / "stdout.txt", tmp / "stderr.txt"
    load_before = os.getloadavg()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        launched_epoch = time.time()
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, start_new_session=True)
        peak = {"vmhwm": None}
        stop = threading.Event()

        def poll() -> None:
            while not stop.is_set():
                value = _vmhwm_kib(proc.pid)
                if value is not None:
                    peak["vmhwm"] = max(value, peak["vmhwm"] or 0)
                stop.wait(0.2)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except OSError:
                pass
            raise
        wall = time.perf_counter() - start
        stop.set()
        poller.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = stdout_path.read_text(errors="replace")
    stderr = stderr_path.read_text(errors="replace")
    done = [line.strip() for line in stdout.splitlines() if DONE.search(line)]
    return {
        "returncode": proc.returncode,
        "wall_seconds": wall,
        "launched_epoch": launched_epoch,
        "ru_maxrss_kib": usage.ru_maxrss,
        "driver_vmhwm_kib": peak["vmhwm"],
        "load_average_before": list(load_before),
        "load_average_after": list(os.getloadavg()),
        # the engine's own time, from its last `Done:` line (hydra_stock prints one per job)
        "engine_done_seconds": float(DONE.search(done[-1]).group(3)) if done else None,
        "engine_done_lines": len(done),
        "engine_done_last_line": done[-1] if done else None,
        "_stdout": stdout,
        "_stderr": stderr,
    }


def parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows


def disk_use(folder: Path) -> tuple[int, int]:
    """Bytes and entries (files and folders) under ``folder``."""
    size = entries = 0
    for root, folders, files in os.walk(folder):
        entries += len(folders) + len(files)
        size += sum((Path(root) / name).stat().st_size for name in files)
    return size, entries


def fail(name: str, command: str, why: str, run: dict | None = None) -> None:
    tail = ""
    if run is not None:
        tail = f"\n--- stdout (end) ---\n{run['_stdout'][-2000:]}\n--- stderr (end) ---\n{run['_stderr'][-4000:]}"
    raise SystemExit(f"grid_scale: variant {name} failed: {why}\ncommand: {command}{tail}")


def _epoch(value) -> float | None:
    """A timing.json moment: epoch seconds, as a number or as ``{"epoch": ...}``."""
    if isinstance(value, dict):
        value = value.get("epoch")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def check_outputs(name: str, spec: dict, run: dict, command: str) -> dict:
    """What the run wrote: rows against the expected simulations, file sizes, timing.json."""
    found: dict = {}
    expected = spec["simulations"]
    if spec.get("tune_summary") is not None:
        path = spec["tune_summary"]
        if not path.is_file():
            fail(name, command, "bench.grid_tune wrote no summary", run)
        summary = json.loads(path.read_text())
        if summary["errors"] or summary["trials"] != spec["cells"] or summary["simulations"] != expected:
            fail(
                name,
                command,
                f"{summary['trials']} trials (expected {spec['cells']}), {summary['simulations']} "
                f"simulations (expected {expected}), errors: {summary['errors'][:3]}",
                run,
            )
        found.update(rows=summary["simulations"], tune=summary)
        return found
    out: Path = spec["out"]
    if spec.get("per_job"):
        # Hydra's basic launcher: one output folder per job, <sweep dir>/<job number>/
        missing = [str(job) for job in range(spec["cells"]) if not (out / str(job) / "results.parquet").is_file()]
        if missing:
            fail(
                name,
                command,
                f"{len(missing)} of {spec['cells']} jobs wrote no results.parquet "
                f"(jobs {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''})",
                run,
            )
        rows = sum(parquet_rows(out / str(job) / "results.parquet") for job in range(spec["cells"]))
        found["jobs_with_results"] = spec["cells"]
    else:
        results = out / "results.parquet"
        if not results.is_file():
            fail(name, command, "no results.parquet in the output folder", run)
        found["out_dir_bytes"], found["out_dir_files"] = disk_use(out)
        rows = parquet_rows(results)
        found["results_parquet_bytes"] = results.stat().st_size
        summary = out / "summary.csv"
        found["summary_csv_bytes"] = summary.stat().st_size if summary.is_file() else None
        timing = out / "timing.json"
        if timing.is_file():
            values = json.loads(timing.read_text())
            found["timing_json"] = values
            found["timing_seconds_from_launch"] = {
                key: epoch - run["launched_epoch"]
                for key, epoch in ((key, _epoch(value)) for key, value in values.items())
                if epoch is not None
            }
        else:
            found["timing_json"] = None
            found["timing_seconds_from_launch"] = None
        first = (found["timing_seconds_from_launch"] or {}).get("first_chunk_submitted")
        found["launch_to_first_simulation_seconds"] = first
    if rows != expected:
        fail(name, command, f"{rows} result rows, expected {expected} simulations", run)
    found["rows"] = rows
    return found


def run_variant(name: str, cells: int) -> tuple[dict, str]:
    with tempfile.TemporaryDirectory(prefix=f"grid-scale-{name}-") as folder:
        tmp = Path(folder)
        spec = variant_spec(name, cells, tmp)
        command = shown(spec["command"], tmp)
        run = launch(spec["command"], tmp)
        if run["returncode"] != 0:
            fail(name, command, f"exit status {run['returncode']}", run)
        run.update(check_outputs(name, spec, run, command))
    for key in ("_stdout", "_stderr", "launched_epoch"):
        run.pop(key)
    run["cells"], run["simulations"] = spec["cells"], spec["simulations"]
    return run, command


def git_revision() -> dict:
    """The commit, and the files of the working tree that differ from it (the engine may be mid-change)."""
    describe = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    status = subprocess.run(
        [
            "git",
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--",
            "sweep",
            "hydra_plugins",
            "conf",
            "algorithms",
            "market",
            "bench",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return {
        "describe": describe.stdout.strip() or "unknown",
        "changed_files": [line for line in status.stdout.splitlines() if line.strip()],
    }


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("ray", "hydra-core", "mlflow", "pandas", "pyarrow"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "n/a" if value is None else format(value, spec)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.grid_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cells",
        type=int,
        default=1000,
        help="grid cells (a grid of 20 x 50 at 1000); one_cell's replicates scale with it",
    )
    parser.add_argument(
        "--variants",
        default=",".join(DEFAULT_VARIANTS),
        help=f"comma-separated, from {', '.join(ALL_VARIANTS)} (grid_10k only when named)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "grid_scale.json")
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up run")
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for name in variants:
        if name not in ALL_VARIANTS:
            parser.error(f"unknown variant {name!r}; choose from {', '.join(ALL_VARIANTS)}")
    deadlines, workloads = grid_axes(args.cells)

    report: dict = {
        "benchmark": "bench/grid_scale.py",
        "invocation": " ".join(
            ["python -m bench.grid_scale", *map(shlex.quote, sys.argv[1:] if argv is None else argv)]
        ),
        "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "revision": git_revision(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "packages": versions(),
            "load_average_at_start": list(os.getloadavg()),
        },
        "workload": {
            "cells": args.cells,
            "job.deadline": [deadlines.start, deadlines.stop],
            "job.workload": [workloads.start, workloads.stop, workloads.step],
            "replicates_per_grid_cell": REPLICATES,
            "one_cell_replicates": REPLICATES * args.cells,
            "mechanisms": MECHANISMS,
            "simulations": REPLICATES * args.cells * MECHANISMS,
            "grid_100k": {
                "extra": EXTRA_100K,
                "cells": 100 * args.cells,
                "replicates": 1,
                "simulations": 100 * args.cells * MECHANISMS,
                "tracking": "off",
            },
            "grid_10k": {
                "extra": EXTRA_10K,
                "cells": 10 * args.cells,
                "replicates": REPLICATES_10K,
                "simulations": REPLICATES_10K * 10 * args.cells * MECHANISMS,
            },
        },
        "variants": variants,
        "repeats": args.repeats,
    }
    print(
        f"grid {len(deadlines)} deadlines x {len(workloads)} workloads = {args.cells} cells, "
        f"{REPLICATES * args.cells * MECHANISMS:,} simulations; variants {', '.join(variants)}; "
        f"{args.repeats} repeat(s); load {os.getloadavg()[0]:.2f}",
        flush=True,
    )

    if not args.no_warmup:
        with tempfile.TemporaryDirectory(prefix="grid-scale-warmup-") as folder:
            tmp = Path(folder)
            command = [python(), "-m", "sweep", "replicates=2", "tracking=off", f"hydra.run.dir={tmp}/run"]
            warm = launch(command, tmp)
            if warm["returncode"] != 0:
                fail("warm-up", shown(command, tmp), f"exit status {warm['returncode']}", warm)
            report["warmup"] = {"command": shown(command, tmp), "wall_seconds": warm["wall_seconds"]}
            print(f"warm-up (untimed): {warm['wall_seconds']:.1f} s", flush=True)

    runs: dict[str, list[dict]] = {name: [] for name in variants}
    commands: dict[str, str] = {}
    for repeat in range(args.repeats):
        shift = repeat % len(variants)
        order = variants[shift:] + variants[:shift]
        for position, name in enumerate(order):
            run, command = run_variant(name, args.cells)
            run["repeat"], run["position_in_repeat"] = repeat, position
            runs[name].append(run)
            commands[name] = command
            extra = ""
            if run.get("launch_to_first_simulation_seconds") is not None:
                extra = f", first simulation at {run['launch_to_first_simulation_seconds']:.1f} s"
            print(
                f"repeat {repeat + 1}/{args.repeats}  {name:13s} {run['wall_seconds']:8.2f} s  "
                f"peak RSS {run['ru_maxrss_kib'] / 1024:7.0f} MiB (driver {_fmt((run['driver_vmhwm_kib'] or 0) / 1024, '.0f')})"
                f"  engine {_fmt(run['engine_done_seconds'])} s  load {run['load_average_after'][0]:.2f}{extra}",
                flush=True,
            )

    wall = {name: [r["wall_seconds"] for r in rs] for name, rs in runs.items()}
    median = {name: statistics.median(values) for name, values in wall.items()}
    ratios = {}
    for top, bottom in RATIOS:
        if top in wall and bottom in wall:
            per_repeat = [a / b for a, b in zip(wall[top], wall[bottom])]
            ratios[f"{top}/{bottom}"] = {"per_repeat": per_repeat, "median": statistics.median(per_repeat)}
    report.update(
        {
            "commands": commands,
            "runs": runs,
            "seconds": wall,
            "median_seconds": median,
            "median_ru_maxrss_kib": {
                name: statistics.median(r["ru_maxrss_kib"] for r in rs) for name, rs in runs.items()
            },
            "ratios": ratios,
            "finished_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
    )
    report["machine"]["load_average_at_end"] = list(os.getloadavg())
    if "grid_10k" in runs:
        first = [r.get("launch_to_first_simulation_seconds") for r in runs["grid_10k"]]
        report["grid_10k"] = {
            "median_wall_seconds": median["grid_10k"],
            "driver_peak_rss_kib": [r["driver_vmhwm_kib"] for r in runs["grid_10k"]],
            "ru_maxrss_kib": [r["ru_maxrss_kib"] for r in runs["grid_10k"]],
            "results_parquet_bytes": [r["results_parquet_bytes"] for r in runs["grid_10k"]],
            "summary_csv_bytes": [r["summary_csv_bytes"] for r in runs["grid_10k"]],
            "launch_to_first_simulation_seconds": first,
            "note": None
            if any(v is not None for v in first)
            else "no <sweep dir>/timing.json with a first_chunk_submitted key: the engine does not write it (yet)",
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")

    print(f"\nMedian of {args.repeats} repeat(s); {args.cells} grid cells:")
    print(
        "| variant | cells | simulations | median wall s | all runs (s) | peak RSS MiB (wait4) | driver peak RSS MiB "
        "| engine `Done` s | launch to first chunk s |\n|---|---:|---:|---:|---|---:|---:|---:|---:|"
    )
    for name, rs in runs.items():
        done = [r["engine_done_seconds"] for r in rs if r["engine_done_seconds"] is not None]
        hwm = [r["driver_vmhwm_kib"] for r in rs if r["driver_vmhwm_kib"] is not None]
        first = [
            r["launch_to_first_simulation_seconds"]
            for r in rs
            if r.get("launch_to_first_simulation_seconds") is not None
        ]
        print(
            f"| {name} | {rs[0]['cells']:,} | {rs[0]['simulations']:,} | {median[name]:.1f} | "
            f"{', '.join(f'{t:.1f}' for t in wall[name])} | {statistics.median(r['ru_maxrss_kib'] for r in rs) / 1024:.0f} | "
            f"{_fmt(statistics.median(hwm) / 1024 if hwm else None, '.0f')} | "
            f"{_fmt(statistics.median(done) if done else None)} | "
            f"{_fmt(statistics.median(first) if first else None)} |"
        )
    sized = [name for name, rs in runs.items() if rs[0].get("out_dir_bytes") is not None]
    if sized:
        print(
            "\n| variant | results.parquet MB | output folder MB | entries in the output folder |\n|---|---:|---:|---:|"
        )
        for name in sized:
            last = runs[name][-1]
            print(
                f"| {name} | {last['results_parquet_bytes'] / 1e6:.1f} | {last['out_dir_bytes'] / 1e6:.1f} "
                f"| {last['out_dir_files']:,} |"
            )
    if ratios:
        print("\n| ratio (wall) | median | per repeat |\n|---|---:|---|")
        for name, value in ratios.items():
            print(f"| {name} | {value['median']:.2f} | {', '.join(f'{v:.2f}' for v in value['per_repeat'])} |")
    if "grid_10k" in report:
        g = report["grid_10k"]
        print(
            f"\ngrid_10k, per run: results.parquet {', '.join(f'{b:,}' for b in g['results_parquet_bytes'])} bytes, "
            f"summary.csv {', '.join(f'{b:,}' if b is not None else 'n/a' for b in g['summary_csv_bytes'])} bytes, "
            f"driver peak RSS {', '.join(_fmt(k / 1024 if k else None, '.0f') for k in g['driver_peak_rss_kib'])} MiB, "
            f"launch to first simulation {', '.join(_fmt(v) for v in g['launch_to_first_simulation_seconds'])} s"
            + (f" ({g['note']})" if g["note"] else "")
        )
    print("\nCommands (as run, <tmp> = a fresh temporary folder per run):")
    for name, command in commands.items():
        print(f"- {name}: `{command}`")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
