"""What the command line says of itself: --help names the project, counts read as English."""

from __future__ import annotations

import pytest

from sweep.cli import counted

from .conftest import run_cli

pytestmark = pytest.mark.sweeps


def test_counts_read_as_english():
    assert [counted(n, "cell") for n in (0, 1, 2, 1200)] == ["0 cells", "1 cell", "2 cells", "1,200 cells"]


def test_help_names_the_project_and_its_exit_codes():
    proc = run_cli("--help", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("python -m sweep: simulate and sweep")
    assert "__main__" not in proc.stdout and "--extend" in proc.stdout
    assert "130 / 143 / 129" in proc.stdout


@pytest.mark.slow
def test_a_one_cell_multirun_says_1_cell(tmp_path):
    proc = run_cli(
        "-m",
        "job.deadline=8",
        "replicates=2",
        "tracking=off",
        "runner.progress=false",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Sweep of 1 cell into {tmp_path / 'sweep'}" in proc.stdout
    assert "1 cell, 6 simulations: composed and checked" in proc.stdout
    assert "Done: 1 cell, 6 simulations in " in proc.stdout and " on 1 worker)" in proc.stdout
    assert "cell(s)" not in proc.stdout + proc.stderr
