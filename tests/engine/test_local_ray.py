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
