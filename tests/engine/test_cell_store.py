"""The store of complete cells (sweep/cell_store.py): batches committed by their index, read back
whole, replaced cell by cell by later batches, and read in cell order a window at a time."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from sweep import cell_store
from sweep.cell_store import CellStore, CompleteCell
from sweep.cells import Cell
from tests.sweep_dirs import arrow_rows


def rows(index: int, replicates: int, offset: float = 0.0) -> pa.Table:
    frame = pd.DataFrame(
        {
            "cell": f"c{index}",
            "cell_index": index,
            "replicate": [r for r in range(replicates) for _ in "AB"],
            "mechanism": ["A", "B"] * replicates,
            "utility": [offset + index + r / 10 for r in range(2 * replicates)],
        }
    )
    return arrow_rows(frame)


def complete(index: int, replicates: int = 2, offset: float = 0.0, **extra) -> CompleteCell:
    world = {"family": {"name": "spot"}, "job": {"deadline": index}, "replicates": replicates}
    cell = Cell(
        index, f"c{index}", {"job.deadline": index}, str(index), world, f"config-{index}-{replicates}", f"world-{index}"
    )
    return CompleteCell(cell, rows(index, replicates, offset), **extra)


def summary(cells) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"cell": c.cell.name, "cell_index": c.index, "mechanism": m, "n": c.cell.replicates}
            for c in cells
            for m in "AB"
        ]
    )


def commit(store: CellStore, cells) -> None:
    store.commit(cells, summary(cells))


def test_a_committed_batch_reads_back_whole(tmp_path):
    store = CellStore(tmp_path)
    store.open_for_writing()
    tasks = pd.DataFrame({"cell": "c1", "cell_index": 1, "replicate": [0], "mechanism": ["A"], "bid": [2.5]})
    first = complete(1, tables={"tasks": tasks}, files={"w.png": b"\x89PNG"}, metrics={"regret": 0.5})
    commit(store, [complete(0), first])
    again = CellStore(tmp_path)
    assert sorted(again.entries) == [0, 1] and again.entries == store.entries
    entry = again.entries[1]
    assert (entry.config_hash, entry.world_hash, entry.replicates, entry.rows) == ("config-1-2", "world-1", 2, 4)
    assert entry.params == {"job.deadline": 1} and entry.metrics == {"regret": 0.5}
    assert again.config_of(entry) == first.cell.world
    assert again.files_of(entry) == {"w.png": b"\x89PNG"}
    pd.testing.assert_frame_equal(again.rows_of(entry), first.rows.to_pandas())
    pd.testing.assert_frame_equal(again.tables_of(entry)["tasks"], tasks)
    assert again.tables_of(again.entries[0]) == {}
    assert again.configs() == {0: complete(0).cell.world, 1: first.cell.world}
    assert again.complete("config-1-2", 1) and not again.complete("config-1-3", 1)


def test_a_later_batch_replaces_a_cell_and_windows_give_cell_order(tmp_path, monkeypatch):
    store = CellStore(tmp_path)
    store.open_for_writing()
    commit(store, [complete(0), complete(2), complete(5)])
    commit(store, [complete(1), complete(2, replicates=3, offset=100.0), complete(4)])
    commit(store, [complete(3)])
    again = CellStore(tmp_path)
    assert again.entries[2].batch == 1 and again.entries[2].replicates == 3
    expected = pd.concat(
        [complete(i).rows.to_pandas() for i in (0, 1)]
        + [complete(2, 3, 100.0).rows.to_pandas()]
        + [complete(i).rows.to_pandas() for i in (3, 4, 5)],
        ignore_index=True,
    )
    for window_rows in (1, 5, 1000):
        monkeypatch.setattr(cell_store, "WINDOW_ROWS", window_rows)
        got = pa.concat_tables(list(again.windows("rows"))).to_pandas()
        pd.testing.assert_frame_equal(got, expected)
    summary_rows = pa.concat_tables(list(again.windows("summary"))).to_pandas()
    assert summary_rows["cell_index"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert summary_rows.loc[summary_rows["cell_index"] == 2, "n"].tolist() == [3, 3]


def test_a_batch_without_its_index_is_removed_and_a_short_one_ignored(tmp_path):
    store = CellStore(tmp_path)
    store.open_for_writing()
    commit(store, [complete(0)])
    commit(store, [complete(1)])
    folder = tmp_path / "store"
    (folder / "cells-00001.parquet").unlink()  # killed before the index: not committed
    again = CellStore(tmp_path)
    assert sorted(again.entries) == [0]
    again.open_for_writing()
    assert sorted(p.name for p in folder.iterdir()) == [
        "cells-00000.parquet",
        "rows-00000.parquet",
        "summary-00000.parquet",
    ]
    rows(0, 1).to_pandas().to_parquet(folder / "rows-00000.parquet")  # fewer rows than the index says
    assert CellStore(tmp_path).entries == {}


def test_a_batch_takes_its_cells_in_cell_order(tmp_path):
    store = CellStore(tmp_path)
    store.open_for_writing()
    with pytest.raises(ValueError, match="cell order"):
        commit(store, [complete(1), complete(0)])


def test_cells_are_written_out_as_folders_and_never_over_one(tmp_path, capsys):
    from sweep.cell_files import main

    store = CellStore(tmp_path / "sweep")
    store.open_for_writing()
    commit(store, [complete(0, files={"series.parquet": b"abc"}), complete(1)])
    assert main([str(tmp_path / "sweep"), str(tmp_path / "out"), "--cells", "1"]) == 0
    assert sorted(p.name for p in (tmp_path / "out" / "1").iterdir()) == ["cell.parquet", "config.yaml"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "1" / "cell.parquet"), rows(1, 2).to_pandas())
    assert main([str(tmp_path / "sweep"), str(tmp_path / "out")]) == 2  # out/1 exists: nothing written
    assert "out/1 exists; nothing was written" in capsys.readouterr().err
    assert not (tmp_path / "out" / "0").exists()
    assert main([str(tmp_path / "sweep"), str(tmp_path / "other"), "--cells", "0,7"]) == 2
    assert "no complete cell 7" in capsys.readouterr().err
    assert main([str(tmp_path / "sweep"), str(tmp_path / "other"), "--cells", "0"]) == 0
    assert (tmp_path / "other" / "0" / "series.parquet").read_bytes() == b"abc"


def test_the_sweeps_files_are_the_same_bytes_whatever_the_batches(tmp_path):
    """Batches end where the clock says (engine.Batches) and a head start commits its cells first
    (sweep/head_start.py): results.parquet and summary.csv must not depend on it. 20,000 cells
    with long names: a window that spans two batches then gave other Parquet pages than one
    read from a single batch, unless written as one chunk."""
    from sweep.results import write_sweep

    cells = []
    for index in range(20_000):
        name = f"job.deadline={index},market.mean_price=0.{index % 10}".ljust(80, "x")
        table = pa.table(
            {
                "cell": pa.array([name] * 2),
                "cell_index": pa.array([index] * 2, type=pa.int64()),
                "replicate": pa.array([0, 0], type=pa.int64()),
                "mechanism": pa.array(["A", "B"]),
                "utility": pa.array([index + 0.25, index + 0.5]),
            }
        )
        world = {"family": {"name": "spot"}, "replicates": 1}
        cells.append(
            CompleteCell(Cell(index, name, {"job.deadline": index}, str(index), world, f"c{index}", "w"), table)
        )
    written = {}
    for name, cut in (("one", 20_000), ("two", 7_001)):
        store = CellStore(tmp_path / name)
        store.open_for_writing()
        commit(store, cells[:cut])
        commit(store, cells[cut:])
        write_sweep(tmp_path / name, [c.cell for c in cells], CellStore(tmp_path / name))
        written[name] = {file: (tmp_path / name / file).read_bytes() for file in ("results.parquet", "summary.csv")}
    assert written["two"] == written["one"]


@pytest.mark.parametrize(
    "params",
    [
        {"job.deadline": 6, "market.mean_price": 0.5, "flag": True, "name": "x", "none": None, "nan": float("nan")},
        {"pool.window": [1, 2], "pair": (1, "a")},  # lists and tuples read back as lists
        {"seed": pd.Timestamp(0)},  # written as text by default=str
    ],
)
def test_an_entrys_params_are_what_the_index_reads_back(tmp_path, params):
    done = complete(0)
    done.cell = Cell(0, "c0", params, "0", done.cell.world, "config-0", "world-0")
    store = CellStore(tmp_path)
    store.open_for_writing()
    store.commit([done], summary([done]))
    written = CellStore(tmp_path).entries[0].params
    entry = done.entry(0, cell_store._json(params))
    assert pd.Series(entry.params).to_json() == pd.Series(written).to_json()
    assert [type(v) for v in entry.params.values()] == [type(v) for v in written.values()]
