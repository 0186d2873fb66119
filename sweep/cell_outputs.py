"""Per-cell analyses a family computes from a whole cell's rows (docs/architecture.md,
"Cell outputs"): for example online policy selection over a cell's jobs.

A family may define ``cell_outputs(config, frame) -> dict`` with any of:

- ``tables``: name -> DataFrame, written as ``<name>.parquet`` in the cell dir;
- ``series``: name -> 1-D array over steps (e.g. cumulative regret per job), written to
  ``series.parquet`` and logged to MLflow as step metrics;
- ``metrics``: name -> float, stored in ``cell.json`` and logged with the cell's aggregates;
- ``figures``: file name -> (kind, table name), rendered here: ``heatmap`` draws a table
  (rows = steps, columns = series) as an image, ``lines`` draws its columns over the rows.

It runs in the driver once per cell, before the cell is marked complete, so that a
resumed sweep finds the files of every complete cell.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .cells import Cell
from .plots import pyplot, save
from .results import atomic_write

SERIES_FILE = "series.parquet"


def compute(cell: Cell, frame: pd.DataFrame) -> dict[str, Any]:
    hook = cell.spec.cell_outputs
    return hook(cell.world, frame) if hook else {}


def write(cell_dir: Path, outputs: dict[str, Any]) -> dict[str, float]:
    """Write tables, series and figures into ``cell_dir``; return the scalar metrics."""
    tables: dict[str, pd.DataFrame] = outputs.get("tables", {})
    for name, table in tables.items():
        atomic_write(cell_dir / f"{name}.parquet", lambda tmp, t=table: t.to_parquet(tmp))
    series = outputs.get("series", {})
    if series:
        length = max(len(values) for values in series.values())
        frame = pd.DataFrame(
            {name: pd.Series(np.asarray(values, dtype=float)) for name, values in series.items()},
            index=pd.RangeIndex(length, name="step"),
        )
        atomic_write(cell_dir / SERIES_FILE, lambda tmp: frame.to_parquet(tmp))
    for file_name, (kind, table_name) in outputs.get("figures", {}).items():
        atomic_write(cell_dir / file_name, lambda tmp, k=kind, t=tables[table_name], n=table_name: _draw(k, t, n, tmp))
    return {name: float(value) for name, value in outputs.get("metrics", {}).items()}


def read_series(cell_dir: Path) -> pd.DataFrame | None:
    path = Path(cell_dir) / SERIES_FILE
    return pd.read_parquet(path) if path.exists() else None


def heatmap_rows(table: pd.DataFrame, named: int = 12, fit: int = 40) -> tuple[list[int], list[str]]:
    """The heatmap's row ticks: every column's name when there are at most ``named`` columns,
    else up to ``named`` of the columns with the largest value in the last row, taken in that
    order and skipping a column within ``ceil(columns / fit)`` rows of one already named, so
    that the labels (about ``fit`` fit the axis) do not overlap."""
    columns = [str(column) for column in table.columns]
    if len(columns) <= named:
        return list(range(len(columns))), columns
    last = table.iloc[-1].to_numpy(dtype=float)
    gap = -(-len(columns) // fit)
    top: list[int] = []
    for i in sorted(range(len(columns)), key=lambda i: -last[i]):
        if len(top) == named:
            break
        if all(abs(i - j) >= gap for j in top):
            top.append(i)
    top.sort()
    return top, [columns[i] for i in top]


def _draw(kind: str, table: pd.DataFrame, title: str, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 5))
    if kind == "heatmap":
        image = ax.imshow(
            table.to_numpy(dtype=float).T, aspect="auto", origin="lower", cmap="viridis", interpolation="nearest"
        )
        ax.set_xlabel(table.index.name or "step")
        positions, labels = heatmap_rows(table)
        ax.set_yticks(positions, labels, fontsize=7)
        ax.set_ylabel(
            "policy"
            if len(positions) == table.shape[1]
            else f"policy ({len(positions)} of the heaviest at the end named)"
        )
        fig.colorbar(image, ax=ax, label="weight")
    elif kind == "lines":
        table.plot(ax=ax)
        ax.set_xlabel(table.index.name or "step")
    else:
        plt.close(fig)
        raise ValueError(f"unknown figure kind '{kind}' (heatmap, lines)")
    ax.set_title(title)
    fig.tight_layout()
    save(fig, path)
