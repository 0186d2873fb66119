"""The head start (sweep/head_start.py): cells simulated while the launcher composes the rest give
the same files as a sweep without one, and a bad cell found after it began still leaves nothing."""

from __future__ import annotations

import pytest

from .conftest import run_cli

pytestmark = [pytest.mark.sweeps, pytest.mark.slow]

GRID = ["job.deadline=range(6,24)", "job.n_max=8,9", "replicates=2", "tracking=off", "runner.num_workers=2"]
SLOW = {"SLOW_COMPOSE_SECONDS": "0.25"}  # 36 cells: 9 s of composing, longer than Ray's start


def test_cells_simulated_while_composing_give_the_same_files(tmp_path):
    slow = run_cli("-m", *GRID, f"hydra.sweep.dir={tmp_path / 'slow'}", module="tests.engine.slow_compose", env=SLOW)
    assert slow.returncode == 0, slow.stderr[-3000:]
    assert "simulated meanwhile" in slow.stdout, slow.stdout[-2000:]
    plain = run_cli("-m", *GRID, f"hydra.sweep.dir={tmp_path / 'plain'}")
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert "simulated meanwhile" not in plain.stdout  # composing 36 cells ends before Ray is up
    for name in ("results.parquet", "summary.csv"):
        assert (tmp_path / "slow" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name


def test_a_bad_cell_after_the_head_start_began_leaves_nothing(tmp_path):
    out = tmp_path / "sweep"
    bad = ["job.deadline=" + ",".join(str(d) for d in [*range(6, 38), 0]), "replicates=2", "tracking=off"]
    proc = run_cli("-m", *bad, f"hydra.sweep.dir={out}", module="tests.engine.slow_compose", env=SLOW)
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-3000:])
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "job.deadline" in errors[0] and "cell #32" in errors[0], proc.stderr[-3000:]
    assert not out.exists()
