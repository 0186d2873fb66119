"""A sweep dir made by hand for the reports' tests: a cell's config in the dir's store."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa

from sweep.cell_store import CellStore, CompleteCell
from sweep.cells import Cell


def arrow_rows(frame: pd.DataFrame) -> pa.Table:
    """A cell's rows, made by hand as a DataFrame, as the Arrow table the store keeps."""
    return pa.Table.from_pandas(frame, preserve_index=False)


def write_cell_config(sweep_dir: Path, config: dict, index: int = 0) -> None:
    """Commit a cell without rows whose resolved config is ``config`` (what the reports read)."""
    rows = pa.table(
        {
            "cell": pa.array([], pa.string()),
            "cell_index": pa.array([], pa.int64()),
            "replicate": pa.array([], pa.int64()),
            "mechanism": pa.array([], pa.string()),
            "utility": pa.array([], pa.float64()),
        }
    )
    store = CellStore(sweep_dir)
    store.open_for_writing()
    cell = Cell(index, "default", {}, str(index), {"replicates": 1, **config}, "config", "world")
    store.commit([CompleteCell(cell, rows)], pd.DataFrame())
