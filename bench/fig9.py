"""The Fig. 9 experiment of paper 000 end to end: 4 noise settings x 115 mechanisms
(105 AHAP + 7 AHANP + OD-Only, MSU, UP) x 1000 jobs, plus online policy selection (EG).

    python -m bench.fig9 [--replicates 1000] [--repeats 1] [--small-replicates N]
                         [--profile-replicates 3] [--baseline REV] [--out bench/results/fig9.json]

1. End to end: `python -m sweep -m +sweep=paper_000_fig9 replicates=N tracking=off
   hydra.sweep.dir=<tmp>` as a subprocess, `--repeats` times: wall time (interpreter,
   Hydra, Ray start, the 4 cells, Parquet and EG outputs), the engine's own time from
   its "Done:" line, simulations (replicates x mechanisms x cells) and simulations/s
   per core. With N below the paper's 1000 the time for 1000 is extrapolated and
   marked as such: with `--small-replicates M` from a line through the medians at M
   and N (fixed start-up + seconds per replicate x 1000), else wall x 1000 / N.
2. Profile: cProfile of `--profile-replicates` replicates of each cell in this process
   (`family.simulate_replicate`, as a worker runs them): top functions by tottime and
   cumtime, and the share of `solve_window`. Steps 2 and 3 first run one untimed replicate,
   which loads (or, without a cache, compiles) the solver's Numba code, as each worker
   does once.
3. `--baseline REV`: the window solver of git revision REV against the working tree's,
   side by side in this process (the old module is loaded from `git show` and patched
   into `WindowSolver`), alternating the order each repeat: median seconds per
   replicate and the median of the per-repeat ratios.
"""
from __future__ import annotations

import argparse
import cProfile
import importlib.util
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
DONE = re.compile(r"Done: (\d+) cell\(s\), ([\d,]+) simulations in ([\d.]+) s")


def sweep_command(replicates: int, sweep_dir: str) -> list[str]:
    return [sys.executable, "-m", "sweep", "-m", "+sweep=paper_000_fig9", f"replicates={replicates}",
            "tracking=off", f"hydra.sweep.dir={sweep_dir}"]


def end_to_end(replicates: int) -> dict:
    """One sweep from the command line, timed from outside."""
    with tempfile.TemporaryDirectory(prefix="fig9-") as tmp:
        command = sweep_command(replicates, tmp)
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise SystemExit(f"sweep failed with exit code {proc.returncode}")
        match = DONE.search(proc.stdout + proc.stderr)
        if not match:
            raise SystemExit("no 'Done:' line in the sweep's output")
        outputs = sorted(str(p.relative_to(tmp)) for p in Path(tmp).rglob("*") if p.is_file())
    cells, sims, engine = int(match[1]), int(match[2].replace(",", "")), float(match[3])
    return {"command": " ".join(command[1:]), "wall_seconds": wall, "engine_seconds": engine,
            "cells": cells, "simulations": sims, "outputs": outputs}


def prepared_cells() -> list:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from algorithms.spot import family

    cells = []
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base=None):
        for kind in NOISE_KINDS:
            cfg = compose("config", overrides=["+sweep=paper_000_fig9", f"noise.kind={kind}"])
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
        found = [(v[1], v[3]) for (f, _, n), v in stats.stats.items()
                 if n == name and f.endswith(f"spot{os.sep}{module}")]
        return (sum(c for c, _ in found), sum(t for _, t in found)) if found else (0, 0.0)

    solves, solve_time = cumulative("solve_window", "window_problem.py")
    memo_calls, memo_time = cumulative("solve", "window_problem.py")  # WindowSolver.solve
    sims, sim_time = cumulative("simulate", "simulation.py")
    return {
        "replicates_per_cell": replicates,
        "wall_seconds_with_profiler": elapsed,
        "profiled_seconds": total,
        "window_solves": solves,
        "window_solver_calls": memo_calls,
        "share_in_solve_window": solve_time / total,
        "share_in_WindowSolver.solve": memo_time / total,
        "share_in_simulate": sim_time / total,
        "top_tottime": _rows(stats, "tottime", limit),
        "top_cumtime": _rows(stats, "cumulative", limit),
    }


