"""A sweep dir holds one sweep (docs/usage.md, "Stopping, resuming and extending a sweep").

``grid.json`` in a results dir records the cells of the sweep written there: for each cell its
folder, index, name, world hash and config hash. A run into a dir that holds one is checked
against it before any work:

- the same grid (the same worlds, whatever the order or spelling of the overrides, and each
  cell's ``replicates`` as many or more) resumes: each cell goes to the folder the record gives
  it, complete cells are loaded and the others simulated;
- any other grid is refused (``ConfigError``: exit 2) naming the cells that differ, and nothing
  is touched;
- with ``extend`` (``python -m sweep -m --extend ...``) the grid's cells are added to the
  recorded ones: cells of a recorded world resume in their folders, new worlds get folders of
  their own, and the sweep's files are rebuilt from every cell.

Fewer replicates than a complete cell holds would overwrite it with fewer rows: refused too.
The complete cells are those of the dir's store (``sweep/cell_store.py``). A dir written by an
earlier version, with a folder per cell (``<cell>/cell.json``), is refused with a message that
says so: its files stay as they are.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import NamedTuple

from .cell_store import STORE_DIR, CellStore
from .cells import Cell, cell_of_world
from .cli import counted
from .errors import ConfigError
from .family import family_of
from .results import atomic_write, atomic_write_text

GRID_FILE = "grid.json"
EXTEND_FLAG = "--extend"
OLD_CELL_FILE = "cell.json"  # a complete cell of the layout with a folder per cell
_SHOWN = 3  # cells named in a refusal; the rest are counted


class Recorded(NamedTuple):
    subdir: str
    index: int
    name: str
    world_hash: str
    config_hash: str


def read_record(out_dir: Path) -> list[Recorded] | None:
    """The recorded cells of the sweep in ``out_dir``; None for a dir without a record. A dir of
    the earlier layout with a folder per cell is refused (ConfigError)."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return None
    _refuse_folder_per_cell(out_dir)
    try:
        data = json.loads((out_dir / GRID_FILE).read_text())
        return [
            Recorded(c["subdir"], int(c["index"]), c["name"], c["world_hash"], c["config_hash"]) for c in data["cells"]
        ]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(
            f"{out_dir / GRID_FILE}: not a grid record this version can read ({err}); run into a new dir"
        ) from None


def _refuse_folder_per_cell(out_dir: Path) -> None:
    if (out_dir / STORE_DIR).is_dir():
        return
    old = next(iter(out_dir.glob(f"*/{OLD_CELL_FILE}")), None) or next(iter(out_dir.glob(f"*/*/{OLD_CELL_FILE}")), None)
    if old is not None:
        raise ConfigError(
            f"{out_dir} holds a sweep written by an earlier version of the engine, with a folder per cell "
            f"({old.relative_to(out_dir)}); this version keeps a sweep's cells in {STORE_DIR}/ and cannot "
            f"resume or extend it. Nothing was changed: its results.parquet and summary.csv stay as they are. "
            f"Run into a new dir"
        )


