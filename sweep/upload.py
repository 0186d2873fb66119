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
import yaml

from .cells import Cell
from .cli import counted
from .engine import utility_means
from .errors import ConfigError
from .results import CELL_META, CELL_TABLE, RESULTS, read_meta, summarize
from .schema import TrackingConfig
from .tracking import MlflowTracker


def cells_in(sweep_dir: Path) -> list[tuple[Cell, Path]]:
    found = []
    for meta_path in sorted(Path(sweep_dir).rglob(CELL_META)):
        cell_dir = meta_path.parent
        meta = read_meta(cell_dir)
        if not meta or not (cell_dir / CELL_TABLE).exists():
            continue
        world = yaml.safe_load((cell_dir / "config.yaml").read_text())
        found.append(
            (
                Cell(
                    index=int(meta["index"]),
                    name=meta["name"],
                    params=meta.get("params", {}),
                    subdir=str(cell_dir.relative_to(sweep_dir)),
                    world=world,
                    config_hash=meta["config_hash"],
                    world_hash=meta.get("world_hash", ""),
                ),
                cell_dir,
            )
        )
    return found


def upload(sweep_dir: Path, uri: str, child_runs: int = TrackingConfig.child_runs) -> int:
    cells = cells_in(sweep_dir)
    if not cells:
        sys.stderr.write(f"Error: {sweep_dir}: no completed cells (no {CELL_META} files) to upload\n")
        return 2
    for cell, cell_dir in cells:
        try:
            _ = cell.spec  # loads and checks the family module the cell names
        except ConfigError as err:
            sys.stderr.write(f"Error: {cell_dir / 'config.yaml'}: {err}\n")
            return 2
    kind = "sqlite" if uri.startswith("sqlite:") else "server"
    tracker = MlflowTracker(TrackingConfig(kind=kind, uri=uri, child_runs=child_runs))
    tracker.set_cells([cell for cell, _ in cells])
    families = list(dict.fromkeys(cell.family for cell, _ in cells))
    tracker.start(sweep_dir, families, f"upload {sweep_dir.name}", {"uploaded_from": str(sweep_dir)})
    for cell, cell_dir in cells:
        if tracker.wants_cell():
            tracker.log_cell(
                cell, cell_dir, summarize(pd.read_parquet(cell_dir / CELL_TABLE), [cell]), unless_logged=True
            )
    results_path = sweep_dir / RESULTS
    results = pd.read_parquet(results_path) if results_path.exists() else pd.DataFrame()
    every = [cell for cell, _ in cells]
    tracker.finish(
        sweep_dir,
        "FINISHED",
        {
            family: {
                "simulations": float(len(results)),
                **(utility_means(results, every, family) if len(results) else {}),
            }
            for family in families
        },
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
