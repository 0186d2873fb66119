"""Finding and stopping the processes of a Ray node started with the `ray` CLI in a test
(tests/engine/test_ray_cli_cluster.py, test_ray_two_nodes.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path


def processes() -> list[tuple[int, int, int, str]]:
    """(pid, ppid, session, full command line) of every live process (zombies excluded).

    `ps -ww`: without it ps cuts lines at 80 columns when it sees no terminal width (as under
    pytest), and Ray's Python daemons (`.../bin/python -u .../ray/autoscaler/_private/monitor.py`)
    would show neither "ray" nor their temp dir, and be left running.
    """
    out = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,ppid=,sid=,stat=,args="], capture_output=True, text=True, check=True
    )
    rows = []
    for line in out.stdout.splitlines():
        pid, ppid, sid, stat, *args = line.split(None, 4)
        if not stat.startswith("Z"):
            rows.append((int(pid), int(ppid), int(sid), args[0] if args else ""))
    return rows


def started_by(session: int, temp_dir: Path) -> set[int]:
    """A Ray node's processes: in the session of its `ray start`, or naming its temp dir, and their children."""
    rows = processes()
    names_dir = re.compile(re.escape(str(temp_dir)) + r"(/|\s|$)")
    found = {pid for pid, _, sid, args in rows if (sid == session and "ray" in args) or names_dir.search(args)}
    grew = True
    while grew:
        children = {pid for pid, ppid, _, _ in rows if ppid in found} - found
        found |= children
        grew = bool(children)
    return found - {os.getpid()}


def stop(session: int, temp_dir: Path) -> None:
    """SIGTERM, then SIGKILL what is left after 1 s (Ray's autoscaler monitor ignores SIGTERM, the GCS
    server takes longer to stop on it)."""
    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 10.0)):
        pids = started_by(session, temp_dir)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.time() + wait
        while pids and time.time() < deadline:
            time.sleep(0.2)
            pids = started_by(session, temp_dir)
        if not pids:
            return
