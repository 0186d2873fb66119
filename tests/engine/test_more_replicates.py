"""Rerunning a sweep with another ``replicates`` reuses the replicates an earlier run of the
same world already simulated (docs/architecture.md, "Results and resume"): replicate ``r``
draws from the world hash and ``r`` only, so the files equal those of a fresh run."""

from __future__ import annotations

import pandas as pd
import pytest

from sweep.cell_store import CellStore
from sweep.errors import ConfigError

from .test_side_tables import OFF, in_process_queue, make_cell, runner

pytestmark = pytest.mark.sweeps

FILES = ("results.parquet", "tasks.parquet", "summary.csv")


def grid(replicates: tuple[int, int], tasks: tuple[int, int] = (3, 4)):
    return [make_cell(0, tasks[0], replicates=replicates[0]), make_cell(1, tasks[1], replicates=replicates[1])]


def run(monkeypatch, cells, out, chunk_size=1):
    from sweep.engine import run_cells

    calls = in_process_queue(monkeypatch, seed=5)
    run_cells(cells, out, runner(chunk_size=chunk_size), OFF, announce=False)
    return {(chunk.cell, r) for chunk in calls for r in range(chunk.rep_start, chunk.rep_stop)}


def assert_same_files(a, b):
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    stores = CellStore(a), CellStore(b)
    for index in (0, 1):
        entries = [store.entries[index] for store in stores]
        pd.testing.assert_frame_equal(*(store.rows_of(e) for store, e in zip(stores, entries)))
        pd.testing.assert_frame_equal(*(store.tables_of(e)["tasks"] for store, e in zip(stores, entries)))


def test_more_replicates_simulates_only_the_new_ones(monkeypatch, tmp_path):
    run(monkeypatch, grid((2, 1)), tmp_path / "grown")
    simulated = run(monkeypatch, grid((7, 5)), tmp_path / "grown")
    assert simulated == {(0, r) for r in range(2, 7)} | {(1, r) for r in range(1, 5)}
    run(monkeypatch, grid((7, 5)), tmp_path / "fresh", chunk_size=1000)
    assert_same_files(tmp_path / "grown", tmp_path / "fresh")


def test_fewer_replicates_are_refused_and_change_nothing(monkeypatch, tmp_path):
    """Fewer replicates would rewrite complete cells with fewer rows (sweep/sweep_dir.py)."""
    run(monkeypatch, grid((7, 5)), tmp_path / "shrunk")
    before = {name: (tmp_path / "shrunk" / name).read_bytes() for name in FILES}
    with pytest.raises(ConfigError, match=r"more replicates than this run asks for.*cell 0: 7 > 3"):
        run(monkeypatch, grid((3, 2)), tmp_path / "shrunk")
    assert {name: (tmp_path / "shrunk" / name).read_bytes() for name in FILES} == before


def test_another_world_in_the_same_folder_is_refused(monkeypatch, tmp_path):
    run(monkeypatch, grid((2, 2)), tmp_path)
    with pytest.raises(ConfigError, match="holds another sweep"):
        run(monkeypatch, grid((3, 3), tasks=(3, 6)), tmp_path)


def test_the_cells_of_a_damaged_batch_are_not_reused(monkeypatch, tmp_path):
    run(monkeypatch, grid((2, 2)), tmp_path)
    part = tmp_path / "store" / "table-tasks-00000.parquet"
    pd.read_parquet(part).iloc[:-1].to_parquet(part, index=False)  # the batch's index counts one row more
    simulated = run(monkeypatch, grid((3, 3)), tmp_path)
    assert simulated == {(cell, r) for cell in (0, 1) for r in range(3)}
    run(monkeypatch, grid((3, 3)), tmp_path / "fresh", chunk_size=1000)
    assert_same_files(tmp_path, tmp_path / "fresh")
