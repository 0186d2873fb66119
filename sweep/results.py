"""Results on disk, the source of truth (docs/architecture.md, "Results and resume").

Complete cells are committed in batches to the sweep dir's store (``sweep/cell_store.py``).
Per sweep, written from the store a window of rows at a time: ``results.parquet`` (all
cells), ``summary.csv`` (one row per cell and mechanism: mean, std and 95% CI of utility
and the family's summary columns, its rates, and the cell's overrides) and one
``<name>.parquet`` per side table (all cells). Every file is written to a temporary name
and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from .cell_store import CellStore, Entry, parquet_bytes
from .cells import Cell
from .csv_text import write_csv

CELL_TABLE = "cell.parquet"
CELL_CONFIG = "config.yaml"
RESULTS = "results.parquet"
SUMMARY = "summary.csv"
ID_COLUMNS = ("cell", "cell_index", "replicate", "mechanism")
# Side tables (docs/architecture.md, "Family interface"): ``<name>.parquet`` per sweep (and among
# a cell's files in MLflow). The names of the engine's own files (``series`` is cell_outputs.SERIES_FILE) are taken.
RESERVED_TABLE_NAMES = ("cell", "results", "summary", "series")
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: 10x faster for thousands of cells
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def atomic_write(path: Path, write) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file onto ``path``."""
    path = Path(path)
    if not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))


def cell_rows(cell: Cell, chunks: Iterable[dict[str, Any]]) -> pa.Table:
    """One cell's rows in a canonical order (replicate, then mechanism order), whatever the completion order."""
    return rows_of_chunks(cell.name, cell.index, cell.mechanisms, chunks)


def rows_of_chunks(name: str, index: int, mechanisms: Iterable[str], chunks: Iterable[dict[str, Any]]) -> pa.Table:
    """``cell_rows`` from the cell's name, index and mechanisms (a worker finishing a cell has no
    Cell): an Arrow table led by ``cell`` and ``cell_index``, each column typed by pyarrow from its
    values (a value a row leaves out is null), built without pandas (a grid of 100,000 small cells
    spent half its workers' time building a DataFrame per cell)."""
    chunks = list(chunks)
    lengths = [len(chunk["replicate"]) for chunk in chunks]
    rows = sum(lengths)
    try:
        columns = _typed_columns(chunks, lengths)
    except ValueError as err:
        raise ValueError(f"cell {name}: {err}") from None
    order = {mechanism: i for i, mechanism in enumerate(mechanisms)}
    rank = np.asarray(columns["replicate"], dtype=np.int64) * (len(order) + 1) + np.fromiter(
        (order[mechanism] for mechanism in columns["mechanism"].to_pylist()), dtype=np.int64, count=rows
    )
    table = pa.table(
        {
            "cell": pa.array([name] * rows, type=pa.string()),
            "cell_index": pa.array(np.full(rows, index, dtype=np.int64)),
            **columns,
        }
    )
    if rows > 1 and (np.diff(rank) < 0).any():
        table = table.take(np.argsort(rank, kind="stable"))
    return table


def rows_of_cells(cells: Sequence[tuple[str, int, Sequence[str], dict[str, Any]]]) -> pa.Table | None:
    """The rows of several whole cells, ``(name, index, mechanisms, columns)`` each, as one Arrow
    table: what ``rows_of_chunks`` gives each cell, concatenated (``promote_options="permissive"``),
    with each column typed once for them all (a call of 100 small cells spent more time typing
    its cells' columns one by one than simulating them). Each cell's columns are one chunk in
    canonical order already (replicates ascending, rows in mechanism order: ``worker.check_rows``).
    None for no cells; ValueError when a column holds values no one column can hold."""
    if not cells:
        return None
    lengths = [len(columns["replicate"]) for _, _, _, columns in cells]
    names: list = []
    for (name, _, _, _), length in zip(cells, lengths):
        names.extend([name] * length)
    columns: dict[str, pa.Array] = {
        "cell": pa.array(names, type=pa.string()),
        "cell_index": pa.array(np.repeat([index for _, index, _, _ in cells], lengths).astype(np.int64)),
    }
    columns.update(_typed_columns([part for _, _, _, part in cells], lengths))
    return pa.table(columns)


