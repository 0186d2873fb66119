"""Dispatch: how many chunks per second one driver sends and how many result rows per second it
takes in and writes, with simulations that cost nothing (bench/noop_family.py).

    python -m bench.dispatch [--repeats 2] [--workers 4,8,16,32] [--chunk-sizes 16,256]
                             [--cells 8,256] [--chunks 512] [--tracking off|sqlite]
                             [--out bench/results/dispatch.json | --out -]

Every run goes through the real engine (`sweep.engine.run_cells`, `runner=local`, tracking off
unless `--tracking sqlite`) on cells of the no-op family, built as the launcher builds cells
(`validate_world`, `cell_of_world`), 4 mechanisms a replicate. A run has `--chunks` chunks of
`chunk_size` simulations (one row each) spread evenly over its cells: 512 x 16 = 8,192 rows,
512 x 256 = 131,072 rows. Ray is started once with as many logical CPUs as the largest pool
(`task_queue.connect`); for each pool size the pool is started and warmed by an untimed run, so
the times are the driver's steady state, not actor start-up. Within a pool size every repeat runs
each (chunk size, cells) variant once, in a rotated order; the table shows medians.

Phases are timed by wrapping, in this process only, the functions the engine calls (nothing in
`sweep/` changes): `task_queue.run_chunks` (the queue); the `on_done` callback it is given (every
chunk's columns kept, and a cell's rows built when its last chunk is in); `ray.wait` and
`ray.get` as `task_queue` sees them; `cell_rows` (sweep/results.py), `commit` (a batch of
complete cells into the store, its summary included: `engine.Batches.commit`), `write_sweep` and
`summarize` (sweep/summary.py, for every batch and for each cell MLflow logs). `dispatch` is the
queue's time outside `ray.wait`, `ray.get` and `on_done`: submitting chunks to actors and the
loop's bookkeeping (`on_done`, which holds `cell_rows` and the batches' commits but the last, is
in the JSON). Driver CPU is
`time.process_time()` of this process (its Ray threads included). With `--tracking sqlite` (an
MLflow SQLite store in a temporary folder), `mlflow_cells` is the time of the background thread
that logs each cell's child run and `mlflow_finish` what the driver waits for it at the end (and
the parent run). `--out -` prints the table without writing the JSON.

The machine is shared and has 2 cores: the driver, Ray's raylet and GCS and up to 32 actors share
them, so wall-clock rates are lower bounds of what a driver with a core of its own does; the
driver-CPU columns estimate that case.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import ray

import sweep.engine as engine
import sweep.task_queue as task_queue
import sweep.tracking as tracking
from sweep.cells import cell_of_world
from sweep.engine import run_cells
from sweep.schema import RunnerConfig, TrackingConfig, validate_world
from sweep.task_queue import connect

MECHANISMS = ("A", "B", "C", "D")
PHASES = (
    "queue",
    "wait",
    "get",
    "on_done",
    "cell_rows",
    "commit",
    "write_sweep",
    "summarize",
    "mlflow_cells",
    "mlflow_finish",
)


def build_cells(n_cells: int, replicates: int):
    cells = []
    for index in range(n_cells):
        world = {
            "family": {"name": "noop", "module": "bench.noop_family"},
            "seed": 0,
            "replicates": replicates,
            "mechanisms": list(MECHANISMS),
            "noop": {"cell": index},
        }
        world, spec, mechanisms = validate_world(world)
        cells.append(cell_of_world(world, spec, mechanisms, {"noop.cell": index}, index, str(index)))
    return cells


class Clock:
    """Seconds spent in each wrapped function, and calls, since the last reset."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def reset(self):
        self.seconds.clear()
        self.calls.clear()

    def wrap(self, name, function):
        @functools.wraps(function)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start
                self.calls[name] += 1

        return timed


class TimedRay:
    """The `ray` module as sweep/task_queue.py sees it, with `wait` and `get` timed."""

    def __init__(self, module, clock: Clock):
        self._module = module
        self.wait = clock.wrap("wait", module.wait)
        self.get = clock.wrap("get", module.get)

    def __getattr__(self, name):
        return getattr(self._module, name)


