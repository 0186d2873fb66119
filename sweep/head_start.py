"""Simulating the first cells of a grid while the launcher still composes the rest
(docs/architecture.md, "Launcher").

The launcher checks every cell before anything is written, and composing a grid of small cells
takes longer than starting Ray (0.2 ms a cell: 20 s for 100,000 cells), so the actors would wait
for it. A :class:`HeadStart` gives them, round by round, the whole small cells (one chunk each)
composed so far, and keeps what they return in memory, up to ``MAX_ROWS`` rows; ``run_cells``
(``early=``) sends the other cells to the pool and takes those results in while it runs them, as
if the pool had just returned them.
Nothing is written and no run is tracked before every cell is checked: a bad cell still exits
with nothing written, and the head start's work is dropped with the process. A cell's rows do not
depend on when or where it ran (sweep/seeding.py), so the results are the same with it or without.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from . import stop_signals
from .cells import Cell
from .row_tables import concat
from .schema import RunnerConfig
from .task_queue import Chunk, SweepFailed, run_chunks
from .timeline import Timeline
from .worker import CELL_KEY

log = logging.getLogger(__name__)


class HeadStart:
    """Results of whole small cells simulated before the sweep starts, by cell index."""

    MAX_ROWS = 1_000_000  # rows held at most: then the rest waits for the sweep
    BLOCK_CELLS = 2_000  # kept cells' rows are joined into one table this many at a time

    def __init__(self, runner: RunnerConfig, workers: int):
        self.runner = runner
        self.workers = workers
        self.simulations = 0
        self.seconds = 0.0
        self.rows = 0
        self.stopped = False
        # cell index -> (chunk, config hash, the result, or where its rows are in ``_blocks``)
        self._kept: dict[int, tuple[Chunk, str, dict[str, Any] | tuple[int, int, int]]] = {}
        self._hashes: dict[int, str] = {}
        self._blocks: list[pa.Table] = []
        self._pending: list[tuple[int, pa.Table]] = []

    def __len__(self) -> int:
        return len(self._kept)

    def ran(self, index: int, chunk: Chunk, config_hash: str) -> bool:
        """Whether ``chunk`` of the cell ``index`` ran here with that config."""
        found = self._kept.get(index)
        return found is not None and found[0] == chunk and found[1] == config_hash

    def result(self, index: int, chunk: Chunk, config_hash: str) -> dict[str, Any] | None:
        """What the pool returned for ``chunk`` of the cell ``index`` with that config, if it ran."""
        if not self.ran(index, chunk, config_hash):
            return None
        self._join()  # where its rows are once joined (nothing left to join once run() returned)
        kept = self._kept[index][2]
        if isinstance(kept, dict):
            return kept
        block, offset, size = kept
        return {CELL_KEY: self._blocks[block].slice(offset, size)}

    def run(self, cells: Sequence[Cell]) -> None:
        """Simulate the cells of ``cells`` that are one whole chunk each, until done or full. A
        failure (a simulation raising, workers dying) ends the head start: the sweep reruns those
        cells and reports it as it would have."""
        from .engine import make_chunks

        if self.stopped:
            return
        chunks = [chunk for chunk in make_chunks(cells, self.runner.chunk_size) if chunk.whole]
        if not chunks:
            return
        payloads = {cell.index: cell.payload() for cell in cells}
        self._hashes = {cell.index: cell.config_hash for cell in cells}
        started = time.perf_counter()
        try:
            run_chunks(chunks, payloads, self.runner, self.workers, self._keep)
        except (SweepFailed, RuntimeError, OSError) as err:
            log.debug("head start stopped: %s", err)
            self.stopped = True
        finally:
            self.seconds += time.perf_counter() - started
            self._join()

    def _keep(self, chunk: Chunk, result: dict[str, Any]) -> None:
        self.simulations += chunk.simulations
        rows = result.get(CELL_KEY)
        if rows is None:  # side tables: kept as the worker returned them
            self._kept[chunk.cell] = (chunk, self._hashes[chunk.cell], result)
            self.rows += len(result["replicate"])
        else:  # a slice of its call's table costs about 7 KB: 1,000,000 of them would be 7 GB
            self._kept[chunk.cell] = (chunk, self._hashes[chunk.cell], (len(self._blocks), 0, 0))
            self._pending.append((chunk.cell, rows))
            self.rows += rows.num_rows
            if len(self._pending) >= self.BLOCK_CELLS:
                self._join()
        if self.rows >= self.MAX_ROWS:
            self.stopped = True

    def _join(self) -> None:
        if not self._pending:
            return
        block = concat([rows for _, rows in self._pending]).combine_chunks()
        offset = 0
        for index, rows in self._pending:
            chunk, config_hash, _ = self._kept[index]
            self._kept[index] = (chunk, config_hash, (len(self._blocks), offset, rows.num_rows))
            offset += rows.num_rows
        self._blocks.append(block)
        self._pending = []


def run_while_composing(
    head: HeadStart,
    composed: list[Cell],
    composing,
    runs_here: Callable[[Cell], bool] = lambda cell: True,
    timeline: Timeline | None = None,
    round_cells: int = 500,
    round_seconds: float = 1.0,
) -> None:
    """Feed ``head`` the cells the composing thread appends to ``composed`` until it is done (the
    future ``composing``) or the head start is full: a round takes what is ready once there are
    ``round_cells`` cells or ``round_seconds`` have passed since the last one (composing may be
    slow), and no more rows than the head start has room for. A cell for which ``runs_here`` is
    false (a family whose code this Ray was not given) waits for the sweep."""
    taken = 0
    last = time.monotonic()
    while not composing.done() and not head.stopped:
        stop_signals.check()
        waiting = len(composed) - taken
        if waiting < round_cells and (waiting == 0 or time.monotonic() - last < round_seconds):
            time.sleep(0.05)
            continue
        ready, room = [], head.MAX_ROWS - head.rows
        for cell in composed[taken:]:
            room -= cell.replicates * len(cell.mechanisms)
            if room < 0:
                head.stopped = True
                break
            ready.append(cell)
        taken += len(ready)
        if timeline is not None:
            timeline.mark("first_chunk_submitted", once=True)
        head.run([cell for cell in ready if runs_here(cell)])
        last = time.monotonic()