def load_baseline(rev: str):
    source = subprocess.run(["git", "show", f"{rev}:algorithms/spot/window_problem.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="fig9-baseline-")) / "window_problem_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("window_problem_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def compare_baseline(cells, rev: str, replicates: int, repeats: int) -> dict:
    """Seconds per replicate with REV's solve_window and with the working tree's, side by side."""
    import algorithms.spot.window_problem as wp

    solvers = {f"baseline {rev}": load_baseline(rev).solve_window, "working tree": wp.solve_window}
    warm_up(cells)
    names = list(solvers)
    times: dict[str, list[float]] = {name: [] for name in names}
    identical = True
    try:
        for repeat in range(repeats):
            rows = {}
            for name in names if repeat % 2 == 0 else names[::-1]:
                wp.solve_window = solvers[name]
                wp._job_tables.cache_clear()
                from algorithms.spot import family
                start = time.perf_counter()
                rows[name] = [family.simulate_replicate(p, r, np.random.default_rng(r))
                              for p in cells for r in range(replicates)]
                times[name].append((time.perf_counter() - start) / (replicates * len(cells)))
                print(f"baseline repeat {repeat + 1}/{repeats}  {name:24s} {times[name][-1]:.4f} s/replicate", flush=True)
            identical &= repr(rows[names[0]]) == repr(rows[names[1]])
    finally:
        wp.solve_window = solvers["working tree"]
    return {
        "replicates_per_cell": replicates,
        "seconds_per_replicate": times,
        "median_seconds_per_replicate": {name: statistics.median(v) for name, v in times.items()},
        "speedup (median of per-repeat ratios baseline / working tree)":
            statistics.median(a / b for a, b in zip(times[names[0]], times[names[1]])),
        "rows_identical": identical,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=PAPER_REPLICATES,
                        help="jobs per noise setting (the paper: 1000)")
    parser.add_argument("--repeats", type=int, default=1, help="end-to-end runs (median reported)")
    parser.add_argument("--small-replicates", type=int, default=None,
                        help="also run this many replicates, to fit wall = fixed + per-replicate x N")
    parser.add_argument("--profile-replicates", type=int, default=3, help="replicates per cell profiled (0: none)")
    parser.add_argument("--baseline", default=None, help="git revision whose window solver to compare with")
    parser.add_argument("--baseline-replicates", type=int, default=3)
    parser.add_argument("--baseline-repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("bench/results/fig9.json"))
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1

    sizes = [args.replicates] + ([args.small_replicates] if args.small_replicates else [])
    all_runs: dict[int, list[dict]] = {n: [] for n in sizes}
    for repeat in range(args.repeats):
        for n in sizes if repeat % 2 == 0 else sizes[::-1]:
            all_runs[n].append(end_to_end(n))
            run = all_runs[n][-1]
            print(f"end to end {repeat + 1}/{args.repeats}, {n} replicates: {run['wall_seconds']:.1f} s wall, "
                  f"engine {run['engine_seconds']:.1f} s, {run['simulations']:,} simulations", flush=True)
    runs = all_runs[args.replicates]
    wall = statistics.median(r["wall_seconds"] for r in runs)
    engine = statistics.median(r["engine_seconds"] for r in runs)
    sims = runs[0]["simulations"]
    cells = runs[0]["cells"]
    report = {
        "machine": {"cpus": cores, "python": platform.python_version(), "platform": platform.platform(),
                    "load_average_at_end": os.getloadavg()},
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
    if args.small_replicates:
        small = statistics.median(r["wall_seconds"] for r in all_runs[args.small_replicates])
        per_replicate = (wall - small) / (args.replicates - args.small_replicates)
        report["small_run"] = {"replicates": args.small_replicates,
                               "wall_seconds": [r["wall_seconds"] for r in all_runs[args.small_replicates]],
                               "engine_seconds": [r["engine_seconds"] for r in all_runs[args.small_replicates]],
                               "median_wall_seconds": small}
        report["linear_fit"] = {"fixed_seconds": wall - per_replicate * args.replicates,
                                "seconds_per_replicate_all_cells": per_replicate,
                                "marginal_simulations_per_second_per_core":
                                    cells * report["mechanisms"] / per_replicate / cores}
    if args.replicates != PAPER_REPLICATES:
        scale = PAPER_REPLICATES / args.replicates
        if args.small_replicates:
            fit = report["linear_fit"]
            how = (f"linear fit through the medians at {args.small_replicates} and {args.replicates} "
                   f"replicates: fixed + per-replicate x 1000")
            seconds = fit["fixed_seconds"] + fit["seconds_per_replicate_all_cells"] * PAPER_REPLICATES
        else:
            how = "wall x 1000 / replicates (scales the fixed start-up too: an overestimate)"
            seconds = wall * scale
        report["extrapolated_to_1000_replicates"] = {"how": how, "wall_seconds": seconds,
                                                     "simulations": int(sims * scale)}

    if args.profile_replicates:
        prepared = prepared_cells()
        report["profile"] = profile(prepared, args.profile_replicates)
        if args.baseline:
            report["baseline"] = compare_baseline(prepared, args.baseline, args.baseline_replicates,
                                                  args.baseline_repeats)
    elif args.baseline:
        report["baseline"] = compare_baseline(prepared_cells(), args.baseline, args.baseline_replicates,
                                              args.baseline_repeats)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))

    print(f"\n{report['command']}")
    print(f"{cells} cells x {report['mechanisms']} mechanisms x {args.replicates} replicates = {sims:,} simulations")
    print(f"wall {wall:.1f} s (median of {len(runs)}; engine {engine:.1f} s): {sims / wall:,.0f} simulations/s, "
          f"{sims / wall / cores:,.0f} per core ({cores} cores); engine only {sims / engine / cores:,.0f} per core")
    if "linear_fit" in report:
        fit = report["linear_fit"]
        print(f"linear fit: {fit['fixed_seconds']:.1f} s fixed + {fit['seconds_per_replicate_all_cells']:.3f} s "
              f"per replicate (all cells): {fit['marginal_simulations_per_second_per_core']:,.0f} "
              f"simulations/s per core at the margin")
    if "extrapolated_to_1000_replicates" in report:
        ext = report["extrapolated_to_1000_replicates"]
        print(f"EXTRAPOLATED to 1000 replicates: {ext['wall_seconds']:.0f} s ({ext['how']})")
    if "profile" in report:
        prof = report["profile"]
        print(f"\nprofile of {prof['replicates_per_cell']} replicates x {cells} cells: {prof['profiled_seconds']:.1f} s "
              f"profiled, {prof['window_solves']} window solves ({prof['window_solver_calls']} solver calls); "
              f"solve_window {prof['share_in_solve_window']:.0%}, WindowSolver.solve "
              f"{prof['share_in_WindowSolver.solve']:.0%}, simulate {prof['share_in_simulate']:.0%}")
        for row in prof["top_tottime"][:8]:
            print(f"  tottime {row['tottime']:7.3f}  cumtime {row['cumtime']:7.3f}  {row['calls']:>8}  {row['function']}")
    if "baseline" in report:
        base = report["baseline"]
        print(f"\nwindow solver vs {args.baseline}: " + ", ".join(
            f"{k} {v:.4f} s/replicate" for k, v in base["median_seconds_per_replicate"].items())
            + f"; speed-up {base['speedup (median of per-repeat ratios baseline / working tree)']:.2f}x; "
            f"rows identical: {base['rows_identical']}")
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
