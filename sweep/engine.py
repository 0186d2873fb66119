"""Run a list of cells through the Ray task queue into a results dir and MLflow.

Shared by the Hydra launcher (a multirun), the single-run entry point and the
Python API: resume, chunking, progress, writing and tracking all happen here.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from . import cell_outputs, stop_signals
from .cells import Cell
from .cli import counted
from .results import (
    Reused,
    cell_frame,
    cell_tables,
    load_complete_cell,
    load_reusable_replicates,
    side_table_names,
    summarize,
    write_cell,
    write_sweep,
)
from .schema import RunnerConfig, TrackingConfig
from .sweep_dir import reconcile, write_record
from .timeline import Timeline
from .tracking import make_tracker, metric_key
from .worker import CELL_KEY, TABLES_KEY

log = logging.getLogger(__name__)


def make_chunks(cells: Sequence[Cell], chunk_size: int, first: dict[int, int] | None = None):
    """Cut each cell into chunks of whole replicates of about ``chunk_size`` simulations, and
    of at most the family's ``MAX_REPLICATES_PER_CHUNK`` replicates when it sets one (a family
    whose replicate takes seconds, such as a day of auctions, spreads one per call). A cell
    starts at replicate ``first[cell.index]`` (default 0): the ones before are reused."""
    from .task_queue import Chunk

    chunks = []
    for cell in cells:
        per_replicate = max(len(cell.mechanisms), 1)
        step = max(1, chunk_size // per_replicate)
        cap = cell.spec.max_replicates_per_chunk
        if cap:
            step = min(step, cap)
        begin = (first or {}).get(cell.index, 0)
        for start in range(begin, cell.replicates, step):
            stop = min(start + step, cell.replicates)
            whole = start == 0 and stop == cell.replicates  # the worker finishes the cell (sweep/worker.py)
            chunks.append(Chunk(cell.index, start, stop, (stop - start) * per_replicate, whole))
    return chunks


def _check_unique(cells: Sequence[Cell]) -> None:
    seen: dict[str, int] = {}
    for cell in cells:
        if cell.subdir in seen:
            raise ValueError(f"cells {seen[cell.subdir]} and {cell.index} share the output folder '{cell.subdir}'")
        seen[cell.subdir] = cell.index


def run_cells(
    cells: Sequence[Cell],
    out_dir: Path,
    runner: RunnerConfig,
    tracking: TrackingConfig,
    *,
    run_name: str | None = None,
    run_params: dict | None = None,
    announce: bool = True,
    timeline: Timeline | None = None,
    extend: bool = False,
) -> pd.DataFrame:
    """Simulate every cell not already complete in ``out_dir``; return all rows (results.parquet).

    ``timeline`` carries the moments before this call (the command's start, the cells composed);
    without one the clock starts here. A dir that holds another sweep is refused (ConfigError)
    unless ``extend`` adds these cells to it (sweep/sweep_dir.py). SIGINT, SIGTERM and SIGHUP
    stop the run at its next safe point with :class:`stop_signals.Interrupted`.
    """
    with stop_signals.handling():
        return _run_cells(
            cells,
            out_dir,
            runner,
            tracking,
            run_name=run_name,
            run_params=run_params,
            announce=announce,
            timeline=timeline,
            extend=extend,
        )


def _run_cells(cells, out_dir, runner, tracking, *, run_name, run_params, announce, timeline, extend) -> pd.DataFrame:
    stop_signals.check()
    timeline = timeline or Timeline(started=time.time())
    out_dir = Path(out_dir)
    cells = list(cells)
    _check_unique(cells)
    cells = reconcile(out_dir, cells, extend)
    _check_unique(cells)
    cell_dirs = {cell.index: out_dir / cell.subdir for cell in cells}
    frames: dict[int, pd.DataFrame] = {}
    todo: list[Cell] = []
    reused: dict[int, Reused] = {}
    present = set(os.listdir(out_dir)) if out_dir.is_dir() else None  # one listing, not a look per cell
    for cell in cells:
        folder = cell_dirs[cell.index]
        top = Path(cell.subdir).parts[:1]
        found = present is not None and (not top or top[0] in present)
        frame = load_complete_cell(folder, cell) if found else None
        if frame is not None:
            frames[cell.index] = frame
            continue
        todo.append(cell)
        earlier = load_reusable_replicates(folder, cell) if found else None
        if earlier is not None and earlier.replicates > 0:
            reused[cell.index] = earlier
            log.info(
                "cell %s: reusing replicates 0..%d of an earlier run of the same world",
                cell.name,
                earlier.replicates - 1,
            )
    if frames:
        log.info("resuming: %d of %d cells already complete in %s", len(frames), len(cells), out_dir)

    first = {index: earlier.replicates for index, earlier in reused.items()}
    chunks = make_chunks(todo, runner.chunk_size, first)
    # Ray first: a cluster that refuses this driver (ConfigError) is bad input, found before any
    # file or tracking run exists.
    cpus = _connect(runner, sorted({cell.module for cell in cells})) if chunks else 0
    stop_signals.check()
    timeline.mark("ray_ready", once=True)  # the launcher may have started Ray already
    out_dir.mkdir(parents=True, exist_ok=True)
    write_record(out_dir, cells)
    tracker = make_tracker(tracking)
    tracker.set_cells(cells)
    families = list(dict.fromkeys(cell.family for cell in cells))
    tracker.start(out_dir, families, run_name or out_dir.name, run_params or {})
    for cell in cells:
        if tracker.wants_cell() and cell.index in frames:
            tracker.log_cell(cell, cell_dirs[cell.index], summarize(frames[cell.index], [cell]), unless_logged=True)

    total_sims = sum((cell.replicates - first.get(cell.index, 0)) * len(cell.mechanisms) for cell in todo)
    workers, sim_seconds = 0, 0.0
    status = "FAILED"
    try:
        if todo:
            workers, sim_seconds = _simulate(
                todo, chunks, cpus, cell_dirs, frames, runner, tracker, total_sims, reused, timeline
            )
        timeline.mark("simulations_done")
        stop_signals.check()
        results = write_sweep(out_dir, cells, frames, cell_dirs)
        timeline.mark("files_written")
        tables = side_table_names(cell_dirs[cell.index] for cell in cells if cell.index in frames)
        status = "FINISHED"
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    except Exception:
        if stop_signals.requested() is None:
            raise
        # the signal reached Ray's processes too (a process group's Ctrl-C or `timeout`): Ray's
        # errors on the way to the next safe point are the stop, not a failure
        status = "KILLED"
        raise stop_signals.Interrupted(stop_signals.requested()) from None
    finally:
        metrics = {"simulations": float(total_sims), "wall_seconds": timeline.elapsed()}
        if status == "FINISHED":
            metrics["simulation_seconds"] = sim_seconds
            metrics["simulations_per_second"] = total_sims / sim_seconds if sim_seconds > 0 else 0.0
        tracker.finish(
            out_dir,
            status,
            {
                family: {**metrics, **(utility_means(results, cells, family) if status == "FINISHED" else {})}
                for family in families
            },
        )
        timeline.mark("tracking_done")
        timeline.write(out_dir)
    if announce:
        _announce(out_dir, cells, len(todo), results, total_sims, timeline, sim_seconds, workers, tracker, tables)
    return results


def utility_means(results: pd.DataFrame, cells: Sequence[Cell], family: str) -> dict[str, float]:
    """Mean utility per mechanism over the sweep's cells of one family (the parent run's metrics)."""
    indices = [cell.index for cell in cells if cell.family == family]
    rows = results[results["cell_index"].isin(indices)] if len(results) else results
    if not len(rows):
        return {}
    return {
        metric_key("utility_mean", str(mechanism)): float(value)
        for mechanism, value in rows.groupby("mechanism", sort=False)["utility"].mean().items()
    }


def _connect(runner: RunnerConfig, family_modules: list[str]) -> int:
    from .task_queue import connect

    with stop_signals.around_ray_init():
        return connect(runner, family_modules)


def _simulate(
    todo, chunks, cpus, cell_dirs, frames, runner, tracker, total_sims, reused, timeline
) -> tuple[int, float]:
    from .task_queue import pool_size, run_chunks

    by_index = {cell.index: cell for cell in todo}
    parts: dict[int, list] = {cell.index: [] for cell in todo}
    table_parts: dict[int, list] = {cell.index: [] for cell in todo}
    for index, earlier in reused.items():
        parts[index].append({column: earlier.frame[column].to_numpy() for column in earlier.frame.columns})
        table_parts[index].append({name: {c: t[c].to_numpy() for c in t.columns} for name, t in earlier.tables.items()})
    remaining = {cell.index: 0 for cell in todo}
    for chunk in chunks:
        remaining[chunk.cell] += 1
    bar = tqdm(total=total_sims, unit="sim", desc=f"cells 0/{len(todo)}", disable=not runner.progress, smoothing=0.1)
    done_cells = 0

    def finish(index: int, whole: dict | None = None) -> None:
        nonlocal done_cells
        cell = by_index[index]
        frame = whole["frame"] if whole else cell_frame(cell, parts.pop(index))
        tables = cell_tables(cell, table_parts.pop(index))
        outputs = cell_outputs.compute(cell, frame)
        clash = sorted(set(tables) & set(outputs.get("tables", {})))
        if clash:
            raise ValueError(
                f"cell {cell.name}: side table(s) {', '.join(clash)} have the name of a table of the "
                f"family's cell_outputs (both would be <name>.parquet in {cell_dirs[cell.index]})"
            )
        extra = cell_outputs.write(cell_dirs[cell.index], outputs)
        write_cell(
            cell_dirs[cell.index],
            cell,
            frame,
            {"metrics": extra} if extra else None,
            tables,
            files=whole["files"] if whole else None,
        )
        frames[cell.index] = frame
        if tracker.wants_cell():  # the summary only for a cell that gets a child run
            tracker.log_cell(cell, cell_dirs[cell.index], summarize(frame, [cell]))
        done_cells += 1
        bar.set_description(f"cells {done_cells}/{len(todo)}")

    def on_done(chunk, columns) -> None:
        if CELL_KEY in columns:  # the worker built the whole cell's frame and files
            parts.pop(chunk.cell)
            bar.update(chunk.simulations)
            finish(chunk.cell, columns[CELL_KEY])
            return
        side = columns.pop(TABLES_KEY, None)  # the family's side tables: never results columns
        if side:
            table_parts[chunk.cell].append(side)
        parts[chunk.cell].append(columns)
        remaining[chunk.cell] -= 1
        bar.update(chunk.simulations)
        if remaining[chunk.cell] == 0:
            finish(chunk.cell)

    try:
        for index in [index for index, count in remaining.items() if count == 0]:
            finish(index)  # every replicate asked for was reused
        if not chunks:
            return 0, 0.0
        pool_started = time.perf_counter()
        payload_refs = Payloads({cell.index: cell for cell in todo if remaining.get(cell.index)}, remaining)
        workers = pool_size(runner, cpus, len(chunks))
        timeline.mark("first_chunk_submitted")
        run_chunks(chunks, payload_refs, runner, workers, on_done)
    finally:
        bar.close()
    return workers, time.perf_counter() - pool_started


class Payloads(dict):
    """What each chunk's call sends: a cell of one chunk sends its payload with the call; a
    cell of several puts it in Ray's object store once, when its first chunk goes out (putting
    every cell's payload before the first chunk took 1 ms a cell: 10 s for 10,000 cells)."""

    def __init__(self, cells: dict, chunks_left: dict[int, int]):
        super().__init__()
        self._cells = cells
        self._chunks = dict(chunks_left)

    def __missing__(self, index: int):
        import ray

        payload = self._cells[index].payload()
        if self._chunks.get(index, 0) <= 1:
            return payload
        self[index] = ray.put(payload)
        return self[index]


