"""Results on disk, the source of truth (docs/architecture.md, "Results").

Per cell: ``cell.parquet`` (one row per simulation), the family's side tables
(``<name>.parquet``, e.g. one row per task), ``config.yaml`` and, written last,
``cell.json`` with the config hash, which marks the cell complete for resume. Per
sweep: ``results.parquet`` (all cells), ``summary.csv`` (one row per cell and
mechanism: mean, std and 95% CI of utility and the family's summary columns, its rates, and
the cell's overrides) and
one ``<name>.parquet`` per side table (all cells).
Every file is written to a temporary name and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import yaml

from .cells import Cell
from .statistics import student_t_interval

CELL_TABLE = "cell.parquet"
CELL_META = "cell.json"
CELL_CONFIG = "config.yaml"
RESULTS = "results.parquet"
SUMMARY = "summary.csv"
ID_COLUMNS = ("cell", "cell_index", "replicate", "mechanism")
# Side tables (docs/architecture.md, "Family interface"): ``<name>.parquet`` per cell and per
# sweep. The names of the engine's own files (``series`` is cell_outputs.SERIES_FILE) are taken.
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


def cell_frame(cell: Cell, chunks: Iterable[dict[str, list]]) -> pd.DataFrame:
    """One cell's rows in a canonical order (replicate, then mechanism order), whatever the completion order."""
    return frame_of_chunks(cell.name, cell.index, cell.mechanisms, chunks)


def frame_of_chunks(
    name: str, index: int, mechanisms: Iterable[str], chunks: Iterable[dict[str, list]]
) -> pd.DataFrame:
    """``cell_frame`` from the cell's name, index and mechanisms (a worker finishing a cell has no Cell)."""
    chunks = list(chunks)
    order = {mechanism: i for i, mechanism in enumerate(mechanisms)}
    if len(chunks) == 1:  # a whole cell from one worker: one constructor, sorted only if needed
        columns = chunks[0]
        rows = len(columns["replicate"])
        rank = np.asarray(columns["replicate"], dtype=np.int64) * (len(order) + 1) + np.fromiter(
            (order[mechanism] for mechanism in columns["mechanism"]), dtype=np.int64, count=rows
        )
        frame = pd.DataFrame(
            {"cell": np.full(rows, name, dtype=object), "cell_index": np.full(rows, index, dtype=np.int64), **columns}
        )
        if rows > 1 and (np.diff(rank) < 0).any():
            frame = frame.iloc[np.argsort(rank, kind="stable")].reset_index(drop=True)
        return frame
    body = pd.concat([pd.DataFrame(columns) for columns in chunks], ignore_index=True)
    rank = body["replicate"].to_numpy(dtype=np.int64) * (len(order) + 1) + body["mechanism"].map(order).to_numpy()
    if len(rank) > 1 and (np.diff(rank) < 0).any():
        body = body.iloc[np.argsort(rank, kind="stable")].reset_index(drop=True)
    frame = pd.DataFrame(
        {"cell": np.full(len(body), name, dtype=object), "cell_index": np.full(len(body), index, dtype=np.int64)}
    )
    return pd.concat([frame, body], axis=1)


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


def write_cell(
    cell_dir: Path,
    cell: Cell,
    frame: pd.DataFrame,
    extra_meta: dict | None = None,
    tables: dict[str, pd.DataFrame] | None = None,
    files: dict[str, bytes] | None = None,
) -> None:
    """Write the cell's files; ``cell.json``, which marks the cell complete, last. ``files``
    may hold ``cell.parquet`` and ``config.yaml`` already serialised (``serialise_cell``, by the
    worker that simulated the whole cell)."""
    tables = tables or {}
    files = files or {}
    Path(cell_dir).mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        atomic_write(table_path(cell_dir, name), lambda tmp, t=table: t.to_parquet(tmp, index=False))
    written = files or serialise_cell(frame, cell.world)
    for name in (CELL_TABLE, CELL_CONFIG):
        atomic_write(cell_dir / name, lambda tmp, data=written[name]: Path(tmp).write_bytes(data))
    meta = {
        "name": cell.name,
        "index": cell.index,
        "params": cell.params,
        "config_hash": cell.config_hash,
        "world_hash": cell.world_hash,
        "replicates": cell.replicates,
        "rows": len(frame),
        **({"tables": {name: len(table) for name, table in tables.items()}} if tables else {}),
        **(extra_meta or {}),
    }
    atomic_write_text(cell_dir / CELL_META, json.dumps(meta, indent=2, default=str))


