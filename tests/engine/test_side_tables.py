"""Side tables of a family (docs/architecture.md, "Family interface" and "Results"): a row's
``"tables"`` become ``<name>.parquet`` per cell and per sweep, in canonical order.

This module is also the fake family the tests use: a cell names it by ``family.module``, as any
family is found (sweep/family.py), so neither the driver nor a Ray worker needs to register it.
Most tests run the engine with an in-process queue (the real ``SimulationWorker``, chunks in a
shuffled order, no Ray); one slow test uses the Ray pool.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from sweep import task_queue
from sweep.cell_store import CellStore
from sweep.cells import Cell
from sweep.engine import run_cells
from sweep.schema import RunnerConfig, TrackingConfig
from sweep.seeding import replicate_rng, stable_hash
from sweep.worker import TABLES_KEY, SimulationWorker

pytestmark = pytest.mark.sweeps

FAKE = "side_tables_fake"
TASK_COLUMNS = ["cell", "cell_index", "replicate", "mechanism", "task", "bid", "payment", "admitted"]

# ---- the fake family -------------------------------------------------------------------------
NAME = FAKE
SECTIONS = ("job",)
SUMMARY_COLUMNS = ("cost", "completion_time")


def prepare(config):
    return {
        "mechanisms": list(config["mechanisms"]),
        "tasks": int(config["job"]["tasks"]),
        "emit": config["job"].get("emit", "tasks"),
    }


def mechanism_names(config):
    return list(config["mechanisms"])


def simulate_replicate(prepared, replicate, rng):
    """Rows in mechanism order; 1..tasks tasks, varying by replicate."""
    n = 1 + replicate % prepared["tasks"]
    bids = rng.uniform(0.0, 1.0, size=n)
    rows = []
    for m, mechanism in enumerate(prepared["mechanisms"]):
        payment = bids * (m + 1)
        admitted = bids > 0.3 * (m + 1)
        row = {
            "mechanism": mechanism,
            "utility": float(payment[admitted].sum()),
            "cost": float(n),
            "completion_time": float(replicate),
        }
        emit = prepared["emit"]
        if emit == "tasks":
            row["tables"] = {
                "tasks": {
                    "task": list(range(n))[::-1],
                    "bid": bids[::-1],
                    "payment": payment[::-1],
                    "admitted": admitted[::-1],
                }
            }
        elif emit != "none":  # a bad table, for the validation tests
            row["tables"] = emit(n)
        rows.append(row)
    return rows


# ---- helpers ---------------------------------------------------------------------------------
def make_cell(index: int, tasks: int, replicates: int = 7, emit="tasks") -> Cell:
    world = {
        "family": {"name": FAKE, "module": __name__},
        "job": {"tasks": tasks},
        "mechanisms": ["B", "A", "C"],
        "replicates": replicates,
        "seed": 0,
    }
    if emit != "tasks":
        world["job"]["emit"] = emit
    seed_world = {k: v for k, v in world.items() if k != "replicates"}
    return Cell(
        index=index,
        name=f"job.tasks={tasks}",
        params={"job.tasks": tasks},
        subdir=str(index),
        world=world,
        config_hash=stable_hash(world),
        world_hash=stable_hash(seed_world),
    )


def cells() -> list[Cell]:
    return [make_cell(0, 3), make_cell(1, 4, replicates=5)]


def in_process_queue(monkeypatch, seed: int | None = 0):
    """Run the engine's chunks with the real worker in this process, in a shuffled order (no Ray)."""
    import ray

    calls = []

    def run_chunks(chunks, payload_refs, runner, workers, on_done):
        chunks = list(chunks)
        if seed is not None:
            random.Random(seed).shuffle(chunks)
        worker = SimulationWorker()
        for chunk in chunks:
            calls.append(chunk)
            on_done(chunk, worker.run_chunk(payload_refs[chunk.cell], chunk.rep_start, chunk.rep_stop))

    monkeypatch.setattr(task_queue, "connect", lambda runner, family_modules=(): 2)
    monkeypatch.setattr(task_queue, "run_chunks", run_chunks)
    monkeypatch.setattr(ray, "put", lambda value: value)
    return calls


def runner(chunk_size: int, workers: int = 2) -> RunnerConfig:
    return RunnerConfig(num_workers=workers, chunk_size=chunk_size, progress=False)


OFF = TrackingConfig(kind="off")


