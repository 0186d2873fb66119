"""The Fig. 9 experiment of paper 000 end to end: 4 noise settings x 115 mechanisms
(105 AHAP + 7 AHANP + OD-Only, MSU, UP) x 1000 jobs, plus online policy selection (EG).

    python -m bench.fig9 [--replicates 1000] [--repeats 1] [--small-replicates N] [--reading ahead|line]
                         [--profile-replicates 3] [--sweeps-replicates 20] [--baseline REV]
                         [--end-to-end-baseline REV] [--out bench/results/fig9.json]

1. End to end: `python -m sweep -m experiment=spot/fig9 replicates=N tracking=off
   [pool.sigma_reading=READING] hydra.sweep.dir=<tmp>` as a subprocess, `--repeats` times: wall time (interpreter,
   Hydra, Ray start, the 4 cells, Parquet and EG outputs), the engine's own time from
   its "Done:" line, simulations (replicates x mechanisms x cells) and simulations/s
   per core. With N below the paper's 1000 the time for 1000 is extrapolated and
   marked as such: with `--small-replicates M` from a line through the medians at M
   and N (fixed start-up + seconds per replicate x 1000), else wall x 1000 / N.
2. Profile: cProfile of `--profile-replicates` replicates of each cell in this process
   (`family.simulate_replicate`, as a worker runs them): top functions by tottime and
   cumtime, and the shares of the compiled AHAP pool (`AHAPPool.run`, one call per
   world for the 105 AHAP policies), of the AHANP pool, of `simulate` (the other
   mechanisms) and of the rest. Step 2 first runs one untimed replicate, which loads (or, without a cache,
   compiles) the Numba code, as each worker does once.
3. `--baseline REV`: the code of git revision REV (a `git worktree` in a temporary
   directory) against the working tree, side by side: each repeat runs, in a fresh
   process per tree and alternating which goes first, `--baseline-replicates`
   replicates of each of the 4 cells with `family.simulate_replicate` after one
   untimed replicate; reported: seconds per job and cell (median of the repeats), the
   median of the per-repeat ratios, and whether the rows (`repr`) are identical.
4. Label sweeps (`--sweeps-replicates N`, 20 by default, 0: none): the compiled AHAP pool
   (`ahap_batch.AHAPPool`, the 105 AHAP policies) on N worlds of each of the 4 cells (seeds
   0..N-1) under each reading of sigma (`pool.sigma_reading` ahead and line), with its
   default search ("shared") and with the reference path ("reference"): label sweeps
   per world (runs of the label DP `window_kernels.dp_layers`, one serving every window of a
   group, `AHAPPool.sweeps`), the
   compiled pool's seconds per world (rough: one pass, in this process) and whether the
   outcomes are identical.
5. `--end-to-end-baseline REV`: step 1 for REV's tree and the working tree side by side,
   `--repeats` times, alternating which goes first, after one untimed warm-up run in REV's
   tree (its Numba cache); each tree runs its own command (`+sweep=paper_000_fig9` in trees
   older than conf/experiment/). Reported: wall per tree (median) and the median of the
   per-repeat ratios working tree / REV.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
NOISE_KINDS = ("mag_dep_uniform", "fixed_uniform", "mag_dep_heavy", "fixed_heavy")
PAPER_REPLICATES = 1000
DONE = re.compile(
    r"Done: ([\d,]+) cells?(?:\(s\))?, ([\d,]+) simulations? in ([\d.]+) s"
)  # "1 cell", "4 cells", older trees "4 cell(s)"
RAY_UP = re.compile(r"\(([\d,.]+) simulations/s on (\d+) workers?(?: once Ray was up)?\)")


def sweep_command(replicates: int, sweep_dir: str, tree: Path = ROOT, reading: str | None = None) -> list[str]:
    experiment = (
        "experiment=spot/fig9"
        if (tree / "conf" / "experiment" / "spot" / "fig9.yaml").is_file()
        else "+sweep=paper_000_fig9"
    )
    return [
        sys.executable,
        "-m",
        "sweep",
        "-m",
        experiment,
        f"replicates={replicates}",
        "tracking=off",
        *([f"pool.sigma_reading={reading}"] if reading else []),
        f"hydra.sweep.dir={sweep_dir}",
    ]


def end_to_end(replicates: int, tree: Path = ROOT, reading: str | None = None) -> dict:
    """One sweep from the command line, timed from outside."""
    with tempfile.TemporaryDirectory(prefix="fig9-") as tmp:
        command = sweep_command(replicates, tmp, tree, reading)
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=tree, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise SystemExit(f"sweep failed with exit code {proc.returncode}")
        match = DONE.search(proc.stdout + proc.stderr)
        if not match:
            raise SystemExit("no 'Done:' line in the sweep's output")
        outputs = sorted(str(p.relative_to(tmp)) for p in Path(tmp).rglob("*") if p.is_file())
    cells, sims, engine = int(match[1].replace(",", "")), int(match[2].replace(",", "")), float(match[3])
    up = RAY_UP.search(proc.stdout + proc.stderr)
    rate = float(up[1].replace(",", "")) if up else None
    return {
        "command": " ".join(command[1:]),
        "wall_seconds": wall,
        "engine_seconds": engine,
        "simulations_per_second_once_ray_was_up": rate,
        "simulation_seconds_once_ray_was_up": sims / rate if rate else None,
        "cells": cells,
        "simulations": sims,
        "outputs": outputs,
    }


def prepared_cells(reading: str | None = None) -> list:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from algorithms.spot import family

    cells = []
    extra = [f"pool.sigma_reading={reading}"] if reading else []
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base=None):
        for kind in NOISE_KINDS:
            cfg = compose("config", overrides=["experiment=spot/fig9", f"noise.kind={kind}", *extra])
            config = OmegaConf.to_container(cfg, resolve=True)
            config.pop("hydra", None)
            cells.append(family.prepare(config))
    return cells


def run_replicates(cells, replicates: int) -> None:
    from algorithms.spot import family

    for prepared in cells:
        for r in range(replicates):
            family.simulate_replicate(prepared, r, np.random.default_rng(r))


def _rows(stats: pstats.Stats, key: str, limit: int) -> list[dict]:
    stats.sort_stats(key)
    rows = []
    for func in stats.fcn_list[:limit]:
        cc, nc, tt, ct, _ = stats.stats[func]
        filename, line, name = func
        where = f"{os.path.relpath(filename, ROOT) if filename.startswith(str(ROOT)) else filename}:{line}({name})"
        rows.append({"function": where, "calls": nc, "tottime": round(tt, 4), "cumtime": round(ct, 4)})
    return rows


def warm_up(cells) -> None:
    """One replicate of the first cell, untimed: loads (or compiles) the solver's Numba code,
    which a worker does once per process, so that it is not counted as simulation."""
    run_replicates(cells[:1], 1)


def profile(cells, replicates: int, limit: int = 12) -> dict:
    """cProfile of `replicates` replicates of every cell (in-process, as a worker runs them)."""
    import algorithms.spot.window_problem as wp

    warm_up(cells)
    wp._job_tables.cache_clear()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(run_replicates, cells, replicates)
    elapsed = time.perf_counter() - start
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = stats.total_tt

    def cumulative(name: str, module: str) -> tuple[int, float]:
        found = [
            (v[1], v[3]) for (f, _, n), v in stats.stats.items() if n == name and f.endswith(f"spot{os.sep}{module}")
        ]
        return (sum(c for c, _ in found), sum(t for _, t in found)) if found else (0, 0.0)

    pools, pool_time = cumulative("run", "ahap_batch.py")  # AHAPPool.run
    compiled_calls, compiled_time = cumulative("_run_pool", "ahap_batch.py")
    ahanp_pools, ahanp_time = cumulative("run", "ahanp_batch.py")  # AHANPPool.run
    sims, sim_time = cumulative("simulate", "simulation.py")
    return {
        "replicates_per_cell": replicates,
        "wall_seconds_with_profiler": elapsed,
        "profiled_seconds": total,
        "ahap_pool_runs": pools,
        "share_in_AHAPPool.run": pool_time / total,
        "share_in_compiled_pool": compiled_time / total,
        "share_in_AHANPPool.run": ahanp_time / total,
        "simulate_calls": sims,
        "share_in_simulate": sim_time / total,
        "top_tottime": _rows(stats, "tottime", limit),
        "top_cumtime": _rows(stats, "cumulative", limit),
    }


def pool_worlds(prepared, replicates: int) -> list:
    """`replicates` worlds (job, market, forecast) of a cell, drawn as
    `family.simulate_replicate` draws them, from `default_rng(0)`, `default_rng(1)`, ... (not
    the sweep's seeds: a sample of the cell's worlds for counting)."""
    from algorithms.spot import family

    worlds = []
    for r in range(replicates):
        rng = np.random.default_rng(r)
        world = family.draw_market(prepared, rng)
        job = family.draw_job(prepared, rng)
        forecast = family.make_forecast(prepared, world, job, r, rng)
        forecast.price.setflags(write=False)
        forecast.availability.setflags(write=False)
        worlds.append(
            (job, world.window(prepared.forecast.history, job.deadline + prepared.forecast.horizon), forecast)
        )
    return worlds


def label_sweeps(replicates: int) -> dict:
    """Step 4: label sweeps per world of the AHAP pool, shared search and reference path,
    under both readings of sigma (see the module docstring)."""
    from algorithms.spot import family
    from algorithms.spot.ahap_batch import AHAPPool

    report = {"replicates_per_cell": replicates}
    for reading in ("ahead", "line"):
        cells = prepared_cells(reading)
        worlds = [w for prepared in cells for w in pool_worlds(prepared, replicates)]
        base = family._pools(cells[0].mechanisms, cells[0].sigma_reading)[0]
        params = [(int(w), int(v), float(s)) for w, v, s in zip(base.windows, base.commitments, base.thresholds)]
        row, outcomes = {}, {}
        for search in ("shared", "reference"):
            pool = AHAPPool(params, reading, search)
            pool.run(*worlds[0])  # loads the compiled code
            pool.sweeps = pool.worlds = 0
            start = time.perf_counter()
            outcomes[search] = [repr(pool.run(*w)) for w in worlds]
            row[search] = {
                "label_sweeps_per_world": pool.sweeps / pool.worlds,
                "pool_seconds_per_world_rough": (time.perf_counter() - start) / len(worlds),
            }
        row["outcomes_identical"] = outcomes["shared"] == outcomes["reference"]
        report[reading] = row
    return report


SIDE_BY_SIDE = """
import hashlib, os, sys, time
import numpy as np
sys.path.insert(0, os.getcwd())
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from algorithms.spot import family
n = int(sys.argv[1])
cells = []
with initialize_config_dir(config_dir=os.path.abspath("conf"), version_base=None):
    for kind in ("mag_dep_uniform", "fixed_uniform", "mag_dep_heavy", "fixed_heavy"):
        config = OmegaConf.to_container(compose("config", overrides=["experiment=spot/fig9", f"noise.kind={kind}"]),
                                        resolve=True)
        config.pop("hydra", None)
        cells.append(family.prepare(config))
