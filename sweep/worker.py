"""The simulation worker: runs chunks of replicates of one cell (a Ray actor in the pool).

Plain Python so that the same code runs in a Ray actor, in a plain loop (benchmarks)
and in tests. It caches each cell's prepared world (a loaded trace, ...) by config hash.
"""
from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from .families import load_family
from .seeding import replicate_rng

# Test hook for the "worker killed mid-sweep" test: the first worker process that
# finds this path absent creates it and dies, as a crashed or preempted node would.
FAULT_ENV = "SWEEP_FAULT_KILL_ONCE"
_CACHE_SIZE = 32


class SimulationWorker:
    def __init__(self) -> None:
        self._prepared: OrderedDict[str, Any] = OrderedDict()

    def _prepare(self, family, payload: dict) -> Any:
        key = payload["config_hash"]
        if key in self._prepared:
            self._prepared.move_to_end(key)
            return self._prepared[key]
        prepared = family.prepare(payload["world"])
        self._prepared[key] = prepared
        if len(self._prepared) > _CACHE_SIZE:
            self._prepared.popitem(last=False)
        return prepared

    def run_chunk(self, payload: dict, rep_start: int, rep_stop: int) -> dict[str, list]:
        """Simulate replicates [rep_start, rep_stop) of a cell; one row per replicate and mechanism, as columns."""
        _maybe_die()
        family = load_family(payload["family"])
        prepared = self._prepare(family, payload)
        columns: dict[str, list] = {"replicate": []}
        for replicate in range(rep_start, rep_stop):
            rows = family.simulate_replicate(prepared, replicate, replicate_rng(payload["world_hash"], replicate))
            for row in rows:
                columns["replicate"].append(replicate)
                for key, value in row.items():
                    columns.setdefault(key, []).append(value)
        return columns

    def pid(self) -> int:
        return os.getpid()


def _maybe_die() -> None:
    marker = os.environ.get(FAULT_ENV)
    if not marker:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os._exit(1)
