"""Ray Tune on the grid of bench/grid_scale.py: one trial per cell, Tune's default settings.

    python -m bench.grid_tune --cells 1000 [--replicates 20] --storage DIR [--summary FILE]

The grid is `job.deadline` x `job.workload` (`bench.grid_scale.grid_axes`), given to
`tune.Tuner` as two `tune.grid_search` axes. The trainable is a function that runs one
cell as the engine would: it composes the cell's config with `hydra.compose`
(`job.deadline=D job.workload=W replicates=R tracking=off`), builds it with
`sweep.cells.make_cell`, simulates its replicates with
`SimulationWorker().run_chunk(cell.payload(), 0, replicates)` and reports the mean utility.

Tune's scheduling defaults are kept (FIFO, one CPU per trial, a new actor per trial:
`reuse_actors=False`, its default); only its console output is quieted
(`RunConfig(verbose=0)`) and its storage put in `--storage`. Ray is started the way the
engine starts a local instance (`address="local"`, no dashboard, one CPU per core), so
that the comparison with `python -m sweep` is about Tune, not about `ray.init` options,
and so that it never joins another Ray instance running on the machine.

Exits non-zero if a trial fails or the number of trials or simulations is not the grid's.
`--summary` gets a JSON record (trials, simulations, seconds, mean utility).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

REPLICATES = 20


def run_cell(config: dict) -> None:
    """Tune's function trainable: one cell of the grid, composed, built and simulated here."""
    from hydra import compose, initialize_config_dir
    from ray import tune

    from sweep.api import CONF_DIR
    from sweep.cells import make_cell
    from sweep.worker import SimulationWorker

    overrides = [
        f"job.deadline={config['job.deadline']}",
        f"job.workload={config['job.workload']}",
        f"replicates={config['replicates']}",
        "tracking=off",
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    cell = make_cell(cfg, overrides, 0, "cell")
    columns = SimulationWorker().run_chunk(cell.payload(), 0, cell.replicates)
    utility = columns["utility"]
    tune.report({"utility_mean": sum(utility) / len(utility), "simulations": len(utility)})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.grid_tune", description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--replicates", type=int, default=REPLICATES)
    parser.add_argument("--storage", type=Path, required=True, help="Tune's storage_path (a fresh folder)")
    parser.add_argument("--summary", type=Path, default=None, help="write a JSON record here")
    args = parser.parse_args(argv)

    from bench.grid_scale import grid_axes

    deadlines, workloads = grid_axes(args.cells)
    started = time.perf_counter()
    import ray
    from ray import tune

    ray.init(address="local", include_dashboard=False, logging_level=logging.WARNING, num_cpus=os.cpu_count() or 1)
    ray_start = time.perf_counter() - started
    tuner = tune.Tuner(
        run_cell,
        param_space={
            "job.deadline": tune.grid_search(list(deadlines)),
            "job.workload": tune.grid_search(list(workloads)),
            "replicates": args.replicates,
        },
        run_config=tune.RunConfig(name="grid_scale", storage_path=str(args.storage.resolve()), verbose=0),
    )
    fit_started = time.perf_counter()
    results = tuner.fit()
    fit_seconds = time.perf_counter() - fit_started
    errors = [str(err) for err in results.errors]
    frame = results.get_dataframe()
    simulations = int(frame["simulations"].sum()) if "simulations" in frame else 0
    summary = {
        "trials": len(results),
        "errors": errors,
        "simulations": simulations,
        "utility_mean_of_cells": float(frame["utility_mean"].mean()) if "utility_mean" in frame else None,
        "ray_start_seconds": ray_start,
        "fit_seconds": fit_seconds,
    }
    if args.summary is not None:
        args.summary.write_text(json.dumps(summary, indent=2))
    print(
        f"Ray Tune: {summary['trials']} trials, {simulations:,} simulations in {fit_seconds:.1f} s "
        f"(Ray start {ray_start:.1f} s before)",
        flush=True,
    )
    ray.shutdown()
    expected = len(deadlines) * len(workloads)
    if errors or summary["trials"] != expected:
        sys.stderr.write(
            f"Error: {len(errors)} failed trial(s) of {summary['trials']} (expected {expected}):\n"
            + "\n".join(errors[:5])
            + "\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
