"""Upload a finished sweep dir to MLflow, for sweeps run with tracking off or unreachable.

With the sweep's own tracking URI it reuses the sweep's parent run (``tracking.json``) and
skips the cells already logged: ``--child-runs N`` logs more of a tracked sweep's cells.

    python -m sweep.upload multirun/2026-11-22/10-00-00 --tracking-uri http://127.0.0.1:5000
    python -m sweep.upload SWEEP_DIR --tracking-uri sqlite:///mlflow.db --child-runs 1000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa

from .cell_store import CellStore, Entry
from .cells import Cell
from .cli import counted
from .engine import utility_means
from .errors import ConfigError
from .results import RESULTS, Totals, stored_cell_files
from .schema import TrackingConfig
from .tracking import MlflowTracker


def cells_in(sweep_dir: Path) -> tuple[CellStore, list[tuple[Cell, Entry]]]:
    """The sweep's complete cells, from its store."""
    store = CellStore(sweep_dir)
    configs = store.configs()
    found = [
        (
            Cell(
                index=entry.index,
                name=entry.name,
                params=entry.params,
                subdir=str(entry.index),
                world=configs[entry.index],
                config_hash=entry.config_hash,
                world_hash=entry.world_hash,
            ),
            entry,
        )
        for entry in sorted(store.entries.values(), key=lambda entry: entry.index)
    ]
    return store, found


def upload(sweep_dir: Path, uri: str, child_runs: int = TrackingConfig.child_runs) -> int:
    store, cells = cells_in(sweep_dir)
    if not cells:
        sys.stderr.write(f"Error: {sweep_dir}: no completed cells (an empty or missing {store.folder}) to upload\n")
        return 2
    for cell, _ in cells:
        try:
            _ = cell.spec  # loads and checks the family module the cell names
        except ConfigError as err:
            sys.stderr.write(f"Error: {store.folder}, cell {cell.index}: {err}\n")
            return 2
    kind = "sqlite" if uri.startswith("sqlite:") else "server"
    tracker = MlflowTracker(TrackingConfig(kind=kind, uri=uri, child_runs=child_runs))
    tracker.set_cells([cell for cell, _ in cells])
    families = list(dict.fromkeys(cell.family for cell, _ in cells))
    tracker.start(sweep_dir, families, f"upload {sweep_dir.name}", {"uploaded_from": str(sweep_dir)})
    for cell, entry in cells:
        if not tracker.wants_cell():
            break
        tracker.log_cell(
            cell, stored_cell_files(store, entry), store.summary_of(entry), entry.metrics, unless_logged=True
        )
    results_path = sweep_dir / RESULTS
    totals = Totals({cell.index: cell.family for cell, _ in cells})
    if results_path.exists():
        totals.add(pa.Table.from_pandas(pd.read_parquet(results_path, columns=["cell_index", "mechanism", "utility"])))
    tracker.finish(
        sweep_dir,
        "FINISHED",
        {family: {"simulations": float(totals.rows), **utility_means(totals, family)} for family in families},
    )
    if tracker.failed:
        return 1
    print(f"uploaded {counted(len(cells), 'cell')} from {sweep_dir}; {tracker.describe()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sweep.upload", description=__doc__.splitlines()[0])
    parser.add_argument("sweep_dir", type=Path)
    parser.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    parser.add_argument(
        "--child-runs",
        type=int,
        default=TrackingConfig.child_runs,
        help="cells logged as child runs (every cell is in the parent's table); default %(default)s",
    )
    args = parser.parse_args(argv)
    if args.child_runs < 0:
        sys.stderr.write(f"Error: --child-runs must be a non-negative integer, got {args.child_runs}\n")
        return 2
    if not args.sweep_dir.is_dir():
        sys.stderr.write(f"Error: {args.sweep_dir}: no such sweep dir\n")
        return 2
    return upload(args.sweep_dir, args.tracking_uri, args.child_runs)


if __name__ == "__main__":
    raise SystemExit(main())
