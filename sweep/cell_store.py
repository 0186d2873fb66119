"""The complete cells of a sweep, committed in batches (docs/architecture.md, "Results and resume").

A sweep dir keeps its cells in ``store/``, a few files per batch of cells rather than a
folder per cell, so that a grid of 100,000 small cells is a few hundred files:

- ``rows-NNNNN.parquet``: the batch's rows (each cell's rows in canonical order, cells by index);
- ``summary-NNNNN.parquet``: its rows of ``summary.csv`` (one per cell and mechanism);
- ``table-<name>-NNNNN.parquet``: its rows of the family's side table ``<name>``;
- ``cells-NNNNN.parquet``, written last, which commits the batch: one row per cell with its
  name, overrides, hashes, replicates, row counts, cell-output metrics, resolved config (JSON)
  and the files of its cell outputs (tables, series, figures) as bytes.

Every file is written to a temporary name and renamed. A cell listed by a later batch replaces
the earlier one (more replicates of the same world); a batch whose parts are missing or short
is ignored, and its cells are simulated again. Files of a batch that was never committed (the
driver was killed) are removed by the next run.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .cells import Cell
from .row_tables import concat

STORE_DIR = "store"
_BATCH = re.compile(r"(cells|rows|summary|table-[A-Za-z_][A-Za-z0-9_]*)-(\d{5,})\.parquet\Z")
_INDEX_COLUMNS = (
    "cell_index",
    "name",
    "params",
    "config_hash",
    "world_hash",
    "replicates",
    "rows",
    "tables",
    "metrics",
)
# rows of one window of the sweep's files: their memory, not the grid's, bounds the driver's
WINDOW_ROWS = 50_000


@dataclass(frozen=True)
class Entry:
    """A complete cell as the store records it (without its config and files, read on demand)."""

    index: int
    name: str
    params: dict[str, Any]
    config_hash: str
    world_hash: str
    replicates: int
    rows: int
    batch: int
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"rows": n, "columns": [...]}
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class CompleteCell:
    """A cell just simulated, waiting for its batch: the cell, its rows as an Arrow table (with
    ``cell`` and ``cell_index``), side tables, the files of its cell outputs and their metrics.
    A batch may hold its cells' rows joined (``engine.Batches``): ``rows`` is then None and
    ``row_count`` says how many."""

    cell: Cell
    rows: pa.Table | None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    row_count: int = -1

    def __post_init__(self) -> None:
        if self.row_count < 0 and self.rows is not None:
            self.row_count = self.rows.num_rows

    @property
    def index(self) -> int:
        return self.cell.index

    def entry(self, batch: int, params_json: str) -> Entry:
        """The cell's index entry in ``batch``; ``params_json`` is ``_json(cell.params)``, the
        index's text of them (its values as they read back)."""
        cell = self.cell
        return Entry(
            index=cell.index,
            name=cell.name,
            params=_as_read_back(cell.params, params_json),
            config_hash=cell.config_hash,
            world_hash=cell.world_hash,
            replicates=cell.replicates,
            rows=self.row_count,
            batch=batch,
            tables=_table_meta(self.tables),
            metrics=dict(self.metrics),
        )


def _as_read_back(params: dict[str, Any], text: str) -> dict[str, Any]:
    """``json.loads(text)``, ``text`` being ``params`` as JSON: a copy where every value reads back
    as it is (no lists, tuples or other objects)."""
    if all(type(value) in _SCALARS and type(key) is str for key, value in params.items()):
        return dict(params)
    return json.loads(text)


_SCALARS = (str, int, float, bool, type(None))


def part_name(kind: str, batch: int) -> str:
    return f"{kind}-{batch:05d}.parquet"


