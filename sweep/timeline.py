"""When each phase of a sweep began and ended: the closing "Done" line and ``timing.json``.

A sweep's time goes to starting Python and Hydra, composing the cells, starting Ray,
simulating, writing the files and waiting for MLflow; the user waits for all of it, so the
"Done" line reports the whole wall time from the command's start beside the simulation time.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

TIMING_FILE = "timing.json"


def process_started() -> float:
    """The epoch second this process started, from its age (Linux ``/proc``: the system's uptime
    minus the process's start, both in seconds since boot; ``btime`` in ``/proc/stat`` is a
    whole second and drifts from the wall clock), else now."""
    try:
        fields = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22, starttime, in clock ticks after boot
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        now = time.time()
        return now - max(uptime - ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return time.time()


class Timeline:
    """Epoch seconds of named moments, from ``started`` (the command's start) on."""

    def __init__(self, started: float | None = None):
        self.started = process_started() if started is None else started
        self.marks: dict[str, float] = {"command_started": self.started}

    def mark(self, name: str, once: bool = False) -> None:
        """Note the moment ``name``; with ``once``, keep an earlier note of it."""
        if not (once and name in self.marks):
            self.marks[name] = time.time()

    def between(self, first: str, last: str) -> float | None:
        if first in self.marks and last in self.marks:
            return max(self.marks[last] - self.marks[first], 0.0)
        return None

    def elapsed(self) -> float:
        return time.time() - self.started

    def write(self, folder: Path) -> None:
        """``timing.json`` in ``folder``: each moment's epoch second and its offset from the start."""
        path = Path(folder) / TIMING_FILE
        if not Path(folder).is_dir():
            return
        body = {
            name: {"epoch": at, "seconds_after_start": round(at - self.started, 3)}
            for name, at in sorted(self.marks.items(), key=lambda item: item[1])
        }
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(body, indent=2))
        os.replace(tmp, path)