def _rate(per_second: float) -> str:
    """Simulations per second as people read them: 12,345 or 0.039 (a day of auctions takes seconds)."""
    return f"{per_second:,.0f}" if per_second >= 10 else f"{per_second:.2g}"


def _announce(
    out_dir, cells, simulated_cells, results, total_sims, timeline, sim_seconds, workers, tracker, tables=()
) -> None:
    skipped = len(cells) - simulated_cells
    rate = (
        f"; simulating {sim_seconds:.1f} s ({_rate(total_sims / sim_seconds)} simulations/s on "
        f"{counted(workers, 'worker')})"
        if total_sims and sim_seconds > 0
        else ""
    )
    phases = [
        (label, timeline.between(first, last))
        for label, first, last in (
            ("before the first simulation (start-up, composing, Ray)", "command_started", "first_chunk_submitted"),
            ("writing files", "simulations_done", "files_written"),
            ("finishing tracking", "files_written", "tracking_done"),
        )
    ]
    shown_phases = "".join(
        f"; {label} {seconds:.1f} s" for label, seconds in phases if seconds is not None and seconds >= 0.05
    )
    means = results.groupby("mechanism", sort=False)["utility"].mean() if len(results) else pd.Series(dtype=float)
    shown = means if len(means) <= 8 else means.sort_values(ascending=False).head(5)
    more = f" (the best 5 of {len(means)} mechanisms)" if len(means) > 8 else ""
    lines = [
        f"Done: {counted(len(cells), 'cell')}, {counted(total_sims, 'simulation')} in {timeline.elapsed():.1f} s"
        f"{rate}{shown_phases}"
        + (f"; {counted(skipped, 'cell')} {'was' if skipped == 1 else 'were'} already complete" if skipped else ""),
        f"  mean utility over all cells{more}: " + ", ".join(f"{name} {value:.2f}" for name, value in shown.items()),
        f"  results (one row per simulation): {out_dir / 'results.parquet'}",
        f"  summary (per cell and mechanism): {out_dir / 'summary.csv'}",
        *(f"  {name} (the family's side table, all cells): {out_dir / f'{name}.parquet'}" for name in tables),
        f"  {tracker.describe()}",
    ]
    print("\n".join(lines), flush=True)