def serialise_cell(frame: pd.DataFrame, world: dict) -> dict[str, bytes]:
    """The bytes of ``cell.parquet`` and ``config.yaml``."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return {CELL_TABLE: buffer.getvalue(), CELL_CONFIG: yaml.dump(world, Dumper=_YAML_DUMPER, sort_keys=False).encode()}


def read_meta(cell_dir: Path) -> dict | None:
    try:
        return json.loads((Path(cell_dir) / CELL_META).read_text())
    except (OSError, ValueError):
        return None


def update_meta(cell_dir: Path, **values: Any) -> None:
    meta = read_meta(cell_dir) or {}
    meta.update(values)
    atomic_write_text(Path(cell_dir) / CELL_META, json.dumps(meta, indent=2, default=str))


def _read_intact(cell_dir: Path, meta: dict, read_tables: bool) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]] | None:
    """The cell's rows (and, if asked, its side tables) when every file ``cell.json`` lists is
    there with its row count, else None."""
    try:
        frame = pd.read_parquet(Path(cell_dir) / CELL_TABLE)
        if len(frame) != meta.get("rows"):
            return None
        tables = {}
        for name, rows in (meta.get("tables") or {}).items():
            if read_tables:
                tables[name] = pd.read_parquet(table_path(cell_dir, name))
                found = len(tables[name])
            else:
                found = pq.ParquetFile(table_path(cell_dir, name)).metadata.num_rows
            if found != rows:
                return None
    except (OSError, ValueError):
        return None
    return frame, tables


def load_complete_cell(cell_dir: Path, cell: Cell) -> pd.DataFrame | None:
    """The cell's rows if a previous run completed it with the same config, else None."""
    meta = read_meta(cell_dir)
    if not meta or meta.get("config_hash") != cell.config_hash:
        return None
    intact = _read_intact(cell_dir, meta, read_tables=False)
    if intact is None:
        return None
    frame = intact[0]
    frame["cell_index"] = cell.index
    return frame


class Reused(NamedTuple):
    """Replicates ``0 .. replicates - 1`` of a cell taken from an earlier run: rows and side
    tables without the ``cell`` and ``cell_index`` columns."""

    frame: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    replicates: int


def load_reusable_replicates(cell_dir: Path, cell: Cell) -> Reused | None:
    """The replicates a complete earlier run of the same world (same ``world_hash``, any
    ``replicates``) already simulated, as far as this cell asks for them; None if there is no
    such run. Replicate ``r`` draws from the world hash and ``r`` only, so these rows are the
    ones a new run would compute."""
    meta = read_meta(cell_dir)
    if not meta or meta.get("world_hash") != cell.world_hash or meta.get("config_hash") == cell.config_hash:
        return None
    intact = _read_intact(cell_dir, meta, read_tables=True)
    if intact is None:
        return None
    frame, tables = intact
    stored = int(frame["replicate"].max()) + 1 if len(frame) else 0
    if sorted(set(frame["replicate"])) != list(range(stored)) or len(frame) != stored * len(cell.mechanisms):
        return None
    n = min(stored, cell.replicates)
    return Reused(_first_replicates(frame, n), {name: _first_replicates(t, n) for name, t in tables.items()}, n)


def _first_replicates(table: pd.DataFrame, n: int) -> pd.DataFrame:
    return table[table["replicate"] < n].drop(columns=["cell", "cell_index"]).reset_index(drop=True)


def side_table_names(cell_dirs: Iterable[Path]) -> list[str]:
    """The side tables of the complete cells in ``cell_dirs``, as their ``cell.json`` lists them."""
    names: dict[str, None] = {}
    for cell_dir in cell_dirs:
        names.update(dict.fromkeys((read_meta(cell_dir) or {}).get("tables") or {}))
    return sorted(names)


def read_cell_table(cell_dir: Path, cell: Cell, name: str) -> pd.DataFrame:
    table = pd.read_parquet(table_path(cell_dir, name))
    table["cell_index"] = cell.index
    return table


def with_params(frame: pd.DataFrame, cell: Cell) -> pd.DataFrame:
    frame = frame.copy()
    for position, (key, value) in enumerate(cell.params.items(), start=2):
        frame.insert(position, key, value)
    return frame


