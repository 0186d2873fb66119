"""A sweep dir holds one sweep (sweep/sweep_dir.py): the same grid resumes, another grid is
refused before anything is written, ``extend`` adds cells and rebuilds the sweep's files from
every cell, and no path overwrites a complete cell of another config."""

from __future__ import annotations

import dataclasses
import json
import time

import pandas as pd
import pytest

from sweep.cell_store import CellStore
from sweep.engine import Batches, run_cells
from sweep.errors import ConfigError
from sweep.sweep_dir import GRID_FILE, HydraFiles, completion, write_record

from .conftest import run_cli
from .test_side_tables import OFF, in_process_queue, make_cell, runner

pytestmark = pytest.mark.sweeps


def run(monkeypatch, cells, out, extend=False):
    calls = in_process_queue(monkeypatch, seed=5)
    run_cells(cells, out, runner(chunk_size=2), OFF, announce=False, extend=extend)
    return {(chunk.cell, r) for chunk in calls for r in range(chunk.rep_start, chunk.rep_stop)}


def snapshot(folder):
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def old_grid():
    return [make_cell(0, 3, replicates=3), make_cell(1, 4, replicates=2)]


def test_the_grid_is_recorded_and_counted(monkeypatch, tmp_path):
    run(monkeypatch, old_grid(), tmp_path)
    record = json.loads((tmp_path / GRID_FILE).read_text())
    assert [(cell["subdir"], cell["name"]) for cell in record["cells"]] == [("0", "job.tasks=3"), ("1", "job.tasks=4")]
    assert completion(tmp_path) == (2, 2)
    assert CellStore(tmp_path).entries[0].replicates == 3


def test_the_record_is_the_json_of_its_cells_in_cell_order(tmp_path):
    cells = [make_cell(1, 4), make_cell(0, 3)]
    cells[0] = dataclasses.replace(cells[0], name='say "é",\\x', subdir="sub/1")
    write_record(tmp_path, cells)
    fields = ("subdir", "index", "name", "world_hash", "config_hash")
    expected = {"cells": [{f: getattr(c, f) for f in fields} for c in sorted(cells, key=lambda c: c.index)]}
    assert (tmp_path / GRID_FILE).read_text() == json.dumps(expected, separators=(",", ":")) + "\n"


def test_the_same_grid_in_another_order_resumes_in_the_recorded_folders(monkeypatch, tmp_path):
    run(monkeypatch, old_grid(), tmp_path)
    before = snapshot(tmp_path)
    swapped = [
        dataclasses.replace(make_cell(0, 4, replicates=2), subdir="0"),
        dataclasses.replace(make_cell(1, 3, replicates=3), subdir="1"),
    ]
    assert run(monkeypatch, swapped, tmp_path) == set()
    after = snapshot(tmp_path)
    assert {name: data for name, data in after.items() if "/" in name} == {
        name: data for name, data in before.items() if "/" in name
    }
    assert after["results.parquet"] == before["results.parquet"]


def test_another_grid_is_refused_naming_the_cells_and_touching_nothing(monkeypatch, tmp_path):
    run(monkeypatch, old_grid(), tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError) as refused:
        run(monkeypatch, [make_cell(0, 5, replicates=2)], tmp_path)
    message = str(refused.value)
    assert f"{tmp_path} holds another sweep (2 cells over job.tasks); this run asks for 1 cell" in message
    assert "2 only there: job.tasks=3 (cell 0); job.tasks=4 (cell 1)" in message
    assert "1 only here: job.tasks=5" in message and "--extend" in message
    assert snapshot(tmp_path) == before


def test_a_smaller_grid_of_the_same_cells_is_refused(monkeypatch, tmp_path):
    """The reported data loss: a 2-cell grid into a bigger sweep's dir rewrote results.parquet."""
    run(monkeypatch, old_grid(), tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError, match=r"1 only there: job.tasks=4 \(cell 1\)"):
        run(monkeypatch, [make_cell(0, 3, replicates=3)], tmp_path)
    assert snapshot(tmp_path) == before


def test_extend_adds_cells_and_rebuilds_the_sweep_from_every_cell(monkeypatch, tmp_path):
    run(monkeypatch, old_grid(), tmp_path / "grown")
    before = snapshot(tmp_path / "grown")
    # a new grid numbered from 0 again, as Hydra numbers every multirun: one old world, one new
    simulated = run(
        monkeypatch, [make_cell(0, 4, replicates=2), make_cell(1, 6, replicates=2)], tmp_path / "grown", extend=True
    )
    assert simulated == {(2, 0), (2, 1)}  # only the new world, in a new folder with a new index
    after = snapshot(tmp_path / "grown")
    assert all(after[name] == data for name, data in before.items() if "/" in name)  # old cells untouched
    run(monkeypatch, old_grid() + [make_cell(2, 6, replicates=2)], tmp_path / "fresh")
    for name in ("results.parquet", "summary.csv", "tasks.parquet"):
        assert after[name] == (tmp_path / "fresh" / name).read_bytes(), name
    assert (
        run(
            monkeypatch, [make_cell(0, 4, replicates=2), make_cell(1, 6, replicates=2)], tmp_path / "grown", extend=True
        )
        == set()
    )  # the same extension again resumes
    assert completion(tmp_path / "grown") == (3, 3)
    assert run(monkeypatch, old_grid() + [make_cell(2, 6, replicates=2)], tmp_path / "grown") == set()


