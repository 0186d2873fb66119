"""Ctrl-C, as a terminal sends it (SIGINT to the whole process group), and SIGTERM / SIGHUP as
`kill`, `timeout` or a closed terminal send them: one line instead of a traceback, status 128 +
the signal, no sweep dir left when nothing ran, and a resume command that works."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT, complete_cells, run_cli

pytestmark = pytest.mark.sweeps

GRID = ["-m", "job.deadline=range(6,26)", "job.workload=range(40,140,2)", "tracking=off", "runner.progress=false"]


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sweep", *args],
        cwd=ROOT,
        text=True,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def interrupt(proc: subprocess.Popen, signum: int = signal.SIGINT, timeout: float = 120) -> tuple[str, str]:
    """Ctrl-C as a terminal sends it (to the process group); another signal as `timeout` sends it
    (to the process, then at once to its group: the driver receives it twice)."""
    if signum != signal.SIGINT:
        os.kill(proc.pid, signum)
    os.killpg(proc.pid, signum)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return out, err


def wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the sweep never reached the point to interrupt")
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_while_composing_leaves_nothing_and_says_so(tmp_path, signum):
    sweep_dir = tmp_path / "sweep"
    proc = start(*GRID, "market.capacity=8,12,16,20,24", "replicates=2", f"hydra.sweep.dir={sweep_dir}")
    wait_for(lambda: (sweep_dir / "multirun.yaml").exists())  # the sweeper wrote it: cells are being composed
    out, err = interrupt(proc, signum)
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err and "SIGTERM received" not in err, err
    assert err.strip().splitlines()[-1].startswith(f"Interrupted ({signum.name})"), err
    assert "nothing was written" in err.strip().splitlines()[-1]
    assert not sweep_dir.exists()


@pytest.mark.slow
def test_ctrl_c_while_simulating_prints_a_resume_command_that_finishes_the_sweep(tmp_path):
    sweep_dir = tmp_path / "sweep"
    proc = start(
        "-m",
        "job.deadline=range(6,11)",
        "job.workload=range(40,60,2)",
        "tracking=off",
        "runner.progress=false",
        "replicates=400",  # long enough to stop after the first batch of cells (engine.Batches)
        f"hydra.sweep.dir={sweep_dir}",
    )
    wait_for(lambda: complete_cells(sweep_dir) > 0)
    out, err = interrupt(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("Interrupted (SIGINT): ") and " cells complete in " in last, err
    command = shlex.split(last.split("resume with: ", 1)[1])
    assert command[:3] == [Path(sys.executable).name, "-m", "sweep"] and f"hydra.sweep.dir={sweep_dir}" in command
    done = complete_cells(sweep_dir)
    resumed = run_cli(*command[3:], timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done:,} {'cell was' if done == 1 else 'cells were'} already complete" in resumed.stdout or done == 0
