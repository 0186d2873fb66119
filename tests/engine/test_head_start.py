"""The head start (sweep/head_start.py): cells simulated while the launcher composes the rest give
the same files as a sweep without one, and a bad cell found after it began still leaves nothing."""

from __future__ import annotations

import pytest

from .conftest import run_cli

pytestmark = pytest.mark.sweeps

GRID = ["job.deadline=range(6,24)", "job.n_max=8,9", "replicates=2", "tracking=off", "runner.num_workers=2"]
SLOW = {"SLOW_COMPOSE_SECONDS": "0.25"}  # 36 cells: 9 s of composing, longer than Ray's start


@pytest.mark.slow
def test_cells_simulated_while_composing_give_the_same_files(tmp_path):
    slow = run_cli("-m", *GRID, f"hydra.sweep.dir={tmp_path / 'slow'}", module="tests.engine.slow_compose", env=SLOW)
    assert slow.returncode == 0, slow.stderr[-3000:]
    assert "simulated meanwhile" in slow.stdout, slow.stdout[-2000:]
    plain = run_cli("-m", *GRID, f"hydra.sweep.dir={tmp_path / 'plain'}")
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert "simulated meanwhile" not in plain.stdout  # composing 36 cells ends before Ray is up
    for name in ("results.parquet", "summary.csv"):
        assert (tmp_path / "slow" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name


@pytest.mark.slow
def test_a_bad_cell_after_the_head_start_began_leaves_nothing(tmp_path):
    out = tmp_path / "sweep"
    bad = ["job.deadline=" + ",".join(str(d) for d in [*range(6, 38), 0]), "replicates=2", "tracking=off"]
    proc = run_cli("-m", *bad, f"hydra.sweep.dir={out}", module="tests.engine.slow_compose", env=SLOW)
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-3000:])
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "job.deadline" in errors[0] and "cell #32" in errors[0], proc.stderr[-3000:]
    assert not out.exists()


def test_kept_results_come_back_per_cell_and_only_for_the_same_chunk_and_config(monkeypatch):
    """``HeadStart``'s bookkeeping without Ray: rows joined into blocks come back as each cell's
    own table; a result with side tables as it was; nothing for another chunk or config; full
    at ``MAX_ROWS``."""
    import pyarrow as pa

    from sweep.head_start import HeadStart
    from sweep.schema import RunnerConfig
    from sweep.task_queue import Chunk
    from sweep.worker import CELL_KEY

    monkeypatch.setattr(HeadStart, "BLOCK_CELLS", 2)
    monkeypatch.setattr(HeadStart, "MAX_ROWS", 8)
    head = HeadStart(RunnerConfig(), workers=2)
    head._hashes = {i: f"h{i}" for i in range(4)}
    tables = {i: pa.table({"cell_index": [i] * 2, "utility": [i + 0.5, i + 0.25]}) for i in (0, 1, 3)}
    chunks = {i: Chunk(i, 0, 1, 2, True) for i in range(4)}
    side = {"replicate": [0, 0], "mechanism": ["A", "B"], "utility": [1.0, 2.0], "_tables": {"t": {}}}
    for i in (0, 1, 3):
        head._keep(chunks[i], {CELL_KEY: tables[i]})
        assert not head.stopped
    head._keep(chunks[2], side)
    assert head.stopped and head.rows == 8 and len(head) == 4  # full: the next round takes no cell
    for i in (0, 1, 3):
        assert head.result(i, chunks[i], f"h{i}")[CELL_KEY].equals(tables[i])
    assert head.result(2, chunks[2], "h2") is side
    assert head.result(0, chunks[0], "other config") is None
    assert head.result(0, Chunk(0, 0, 2, 4, True), "h0") is None
    assert head.result(7, Chunk(7, 0, 1, 2, True), "h7") is None
