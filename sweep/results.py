"""Results on disk, the source of truth (docs/architecture.md, "Results").

Per cell: ``cell.parquet`` (one row per simulation), ``config.yaml`` and, written last,
``cell.json`` with the config hash, which marks the cell complete for resume. Per
sweep: ``results.parquet`` (all cells) and ``summary.csv`` (one row per cell and
mechanism: mean, std and 95% CI of utility and cost, and the cell's overrides).
Every file is written to a temporary name and renamed, so a reader never sees half a file.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from .cells import Cell

CELL_TABLE = "cell.parquet"
CELL_META = "cell.json"
CELL_CONFIG = "config.yaml"
RESULTS = "results.parquet"
SUMMARY = "summary.csv"
SUMMARY_METRICS = ("utility", "cost")
ID_COLUMNS = ("cell", "cell_index", "replicate", "mechanism")


def atomic_write(path: Path, write) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file onto ``path``."""
    path = Path(path)
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
    frame = pd.concat([pd.DataFrame(columns) for columns in chunks], ignore_index=True)
    order = {name: i for i, name in enumerate(cell.mechanisms)}
    frame["_m"] = frame["mechanism"].map(order)
    frame = frame.sort_values(["replicate", "_m"], kind="stable").drop(columns="_m").reset_index(drop=True)
    frame.insert(0, "cell", cell.name)
    frame.insert(1, "cell_index", cell.index)
    return frame


def write_cell(cell_dir: Path, cell: Cell, frame: pd.DataFrame, extra_meta: dict | None = None) -> None:
    atomic_write(cell_dir / CELL_TABLE, lambda tmp: frame.to_parquet(tmp, index=False))
    atomic_write_text(cell_dir / CELL_CONFIG, yaml.safe_dump(cell.world, sort_keys=False))
    meta = {
        "name": cell.name,
        "index": cell.index,
        "params": cell.params,
        "config_hash": cell.config_hash,
        "world_hash": cell.world_hash,
        "rows": len(frame),
        **(extra_meta or {}),
    }
    atomic_write_text(cell_dir / CELL_META, json.dumps(meta, indent=2, default=str))


def read_meta(cell_dir: Path) -> dict | None:
    try:
        return json.loads((Path(cell_dir) / CELL_META).read_text())
    except (OSError, ValueError):
        return None


def update_meta(cell_dir: Path, **values: Any) -> None:
    meta = read_meta(cell_dir) or {}
    meta.update(values)
    atomic_write_text(Path(cell_dir) / CELL_META, json.dumps(meta, indent=2, default=str))


def load_complete_cell(cell_dir: Path, cell: Cell) -> pd.DataFrame | None:
    """The cell's rows if a previous run completed it with the same config, else None."""
    meta = read_meta(cell_dir)
    if not meta or meta.get("config_hash") != cell.config_hash:
        return None
    try:
        frame = pd.read_parquet(Path(cell_dir) / CELL_TABLE)
    except (OSError, ValueError):
        return None
    if len(frame) != meta.get("rows"):
        return None
    frame["cell_index"] = cell.index
    return frame


def with_params(frame: pd.DataFrame, cell: Cell) -> pd.DataFrame:
    frame = frame.copy()
    for position, (key, value) in enumerate(cell.params.items(), start=2):
        frame.insert(position, key, value)
    return frame


def _ci95(values: np.ndarray) -> tuple[float, float, float, float]:
    n = len(values)
    mean = float(np.mean(values))
    std = float(np.std(values, ddof=1)) if n > 1 else 0.0
    half = float(stats.t.ppf(0.975, n - 1) * std / np.sqrt(n)) if n > 1 else 0.0
    return mean, std, mean - half, mean + half


def summarize(frame: pd.DataFrame, cells: list[Cell]) -> pd.DataFrame:
    """One row per cell and mechanism: n, mean, std, 95% CI (Student t) of utility and cost."""
    by_index = {cell.index: cell for cell in cells}
    rows = []
    for (cell_index, mechanism), group in frame.groupby(["cell_index", "mechanism"], sort=False):
        cell = by_index[cell_index]
        row: dict[str, Any] = {"cell": cell.name, "cell_index": cell_index, **cell.params, "mechanism": mechanism, "n": len(group)}
        for metric in SUMMARY_METRICS + tuple(c for c in ("completion_time",) if c in group):
            mean, std, low, high = _ci95(group[metric].to_numpy(dtype=float))
            row.update({f"{metric}_mean": mean, f"{metric}_std": std, f"{metric}_ci95_low": low, f"{metric}_ci95_high": high})
        if "met_deadline" in group:
            row["met_deadline_rate"] = float(group["met_deadline"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def write_sweep(out_dir: Path, cells: list[Cell], frames: dict[int, pd.DataFrame]) -> pd.DataFrame:
    """Write results.parquet and summary.csv for the cells in ``frames``; return all rows."""
    ordered = [with_params(frames[cell.index], cell) for cell in sorted(cells, key=lambda c: c.index) if cell.index in frames]
    results = pd.concat(ordered, ignore_index=True) if ordered else pd.DataFrame(columns=list(ID_COLUMNS))
    atomic_write(Path(out_dir) / RESULTS, lambda tmp: results.to_parquet(tmp, index=False))
    summary = summarize(results, cells) if len(results) else pd.DataFrame()
    atomic_write(Path(out_dir) / SUMMARY, lambda tmp: summary.to_csv(tmp, index=False))
    return results