family.simulate_replicate(cells[0], 999, np.random.default_rng(999))  # loads the compiled code
digest = hashlib.sha256()
start = time.perf_counter()
for prepared in cells:
    for r in range(n):
        digest.update(repr(family.simulate_replicate(prepared, r, np.random.default_rng(r))).encode())
print(f"{(time.perf_counter() - start) / (4 * n)!r} {digest.hexdigest()}")
"""


def compare_end_to_end(rev: str, replicates: int, repeats: int, reading: str | None = None) -> dict:
    """Step 1 for REV's tree and the working tree, side by side (alternating the order)."""
    base = Path(tempfile.mkdtemp(prefix="fig9-e2e-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(base), rev], cwd=ROOT, check=True, capture_output=True)
    trees = {f"baseline {rev}": base, "working tree": ROOT}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    try:
        end_to_end(20, base, reading)  # warm-up: REV's Numba cache
        for repeat in range(repeats):
            for name in list(trees) if repeat % 2 == 0 else list(trees)[::-1]:
                walls[name].append(end_to_end(replicates, trees[name], reading)["wall_seconds"])
                print(
                    f"end-to-end repeat {repeat + 1}/{repeats}  {name:24s} {walls[name][-1]:.1f} s "
                    f"(load {os.getloadavg()[0]:.2f})",
                    flush=True,
                )
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True)
    old, new = walls.values()
    return {
        "replicates": replicates,
        "wall_seconds": walls,
        "median_wall_seconds": {name: statistics.median(v) for name, v in walls.items()},
        "ratio (median of per-repeat ratios working tree / baseline)": statistics.median(
            b / a for a, b in zip(old, new)
        ),
    }


def compare_baseline(rev: str, replicates: int, repeats: int) -> dict:
    """Seconds per job and cell with REV's code and with the working tree's, side by side
    (a fresh process per measurement, alternating the order)."""
    base = Path(tempfile.mkdtemp(prefix="fig9-baseline-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(base), rev], cwd=ROOT, check=True, capture_output=True)
    trees = {f"baseline {rev}": base, "working tree": ROOT}
    names = list(trees)
    times: dict[str, list[float]] = {name: [] for name in names}
    digests: dict[str, set] = {name: set() for name in names}
    try:
        for repeat in range(repeats):
            for name in names if repeat % 2 == 0 else names[::-1]:
                out = subprocess.run(
                    [sys.executable, "-c", SIDE_BY_SIDE, str(replicates)],
                    cwd=trees[name],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                times[name].append(float(out[0]))
                digests[name].add(out[1])
                print(
                    f"baseline repeat {repeat + 1}/{repeats}  {name:24s} {times[name][-1]:.4f} s per job and cell "
                    f"(load {os.getloadavg()[0]:.2f})",
                    flush=True,
                )
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True)
    return {
        "replicates_per_cell": replicates,
        "seconds_per_job_and_cell": times,
        "median_seconds_per_job_and_cell": {name: statistics.median(v) for name, v in times.items()},
        "per_repeat_ratios": [a / b for a, b in zip(times[names[0]], times[names[1]])],
        "speedup (median of per-repeat ratios baseline / working tree)": statistics.median(
            a / b for a, b in zip(times[names[0]], times[names[1]])
        ),
        "rows_identical": len(digests[names[0]] | digests[names[1]]) == 1,
    }


def run_end_to_end(args, report: dict, cores: int) -> None:
    """Step 1: the sweep from the command line (see the module docstring)."""
    sizes = [args.replicates] + ([args.small_replicates] if args.small_replicates else [])
    all_runs: dict[int, list[dict]] = {n: [] for n in sizes}
    for repeat in range(args.repeats):
        for n in sizes if repeat % 2 == 0 else sizes[::-1]:
            all_runs[n].append(end_to_end(n, reading=args.reading))
            run = all_runs[n][-1]
            print(
                f"end to end {repeat + 1}/{args.repeats}, {n} replicates: {run['wall_seconds']:.1f} s wall, "
                f"engine {run['engine_seconds']:.1f} s, {run['simulations']:,} simulations, of which "
                f"{run['simulation_seconds_once_ray_was_up'] or float('nan'):.1f} s once Ray was up "
                f"(load {os.getloadavg()[0]:.2f})",
                flush=True,
            )
    runs = all_runs[args.replicates]
    wall = statistics.median(r["wall_seconds"] for r in runs)
    engine = statistics.median(r["engine_seconds"] for r in runs)
    sims = runs[0]["simulations"]
    cells = runs[0]["cells"]
    report.update(
        {
            "command": runs[0]["command"],
            "replicates": args.replicates,
            "cells": cells,
            "mechanisms": sims // (cells * args.replicates),
            "simulations": sims,
            "wall_seconds": [r["wall_seconds"] for r in runs],
            "engine_seconds": [r["engine_seconds"] for r in runs],
            "median_wall_seconds": wall,
            "median_engine_seconds": engine,
            "simulations_per_second": sims / wall,
            "simulations_per_second_per_core": sims / wall / cores,
            "simulations_per_second_per_core_engine_only": sims / engine / cores,
            "outputs": runs[0]["outputs"],
        }
    )
    if args.small_replicates:
        small = statistics.median(r["wall_seconds"] for r in all_runs[args.small_replicates])
        per_replicate = (wall - small) / (args.replicates - args.small_replicates)
        report["small_run"] = {
            "replicates": args.small_replicates,
            "wall_seconds": [r["wall_seconds"] for r in all_runs[args.small_replicates]],
            "engine_seconds": [r["engine_seconds"] for r in all_runs[args.small_replicates]],
            "median_wall_seconds": small,
        }
        report["linear_fit"] = {
            "fixed_seconds": wall - per_replicate * args.replicates,
            "seconds_per_replicate_all_cells": per_replicate,
            "marginal_simulations_per_second_per_core": cells * report["mechanisms"] / per_replicate / cores,
        }
    if args.replicates != PAPER_REPLICATES:
        scale = PAPER_REPLICATES / args.replicates
        if args.small_replicates:
            fit = report["linear_fit"]
            how = (
                f"linear fit through the medians at {args.small_replicates} and {args.replicates} "
                f"replicates: fixed + per-replicate x 1000"
            )
            seconds = fit["fixed_seconds"] + fit["seconds_per_replicate_all_cells"] * PAPER_REPLICATES
        else:
            how = "wall x 1000 / replicates (scales the fixed start-up too: an overestimate)"
            seconds = wall * scale
        report["extrapolated_to_1000_replicates"] = {
            "how": how,
            "wall_seconds": seconds,
            "simulations": int(sims * scale),
        }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--replicates", type=int, default=PAPER_REPLICATES, help="jobs per noise setting (the paper: 1000)"
    )
    parser.add_argument("--repeats", type=int, default=1, help="end-to-end runs (median reported)")
    parser.add_argument(
        "--small-replicates",
        type=int,
        default=None,
        help="also run this many replicates, to fit wall = fixed + per-replicate x N",
    )
    parser.add_argument("--profile-replicates", type=int, default=3, help="replicates per cell profiled (0: none)")
    parser.add_argument(
        "--sweeps-replicates", type=int, default=20, help="worlds per cell for the label sweep count (0: none)"
    )
    parser.add_argument(
        "--reading",
        choices=("ahead", "line"),
        default=None,
        help="steps 1 and 5: add pool.sigma_reading=READING to the sweep (default: the experiment's own)",
    )
    parser.add_argument("--baseline", default=None, help="git revision to compare with, side by side")
    parser.add_argument("--baseline-replicates", type=int, default=10, help="replicates per cell per measurement")
    parser.add_argument("--baseline-repeats", type=int, default=5)
    parser.add_argument(
        "--end-to-end-baseline",
        default=None,
        help="git revision whose end-to-end run is timed side by side with the working tree's",
    )
    parser.add_argument("--out", type=Path, default=Path("bench/results/fig9.json"))
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1

    report: dict = {
        "machine": {
            "cpus": cores,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_at_start": os.getloadavg(),
        }
    }
    if args.end_to_end_baseline:
        report["end_to_end_baseline"] = compare_end_to_end(
            args.end_to_end_baseline, args.replicates, args.repeats, args.reading
        )
    elif args.replicates > 0:
        run_end_to_end(args, report, cores)
    if args.sweeps_replicates:
        report["label_sweeps"] = label_sweeps(args.sweeps_replicates)
    if args.profile_replicates:
        report["profile"] = profile(prepared_cells(), args.profile_replicates)
    if args.baseline:
        report["baseline"] = compare_baseline(args.baseline, args.baseline_replicates, args.baseline_repeats)

    report["machine"]["load_average_at_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))

    cells = len(NOISE_KINDS)
    if "command" in report:
        wall, engine, sims = report["median_wall_seconds"], report["median_engine_seconds"], report["simulations"]
        print(f"\n{report['command']}")
        print(
            f"{report['cells']} cells x {report['mechanisms']} mechanisms x {args.replicates} replicates = "
            f"{sims:,} simulations"
        )
        print(
            f"wall {wall:.1f} s (median of {len(report['wall_seconds'])}; engine {engine:.1f} s): "
            f"{sims / wall:,.0f} simulations/s, {sims / wall / cores:,.0f} per core ({cores} cores); "
            f"engine only {sims / engine / cores:,.0f} per core"
        )
    if "label_sweeps" in report:
        sweeps = report["label_sweeps"]
        for reading in ("ahead", "line"):
            row = sweeps[reading]
            shared, reference = row["shared"], row["reference"]
            print(
                f"label sweeps per world, {reading}: {shared['label_sweeps_per_world']:.1f} "
                f"(reference path {reference['label_sweeps_per_world']:.1f}; {sweeps['replicates_per_cell']} "
                f"worlds x {len(NOISE_KINDS)} cells); compiled pool {shared['pool_seconds_per_world_rough'] * 1e3:.2f} "
                f"ms per world (reference {reference['pool_seconds_per_world_rough'] * 1e3:.2f}, rough); "
                f"outcomes identical: {row['outcomes_identical']}"
            )
    if "linear_fit" in report:
        fit = report["linear_fit"]
        print(
            f"linear fit: {fit['fixed_seconds']:.1f} s fixed + {fit['seconds_per_replicate_all_cells']:.3f} s "
            f"per replicate (all cells): {fit['marginal_simulations_per_second_per_core']:,.0f} "
            f"simulations/s per core at the margin"
        )
    if "extrapolated_to_1000_replicates" in report:
        ext = report["extrapolated_to_1000_replicates"]
        print(f"EXTRAPOLATED to 1000 replicates: {ext['wall_seconds']:.0f} s ({ext['how']})")
    if "profile" in report:
        prof = report["profile"]
        print(
            f"\nprofile of {prof['replicates_per_cell']} replicates x {cells} cells: {prof['profiled_seconds']:.2f} s "
            f"profiled; AHAPPool.run {prof['share_in_AHAPPool.run']:.0%} ({prof['ahap_pool_runs']} calls, compiled "
            f"part {prof['share_in_compiled_pool']:.0%}), AHANPPool.run {prof['share_in_AHANPPool.run']:.0%}, "
            f"simulate {prof['share_in_simulate']:.0%} "
            f"({prof['simulate_calls']} calls)"
        )
        for row in prof["top_tottime"][:8]:
            print(
                f"  tottime {row['tottime']:7.3f}  cumtime {row['cumtime']:7.3f}  {row['calls']:>8}  {row['function']}"
            )
    if "baseline" in report:
        base = report["baseline"]
        print(
            f"\nside by side with {args.baseline}: "
            + ", ".join(f"{k} {v:.4f} s per job and cell" for k, v in base["median_seconds_per_job_and_cell"].items())
            + f"; speed-up {base['speedup (median of per-repeat ratios baseline / working tree)']:.2f}x; "
            f"rows identical: {base['rows_identical']}"
        )
    if "end_to_end_baseline" in report:
        e2e = report["end_to_end_baseline"]
        print(
            f"\nend to end, {e2e['replicates']} replicates, side by side: "
            + ", ".join(f"{k} {v:.1f} s" for k, v in e2e["median_wall_seconds"].items())
            + f" (medians of {args.repeats}); working tree / baseline "
            f"{e2e['ratio (median of per-repeat ratios working tree / baseline)']:.2f}"
        )
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