def instrument(clock: Clock) -> None:
    """Wrap the engine's functions by name, in this process (the engine looks them up at call time)."""
    for name in ("cell_rows", "write_sweep", "summarize"):
        setattr(engine, name, clock.wrap(name, getattr(engine, name)))
    engine.Batches.commit = clock.wrap("commit", engine.Batches.commit)
    tracking.MlflowTracker._log_cell = clock.wrap("mlflow_cells", tracking.MlflowTracker._log_cell)  # its thread
    tracking.MlflowTracker.finish = clock.wrap("mlflow_finish", tracking.MlflowTracker.finish)
    task_queue.ray = TimedRay(ray, clock)
    run_chunks = task_queue.run_chunks

    def queue(chunks, payload_refs, runner, workers, on_done):
        return run_chunks(chunks, payload_refs, runner, workers, clock.wrap("on_done", on_done))

    task_queue.run_chunks = clock.wrap("queue", queue)


def one_run(cells, workers: int, chunk_size: int, clock: Clock, store: str | None = None) -> dict:
    """One sweep of ``cells`` into a new folder; MLflow into ``store`` (a SQLite URI) if given."""
    runner = RunnerConfig(num_workers=workers, chunk_size=chunk_size, progress=False)
    track = TrackingConfig(kind="sqlite", uri=store) if store else TrackingConfig(kind="off")
    with tempfile.TemporaryDirectory() as out:
        clock.reset()
        cpu, start = time.process_time(), time.perf_counter()
        frame = run_cells(cells, Path(out), runner, track, announce=False)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert len(frame) == sum(cell.replicates * len(MECHANISMS) for cell in cells)
    s = dict(clock.seconds)
    phases = {name: s.get(name, 0.0) for name in PHASES}
    phases["dispatch"] = phases["queue"] - phases["wait"] - phases["get"] - phases["on_done"]
    # resume checks, chunking, ray.put of the cells, MLflow's parent run
    phases["before_queue"] = wall - phases["queue"] - phases["write_sweep"] - phases["mlflow_finish"]
    return {"wall": wall, "driver_cpu": cpu, "chunks": clock.calls.get("on_done", 0), "phases": phases}


def median_run(runs: list[dict]) -> dict:
    return {
        "wall": statistics.median(r["wall"] for r in runs),
        "driver_cpu": statistics.median(r["driver_cpu"] for r in runs),
        "chunks": runs[0]["chunks"],
        "phases": {name: statistics.median(r["phases"][name] for r in runs) for name in runs[0]["phases"]},
    }