def expected_tasks(cell: Cell) -> pd.DataFrame:
    """The cell's tasks table computed by hand: replicate, then mechanism order, then the table's order."""
    prepared = prepare(cell.world)
    parts = []
    for replicate in range(cell.replicates):
        rows = simulate_replicate(prepared, replicate, replicate_rng(cell.world_hash, replicate))
        by_mechanism = {row["mechanism"]: row for row in rows}
        for mechanism in cell.world["mechanisms"]:
            table = by_mechanism[mechanism]["tables"]["tasks"]
            n = len(table["task"])
            parts.append(
                pd.DataFrame(
                    {
                        "cell": cell.name,
                        "cell_index": cell.index,
                        "replicate": replicate,
                        "mechanism": mechanism,
                        **table,
                    },
                    index=range(n),
                )
            )
    return pd.concat(parts, ignore_index=True)


# ---- tests -----------------------------------------------------------------------------------
def cell_table(sweep_dir, index: int) -> pd.DataFrame:
    """The cell's ``tasks`` table as the store keeps it."""
    store = CellStore(sweep_dir)
    return store.tables_of(store.entries[index])["tasks"]


def test_worker_takes_the_tables_out_of_the_rows():
    cell = make_cell(0, 3)
    columns = SimulationWorker().run_chunk(cell.payload(), 2, 4)
    assert "tables" not in columns and len(columns["utility"]) == 6
    tasks = columns[TABLES_KEY]["tasks"]
    assert list(tasks) == ["replicate", "mechanism", "task", "bid", "payment", "admitted"]
    # replicate 2 has 3 tasks, replicate 3 has 1; rows in the order of mechanism_names (B, A, C)
    assert list(tasks["replicate"]) == [2] * 9 + [3] * 3
    assert list(tasks["mechanism"]) == ["B"] * 3 + ["A"] * 3 + ["C"] * 3 + ["B", "A", "C"]
    assert list(tasks["task"]) == [2, 1, 0] * 3 + [0, 0, 0]
    assert tasks["admitted"].dtype == bool and tasks["bid"].dtype == float


def test_cell_and_sweep_tables_in_canonical_order(monkeypatch, tmp_path, capsys):
    in_process_queue(monkeypatch, seed=3)
    results = run_cells(cells(), tmp_path, runner(chunk_size=4), OFF)  # 4 // 3 mechanisms: 1 replicate per chunk
    assert "tables" not in results and TABLES_KEY not in results
    store = CellStore(tmp_path)
    assert "tables" not in store.rows_of(store.entries[0])
    sweep_parts = []
    for cell in cells():
        got = cell_table(tmp_path, cell.index)
        assert list(got.columns) == TASK_COLUMNS
        pd.testing.assert_frame_equal(got, expected_tasks(cell), check_dtype=False)
        assert got["replicate"].dtype == np.int64 and got["admitted"].dtype == bool
        assert store.entries[cell.index].tables == {"tasks": {"rows": len(got), "columns": TASK_COLUMNS}}
        sweep_parts.append(got.assign(**{"job.tasks": cell.params["job.tasks"]}))
    sweep = pd.read_parquet(tmp_path / "tasks.parquet")
    assert list(sweep.columns) == ["cell", "cell_index", "job.tasks", *TASK_COLUMNS[2:]]
    expected = pd.concat(sweep_parts, ignore_index=True)[list(sweep.columns)]
    pd.testing.assert_frame_equal(sweep, expected, check_dtype=False)
    assert f"tasks (the family's side table, all cells): {tmp_path / 'tasks.parquet'}" in capsys.readouterr().out


def test_same_files_whatever_the_chunks_and_their_order(monkeypatch, tmp_path):
    in_process_queue(monkeypatch, seed=None)
    run_cells(cells(), tmp_path / "a", runner(chunk_size=1000), OFF, announce=False)
    in_process_queue(monkeypatch, seed=7)
    run_cells(cells(), tmp_path / "b", runner(chunk_size=1), OFF, announce=False)
    for name in ("tasks.parquet", "results.parquet", "summary.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    for index in (0, 1):
        pd.testing.assert_frame_equal(cell_table(tmp_path / "a", index), cell_table(tmp_path / "b", index))


def test_resume_reads_the_tables_back_from_the_store(monkeypatch, tmp_path):
    in_process_queue(monkeypatch)
    run_cells(cells(), tmp_path, runner(chunk_size=6), OFF, announce=False)
    before = pd.read_parquet(tmp_path / "tasks.parquet")
    (tmp_path / "results.parquet").unlink()
    (tmp_path / "tasks.parquet").unlink()
    calls = in_process_queue(monkeypatch)
    run_cells(cells(), tmp_path, runner(chunk_size=6), OFF, announce=False)
    assert calls == []  # every cell was complete
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "tasks.parquet"), before)
    # the cells of a batch whose side table went missing are not complete: they are simulated again
    batch = CellStore(tmp_path).entries[1].batch
    (tmp_path / "store" / f"table-tasks-{batch:05d}.parquet").unlink()
    calls = in_process_queue(monkeypatch)
    run_cells(cells(), tmp_path, runner(chunk_size=6), OFF, announce=False)
    assert calls and {chunk.cell for chunk in calls} == {0, 1}
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "tasks.parquet"), before)


