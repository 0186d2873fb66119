"""The simulation worker: runs chunks of replicates of one cell (a Ray actor in the pool).

Plain Python so that the same code runs in a Ray actor, in a plain loop (benchmarks)
and in tests. It caches each cell's prepared world (a loaded trace, ...) by config hash.

A row may carry ``"tables"``: the family's side tables for that replicate and mechanism
(docs/architecture.md, "Family interface"). They are taken out of the row and returned
under ``TABLES_KEY``: table name -> column -> 1-D array, led by ``replicate`` and ``mechanism``.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from .common_env import pin_worker_threads
from .family import REQUIRED_COLUMNS, load_family
from .results import check_table_name, concat_columns, rows_of_cells, rows_of_chunks
from .row_tables import concat
from .seeding import replicate_rng

# Test hook for the "worker killed mid-sweep" test: the first worker process that
# finds this path absent creates it and dies, as a crashed or preempted node would.
FAULT_ENV = "SWEEP_FAULT_KILL_ONCE"
_CACHE_SIZE = 32
ROW_TABLES = "tables"  # the key of a row that holds its side tables
TABLES_KEY = "_tables"  # the key of a chunk's result that holds them (never a results column)
CELL_KEY = "_cell"  # the key of a whole cell's rows, an Arrow table (never a results column)
PACKED_KEY = "_packed"  # the key of a call's whole cells' rows, one Arrow table (``pack``)
PARTS_KEY = "_parts"  # the key of a call's chunks' results, one ``run_chunk`` result each (``run_parts``)
_TABLE_LEADING = ("replicate", "mechanism")


class SimulationWorker:
    def __init__(self, pin_threads: bool = False) -> None:
        """``pin_threads``: this worker is a process of its own (a Ray actor), whose math libraries
        run one thread each (sweep/common_env.py: ``pin_worker_threads``)."""
        if pin_threads:
            pin_worker_threads()
        self._prepared: OrderedDict[str, Any] = OrderedDict()

    def _prepare(self, family, payload: dict) -> Any:
        key = payload["config_hash"]
        if key in self._prepared:
            self._prepared.move_to_end(key)
            return self._prepared[key]
        prepared = family.prepare(payload["world"])
        self._prepared[key] = prepared
        if len(self._prepared) > _CACHE_SIZE:
            self._prepared.popitem(last=False)
        return prepared

    def run_chunk(self, payload: dict, rep_start: int, rep_stop: int, whole: bool = False) -> dict[str, Any]:
        """Simulate replicates [rep_start, rep_stop) of a cell; one row per replicate and mechanism, as columns.

        Side tables, if the family returns any, come under ``TABLES_KEY``. With ``whole`` (the
        chunk is the whole cell) and no side tables, the result is instead ``{CELL_KEY: the
        cell's rows}``, in canonical order as the store keeps them (an Arrow table): the work the
        driver would otherwise do for each cell, which bounds a grid of tiny cells
        (docs/architecture.md, "Task queue").
        """
        columns = self._columns(payload, rep_start, rep_stop)
        if TABLES_KEY not in columns and whole:
            return {CELL_KEY: rows_of_chunks(payload["name"], payload["index"], payload["mechanisms"], [columns])}
        return columns

    def _columns(self, payload: dict, rep_start: int, rep_stop: int) -> dict[str, Any]:
        """The rows of replicates [rep_start, rep_stop) as columns, side tables under ``TABLES_KEY``."""
        _maybe_die()
        family = load_family(payload["module"])
        prepared = self._prepare(family, payload)
        columns: dict[str, Any] = {"replicate": []}
        tables: dict[str, list[dict[str, np.ndarray]]] = {}
        count = 0
        for replicate in range(rep_start, rep_stop):
            rows = family.simulate_replicate(prepared, replicate, replicate_rng(payload["world_hash"], replicate))
            check_rows(rows, payload["mechanisms"], family.name, replicate)
            for row in rows:
                columns["replicate"].append(replicate)
                for key, value in row.items():
                    if key != ROW_TABLES:
                        column = columns.get(key)
                        if column is None:  # a key only some rows report is None (null) in the others
                            column = columns[key] = [None] * count
                        column.append(value)
                count += 1
                for column in columns.values():
                    if len(column) < count:
                        column.append(None)
                side = row.get(ROW_TABLES)
                if side is not None:
                    _add_tables(tables, side, replicate, row.get("mechanism"), family.name)
        if tables:
            columns[TABLES_KEY] = {name: concat_columns(pieces) for name, pieces in tables.items()}
        return columns

    def run_cells(self, calls: list[tuple[dict, int, int]]) -> dict[str, Any]:
        """Several whole small cells in one call, ``(payload, rep_start, rep_stop)`` each: one
        result per cell, as ``run_chunk(..., whole=True)`` gives it, packed (the driver takes them
        apart with ``unpack``): the per-call cost of Ray is paid once for them all, and the
        cells' rows are built as one Arrow table (``results.rows_of_cells``), not one a cell
        (docs/architecture.md, "Task queue")."""
        results: list[dict[str, Any] | None] = []
        whole: list[tuple[dict, dict[str, Any]]] = []
        for payload, start, stop in calls:
            columns = self._columns(payload, start, stop)
            if TABLES_KEY in columns:
                results.append(columns)
            else:
                results.append(None)
                whole.append((payload, columns))
        try:
            combined = rows_of_cells([(p["name"], p["index"], p["mechanisms"], columns) for p, columns in whole])
        except ValueError:  # a column no one column can hold across cells: each cell alone says which
            cells = [
                {CELL_KEY: rows_of_chunks(p["name"], p["index"], p["mechanisms"], [columns])} for p, columns in whole
            ]
            tables = iter(cells)
            return pack([next(tables) if result is None else result for result in results])
        sizes = [len(columns["replicate"]) for _, columns in whole]
        return {PACKED_KEY: combined, "sizes": sizes, "others": results}

    def run_parts(self, spans: list[tuple[int, int, int]], *payloads: dict) -> dict[str, Any]:
        """Several chunks of parts of cells in one call, ``(i, rep_start, rep_stop)`` each for the
        cell of ``payloads[i]`` (top-level arguments, so that Ray hands over the payloads its
        object store holds): ``{PARTS_KEY: one run_chunk result per chunk, in call order,
        "seconds": the worker time they took}``, from which the driver sizes its next calls
        (task_queue.CallSizer)."""
        started = time.perf_counter()
        parts = [self._columns(payloads[i], start, stop) for i, start, stop in spans]
        return {PARTS_KEY: parts, "seconds": time.perf_counter() - started}

    def pid(self) -> int:
        return os.getpid()


def pack(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The results of a call of several cells, the whole cells' rows in one Arrow table: the
    driver unpickles one table a call rather than one a cell (0.3 ms each, profiled on a grid of
    10,000 small cells)."""
    tables = [result[CELL_KEY] for result in results if CELL_KEY in result]
    # one chunk a column: Ray rebuilds every chunk of every column when it unpickles a table
    combined = concat(tables).combine_chunks() if tables else None
    return {
        PACKED_KEY: combined,
        "sizes": [table.num_rows for table in tables],
        "others": [None if CELL_KEY in result else result for result in results],
    }


def unpack(packed: dict[str, Any]) -> list[dict[str, Any]]:
    """``pack``'s results again, one per cell in call order (a whole cell's rows a slice of the table)."""
    combined, sizes, offset = packed[PACKED_KEY], iter(packed["sizes"]), 0
    results = []
    for other in packed["others"]:
        if other is not None:
            results.append(other)
            continue
        size = next(sizes)
        results.append({CELL_KEY: combined.slice(offset, size)})
        offset += size
    return results


def check_rows(rows: Any, mechanisms: tuple[str, ...], family: str, replicate: int) -> None:
    """The contract's promise about rows (docs/architecture.md): one per mechanism, in the
    order of ``mechanism_names``, each with the engine's required columns."""
    if not isinstance(rows, list) or len(rows) != len(mechanisms):
        count = len(rows) if isinstance(rows, list) else type(rows).__name__
        raise ValueError(
            f"family '{family}', replicate {replicate}: simulate_replicate must return a list of "
            f"{len(mechanisms)} rows (one per mechanism), got {count}"
        )
    for expected, row in zip(mechanisms, rows):
        missing = [column for column in REQUIRED_COLUMNS if not isinstance(row, dict) or column not in row]
        if missing:
            raise ValueError(f"family '{family}', replicate {replicate}: a row has no {', '.join(missing)} column")
        if row["mechanism"] != expected:
            raise ValueError(
                f"family '{family}', replicate {replicate}: rows must follow mechanism_names "
                f"(expected {expected!r}, got {row['mechanism']!r})"
            )


def _add_tables(tables: dict, side: Any, replicate: int, mechanism: Any, family: str) -> None:
    """Check one row's side tables and append them, led by ``replicate`` and ``mechanism``."""
    where = f"family '{family}', replicate {replicate}, mechanism {mechanism!r}"
    if not isinstance(side, dict):
        raise ValueError(
            f"{where}: a row's 'tables' must be a dict name -> {{column: 1-D array}}, got {type(side).__name__}"
        )
    for name, table in side.items():
        try:
            check_table_name(name)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if not isinstance(table, dict):
            raise ValueError(
                f"{where}: side table '{name}' must be a dict column -> 1-D array, got {type(table).__name__}"
            )
        piece: dict[str, np.ndarray] = {}
        length = None
        for column, values in table.items():
            if column in _TABLE_LEADING or column in ("cell", "cell_index") or not isinstance(column, str):
                raise ValueError(
                    f"{where}: side table '{name}' has a column named {column!r}, which the engine adds or cannot store"
                )
            try:
                array = np.asarray(values)
            except ValueError as err:  # ragged nested lists
                raise ValueError(
                    f"{where}: column '{column}' of side table '{name}' is not a 1-D array: {err}"
                ) from None
            if array.ndim != 1:
                raise ValueError(
                    f"{where}: column '{column}' of side table '{name}' must be 1-D, got shape {array.shape}"
                )
            if length is None:
                length = len(array)
            elif len(array) != length:
                raise ValueError(
                    f"{where}: the columns of side table '{name}' differ in length ({length} and {len(array)} for '{column}')"
                )
            piece[column] = array
        length = length or 0
        tables.setdefault(name, []).append(
            {
                "replicate": np.full(length, replicate, dtype=np.int64),
                "mechanism": np.full(length, mechanism, dtype=object),
                **piece,
            }
        )


def _maybe_die() -> None:
    marker = os.environ.get(FAULT_ENV)
    if not marker:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os._exit(1)