def ints(text: str) -> list[int]:
    """A comma-separated list of integers on the command line (`--workers 4,8`)."""
    return [int(v) for v in text.split(",")]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=ints, default=[4, 8, 16, 32])
    parser.add_argument("--chunk-sizes", type=ints, default=[16, 256])
    parser.add_argument("--cells", type=ints, default=[8, 256])
    parser.add_argument("--chunks", type=int, default=512, help="chunks per run (rows = chunks x chunk size)")
    parser.add_argument("--tracking", choices=("off", "sqlite"), default="off")
    parser.add_argument("--out", default="bench/results/dispatch.json", help="the JSON report; - for none")
    args = parser.parse_args(argv)

    variants = [(chunk, n) for chunk in args.chunk_sizes for n in args.cells]
    per_cell = {}  # replicates per cell: the run's chunks x chunk_size rows, evenly over its cells
    for chunk, n in variants:
        per_cell[(chunk, n)] = args.chunks * chunk // (n * len(MECHANISMS))
        if not per_cell[(chunk, n)]:
            parser.error(f"chunk size {chunk}, {n} cells: {args.chunks} chunks make less than a replicate per cell")
    cell_sets = {v: build_cells(v[1], per_cell[v]) for v in variants}
    clock = Clock()
    t0 = time.perf_counter()
    cpus = connect(RunnerConfig(num_workers=max(args.workers)))
    ray_start = time.perf_counter() - t0
    instrument(clock)
    store_dir = tempfile.TemporaryDirectory()
    store = f"sqlite:///{store_dir.name}/bench.db" if args.tracking == "sqlite" else None
    if store:
        one_run(build_cells(2, 4), 1, 16, clock, store)  # MLflow's imports and schema, not timed

    report_runs = []
    for workers in args.workers:
        t0 = time.perf_counter()
        warm = build_cells(2 * workers, 4)  # 2 chunks of 16 simulations per actor: every actor runs some
        one_run(warm, workers, 16, clock)
        pool_start = time.perf_counter() - t0
        runs: dict[tuple[int, int], list[dict]] = {v: [] for v in variants}
        for repeat in range(args.repeats):
            shift = repeat % len(variants)
            for chunk, n in variants[shift:] + variants[:shift]:
                run = one_run(cell_sets[(chunk, n)], workers, chunk, clock, store)
                runs[(chunk, n)].append(run)
                print(
                    f"workers {workers:2d}  chunk_size {chunk:5d}  cells {n:4d}  repeat {repeat + 1}: "
                    f"{run['chunks']:5d} chunks, {run['wall']:6.2f} s",
                    flush=True,
                )
        for (chunk, n), values in runs.items():
            med = median_run(values)
            sims = n * per_cell[(chunk, n)] * len(MECHANISMS)
            per_chunk = sims / med["chunks"]
            report_runs.append(
                {
                    "workers": workers,
                    "chunk_size": chunk,
                    "cells": n,
                    "replicates_per_cell": per_cell[(chunk, n)],
                    "simulations": sims,
                    "chunks": med["chunks"],
                    "simulations_per_chunk": per_chunk,
                    "pool_start_and_warm_seconds": pool_start,
                    "wall_seconds": [v["wall"] for v in values],
                    "median_wall_seconds": med["wall"],
                    "median_driver_cpu_seconds": med["driver_cpu"],
                    "chunks_per_second": med["chunks"] / med["wall"],
                    "rows_per_second": sims / med["wall"],
                    "driver_cpu_ms_per_chunk": 1000 * med["driver_cpu"] / med["chunks"],
                    "driver_cpu_us_per_row": 1e6 * med["driver_cpu"] / sims,
                    # the same, if the driver had a core of its own and its CPU time were the only limit
                    "cores_busy_at_1ms_driver_cpu_bound": sims / med["driver_cpu"] / 1000,
                    # simulations/s x 1 ms: the cores one driver keeps busy if each simulation took 1 ms
                    "cores_busy_at_1ms": sims / med["wall"] / 1000,
                    "median_phase_seconds": med["phases"],
                }
            )

    report = {
        "command": " ".join(["python -m bench.dispatch", *(argv if argv is not None else sys.argv[1:])]),
        "machine": {
            "os_cpus": os.cpu_count(),
            "ray_logical_cpus": cpus,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "ray": ray.__version__,
        },
        "workload": {
            "family": "bench.noop_family",
            "mechanisms": len(MECHANISMS),
            "chunks_per_run": args.chunks,
            "repeats": args.repeats,
            "in_flight_per_worker": RunnerConfig().in_flight_per_worker,
            "tracking": args.tracking,
        },
        "ray_start_seconds": ray_start,
        "runs": report_runs,
    }
    print_table(report)
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwritten to {args.out}")
    store_dir.cleanup()
    ray.shutdown()


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 3 + "---:|" * (len(header) - 3)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def print_table(report: dict) -> None:
    mlflow = report["workload"]["tracking"] != "off"
    runs = report["runs"]
    print(
        f"\nno-op simulations (one row each), {report['workload']['chunks_per_run']} chunks per run, "
        f"median of {report['workload']['repeats']} run(s), tracking {report['workload']['tracking']}:\n"
    )
    print(
        markdown(
            [
                "workers",
                "chunk_size",
                "cells",
                "rows",
                "chunks",
                "wall s",
                "chunks/s",
                "rows/s",
                "driver CPU ms/chunk",
                "driver CPU us/row",
                "cores busy at 1 ms/sim (wall)",
                "(driver CPU bound)",
            ],
            [
                [
                    str(r["workers"]),
                    str(r["chunk_size"]),
                    str(r["cells"]),
                    f"{r['simulations']:,}",
                    str(r["chunks"]),
                    f"{r['median_wall_seconds']:.2f}",
                    f"{r['chunks_per_second']:,.0f}",
                    f"{r['rows_per_second']:,.0f}",
                    f"{r['driver_cpu_ms_per_chunk']:.2f}",
                    f"{r['driver_cpu_us_per_row']:.1f}",
                    f"{r['cores_busy_at_1ms']:.1f}",
                    f"{r['cores_busy_at_1ms_driver_cpu_bound']:.1f}",
                ]
                for r in runs
            ],
        )
    )
    names = [
        "dispatch",
        "wait",
        "get",
        "cell_rows",
        "commit",
        "write_sweep",
        "summarize",
        "before_queue",
    ] + (["mlflow_cells", "mlflow_finish"] if mlflow else [])
    print("\nphases, seconds (median; commit includes the batches' summarize):\n")
    print(
        markdown(
            ["workers", "chunk_size", "cells", *names],
            [
                [
                    str(r["workers"]),
                    str(r["chunk_size"]),
                    str(r["cells"]),
                    *(f"{r['median_phase_seconds'][name]:.2f}" for name in names),
                ]
                for r in runs
            ],
        )
    )


if __name__ == "__main__":
    main()