def _write_table(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        pq.write_table(table, tmp, compression="zstd", row_group_size=WINDOW_ROWS // 4)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _json(value: Any) -> str:
    if not value and isinstance(value, dict):
        return "{}"  # most cells' tables and metrics
    return json.dumps(value, separators=(",", ":"), default=str)


class CellStore:
    """The store of one sweep dir: what is committed (``entries``) and the next batch."""

    def __init__(self, out_dir: Path):
        self.folder = Path(out_dir) / STORE_DIR
        self.entries: dict[int, Entry] = {}
        self.batches: list[int] = []
        self._read()

    # reading -------------------------------------------------------------------------------

    def _files(self) -> dict[int, dict[str, Path]]:
        found: dict[int, dict[str, Path]] = {}
        if self.folder.is_dir():
            for path in self.folder.iterdir():
                match = _BATCH.match(path.name)
                if match:
                    found.setdefault(int(match.group(2)), {})[match.group(1)] = path
        return found

    def _read(self) -> None:
        for batch, parts in sorted(self._files().items()):
            if "cells" not in parts:
                continue
            try:
                index = pq.read_table(parts["cells"], columns=list(_INDEX_COLUMNS)).to_pylist()
                entries = [
                    Entry(
                        index=int(row["cell_index"]),
                        name=row["name"],
                        params=json.loads(row["params"]),
                        config_hash=row["config_hash"],
                        world_hash=row["world_hash"],
                        replicates=int(row["replicates"]),
                        rows=int(row["rows"]),
                        batch=batch,
                        tables=json.loads(row["tables"]),
                        metrics=json.loads(row["metrics"]),
                    )
                    for row in index
                ]
                if not self._intact(parts, entries):
                    continue
            except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
                continue
            self.batches.append(batch)
            for entry in entries:
                self.entries[entry.index] = entry

    @staticmethod
    def _intact(parts: dict[str, Path], entries: list[Entry]) -> bool:
        """Every part the index implies is there with its row count."""
        expected = {"rows": sum(entry.rows for entry in entries)}
        for entry in entries:
            for name, table in entry.tables.items():
                expected[f"table-{name}"] = expected.get(f"table-{name}", 0) + int(table["rows"])
        for kind, rows in expected.items():
            if kind not in parts:
                if rows:
                    return False
                continue
            if pq.ParquetFile(parts[kind]).metadata.num_rows != rows:
                return False
        return "summary" in parts or not expected["rows"]

    def complete(self, config_hash: str, index: int) -> bool:
        entry = self.entries.get(index)
        return entry is not None and entry.config_hash == config_hash

    def _path(self, kind: str, batch: int) -> Path:
        return self.folder / part_name(kind, batch)

    def _select(self, kind: str, batch: int, indices: Sequence[int], columns: list[str] | None = None) -> pa.Table:
        low, high = min(indices), max(indices)
        table = pq.read_table(
            self._path(kind, batch),
            columns=columns,
            filters=[("cell_index", ">=", low), ("cell_index", "<=", high)],
        )
        if len(indices) < high - low + 1:
            table = table.filter(pc.is_in(table["cell_index"], pa.array(indices, type=pa.int64())))
        return table

    def rows_table_of(self, entry: Entry) -> pa.Table:
        return self._select("rows", entry.batch, [entry.index])

    def rows_of(self, entry: Entry) -> pd.DataFrame:
        return self.rows_table_of(entry).to_pandas()

    def summary_of(self, entry: Entry) -> pd.DataFrame:
        return self._select("summary", entry.batch, [entry.index]).to_pandas()

    def tables_of(self, entry: Entry) -> dict[str, pd.DataFrame]:
        """The cell's side tables, with the columns the cell itself had."""
        return {
            name: self._select(f"table-{name}", entry.batch, [entry.index], list(table["columns"])).to_pandas()
            for name, table in entry.tables.items()
        }

    def _index_row(self, entry: Entry, columns: list[str]) -> dict[str, Any]:
        return self._select("cells", entry.batch, [entry.index], ["cell_index", *columns]).to_pylist()[0]

    def config_of(self, entry: Entry) -> dict[str, Any]:
        return json.loads(self._index_row(entry, ["config"])["config"])

    def files_of(self, entry: Entry) -> dict[str, bytes]:
        """The files of the cell's outputs (tables, series, figures), by file name."""
        return dict(self._index_row(entry, ["files"])["files"] or [])

    def configs(self) -> dict[int, dict[str, Any]]:
        """Every complete cell's resolved config, by cell index."""
        configs: dict[int, dict[str, Any]] = {}
        for batch in self.batches:
            index = pq.read_table(self._path("cells", batch), columns=["cell_index", "config"])
            for cell_index, text in zip(index["cell_index"].to_pylist(), index["config"].to_pylist()):
                entry = self.entries.get(cell_index)
                if entry is not None and entry.batch == batch:
                    configs[cell_index] = json.loads(text)
        return dict(sorted(configs.items()))

    def table_names(self) -> list[str]:
        return sorted({name for entry in self.entries.values() for name in entry.tables})

    def windows(self, kind: str, entries: Iterable[Entry] | None = None) -> Iterator[pa.Table]:
        """The live rows of every batch's ``kind`` part (``rows``, ``summary``, ``table-<name>``), in
        cell order (within a cell as stored), a window of about ``WINDOW_ROWS`` rows at a time."""
        live = sorted(entries if entries is not None else self.entries.values(), key=lambda entry: entry.index)
        table_name = kind[len("table-") :] if kind.startswith("table-") else None

        def size(entry: Entry) -> int:
            if table_name is not None:
                return int(entry.tables.get(table_name, {}).get("rows", 0))
            return entry.rows

        window: list[Entry] = []
        rows = 0
        for entry in live:
            if table_name is not None and table_name not in entry.tables:
                continue
            window.append(entry)
            rows += size(entry)
            if rows >= WINDOW_ROWS:
                yield self._window(kind, window)
                window, rows = [], 0
        if window:
            yield self._window(kind, window)

    def _window(self, kind: str, window: list[Entry]) -> pa.Table:
        by_batch: dict[int, list[int]] = {}
        for entry in window:
            by_batch.setdefault(entry.batch, []).append(entry.index)
        pieces = [self._select(kind, batch, indices) for batch, indices in sorted(by_batch.items())]
        table = concat(pieces)
        if len(pieces) > 1:  # a stable sort: each cell's rows keep their order
            table = table.take(pc.sort_indices(table, [("cell_index", "ascending")]))
        return table

    def schema(self, kind: str) -> pa.Schema | None:
        """The schema of every batch's ``kind`` part, unified (a column some batches lack is null there)."""
        schemas = [
            pq.read_schema(self._path(kind, batch)) for batch in self.batches if self._path(kind, batch).exists()
        ]
        if not schemas:
            return None
        return pa.unify_schemas(schemas, promote_options="permissive").remove_metadata()

    # writing -------------------------------------------------------------------------------

    def open_for_writing(self) -> None:
        """Create the folder and remove the files of batches that were never committed."""
        self.folder.mkdir(parents=True, exist_ok=True)
        committed = set(self.batches)
        for batch, parts in self._files().items():
            if batch not in committed:
                for path in parts.values():
                    path.unlink(missing_ok=True)
        for path in self.folder.glob(".*.tmp"):
            path.unlink(missing_ok=True)

    def commit(self, cells: Sequence[CompleteCell], summary: pd.DataFrame, rows: pa.Table | None = None) -> None:
        """Write one batch: its parts, then its index, which marks its cells complete. ``cells``,
        ``summary`` (their rows of summary.csv) and ``rows`` (their rows, else each cell's own) in
        cell order."""
        if not cells:
            return
        if any(a.index >= b.index for a, b in zip(cells, cells[1:])):
            raise ValueError("a batch's cells must come in cell order")
        batch = max(self._files(), default=-1) + 1
        if rows is None:
            each = [cell.rows for cell in cells]
            rows = concat(each)
        _write_table(self._path("rows", batch), rows)
        _write_table(self._path("summary", batch), pa.Table.from_pandas(summary, preserve_index=False))
        for name in sorted({name for cell in cells for name in cell.tables}):
            frames = [cell.tables[name] for cell in cells if name in cell.tables]
            _write_table(
                self._path(f"table-{name}", batch),
                pa.Table.from_pandas(pd.concat(frames, ignore_index=True), preserve_index=False),
            )
        params = [_json(cell.cell.params) for cell in cells]
        entries = [cell.entry(batch, text) for cell, text in zip(cells, params)]
        index = pa.table(
            {
                "cell_index": pa.array([entry.index for entry in entries], type=pa.int64()),
                "name": [entry.name for entry in entries],
                "params": params,
                "config_hash": [entry.config_hash for entry in entries],
                "world_hash": [entry.world_hash for entry in entries],
                "replicates": pa.array([entry.replicates for entry in entries], type=pa.int64()),
                "rows": pa.array([entry.rows for entry in entries], type=pa.int64()),
                "tables": [_json(entry.tables) for entry in entries],
                "metrics": [_json(entry.metrics) for entry in entries],
                "config": [_json(cell.cell.world) for cell in cells],
                "files": pa.array([list(cell.files.items()) for cell in cells], type=pa.map_(pa.string(), pa.binary())),
            }
        )
        _write_table(self._path("cells", batch), index)
        self.batches.append(batch)
        self.entries.update((entry.index, entry) for entry in entries)


def _table_meta(tables: dict[str, pd.DataFrame]) -> dict[str, dict[str, Any]]:
    return {name: {"rows": len(table), "columns": [str(c) for c in table.columns]} for name, table in tables.items()}


def parquet_bytes(frame: pd.DataFrame, index: bool | None = None) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=index)
    return buffer.getvalue()