def test_a_sweep_without_tables_writes_nothing_new(monkeypatch, tmp_path, capsys):
    in_process_queue(monkeypatch)
    run_cells([make_cell(0, 3, emit="none")], tmp_path, runner(chunk_size=6), OFF)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "grid.json",
        "results.parquet",
        "store",
        "summary.csv",
        "timing.json",
    ]
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == [
        "cells-00000.parquet",
        "rows-00000.parquet",
        "summary-00000.parquet",
    ]
    assert CellStore(tmp_path).entries[0].tables == {}
    assert "side table" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "emit, message",
    [
        (lambda n: {"results": {"x": [1] * n}}, "side table name 'results' collides"),
        (lambda n: {"series": {"x": [1] * n}}, "side table name 'series' collides"),
        (lambda n: {"../tasks": {"x": [1] * n}}, "not a safe identifier"),
        (lambda n: {"9tasks": {"x": [1] * n}}, "not a safe identifier"),
        (lambda n: {"tasks": {"x": [1] * n, "y": [1] * (n + 1)}}, "differ in length"),
        (lambda n: {"tasks": {"mechanism": ["z"] * n}}, "column named 'mechanism'"),
        (lambda n: {"tasks": {"x": np.zeros((n, 2))}}, "must be 1-D"),
        (lambda n: {"tasks": {"x": [[1], [1, 2]]}}, "not a 1-D array"),
        (lambda n: [1, 2], "must be a dict"),
    ],
)
def test_bad_tables_raise_a_clear_error(emit, message):
    cell = make_cell(0, 3, emit=emit)
    with pytest.raises(ValueError, match=message):
        SimulationWorker().run_chunk(cell.payload(), 0, 2)


def test_a_side_table_may_not_share_a_cell_outputs_name(monkeypatch, tmp_path):
    import dataclasses

    in_process_queue(monkeypatch)
    cell = make_cell(0, 3)
    outputs = {"tables": {"tasks": pd.DataFrame({"a": [1]})}}
    cell.__dict__["spec"] = dataclasses.replace(cell.spec, cell_outputs=lambda world, frame: outputs)
    with pytest.raises(ValueError, match="cell_outputs"):
        run_cells([cell], tmp_path, runner(chunk_size=6), OFF, announce=False)
    assert not CellStore(tmp_path).entries


def test_same_files_with_one_or_two_ray_workers(tmp_path):
    try:
        run_cells(cells(), tmp_path / "one", runner(chunk_size=3, workers=1), OFF, announce=False)
        run_cells(cells(), tmp_path / "two", runner(chunk_size=7, workers=2), OFF, announce=False)
    finally:
        task_queue.close_pool()
    for name in ("tasks.parquet", "results.parquet", "summary.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    for cell in cells():
        got = cell_table(tmp_path / "two", cell.index)
        pd.testing.assert_frame_equal(got, expected_tasks(cell), check_dtype=False)


def test_a_cell_finished_by_its_worker_writes_the_bytes_the_driver_would(monkeypatch, tmp_path):
    """A chunk that is a whole cell comes back as the cell's rows in canonical order
    (sweep/worker.py): the same files, byte for byte, as the driver builds from the chunks."""
    import ray

    whole_flags = []

    def run_chunks(chunks, payload_refs, runner, workers, on_done, honour_whole):
        worker = SimulationWorker()
        for chunk in chunks:
            whole_flags.append(chunk.whole)
            on_done(
                chunk,
                worker.run_chunk(
                    payload_refs[chunk.cell], chunk.rep_start, chunk.rep_stop, chunk.whole and honour_whole
                ),
            )

    monkeypatch.setattr(task_queue, "connect", lambda runner, family_modules=(): 2)
    monkeypatch.setattr(ray, "put", lambda value: value)
    grid = [make_cell(0, 3, replicates=4, emit="none"), make_cell(1, 4, replicates=9, emit="none")]
    outputs = {}
    for honour in (True, False):
        monkeypatch.setattr(task_queue, "run_chunks", lambda *args, h=honour: run_chunks(*args, honour_whole=h))
        out = tmp_path / str(honour)
        run_cells(grid, out, runner(chunk_size=12), OFF, announce=False)
        outputs[honour] = {
            str(p.relative_to(out)): p.read_bytes()
            for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "timing.json"
        }
    assert whole_flags[:3] == [True, False, False]  # cell 0 is one chunk (12 rows); cell 1 is two
    assert outputs[True] == outputs[False]
    assert {"store/rows-00000.parquet", "store/cells-00000.parquet", "results.parquet", "summary.csv"} <= set(
        outputs[True]
    )
