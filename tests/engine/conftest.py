"""Helpers for the engine tests: run the CLI as a user would, start an MLflow server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "data" / "market_aws_us-west-2a_v100.csv"


def run_cli(*args: str, cwd: Path = ROOT, env: dict | None = None, timeout: float = 300, module: str = "sweep"):
    """Run ``python -m sweep ARGS`` in a subprocess; return the CompletedProcess (text)."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
    )


def complete_cells(sweep_dir: Path) -> int:
    """The cells of the sweep in ``sweep_dir`` that its store holds complete (0 before any)."""
    from sweep.sweep_dir import completion

    return (completion(sweep_dir) or (0, 0))[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def mlflow_server(tmp_path):
    """A real `mlflow server` on 127.0.0.1 with its own SQLite store; yields its URI."""
    port = free_port()
    store = tmp_path / "server"
    store.mkdir()
    mlflow_bin = Path(sys.executable).parent / "mlflow"
    proc = subprocess.Popen(
        [
            str(mlflow_bin),
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            f"sqlite:///{store / 'server.db'}",
            "--artifacts-destination",
            str(store / "artifacts"),
            "--workers",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(store / "server.log", "w"),
    )
    uri = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            with urllib.request.urlopen(uri + "/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise RuntimeError("mlflow server did not start:\n" + (store / "server.log").read_text()[-3000:])
        time.sleep(0.5)
    try:
        yield uri
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
