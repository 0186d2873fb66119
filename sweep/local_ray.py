"""A local Ray whose processes live in a session of their own.

`timeout` and a shell's job control send SIGTERM to the driver's whole process group. Ray blocks
SIGINT in the processes it starts (its `start_ray_process`) but not SIGTERM, so a local Ray's GCS
server and raylet, started in the driver's group, died of that one signal; the driver's core worker
then lost its raylet and exited with status 1 before the driver could stop at a safe point and say
how to resume (sweep/stop_signals.py). Started here, each of those processes leads a session of
its own: a group's signal reaches the driver only, which stops as it does on Ctrl-C and shuts Ray
down. Ray still ties them to the driver's life (their parent-death signal), and the workers a
raylet starts inherit its session.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def own_session() -> Iterator[None]:
    """While in force, the processes `ray.init` starts get `start_new_session=True`."""
    from ray._private import services  # Ray's process spawner: no public option for this

    original = services.ConsolePopen

    class OwnSession(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("start_new_session", True)
            super().__init__(*args, **kwargs)

    services.ConsolePopen = OwnSession
    try:
        yield
    finally:
        services.ConsolePopen = original