def _typed_columns(parts: Sequence[dict[str, Any]], lengths: Sequence[int]) -> dict[str, pa.Array]:
    """Each key of ``parts`` (column -> values, ``lengths`` rows each) as one Arrow array typed by
    pyarrow from all its values, null where a part lacks the key; ValueError naming a column
    whose values no one type holds."""
    columns: dict[str, pa.Array] = {}
    for key in dict.fromkeys(key for part in parts for key in part):
        values: list = []
        for part, length in zip(parts, lengths):
            column = part.get(key)
            values.extend([None] * length if column is None else column)
        try:
            columns[key] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
            raise ValueError(f"column '{key}' holds values no one column can hold ({err})") from None
    return columns


def check_table_name(name: Any, taken: Iterable[str] = ()) -> None:
    """Raise ValueError unless ``name`` can be a side table's file name ``<name>.parquet``."""
    if not isinstance(name, str) or not _TABLE_NAME.match(name):
        raise ValueError(
            f"side table name {name!r} is not a safe identifier (letters, digits and '_', not starting with a digit)"
        )
    taken = tuple(taken)
    if name in RESERVED_TABLE_NAMES or name in taken:
        reserved = ", ".join(sorted(set(RESERVED_TABLE_NAMES) | set(taken)))
        raise ValueError(f"side table name '{name}' collides with another file of the results ({reserved})")


def concat_columns(pieces: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Concatenate pieces of one table given as column -> 1-D array (a column missing from a piece is null there)."""
    names = list(dict.fromkeys(name for piece in pieces for name in piece))
    lengths = [len(next(iter(piece.values()))) if piece else 0 for piece in pieces]
    out: dict[str, np.ndarray] = {}
    for name in names:
        present = [np.asarray(piece[name]) for piece in pieces if name in piece]
        numeric = all(a.dtype.kind in "iuf" for a in present)
        arrays = [
            np.asarray(piece[name])
            if name in piece
            else np.full(length, np.nan if numeric else None, dtype=float if numeric else object)
            for piece, length in zip(pieces, lengths)
        ]
        out[name] = _concat(arrays)
    return out


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    if len(arrays) == 1:
        return arrays[0]
    kinds = {a.dtype.kind for a in arrays}
    if len(kinds) > 1 and not kinds <= set("iuf"):  # e.g. numbers and strings: keep each value as it is
        arrays = [a.astype(object) for a in arrays]
    return np.concatenate(arrays)


def cell_tables(cell: Cell, parts: Iterable[dict[str, dict[str, Any]] | None]) -> dict[str, pd.DataFrame]:
    """One cell's side tables from its chunks' parts (table -> column -> array, with ``replicate`` and
    ``mechanism``), each in canonical order: replicate, then mechanism order, then the table's own row
    order, whatever the completion order; with leading columns ``cell`` and ``cell_index``."""
    pieces: dict[str, list[dict[str, Any]]] = {}
    for part in parts:
        for name, columns in (part or {}).items():
            pieces.setdefault(name, []).append(columns)
    order = {name: i for i, name in enumerate(cell.mechanisms)}
    tables: dict[str, pd.DataFrame] = {}
    for name in sorted(pieces):
        check_table_name(name)
        frame = pd.DataFrame(concat_columns(pieces[name]))
        replicate = frame["replicate"].to_numpy(dtype=np.int64)
        mechanism = frame["mechanism"].map(order).fillna(len(order)).to_numpy(dtype=np.int64)
        rank = np.argsort(replicate * (len(order) + 1) + mechanism, kind="stable")
        frame = frame.iloc[rank].reset_index(drop=True)
        frame.insert(0, "cell", cell.name)
        frame.insert(1, "cell_index", cell.index)
        tables[name] = frame
    return tables


def table_path(directory: Path, name: str) -> Path:
    check_table_name(name)
    return Path(directory) / f"{name}.parquet"


def cell_files(
    rows: pa.Table, world: dict, tables: dict[str, pd.DataFrame], outputs: dict[str, bytes]
) -> dict[str, bytes]:
    """A cell's files as one folder would hold them (``cell.parquet``, ``config.yaml``, its side
    tables and the files of its cell outputs): a child run's artifacts in MLflow."""
    buffer = io.BytesIO()
    pq.write_table(rows, buffer)
    files = {
        CELL_TABLE: buffer.getvalue(),
        CELL_CONFIG: yaml.dump(world, Dumper=_YAML_DUMPER, sort_keys=False).encode(),
    }
    for name, table in tables.items():
        files[table_path(Path(), name).name] = parquet_bytes(table, index=False)
    files.update(outputs)
    return files


