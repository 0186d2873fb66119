"""Run a list of cells through the Ray task queue into a results dir and MLflow.

Shared by the Hydra launcher (a multirun), the single-run entry point and the
Python API: resume, chunking, progress, writing and tracking all happen here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from . import cell_outputs, stop_signals
from .cell_store import CellStore, CompleteCell
from .cells import Cell
from .cli import counted
from .results import (
    RESULTS,
    Reused,
    Totals,
    cell_files,
    cell_rows,
    cell_tables,
    load_reusable_replicates,
    stored_cell_files,
    write_sweep,
)
from .row_tables import concat
from .schema import RunnerConfig, TrackingConfig
from .summary import summarize
from .sweep_dir import reconcile, write_record
from .timeline import Timeline
from .tracking import make_tracker, metric_key
from .worker import CELL_KEY, TABLES_KEY

if TYPE_CHECKING:
    from .head_start import HeadStart

log = logging.getLogger(__name__)


def make_chunks(cells: Sequence[Cell], chunk_size: int, first: dict[int, int] | None = None):
    """Cut each cell into chunks of whole replicates of about ``chunk_size`` simulations, and
    of at most the family's ``MAX_REPLICATES_PER_CHUNK`` replicates when it sets one (a family
    whose replicate takes seconds, such as a day of auctions, spreads one per call). A cell
    starts at replicate ``first[cell.index]`` (default 0): the ones before are reused."""
    from .task_queue import Chunk

    chunks = []
    first = first or {}
    for cell in cells:
        per_replicate = max(len(cell.mechanisms), 1)
        step = max(1, chunk_size // per_replicate)
        cap = cell.spec.max_replicates_per_chunk
        if cap:
            step = min(step, cap)
        begin, replicates = first.get(cell.index, 0), cell.replicates
        if begin == 0 and replicates <= step:  # one chunk: the worker finishes the cell (sweep/worker.py)
            chunks.append(Chunk(cell.index, 0, replicates, replicates * per_replicate, True))
            continue
        for start in range(begin, replicates, step):
            stop = min(start + step, replicates)
            chunks.append(
                Chunk(cell.index, start, stop, (stop - start) * per_replicate, start == 0 and stop == replicates)
            )
    return chunks


def _check_unique(cells: Sequence[Cell]) -> None:
    if len({cell.index for cell in cells}) == len(cells):
        return
    seen: dict[int, str] = {}
    for cell in cells:
        if cell.index in seen:
            raise ValueError(f"cells {seen[cell.index]} and {cell.name} share the index {cell.index}")
        seen[cell.index] = cell.name


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
    return_results: bool = True,
    early: HeadStart | None = None,
) -> pd.DataFrame | None:
    """Simulate every cell not already complete in ``out_dir``; return all rows (results.parquet,
    read back unless ``return_results`` is false: a grid of 100,000 cells need not hold them).

    ``timeline`` carries the moments before this call (the command's start, the cells composed);
    without one the clock starts here. A dir that holds another sweep is refused (ConfigError)
    unless ``extend`` adds these cells to it (sweep/sweep_dir.py). SIGINT, SIGTERM and SIGHUP
    stop the run at its next safe point with :class:`stop_signals.Interrupted`. ``early`` holds
    cells simulated before this call (sweep/head_start.py): a cell still to do takes its result
    instead of running again.
    """
    with stop_signals.handling():
        _run_cells(
            cells,
            out_dir,
            runner,
            tracking,
            run_name=run_name,
            run_params=run_params,
            announce=announce,
            timeline=timeline,
            extend=extend,
            early=early,
        )
    return pd.read_parquet(Path(out_dir) / RESULTS) if return_results else None


def _run_cells(cells, out_dir, runner, tracking, *, run_name, run_params, announce, timeline, extend, early) -> None:
    stop_signals.check()
    timeline = timeline or Timeline(started=time.time())
    out_dir = Path(out_dir)
    cells = list(cells)
    _check_unique(cells)
    cells = reconcile(out_dir, cells, extend)
    _check_unique(cells)
    store = CellStore(out_dir)
    todo: list[Cell] = []
    reused: dict[int, Reused] = {}
    complete = 0
    for cell in cells:
        if store.complete(cell.config_hash, cell.index):
            complete += 1
            continue
        todo.append(cell)
        earlier = load_reusable_replicates(store, cell)
        if earlier is not None and earlier.replicates > 0:
            reused[cell.index] = earlier
            log.info(
                "cell %s: reusing replicates 0..%d of an earlier run of the same world",
                cell.name,
                earlier.replicates - 1,
            )
    if complete:
        log.info("resuming: %d of %d cells already complete in %s", complete, len(cells), out_dir)

    first = {index: earlier.replicates for index, earlier in reused.items()}
    chunks = make_chunks(todo, runner.chunk_size, first)
    # Ray first: a cluster that refuses this driver (ConfigError) is bad input, found before any
    # file or tracking run exists.
    cpus = _connect(runner, sorted({cell.module for cell in cells})) if chunks else 0
    stop_signals.check()
    timeline.mark("ray_ready", once=True)  # the launcher may have started Ray already
    out_dir.mkdir(parents=True, exist_ok=True)
    write_record(out_dir, cells)
    store.open_for_writing()
    tracker = make_tracker(tracking)
    tracker.set_cells(cells)
    families = list(dict.fromkeys(cell.family for cell in cells))
    tracker.start(out_dir, families, run_name or out_dir.name, run_params or {})
    for cell in cells:
        if not tracker.wants_cell():
            break
        entry = store.entries.get(cell.index)
        if entry is not None and entry.config_hash == cell.config_hash:
            tracker.log_cell(
                cell, stored_cell_files(store, entry), store.summary_of(entry), entry.metrics, unless_logged=True
            )

    total_sims = sum((cell.replicates - first.get(cell.index, 0)) * len(cell.mechanisms) for cell in todo)
    workers, sim_seconds = 0, 0.0
    status = "FAILED"
    totals, tables = Totals({}), []
    try:
        if todo:
            batches = Batches(store, timeline)
            try:
                workers, sim_seconds = _simulate(
                    todo, chunks, cpus, batches, runner, tracker, total_sims, reused, timeline, early
                )
            finally:
                batches.commit()  # the complete cells, also when stopped or failed
        timeline.mark("simulations_done")
        stop_signals.check()
        totals, tables = write_sweep(out_dir, cells, store)
        timeline.mark("files_written")
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
                family: {**metrics, **(utility_means(totals, family) if status == "FINISHED" else {})}
                for family in families
            },
        )
        timeline.mark("tracking_done")
        timeline.write(out_dir)
    if announce:
        _announce(out_dir, cells, len(todo), totals, total_sims, timeline, sim_seconds, workers, tracker, tables)


class Batches:
    """Complete cells wait here for their batch of the store (sweep/cell_store.py), committed
    when they hold ``MAX_ROWS`` rows or the oldest has waited ``max(MIN_SECONDS, FRACTION x
    the sweep's time so far)``: a long sweep writes a few hundred batches at most, and a driver
    killed outright (SIGKILL) loses at most that share of its work. A stop signal or a failure
    commits the waiting cells first. The waiting cells' rows are joined into one table every
    ``JOIN_CELLS`` cells: a small cell's rows are a slice of its call's table, which costs about
    7 KB of Arrow's memory (33,000 cells of 3 rows waited for a batch of 100,000 rows)."""

    MAX_ROWS = 100_000
    MIN_SECONDS = 0.5
    FRACTION = 0.05
    JOIN_CELLS = 2_000

    def __init__(self, store: CellStore, timeline: Timeline):
        self.store = store
        self.timeline = timeline
        self.waiting: list[CompleteCell] = []
        self.rows = 0
        self.since = time.monotonic()
        self._joined: list[pa.Table] = []  # the rows of the waiting cells, in arrival order
        self._unjoined = 0

    def add(self, complete: CompleteCell) -> None:
        if not self.waiting:
            self.since = time.monotonic()
        self.waiting.append(complete)
        self.rows += complete.row_count
        self._unjoined += 1
        if self._unjoined >= self.JOIN_CELLS:
            self._join()
        waited = time.monotonic() - self.since
        if self.rows >= self.MAX_ROWS or waited >= max(self.MIN_SECONDS, self.FRACTION * self.timeline.elapsed()):
            self.commit()

    def _join(self) -> None:
        cells = self.waiting[len(self.waiting) - self._unjoined :]
        self._joined.append(concat([cell.rows for cell in cells]).combine_chunks())
        for cell in cells:
            cell.rows = None
        self._unjoined = 0

    def commit(self) -> None:
        if not self.waiting:
            return
        if self._unjoined:
            self._join()
        rows = concat(self._joined)
        if any(a.index > b.index for a, b in zip(self.waiting, self.waiting[1:])):
            rows = rows.take(
                pc.sort_indices(rows, [("cell_index", "ascending")])
            )  # stable: a cell's rows keep their order
            self.waiting.sort(key=lambda cell: cell.index)
        summary = summarize(rows.to_pandas(), [complete.cell for complete in self.waiting], params=False)
        self.store.commit(self.waiting, summary, rows)
        self.waiting, self.rows, self._joined = [], 0, []


def utility_means(totals: Totals, family: str) -> dict[str, float]:
    """Mean utility per mechanism over the sweep's cells of one family (the parent run's metrics)."""
    return {metric_key("utility_mean", str(mechanism)): value for mechanism, value in totals.means(family).items()}


def _connect(runner: RunnerConfig, family_modules: list[str]) -> int:
    from .task_queue import connect

    with stop_signals.around_ray_init():
        return connect(runner, family_modules)


def _simulate(todo, chunks, cpus, batches, runner, tracker, total_sims, reused, timeline, early) -> tuple[int, float]:
    from .task_queue import pool_size, run_chunks

    by_index = {cell.index: cell for cell in todo}
    parts: dict[int, list] = {cell.index: [] for cell in todo}
    table_parts: dict[int, list] = {cell.index: [] for cell in todo}
    for index, earlier in reused.items():
        parts[index].append(earlier.columns)
        table_parts[index].append({name: {c: t[c].to_numpy() for c in t.columns} for name, t in earlier.tables.items()})
    remaining = {cell.index: 0 for cell in todo}
    for chunk in chunks:
        remaining[chunk.cell] += 1
    bar = tqdm(total=total_sims, unit="sim", desc=f"cells 0/{len(todo)}", disable=not runner.progress, smoothing=0.1)
    done_cells = 0

    def finish(index: int, rows: pa.Table | None = None) -> None:
        nonlocal done_cells
        cell = by_index[index]
        frame = None
        if rows is None:
            rows = cell_rows(cell, parts.pop(index))
        tables = cell_tables(cell, table_parts.pop(index))
        files, metrics = {}, {}
        if cell_outputs.wanted(cell):
            frame = rows.to_pandas() if frame is None else frame
            outputs = cell_outputs.compute(cell, frame)
            clash = sorted(set(tables) & set(outputs.get("tables", {})))
            if clash:
                raise ValueError(
                    f"cell {cell.name}: side table(s) {', '.join(clash)} have the name of a table of the "
                    f"family's cell_outputs (both would be the cell's <name>.parquet)"
                )
            files, metrics = cell_outputs.render(outputs)
        if tracker.wants_cell():  # the summary and files only for a cell that gets a child run
            frame = rows.to_pandas() if frame is None else frame
            tracker.log_cell(cell, cell_files(rows, cell.world, tables, files), summarize(frame, [cell]), metrics)
        batches.add(CompleteCell(cell, rows, tables, files, metrics))
        done_cells += 1
        bar.set_description(f"cells {done_cells}/{len(todo)}", refresh=False)  # drawn with the next update

    def on_done(chunk, columns) -> None:
        if CELL_KEY in columns:  # the worker built the whole cell's rows
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

    # the cells the head start ran: their results are taken in while the pool runs the others
    ran = [c for c in chunks if early is not None and early.ran(c.cell, c, by_index[c.cell].config_hash)]
    feed = iter(ran)

    def take_in_early(count: int = 200) -> bool:
        """Take in up to ``count`` of the head start's results; False once none is left."""
        for _ in range(count):
            chunk = next(feed, None)
            if chunk is None:
                return False
            on_done(chunk, early.result(chunk.cell, chunk, by_index[chunk.cell].config_hash))
        return True

    try:
        for index in [index for index, count in remaining.items() if count == 0]:
            finish(index)  # every replicate asked for was reused
        early_seconds = early.seconds if early is not None and ran else 0.0
        ran_cells = {chunk.cell for chunk in ran}
        chunks = [chunk for chunk in chunks if chunk.cell not in ran_cells]
        if not chunks:
            while take_in_early():
                pass
            return (early.workers if ran else 0), early_seconds
        pool_started = time.perf_counter() - early_seconds
        payload_refs = Payloads(
            {c.index: c for c in todo if remaining.get(c.index) and c.index not in ran_cells}, remaining
        )
        workers = pool_size(runner, cpus, len(chunks))
        timeline.mark("first_chunk_submitted", once=True)  # the head start's, if any
        run_chunks(chunks, payload_refs, runner, workers, on_done, **({"idle": take_in_early} if ran else {}))
        while take_in_early():  # what the pool's run left
            pass
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
    out_dir, cells, simulated_cells, totals, total_sims, timeline, sim_seconds, workers, tracker, tables=()
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
    means = pd.Series(totals.means(), dtype=float)
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
