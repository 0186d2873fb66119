"""Ctrl-C, as a terminal sends it (SIGINT to the whole process group), and SIGTERM / SIGHUP as
`kill`, `timeout` or a closed terminal send them: one line instead of a traceback, status 128 +
the signal, no sweep dir left when nothing ran, and a resume command that works (the interrupted
sweep resumed to the numbers of an uninterrupted one: test_fault_tolerance.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import ROOT

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