def stored_cell_files(store: CellStore, entry: Entry) -> dict[str, bytes]:
    return cell_files(store.rows_table_of(entry), store.config_of(entry), store.tables_of(entry), store.files_of(entry))


class Reused(NamedTuple):
    """Replicates ``0 .. replicates - 1`` of a cell taken from an earlier run: rows (as the
    columns of a chunk) and side tables, without the ``cell`` and ``cell_index`` columns."""

    columns: dict[str, list]
    tables: dict[str, pd.DataFrame]
    replicates: int


def load_reusable_replicates(store: CellStore, cell: Cell) -> Reused | None:
    """The replicates a complete earlier run of the same world (same ``world_hash``, any
    ``replicates``) already simulated, as far as this cell asks for them; None if there is no
    such run. Replicate ``r`` draws from the world hash and ``r`` only, so these rows are the
    ones a new run would compute."""
    entry = store.entries.get(cell.index)
    if entry is None or entry.world_hash != cell.world_hash or entry.config_hash == cell.config_hash:
        return None
    rows, tables = store.rows_table_of(entry), store.tables_of(entry)
    replicates = rows["replicate"].to_pylist()
    stored = max(replicates) + 1 if replicates else 0
    if sorted(set(replicates)) != list(range(stored)) or len(replicates) != stored * len(cell.mechanisms):
        return None
    n = min(stored, cell.replicates)
    kept = rows.filter(pc.less(rows["replicate"], n)).drop_columns(["cell", "cell_index"])
    columns = {name: kept[name].to_pylist() for name in kept.column_names}  # nulls stay None
    return Reused(columns, {name: _first_replicates(t, n) for name, t in tables.items()}, n)


def _first_replicates(table: pd.DataFrame, n: int) -> pd.DataFrame:
    return table[table["replicate"] < n].drop(columns=["cell", "cell_index"]).reset_index(drop=True)


class Totals:
    """Sum and count of ``utility`` per family and mechanism over the rows written (the closing
    line's and the parent runs' means), in the order the mechanisms first appear."""

    def __init__(self, families: dict[int, str]):
        self._family_of = families
        self.sums: dict[tuple[str, str], list[float]] = {}
        self.rows = 0

    def add(self, window: pa.Table) -> None:
        self.rows += window.num_rows
        frame = window.select(["cell_index", "mechanism", "utility"]).to_pandas()
        frame["family"] = frame["cell_index"].map(self._family_of)
        grouped = frame.groupby(["family", "mechanism"], sort=False)["utility"].agg(["sum", "count"])
        for (family, mechanism), (total, count) in grouped.iterrows():
            into = self.sums.setdefault((family, mechanism), [0.0, 0])
            into[0] += float(total)
            into[1] += int(count)

    def means(self, family: str | None = None) -> dict[str, float]:
        merged: dict[str, list[float]] = {}
        for (fam, mechanism), (total, count) in self.sums.items():
            if family is None or fam == family:
                into = merged.setdefault(mechanism, [0.0, 0])
                into[0] += total
                into[1] += count
        return {mechanism: total / count for mechanism, (total, count) in merged.items() if count}


