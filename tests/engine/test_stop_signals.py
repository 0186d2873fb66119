"""The one interruption path (sweep/stop_signals.py): a signal is recorded and acted on at the
engine's next safe point, a second one ends the process at once, and the Python API gets its
handlers back after a run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from sweep import stop_signals
from sweep.engine import run_cells
from sweep.results import RESULTS
from sweep.stop_signals import Interrupted
from sweep.sweep_dir import completion

from .conftest import ROOT
from .test_side_tables import OFF, cells, runner

pytestmark = pytest.mark.sweeps

SCRIPT = """
import os, signal, sys, time
from sweep import stop_signals
stop_signals.install()
os.kill(os.getpid(), signal.{name})
try:
    stop_signals.check()
except stop_signals.Interrupted as err:
    print(err.name, err.exit_code, flush=True)
os.kill(os.getpid(), signal.{name})  # at once again, as `timeout` sends it (process, then group): the same request
time.sleep(stop_signals.REPEAT_SECONDS + 0.2)
print("still stopping", flush=True)
os.kill(os.getpid(), signal.{name})  # a second signal while stopping
time.sleep(30)
print("still running", flush=True)
"""


@pytest.mark.parametrize("name,code", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_is_recorded_and_a_second_one_exits_at_once(name, code):
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(name=name)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert time.monotonic() - started < 20
    assert proc.stdout.splitlines() == [f"{name} {code}", "still stopping"]
    assert proc.returncode == code
    assert proc.stderr.strip() == f"Interrupted ({name}) again: stopping at once; complete cells are kept"


def test_the_engine_stops_at_a_safe_point_keeps_complete_cells_and_restores_the_handlers(monkeypatch, tmp_path):
    """SIGTERM after the first chunk: that chunk's cell is written whole, the next check raises,
    results.parquet is not written, and the caller's handlers are back afterwards."""
    from sweep import task_queue
    from sweep.worker import SimulationWorker

    def run_chunks(chunks, payload_refs, runner, workers, on_done):
        worker = SimulationWorker()
        for chunk in chunks:
            stop_signals.check()  # as the real queue does between waits
            on_done(chunk, worker.run_chunk(payload_refs[chunk.cell], chunk.rep_start, chunk.rep_stop, chunk.whole))
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(task_queue, "connect", lambda runner, family_modules=(): 2)
    monkeypatch.setattr(task_queue, "run_chunks", run_chunks)
    monkeypatch.setattr("ray.put", lambda value: value)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as stopped:
        run_cells(cells(), tmp_path, runner(chunk_size=1000), OFF, announce=False)
    assert stopped.value.name == "SIGTERM" and stopped.value.exit_code == 143
    assert completion(tmp_path) == (1, 2)
    assert not (tmp_path / RESULTS).exists()
    assert signal.getsignal(signal.SIGTERM) is before
    assert stop_signals.requested() is None
    assert isinstance(stopped.value, KeyboardInterrupt)  # what a notebook's Ctrl-C gives


def test_a_plain_keyboard_interrupt_reads_as_sigint():
    assert stop_signals.as_interrupted(KeyboardInterrupt()).exit_code == 130
    assert stop_signals.as_interrupted(Interrupted(signal.SIGHUP)).name == "SIGHUP"


def test_rays_errors_after_a_signal_are_the_stop_not_a_failure(monkeypatch, tmp_path):
    """A process group's signal also reaches Ray's processes: what Ray then raises on the way to
    the next safe point (a lost object, a dead worker) ends the run as Interrupted."""
    from sweep import task_queue

    signals = [signal.SIGTERM, None]

    def run_chunks(chunks, payload_refs, runner, workers, on_done):
        signum = signals.pop(0)
        if signum is not None:
            os.kill(os.getpid(), signum)
        raise RuntimeError("Attempting to recover 2 lost objects")  # as Ray, its raylet gone

    monkeypatch.setattr(task_queue, "connect", lambda runner, family_modules=(): 2)
    monkeypatch.setattr(task_queue, "run_chunks", run_chunks)
    monkeypatch.setattr("ray.put", lambda value: value)
    with pytest.raises(Interrupted) as stopped:
        run_cells(cells(), tmp_path / "signalled", runner(chunk_size=1000), OFF, announce=False)
    assert stopped.value.name == "SIGTERM"
    with pytest.raises(RuntimeError, match="lost objects"):  # without a signal it is a failure
        run_cells(cells(), tmp_path / "failed", runner(chunk_size=1000), OFF, announce=False)
