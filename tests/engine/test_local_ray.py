"""A local Ray's processes lead sessions of their own (sweep/local_ray.py), so that the SIGTERM
`timeout` sends to the driver's process group reaches the driver only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import ray

from sweep.schema import RunnerConfig
from sweep.task_queue import close_pool, connect

pytestmark = pytest.mark.sweeps


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_the_processes_ray_init_starts_are_outside_the_drivers_process_group():
    connect(RunnerConfig(num_workers=1))
    try:
        started = children(os.getpid())
        assert started, "ray.init started no process"
        assert all(os.getpgid(pid) != os.getpgid(0) for pid in started)
    finally:
        close_pool()
        ray.shutdown()


def test_the_end_of_a_sweep_stops_every_process_of_its_own_ray():
    """shutdown_own_ray (the end of `python -m sweep`) kills the autoscaler monitor before
    ray.shutdown instead of granting it Ray's second of grace: no process of that Ray is left."""
    from sweep.task_queue import shutdown_own_ray

    connect(RunnerConfig(num_workers=1))
    try:
        node = ray._private.worker._global_node
        pids = [info.process.pid for infos in node.all_processes.values() for info in infos]
        assert "monitor" in node.all_processes and children(os.getpid())
        shutdown_own_ray()
        assert not ray.is_initialized()
        assert not [pid for pid in pids if Path(f"/proc/{pid}").exists() and "Z" not in state(pid)]
    finally:
        close_pool()
        ray.shutdown()


def state(pid: int) -> str:
    """The process's state letter (Linux /proc; Z: exited, not yet reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