def write_sweep(out_dir: Path, cells: Sequence[Cell], store: CellStore) -> tuple[Totals, list[str]]:
    """Write results.parquet, summary.csv and the side tables from the store's complete cells
    among ``cells``, a window of rows at a time, in cell order; return the utility totals and
    the side tables written."""
    done = [
        store.entries[c.index] for c in sorted(cells, key=lambda c: c.index) if store.complete(c.config_hash, c.index)
    ]
    totals = Totals({cell.index: cell.family for cell in cells})
    params = _param_columns(done)
    _write_parts(Path(out_dir) / RESULTS, store, "rows", done, params, totals.add)
    _write_summary(Path(out_dir) / SUMMARY, store, done, params)
    names = sorted({name for entry in done for name in entry.tables})
    for name in names:
        _write_parts(table_path(out_dir, name), store, f"table-{name}", done, params)
    return totals, names


def _param_columns(entries: Sequence[Entry]) -> tuple[list[int], dict[str, pa.Array]]:
    """The cells' indices in order and, per override key, its value for each cell (null where a
    cell lacks the key), typed as pandas would type the column: bool, int64, float64 or string."""
    indices = [entry.index for entry in entries]
    keys = list(dict.fromkeys(key for entry in entries for key in entry.params))
    columns: dict[str, pa.Array] = {}
    for key in keys:
        values = [entry.params.get(key) for entry in entries]
        kinds = {type(value) for value in values if value is not None}
        if kinds == {bool}:
            columns[key] = pa.array(values, type=pa.bool_())
        elif kinds == {int} and None not in values:
            columns[key] = pa.array(values, type=pa.int64())
        elif kinds and kinds <= {int, float}:
            columns[key] = pa.array([None if v is None else float(v) for v in values], type=pa.float64())
        else:
            columns[key] = pa.array([None if v is None else str(v) for v in values], type=pa.string())
    return indices, columns


def _with_params(window: pa.Table, params: tuple[list[int], dict[str, pa.Array]]) -> pa.Table:
    indices, columns = params
    if not columns:
        return window
    positions = pa.array(np.searchsorted(np.asarray(indices), window["cell_index"].to_numpy()))
    for offset, (key, values) in enumerate(columns.items()):
        if key not in window.column_names:
            window = window.add_column(2 + offset, key, values.take(positions))
    return window


def _target(window: pa.Table, schema: pa.Schema) -> pa.Table:
    for name in schema.names:
        if name not in window.column_names:
            window = window.append_column(name, pa.nulls(window.num_rows, type=schema.field(name).type))
    return window.select(schema.names).cast(schema)


def _write_parts(path: Path, store: CellStore, kind: str, entries, params, each=None) -> None:
    part_schema = store.schema(kind)
    if part_schema is None or not entries:
        atomic_write(path, lambda tmp: pd.DataFrame(columns=list(ID_COLUMNS)).to_parquet(tmp, index=False))
        return
    schema = _with_params(part_schema.empty_table(), params).schema

    def write(tmp: Path) -> None:
        with pq.ParquetWriter(tmp, schema) as writer:
            for window in store.windows(kind, entries):
                window = _target(
                    _with_params(window, params), schema
                ).combine_chunks()  # pages as one chunk gives them: the same bytes whatever the batches
                if each is not None:
                    each(window)
                writer.write_table(window)

    atomic_write(path, write)


def _write_summary(path: Path, store: CellStore, entries, params) -> None:
    part_schema = store.schema("summary")
    schema = None if part_schema is None else _with_params(part_schema.empty_table(), params).schema

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as out:
            if schema is None or not entries:
                out.write("\n")
                return
            header = True
            for window in store.windows("summary", entries):
                write_csv(_target(_with_params(window, params), schema).to_pandas(), out, header)
                header = False

    atomic_write(path, write)