def concat_with_params(frames: list[pd.DataFrame], cells: list[Cell]) -> pd.DataFrame:
    """``pd.concat([with_params(frame, cell), ...])``, with the param columns built once for all
    cells when every cell has the same keys (the same frame; 10,000 cells in seconds, not
    minutes): each column is the concatenation of the cells' constant columns, so pandas picks
    the same dtype as when it concatenates the frames."""
    if not frames:
        return pd.DataFrame(columns=list(ID_COLUMNS))
    keys = list(cells[0].params)
    if any(list(cell.params) != keys or None in cell.params.values() for cell in cells) or any(
        list(frame.columns[:2]) != ["cell", "cell_index"] or set(keys) & set(frame.columns) for frame in frames
    ):
        return pd.concat([with_params(frame, cell) for frame, cell in zip(frames, cells)], ignore_index=True)
    results = pd.concat(frames, ignore_index=True)
    lengths = [len(frame) for frame in frames]
    for position, key in enumerate(keys, start=2):
        values = [cell.params[key] for cell in cells]
        kinds = {type(value) for value in values}
        if kinds in ({int}, {float}, {bool}):  # numbers: the dtype pandas gives them, without a Series each
            dtype = {int: np.int64, float: np.float64, bool: np.bool_}[kinds.pop()]
            results.insert(position, key, np.repeat(np.array(values, dtype=dtype), lengths))
            continue
        column = pd.concat(
            [
                pd.Series(cell.params[key], index=range(len(frame)))
                if len(frame)
                else pd.Series([], dtype=pd.Series([cell.params[key]]).dtype)
                for frame, cell in zip(frames, cells)
            ],
            ignore_index=True,
        )
        results.insert(position, key, column)
    return results


def summarize(frame: pd.DataFrame, cells: list[Cell]) -> pd.DataFrame:
    """One row per cell and mechanism: n, then mean, std and 95% CI (Student t) of `utility`
    and of the family's ``SUMMARY_COLUMNS`` where a mechanism has them, then `<column>_rate`
    for its ``RATE_COLUMNS`` (sweep/family.py). Groups come in the order of their first row."""
    by_index = {cell.index: cell for cell in cells}
    if not len(frame):
        return pd.DataFrame()
    codes, keys = pd.factorize(pd.MultiIndex.from_arrays([frame["cell_index"], frame["mechanism"]]), sort=False)
    positions = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[positions], np.arange(len(keys) + 1))
    arrays: dict[str, np.ndarray] = {}

    def column(name: str) -> np.ndarray:
        if name not in arrays:
            arrays[name] = frame[name].to_numpy()
        return arrays[name]

    rows = []
    for group, (cell_index, mechanism) in enumerate(keys):
        take = positions[bounds[group] : bounds[group + 1]]
        cell = by_index[cell_index]
        row: dict[str, Any] = {
            "cell": cell.name,
            "cell_index": cell_index,
            **cell.params,
            "mechanism": mechanism,
            "n": len(take),
        }
        spec = cell.spec
        for metric in ("utility", *spec.summary_columns):
            if metric != "utility" and metric not in frame:
                continue
            values = column(metric)[take]
            if metric != "utility" and pd.isna(values).all():
                continue
            interval = student_t_interval(values.astype(float))
            row.update(
                {
                    f"{metric}_mean": interval.mean,
                    f"{metric}_std": interval.std,
                    f"{metric}_ci95_low": interval.low,
                    f"{metric}_ci95_high": interval.high,
                }
            )
        for name in spec.rate_columns:
            if name in frame:
                values = column(name)[take]
                if values.dtype == np.bool_:  # pandas' mean of booleans, without a Series per group
                    row[f"{name}_rate"] = float(np.count_nonzero(values)) / len(values)
                elif not pd.isna(values).all():
                    row[f"{name}_rate"] = float(pd.Series(values).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def write_sweep(
    out_dir: Path, cells: list[Cell], frames: dict[int, pd.DataFrame], cell_dirs: dict[int, Path] | None = None
) -> pd.DataFrame:
    """Write results.parquet, summary.csv and the side tables for the cells in ``frames``; return all rows.

    Side tables are read back from the cell dirs (``out_dir / cell.subdir`` unless ``cell_dirs``
    says otherwise), so cells loaded on resume contribute theirs too.
    """
    done = [cell for cell in sorted(cells, key=lambda c: c.index) if cell.index in frames]
    results = concat_with_params([frames[cell.index] for cell in done], done)
    atomic_write(Path(out_dir) / RESULTS, lambda tmp: results.to_parquet(tmp, index=False))
    summary = summarize(results, cells) if len(results) else pd.DataFrame()
    atomic_write(Path(out_dir) / SUMMARY, lambda tmp: summary.to_csv(tmp, index=False))
    dirs = {cell.index: Path(cell_dirs[cell.index]) if cell_dirs else Path(out_dir) / cell.subdir for cell in done}
    for name in side_table_names(dirs.values()):
        parts = [
            with_params(read_cell_table(dirs[cell.index], cell, name), cell)
            for cell in done
            if name in ((read_meta(dirs[cell.index]) or {}).get("tables") or {})
        ]
        table = pd.concat(parts, ignore_index=True)
        atomic_write(table_path(out_dir, name), lambda tmp, t=table: t.to_parquet(tmp, index=False))
    return results