def test_extend_refuses_an_unfinished_sweep(monkeypatch, tmp_path):
    monkeypatch.setattr(Batches, "MAX_ROWS", 1)  # a batch per cell
    run(monkeypatch, old_grid(), tmp_path)
    (tmp_path / "store" / "cells-00001.parquet").unlink()  # as if stopped before cell 1's batch was committed
    with pytest.raises(ConfigError, match=r"unfinished sweep \(1 of 2 cells complete; not complete: job.tasks=4"):
        run(monkeypatch, [make_cell(0, 6, replicates=2)], tmp_path, extend=True)


def test_extend_still_refuses_fewer_replicates(monkeypatch, tmp_path):
    run(monkeypatch, old_grid(), tmp_path)
    with pytest.raises(ConfigError, match="more replicates than this run asks for"):
        run(monkeypatch, [make_cell(0, 3, replicates=1)], tmp_path, extend=True)


def test_a_dir_of_the_layout_with_a_folder_per_cell_is_refused_and_kept(monkeypatch, tmp_path):
    """Sweep dirs an earlier version wrote (``<cell>/cell.json``) are neither resumed nor changed."""
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "cell.json").write_text(json.dumps({"name": "job.tasks=3", "config_hash": "h"}))
    (tmp_path / "results.parquet").write_bytes(b"old results")
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError, match=r"written by an earlier version of the engine, with a folder per cell"):
        run(monkeypatch, old_grid(), tmp_path)
    assert snapshot(tmp_path) == before


def test_hydra_files_are_put_back_as_they_were(tmp_path):
    (tmp_path / ".hydra").mkdir()
    (tmp_path / "multirun.yaml").write_text("old grid\n")
    (tmp_path / ".hydra" / "config.yaml").write_text("old config\n")
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "cell.json").write_text("{}")
    saved = HydraFiles(tmp_path)
    (tmp_path / "multirun.yaml").write_text("new grid\n")
    (tmp_path / ".hydra" / "overrides.yaml").write_text("new\n")
    (tmp_path / "__main__.log").write_text("new log\n")
    saved.restore()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        ".hydra/config.yaml",
        "0/cell.json",
        "multirun.yaml",
    ]
    assert (tmp_path / "multirun.yaml").read_text() == "old grid\n"
    HydraFiles(tmp_path / "absent").restore()  # a new dir: nothing to put back


@pytest.mark.slow
def test_another_grid_into_a_finished_sweeps_dir_exits_2_and_extend_adds_it(tmp_path):
    """As a user would: a 2-cell grid run into the dir of a finished 4-cell sweep."""
    sweep_dir = tmp_path / "sweep"
    common = ["replicates=20", "tracking=off", "runner.progress=false", f"hydra.sweep.dir={sweep_dir}"]
    first = run_cli("-m", "job.deadline=8,10", "job.workload=60,80", *common)
    assert first.returncode == 0, first.stderr[-3000:]
    before = snapshot(sweep_dir)
    started = time.monotonic()
    other = run_cli("-m", "job.deadline=8,9", "job.workload=60", *common)
    assert time.monotonic() - started < 10  # checked before Ray starts: 1.8 s measured
    assert other.returncode == 2
    last = other.stderr.strip().splitlines()[-1]
    assert last.startswith(f"Error: {sweep_dir} holds another sweep (4 cells over job.deadline, job.workload)"), last
    assert "only here: job.deadline=9,job.workload=60" in last and "--extend" in last
    assert "Traceback" not in other.stderr
    assert snapshot(sweep_dir) == before  # multirun.yaml too

    extended = run_cli("-m", "--extend", "job.deadline=8,9", "job.workload=60", *common)
    assert extended.returncode == 0, extended.stderr[-3000:]
    assert "Done: 5 cells, 60 simulations" in extended.stdout and "4 cells were already complete" in extended.stdout
    after = snapshot(sweep_dir)
    assert all(after[name] == data for name, data in before.items() if "/" in name)
    results = pd.read_parquet(sweep_dir / "results.parquet")
    assert results.groupby("cell_index")["job.deadline"].first().tolist() == [8, 8, 10, 10, 9]


def test_a_sweep_stopped_before_its_first_cell_holds_nothing_to_keep(monkeypatch, tmp_path):
    run(monkeypatch, old_grid(), tmp_path)
    for part in (tmp_path / "store").glob("cells-*.parquet"):
        part.unlink()
    assert run(monkeypatch, [make_cell(0, 5, replicates=2)], tmp_path) == {(0, 0), (0, 1)}
    assert completion(tmp_path) == (1, 1)
