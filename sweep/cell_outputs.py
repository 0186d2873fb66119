"""Per-cell analyses a family computes from a whole cell's rows (docs/architecture.md,
"Cell outputs"): for example online policy selection over a cell's jobs.

A family may define ``cell_outputs(config, frame) -> dict`` with any of:

- ``tables``: name -> DataFrame, kept as the file ``<name>.parquet`` of the cell;
- ``series``: name -> 1-D array over steps (e.g. cumulative regret per job), kept as
  ``series.parquet`` and logged to MLflow as step metrics;
- ``metrics``: name -> float, kept with the cell and logged with the cell's aggregates;
- ``figures``: file name -> (kind, table name), rendered here: ``heatmap`` draws a table
  (rows = steps, columns = series) as an image, ``lines`` draws its columns over the rows.

It runs in the driver once per cell, before the cell is committed to the store with these
files (``sweep/cell_store.py``), so that a resumed sweep finds the files of every complete
cell; ``python -m sweep.cell_files`` writes them out.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd

from .cell_store import parquet_bytes
from .cells import Cell
from .plots import pyplot, save

SERIES_FILE = "series.parquet"


def wanted(cell: Cell) -> bool:
    """Whether the cell has outputs to compute: the family's ``cell_outputs``, unless its
    ``has_cell_outputs`` says this cell has none (then its frame need not be built)."""
    spec = cell.spec
    return spec.cell_outputs is not None and (spec.has_cell_outputs is None or bool(spec.has_cell_outputs(cell.world)))


def compute(cell: Cell, frame: pd.DataFrame) -> dict[str, Any]:
    hook = cell.spec.cell_outputs
    return hook(cell.world, frame) if hook else {}


def render(outputs: dict[str, Any]) -> tuple[dict[str, bytes], dict[str, float]]:
    """The files of the outputs (tables, series and figures, by file name) and the scalar metrics."""
    files: dict[str, bytes] = {}
    tables: dict[str, pd.DataFrame] = outputs.get("tables", {})
    for name, table in tables.items():
        files[f"{name}.parquet"] = parquet_bytes(table)
    series = outputs.get("series", {})
    if series:
        length = max(len(values) for values in series.values())
        frame = pd.DataFrame(
            {name: pd.Series(np.asarray(values, dtype=float)) for name, values in series.items()},
            index=pd.RangeIndex(length, name="step"),
        )
        files[SERIES_FILE] = parquet_bytes(frame)
    for file_name, (kind, table_name) in outputs.get("figures", {}).items():
        image = io.BytesIO()
        _draw(kind, tables[table_name], table_name, image)
        files[file_name] = image.getvalue()
    return files, {name: float(value) for name, value in outputs.get("metrics", {}).items()}


def read_series(files: dict[str, bytes]) -> pd.DataFrame | None:
    data = files.get(SERIES_FILE)
    return pd.read_parquet(io.BytesIO(data)) if data is not None else None


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


def _draw(kind: str, table: pd.DataFrame, title: str, path) -> None:
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
