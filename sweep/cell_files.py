"""Write complete cells out of a sweep's store as folders of files, one folder per cell.

    python -m sweep.cell_files SWEEP_DIR DEST [--cells 0,5,12]

Each folder ``DEST/<cell index>/`` holds the cell's ``cell.parquet`` (its rows),
``config.yaml`` (its resolved config), its side tables and the files of its cell outputs
(``policy_weights.parquet``, ``policy_weights.png``, ``series.parquet``, ...): what a child
run in MLflow holds as artifacts. A folder that exists already is not touched (an error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cell_store import CellStore
from .cli import counted
from .results import stored_cell_files


def export(sweep_dir: Path, dest: Path, indices: list[int] | None = None) -> list[Path]:
    store = CellStore(sweep_dir)
    if not store.entries:
        raise ValueError(f"{sweep_dir}: no complete cells (no committed batch in {store.folder})")
    chosen = sorted(store.entries) if indices is None else indices
    unknown = [index for index in chosen if index not in store.entries]
    if unknown:
        raise ValueError(f"{sweep_dir}: no complete cell {', '.join(map(str, unknown))}")
    taken = [dest / str(index) for index in chosen if (dest / str(index)).exists()]
    if taken:
        raise ValueError(f"{taken[0]} exists; nothing was written (choose another DEST)")
    written = []
    for index in chosen:
        folder = dest / str(index)
        folder.mkdir(parents=True)
        for name, data in stored_cell_files(store, store.entries[index]).items():
            (folder / name).write_bytes(data)
        written.append(folder)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sweep.cell_files", description=__doc__.splitlines()[0])
    parser.add_argument("sweep_dir", type=Path)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--cells", help="cell indices, comma-separated (default: every complete cell)")
    args = parser.parse_args(argv)
    try:
        indices = [int(part) for part in args.cells.split(",")] if args.cells else None
    except ValueError:
        sys.stderr.write(f"Error: --cells must be cell indices separated by commas, got {args.cells!r}\n")
        return 2
    try:
        written = export(args.sweep_dir, args.dest, indices)
    except ValueError as err:
        sys.stderr.write(f"Error: {err}\n")
        return 2
    print(f"wrote {counted(len(written), 'cell folder')} in {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