def completion(out_dir: Path) -> tuple[int, int] | None:
    """(complete cells, recorded cells) of the sweep in ``out_dir``; None without a record."""
    try:
        data = json.loads((Path(out_dir) / GRID_FILE).read_text())
        recorded = [(int(cell["index"]), cell["config_hash"]) for cell in data["cells"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    store = CellStore(out_dir)
    return sum(store.complete(config_hash, index) for index, config_hash in recorded), len(recorded)


def write_record(out_dir: Path, cells: Sequence[Cell]) -> None:
    """The dir's record of its cells (``GRID_FILE``): ``json.dumps({"cells": [{"subdir", "index",
    "name", "world_hash", "config_hash"}, ...]}, separators=(",", ":"))``, in cell order, its text
    built a cell at a time (a third of the time at 100,000 cells)."""
    text = encode_basestring_ascii
    entries = ",".join(
        f'{{"subdir":{text(cell.subdir)},"index":{int(cell.index)},"name":{text(cell.name)},'
        f'"world_hash":{text(cell.world_hash)},"config_hash":{text(cell.config_hash)}}}'
        for cell in sorted(cells, key=lambda cell: cell.index)
    )
    atomic_write_text(Path(out_dir) / GRID_FILE, '{"cells":[' + entries + "]}\n")


def reconcile(out_dir: Path, cells: Sequence[Cell], extend: bool = False) -> list[Cell]:
    """The cells to run into ``out_dir``: ``cells`` in the folders the dir's record gives them
    (plus, with ``extend``, the recorded cells this grid lacks); raises ConfigError, before
    anything is written, when the dir holds another sweep."""
    recorded = read_record(out_dir)
    if recorded is None:
        return list(cells)
    store = CellStore(out_dir)
    if not any(store.complete(rec.config_hash, rec.index) for rec in recorded):
        return list(cells)  # stopped before its first cell was complete: no results to keep
    matched = _match(recorded, cells)
    continued = {rec.subdir for rec in matched.values()}
    only_there = [rec for rec in recorded if rec.subdir not in continued]
    only_here = [cell for cell in cells if cell.index not in matched]
    if not extend and (only_there or only_here):
        raise ConfigError(_refusal(out_dir, recorded, cells, only_there, only_here))
    _refuse_fewer_replicates(out_dir, store, cells, matched)
    placed = _place(cells, matched, recorded)
    if not extend:
        return placed
    missing = [rec for rec in only_there if not store.complete(rec.config_hash, rec.index)]
    if missing:
        raise ConfigError(
            f"{out_dir} holds an unfinished sweep ({len(recorded) - len(missing):,} of {len(recorded):,} cells "
            f"complete; not complete: {_names(missing)}): resume it with its own command first, then add cells "
            f"with {EXTEND_FLAG}"
        )
    return placed + [_recorded_cell(store, rec) for rec in only_there]


def _match(recorded: Sequence[Recorded], cells: Sequence[Cell]) -> dict[int, Recorded]:
    """cell index -> the recorded cell it continues: the same config first, then the same world
    (another ``replicates``), each recorded cell at most once."""
    by_config: dict[str, list[Recorded]] = {}
    by_world: dict[str, list[Recorded]] = {}
    for rec in recorded:
        by_config.setdefault(rec.config_hash, []).append(rec)
    matched: dict[int, Recorded] = {}
    used: set[str] = set()
    for cell in cells:
        candidates = [rec for rec in by_config.get(cell.config_hash, ()) if rec.subdir not in used]
        if candidates:
            matched[cell.index] = candidates[0]
            used.add(candidates[0].subdir)
    for rec in recorded:
        if rec.subdir not in used:
            by_world.setdefault(rec.world_hash, []).append(rec)
    for cell in cells:
        if cell.index in matched:
            continue
        candidates = [rec for rec in by_world.get(cell.world_hash, ()) if rec.subdir not in used]
        if candidates:
            matched[cell.index] = candidates[0]
            used.add(candidates[0].subdir)
    return matched


def _refuse_fewer_replicates(
    out_dir: Path, store: CellStore, cells: Sequence[Cell], matched: dict[int, Recorded]
) -> None:
    shrunk = []
    for cell in cells:
        rec = matched.get(cell.index)
        if rec is None or rec.config_hash == cell.config_hash:
            continue
        entry = store.entries.get(rec.index)
        if entry and entry.config_hash == rec.config_hash and entry.world_hash == cell.world_hash:
            if entry.replicates > cell.replicates:
                shrunk.append(
                    f"{rec.name or rec.subdir} (cell {rec.index}: {entry.replicates:,} > {cell.replicates:,})"
                )
    if shrunk:
        raise ConfigError(
            f"{out_dir} holds complete cells with more replicates than this run asks for, which would overwrite "
            f"them with fewer rows: {_listed(shrunk)}; nothing was changed. Ask for as many replicates or more, "
            f"or run into a new dir"
        )


def _place(cells: Sequence[Cell], matched: dict[int, Recorded], recorded: Sequence[Recorded]) -> list[Cell]:
    """Each cell in its recorded folder with its recorded index; a new cell keeps its own folder
    unless a recorded cell has it, and gets an index no recorded cell has."""
    taken = {rec.subdir for rec in recorded}
    used = {rec.index for rec in recorded}
    next_subdir = max((int(s) for s in taken | {cell.subdir for cell in cells} if s.isdigit()), default=-1) + 1
    next_index = max(used | {cell.index for cell in cells}, default=-1) + 1
    placed = []
    for cell in cells:
        rec = matched.get(cell.index)
        if rec is not None:
            placed.append(_moved(cell, rec.index, rec.subdir))
            continue
        subdir, index = cell.subdir, cell.index
        if subdir in taken:
            subdir, next_subdir = str(next_subdir), next_subdir + 1
        if index in used:
            index, next_index = next_index, next_index + 1
        placed.append(_moved(cell, index, subdir))
    return placed


def _moved(cell: Cell, index: int, subdir: str) -> Cell:
    if (index, subdir) == (cell.index, cell.subdir):
        return cell
    moved = dataclasses.replace(cell, index=index, subdir=subdir)
    for cached in ("spec", "mechanisms"):
        if cached in cell.__dict__:
            moved.__dict__[cached] = cell.__dict__[cached]
    return moved


def _recorded_cell(store: CellStore, rec: Recorded) -> Cell:
    """A complete recorded cell, from the store (its config and overrides)."""
    entry = store.entries[rec.index]
    world = store.config_of(entry)
    try:
        spec = family_of(world)
    except (ConfigError, ValueError) as err:
        raise ConfigError(f"{store.folder}: cannot read the config of recorded cell {rec.index} ({err})") from None
    cell = cell_of_world(world, spec, tuple(spec.mechanism_names(world)), dict(entry.params), rec.index, rec.subdir)
    # the recorded hashes, which mark the cell complete, whatever this version would compute
    return dataclasses.replace(cell, name=rec.name or cell.name, config_hash=rec.config_hash, world_hash=rec.world_hash)


def _names(items: Iterable) -> str:
    return _listed(
        [
            f"{item.name or item.subdir} (cell {item.index})" if isinstance(item, Recorded) else item.name
            for item in items
        ]
    )


def _listed(texts: Sequence[str]) -> str:
    texts = list(texts)
    shown = "; ".join(texts[:_SHOWN])
    return shown + (f"; and {len(texts) - _SHOWN:,} more" if len(texts) > _SHOWN else "")


def _parsed(name: str) -> dict[str, str]:
    return dict(part.partition("=")[::2] for part in name.split(",") if "=" in part)


def _keys(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(every key, the keys whose value varies) of cells named ``key=value,...``."""
    values: dict[str, set[str | None]] = {}
    parsed = [_parsed(name) for name in names]
    for params in parsed:
        for key in params:
            values.setdefault(key, set())
    for params in parsed:
        for key in values:
            values[key].add(params.get(key))
    return list(values), [key for key, seen in values.items() if len(seen) > 1]


def _refusal(out_dir: Path, recorded, cells, only_there, only_here) -> str:
    (there, varying_there), (here, varying_here) = _keys(r.name for r in recorded), _keys(c.name for c in cells)
    count = counted(len(recorded), "cell")
    parts = [
        f"{out_dir} holds another sweep ({count}"
        + (f" over {', '.join(varying_there)}" if varying_there else "")
        + "); this run asks for "
        + counted(len(cells), "cell")
        + (f" over {', '.join(varying_here)}" if varying_here else "")
    ]
    if set(there) != set(here):
        parts.append(f"the keys differ ({', '.join(there) or 'none'} there, {', '.join(here) or 'none'} here)")
    if only_there:
        parts.append(f"{len(only_there):,} only there: {_names(only_there)}")
    if only_here:
        parts.append(f"{len(only_here):,} only here: {_names(only_here)}")
    if {rec.name for rec in only_there} & {cell.name for cell in only_here}:
        parts.append(
            "cells of the same name differ in a value outside the overrides (another experiment, seed or code version)"
        )
    return (
        "; ".join(parts) + ". Nothing was changed. Run into a new dir, or add this grid's cells to that "
        f"sweep with {EXTEND_FLAG} (python -m sweep -m {EXTEND_FLAG} ...)"
    )


def strip_extend_flag(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` without ``--extend`` and whether it was there."""
    kept = [arg for arg in argv if arg != EXTEND_FLAG]
    return kept, len(kept) != len(argv)


class HydraFiles:
    """Hydra's own files in an existing output dir (``multirun.yaml``, ``.hydra/``, ``*.log``), as
    they were before the command: Hydra rewrites them before the project's code runs, so a run
    that is refused or stops puts them back (``restore``) and leaves the dir as it found it."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.saved: dict[Path, tuple[bytes, float]] | None = None
        if self.folder.is_dir():
            self.saved = {path: (path.read_bytes(), path.stat().st_mtime) for path in self._paths()}

    def _paths(self) -> list[Path]:
        top = [
            path
            for path in self.folder.iterdir()
            if path.is_file() and (path.name == "multirun.yaml" or path.suffix == ".log")
        ]
        hydra = self.folder / ".hydra"
        return top + (sorted(path for path in hydra.iterdir() if path.is_file()) if hydra.is_dir() else [])

    def restore(self) -> None:
        if self.saved is None or not self.folder.is_dir():
            return
        for path in self._paths():
            if path not in self.saved:
                path.unlink(missing_ok=True)
        for path, (data, mtime) in self.saved.items():
            if not path.exists() or path.read_bytes() != data:
                atomic_write(path, lambda tmp, data=data: Path(tmp).write_bytes(data))
                os.utime(path, (mtime, mtime))
        hydra = self.folder / ".hydra"
        if hydra.is_dir() and not any(hydra.iterdir()):
            hydra.rmdir()
