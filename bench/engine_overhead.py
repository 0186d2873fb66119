"""Engine overhead: the same ~1 ms simulations in a plain loop, through the engine
with 1 and 2 workers (with and without MLflow), and through Ray Tune.

    python -m bench.engine_overhead [--repeats 3] [--replicates 600] [--out bench/results/engine.json]

Each repeat runs every variant once, side by side, so that the medians and ratios
compare runs made under the same machine load. Ray is started once before timing
(its start-up, a few seconds, is reported separately); every engine variant starts
from no actors (the previous pool is closed and its CPUs returned, untimed), so its
time includes starting the actor pool, shipping cells, collecting chunks and writing
Parquet results, as a sweep from the command line does.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

import ray
from hydra import compose, initialize_config_dir

from sweep.api import CONF_DIR, grid_overrides
from sweep.cells import make_cell
from sweep.engine import run_cells
from sweep.schema import RunnerConfig, TrackingConfig
from sweep.task_queue import close_pool, connect
from sweep.worker import SimulationWorker

# A 5-day job (240 half-hour slots): one simulation (replicate x mechanism) takes ~1 ms here.
WORLD = ["job.deadline=240", "job.workload=1920"]
GRID = {"job.n_max": [10, 12, 14, 16], "market.mean_availability": [6.0, 10.0]}


def build_cells(replicates: int):
    cells = []
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for index, overrides in enumerate(grid_overrides(GRID)):
            cfg = compose("config", overrides=WORLD + overrides + [f"replicates={replicates}", "tracking=off"])
            cells.append(make_cell(cfg, overrides, index, str(index)))
    return cells


def plain_loop(cells) -> float:
    worker = SimulationWorker()
    start = time.perf_counter()
    for cell in cells:
        worker.run_chunk(cell.payload(), 0, cell.replicates)
    return time.perf_counter() - start


def settle(timeout: float = 60.0) -> None:
    """Close the engine's actor pool and wait until Ray has every CPU back (not timed)."""
    close_pool()
    total = ray.cluster_resources().get("CPU", 0)
    deadline = time.time() + timeout
    while ray.available_resources().get("CPU", 0) < total and time.time() < deadline:
        time.sleep(0.05)


def engine(cells, workers: int, tracking: TrackingConfig) -> float:
    """The whole engine from a cold pool: actor start, chunks, collection, Parquet, tracking."""
    settle()
    runner = RunnerConfig(num_workers=workers, progress=False)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        run_cells(cells, Path(out), runner, tracking, announce=False)
        return time.perf_counter() - start


def ray_tune(cells) -> float:
    from ray import tune

    payloads = [cell.payload() for cell in cells]

    def trainable(config):
        columns = SimulationWorker().run_chunk(payloads[config["cell"]], 0, cells[config["cell"]].replicates)
        return {"utility_mean": sum(columns["utility"]) / len(columns["utility"])}

    settle()  # Tune's trials need the CPUs the engine's idle actors hold
    with tempfile.TemporaryDirectory() as storage:
        tuner = tune.Tuner(
            trainable,
            param_space={"cell": tune.grid_search(list(range(len(cells))))},
            run_config=tune.RunConfig(storage_path=storage, verbose=0),
        )
        start = time.perf_counter()
        results = tuner.fit()
        elapsed = time.perf_counter() - start
    assert not results.errors, results.errors
    return elapsed


def paired(times: dict[str, list[float]], numerator: str, denominator: str) -> float:
    return statistics.median(a / b for a, b in zip(times[numerator], times[denominator]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--replicates", type=int, default=600)
    parser.add_argument("--out", type=Path, default=Path("bench/results/engine.json"))
    args = parser.parse_args(argv)

    cells = build_cells(args.replicates)
    sims = sum(cell.replicates * len(cell.mechanisms) for cell in cells)
    t0 = time.perf_counter()
    cpus = connect(RunnerConfig(num_workers=2))
    ray_start = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as db_dir:
        sqlite = TrackingConfig(kind="sqlite", uri=f"sqlite:///{db_dir}/bench.db")
        variants = {
            "loop (1 process)": lambda: plain_loop(cells),
            "engine, 1 worker": lambda: engine(cells, 1, TrackingConfig(kind="off")),
            "engine, 2 workers": lambda: engine(cells, 2, TrackingConfig(kind="off")),
            "engine, 2 workers + MLflow SQLite": lambda: engine(cells, 2, sqlite),
            "Ray Tune, grid search (defaults)": lambda: ray_tune(cells),
        }
        engine(cells[:1], 2, sqlite)  # warm-up: imports, SQLite schema creation
        times: dict[str, list[float]] = {name: [] for name in variants}
        names = list(variants)
        for repeat in range(args.repeats):
            # rotate the order so that no variant always runs first or after the same neighbour
            for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
                times[name].append(variants[name]())
                print(f"repeat {repeat + 1}/{args.repeats}  {name:36s} {times[name][-1]:7.2f} s", flush=True)

    median = {name: statistics.median(values) for name, values in times.items()}
    loop = median["loop (1 process)"]
    report = {
        "machine": {"cpus_seen_by_ray": cpus, "python": platform.python_version(), "platform": platform.platform()},
        "workload": {
            "cells": len(cells),
            "simulations": sims,
            "grid": GRID,
            "world": WORLD,
            "ms_per_simulation_in_loop": 1000 * loop / sims,
        },
        "ray_start_seconds": ray_start,
        "seconds": times,
        "median_seconds": median,
        "simulations_per_second": {name: sims / value for name, value in median.items()},
        # medians of the ratios within each repeat: a slow spell of the shared machine hits both sides
        "ratios": {
            "engine 1 worker / loop throughput (goal >= 0.90)": paired(times, "loop (1 process)", "engine, 1 worker"),
            "speed-up 1 -> 2 workers (goal >= 1.8)": paired(times, "engine, 1 worker", "engine, 2 workers"),
            "MLflow SQLite cost (2 workers, time with / without)": paired(
                times, "engine, 2 workers + MLflow SQLite", "engine, 2 workers"
            ),
            "Ray Tune time / engine time (2 workers)": paired(
                times, "Ray Tune, grid search (defaults)", "engine, 2 workers"
            ),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(
        f"\n{len(cells)} cells, {sims:,} simulations of {report['workload']['ms_per_simulation_in_loop']:.2f} ms; "
        f"Ray start {ray_start:.1f} s (not in the times below); median of {args.repeats} repeats:"
    )
    print("| variant | median s | simulations/s | all runs (s) |\n|---|---:|---:|---|")
    for name, value in median.items():
        print(f"| {name} | {value:.2f} | {sims / value:,.0f} | {', '.join(f'{t:.2f}' for t in times[name])} |")
    print("\nMedian of the per-repeat ratios:")
    for name, value in report["ratios"].items():
        print(f"- {name}: {value:.3f}")
    print(f"\nwritten to {args.out}")
    ray.shutdown()


if __name__ == "__main__":
    main()
