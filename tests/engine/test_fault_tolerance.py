"""Resume after Ctrl-C, a worker process killed mid-sweep, and a Ray cluster on loopback."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from sweep import batch_run

from .conftest import ROOT, complete_cells, run_cli
from .test_interrupt import interrupt

pytestmark = pytest.mark.sweeps

KEYS = ["cell", "replicate", "mechanism"]
GRID_ARGS = ["job.deadline=8,10,12,14", "job.workload=60,90", "replicates=300", "runner.chunk_size=60"]
# The interrupted sweep's cells are larger (about 2 s each on one worker), so that the signal lands
# before the last one completes.
INTERRUPTED_ARGS = [arg if not arg.startswith("replicates=") else "replicates=1200" for arg in GRID_ARGS]
GRID = {"job.deadline": [8, 10, 12, 14], "job.workload": [60, 90]}


def reference(tmp_path, replicates=300):
    df = batch_run(GRID, overrides=[f"replicates={replicates}"], out_dir=tmp_path / "reference")
    return df.sort_values(KEYS).reset_index(drop=True)


def same_numbers(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    got = got.sort_values(KEYS).reset_index(drop=True)
    columns = ["cell", "replicate", "mechanism", "utility", "cost", "completion_time"]
    pd.testing.assert_frame_equal(got[columns], expected[columns], check_dtype=False)


@pytest.mark.slow
def test_interrupted_sweep_resumes_to_the_same_results(tmp_path):
    """One signal, once: Ctrl-C as a terminal sends it (to the process group), SIGTERM as
    `timeout` sends it (to the process and at once to its group). Exit 128 + the signal within 10 s, one line
    with the resume command, the parent run marked killed; the resumed sweep has the numbers of
    an uninterrupted one (sweep/stop_signals.py), computed once for both signals."""
    expected = reference(tmp_path, replicates=1200)
    for signum in (signal.SIGINT, signal.SIGTERM):
        interrupt_and_resume(tmp_path / signal.Signals(signum).name, signum, expected)


def interrupt_and_resume(tmp_path: Path, signum: int, expected: pd.DataFrame) -> None:
    tmp_path.mkdir()
    sweep_dir = tmp_path / "sweep"
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # The store made beforehand, as a user's mlflow.db usually is: creating its tables takes seconds
    # on a loaded machine, long enough for every cell to finish before the loop below sees it open.
    MlflowClient(tracking_uri=uri).search_experiments()
    args = [
        "-m",
        *INTERRUPTED_ARGS,
        "runner.num_workers=1",
        "runner.progress=false",
        f"tracking.uri={uri}",
        f"hydra.sweep.dir={sweep_dir}",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweep", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 180
    # a cell complete, and the MLflow store open with its parent run (tracking.json): a stop while a
    # new store is still opening leaves the parent RUNNING, with a warning (sweep/tracking.py)
    while not (complete_cells(sweep_dir) and (sweep_dir / "tracking.json").exists()):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.time() < deadline, "no cell finished in time"
        time.sleep(0.05)
    sent = time.monotonic()
    _, err = interrupt(proc, signum, timeout=10)
    stopped = time.monotonic() - sent
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, err[-3000:]
    assert stopped < 10
    assert "Traceback" not in err and "SIGTERM received" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"Interrupted ({name}): ") and " of 8 cells complete in " in last, err[-3000:]
    done = complete_cells(sweep_dir)
    assert 1 <= done < 8, f"{done} cells were complete at the interruption"
    assert last.startswith(f"Interrupted ({name}): {done} of 8 cells complete in {sweep_dir}; resume with: ")
    assert not (sweep_dir / "results.parquet").exists()
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("spot").experiment_id
    parents = [r for r in client.search_runs([experiment]) if "mlflow.parentRunId" not in r.data.tags]
    assert [parent.info.status for parent in parents] == ["KILLED"]

    command = shlex.split(last.split("resume with: ", 1)[1])
    assert command[:3] == [Path(sys.executable).name, "-m", "sweep"] and command[3:] == args
    resumed = run_cli(*command[3:])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{done:,} {'cell was' if done == 1 else 'cells were'} already complete" in resumed.stdout
    same_numbers(pd.read_parquet(sweep_dir / "results.parquet"), expected)
    runs = client.search_runs([experiment])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags and "mechanism" not in r.data.tags]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert sorted(r.data.tags["cell"] for r in children) == sorted(set(r.data.tags["cell"] for r in children))
    assert len(children) == 8


@pytest.mark.slow
def test_rerun_of_a_complete_sweep_simulates_nothing(tmp_path):
    sweep_dir = tmp_path / "sweep"
    args = ["-m", "job.deadline=8,10", "replicates=5", "tracking=off", f"hydra.sweep.dir={sweep_dir}"]
    assert run_cli(*args).returncode == 0
    again = run_cli(*args)
    assert again.returncode == 0
    assert "0 simulations" in again.stdout and "2 cells were already complete" in again.stdout


@pytest.mark.slow
def test_a_killed_worker_is_replaced_and_its_chunk_retried(tmp_path):
    marker = tmp_path / "killed"
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        *GRID_ARGS,
        "runner.num_workers=2",
        "tracking=off",
        f"hydra.sweep.dir={sweep_dir}",
        env={"SWEEP_FAULT_KILL_ONCE": str(marker)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert marker.exists(), "no worker was killed"
    assert "a worker died" in proc.stdout + proc.stderr
    same_numbers(pd.read_parquet(sweep_dir / "results.parquet"), reference(tmp_path))


@pytest.mark.slow
def test_sweep_on_a_ray_cluster_on_loopback(tmp_path):
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    try:
        sweep_dir = tmp_path / "sweep"
        proc = run_cli(
            "-m",
            "experiment=smoke",
            "runner=cluster",
            f"runner.address={cluster.address}",
            "tracking=off",
            f"hydra.sweep.dir={sweep_dir}",
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        df = pd.read_parquet(sweep_dir / "results.parquet")
        expected = batch_run(
            {"job.deadline": [8, 12], "job.workload": [60, 80]},
            overrides=["experiment=smoke"],
            out_dir=tmp_path / "local",
        )
        same_numbers(df, expected.sort_values(KEYS).reset_index(drop=True))
    finally:
        cluster.shutdown()
