"""A sweep on a two-node Ray cluster started with the `ray` CLI (docs/scaling.md, "Two nodes").

Both nodes run on this machine, on loopback, each with one CPU and its own temp dir: the head
(`ray start --head`, token authentication on, as in tests/engine/test_ray_cli_cluster.py) and a
second node joined with `ray start --address=127.0.0.1:PORT`, which gets the head's token the way
a second machine would (`ray get-auth-token` on the head, written to ~/.ray/auth_token of the
node's own home, RAY_AUTH_MODE=token). The multirun goes through the CLI with `runner=cluster`
and the spot family wrapped by tests/engine/node_family.py, which adds the Ray node that ran each
row. It proves that chunks ran on both nodes and that the results equal a `runner=local` run of
the same config.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from sweep.cell_store import CellStore

from .conftest import ROOT, free_port, run_cli
from .node_family import NODE_COLUMN, TEMP_COLUMN
from .ray_nodes import started_by, stop
from .test_ray_cli_cluster import RAY, TOKEN_VARS, write_token

pytestmark = pytest.mark.sweeps

# The sweep names its family module, tests.engine.node_family, which lives in the project: so
# runner.ship_code=true (the cluster default) sends tests/ beside market/, algorithms/, sweep/ and the
# declared families' rooms (sweep/task_queue.py, worker_packages), as it would to a second machine.
SWEEP = ["-m", "experiment=smoke", "family.module=tests.engine.node_family", "tracking=off"]


def ray_start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """`ray start ARGS` in its own session (so that its daemons can be found and stopped)."""
    return subprocess.Popen(
        [str(RAY), "start", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **env},
        start_new_session=True,
    )


def finished(proc: subprocess.Popen, what: str) -> str:
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 0, f"{what} failed:\n{out[-3000:]}"
    return out


@pytest.fixture
def two_nodes(tmp_path, monkeypatch):
    """A head and a second node on 127.0.0.1, one CPU each; yields (address, head temp dir, node temp dir).

    Both are stopped afterwards by process (never `ray stop`, which would stop every Ray on the machine).
    """
    # Short temp dirs: Ray's Unix sockets live under them (at most 107 bytes in a socket path;
    # pytest-xdist's worker folders make tmp_path_factory's paths too long).
    head_temp, node_temp = Path(tempfile.mkdtemp(prefix="rh")), Path(tempfile.mkdtemp(prefix="rn"))
    head_home, node_home = tmp_path / "head_home", tmp_path / "node_home"
    write_token(head_home)  # the token a local ray.init() would have left on the head machine
    for name in TOKEN_VARS + ("RAY_ADDRESS",):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(head_home))  # the driver runs on the head machine
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")  # no report to usage-stats.ray.io
    port = free_port()
    address = f"127.0.0.1:{port}"
    started: list[tuple[subprocess.Popen, Path]] = []
    try:
        head = ray_start(
            [
                "--head",
                f"--port={port}",
                "--num-cpus=1",
                f"--temp-dir={head_temp}",
                "--include-dashboard=false",
                f"--dashboard-agent-listen-port={free_port()}",
            ],
            {},
        )
        started.append((head, head_temp))
        out = finished(head, "ray start --head")
        assert "Token authentication is enabled for this Ray cluster" in out

        # The second node's machine gets the head's token (ray get-auth-token on the head) in its own home.
        token = subprocess.run(
            [str(RAY), "get-auth-token"], capture_output=True, text=True, check=True, timeout=60
        ).stdout.strip()
        assert token == (head_home / ".ray" / "auth_token").read_text().strip()
        write_token(node_home, token)
        node = ray_start(
            [
                f"--address={address}",
                "--num-cpus=1",
                f"--temp-dir={node_temp}",
                f"--dashboard-agent-listen-port={free_port()}",
            ],
            {"HOME": str(node_home), "RAY_AUTH_MODE": "token"},
        )
        started.append((node, node_temp))
        finished(node, "ray start --address")
        yield address, head_temp, node_temp
    finally:
        for proc, temp_dir in reversed(started):  # the joined node first, then the head
            if proc.poll() is None:
                proc.kill()
            stop(proc.pid, temp_dir)
    for proc, temp_dir in started:
        assert not started_by(proc.pid, temp_dir), f"Ray processes under {temp_dir} are still running"
    for temp_dir in (head_temp, node_temp):
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.fixture
def local_run(tmp_path):
    """The same sweep with `runner=local` (its own Ray, its own chunking and pool size), started in the
    background first so that it overlaps the start of the two nodes; yields (process, sweep dir)."""
    local_dir = tmp_path / "local"
    with open(tmp_path / "local.out", "w") as out, open(tmp_path / "local.err", "w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sweep",
                *SWEEP,
                "runner=local",
                "runner.progress=false",
                f"hydra.sweep.dir={local_dir}",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=err,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "RAY_USAGE_STATS_ENABLED": "0"},
        )
    try:
        yield proc, local_dir
    finally:
        if proc.poll() is None:  # the test failed first: let the driver shut its Ray down
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_a_sweep_on_two_nodes_runs_on_both_and_equals_a_local_run(local_run, two_nodes, tmp_path):
    address, head_temp, node_temp = two_nodes  # local_run is started before the nodes (fixture order)
    cluster_dir = tmp_path / "cluster"
    # 4 cells x 20 replicates x 3 mechanisms, 5 replicates (15 simulations) per chunk: 16 chunks for 2 actors.
    proc = run_cli(
        *SWEEP,
        "runner=cluster",
        f"runner.address={address}",
        "runner.num_workers=2",
        "runner.chunk_size=15",
        "runner.progress=false",
        f"hydra.sweep.dir={cluster_dir}",
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Done: 4 cells, 240 simulations" in proc.stdout
    assert "on 2 workers" in proc.stdout

    cluster = pd.read_parquet(cluster_dir / "results.parquet")
    assert len(cluster) == 240
    # (a) both nodes ran chunks: one actor per node (one CPU each), and the queue gives each actor
    # its first chunks as soon as the pool exists (runner.in_flight_per_worker=2).
    rows_per_node = cluster.groupby(TEMP_COLUMN).size()
    assert set(rows_per_node.index) == {str(head_temp), str(node_temp)}, rows_per_node
    assert (rows_per_node >= 15).all(), rows_per_node  # at least one whole chunk each
    assert cluster.groupby(TEMP_COLUMN)[NODE_COLUMN].nunique().eq(1).all()
    assert cluster[NODE_COLUMN].nunique() == 2

    # (b) the same numbers as a local run of the same config (its own chunking and pool size).
    local_proc, local_dir = local_run
    assert local_proc.wait(timeout=180) == 0, (tmp_path / "local.err").read_text()[-3000:]
    local = pd.read_parquet(local_dir / "results.parquet")
    pd.testing.assert_frame_equal(
        cluster.drop(columns=[NODE_COLUMN, TEMP_COLUMN]), local.drop(columns=[NODE_COLUMN, TEMP_COLUMN])
    )
    assert (cluster_dir / "summary.csv").read_bytes() == (local_dir / "summary.csv").read_bytes()
    cluster_cells, local_cells = CellStore(cluster_dir).entries, CellStore(local_dir).entries
    assert sorted(cluster_cells) == sorted(local_cells) == list(range(4))
    for cell in range(4):  # the same record of each cell but for the batch it went to
        assert dataclasses.replace(cluster_cells[cell], batch=0) == dataclasses.replace(local_cells[cell], batch=0)
