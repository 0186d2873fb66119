"""A simulation worker's priority and thread pools (sweep/task_queue.py, sweep/common_env.py).

The workers of a local Ray run at the driver's priority (Ray's default niceness 15 starved them on
a busy machine) and each math library in them runs one thread (one worker per CPU already).
"""

from __future__ import annotations

import os

import pytest

from sweep import common_env
from sweep.task_queue import NICENESS, local_system_config

pytestmark = pytest.mark.sweeps


def test_a_local_ray_starts_its_workers_at_the_drivers_priority_unless_the_user_says_otherwise():
    assert local_system_config({}) == {"worker_niceness": 0}
    assert local_system_config({NICENESS: "15"}) == {}


def test_a_worker_sets_one_thread_per_library_and_keeps_what_the_user_set():
    assert common_env.worker_threads({}) == common_env.WORKER_THREADS
    assert set(common_env.WORKER_THREADS) >= {"OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"}
    kept = common_env.worker_threads({"OPENBLAS_NUM_THREADS": "4"})
    assert "OPENBLAS_NUM_THREADS" not in kept and kept["NUMBA_NUM_THREADS"] == "1"


def _probe():
    """What a pool actor's process reports: niceness, thread variables, BLAS threads."""
    import numpy  # noqa: F401  (threadpoolctl lists the BLAS of loaded libraries only: NumPy's)
    from threadpoolctl import threadpool_info

    blas = sorted({info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"})
    return os.nice(0), {name: os.environ.get(name) for name in common_env.WORKER_THREADS}, blas


def test_a_pool_actor_runs_at_the_drivers_priority_with_one_blas_thread(monkeypatch):
    ray = pytest.importorskip("ray")
    from sweep import task_queue
    from sweep.schema import RunnerConfig

    for name in (NICENESS, *common_env.WORKER_THREADS):
        monkeypatch.delenv(name, raising=False)
    task_queue.close_pool()
    if ray.is_initialized():
        ray.shutdown()
    try:
        task_queue.connect(RunnerConfig(kind="local", num_workers=1))
        actor = task_queue._pool(1).actors[0]
        nice, variables, blas = ray.get(actor.__ray_call__.remote(lambda _worker: _probe()))
    finally:
        task_queue.close_pool()
        ray.shutdown()
    assert nice == os.nice(0)
    assert variables == common_env.WORKER_THREADS
    assert blas == [1]
