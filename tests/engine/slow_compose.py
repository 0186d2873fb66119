"""``python -m tests.engine.slow_compose ARGS``: ``python -m sweep ARGS`` whose launcher takes
``SLOW_COMPOSE_SECONDS`` longer to compose each cell, so that composing outlasts Ray's start and
the actors get a head start (sweep/head_start.py; tests/engine/test_head_start.py)."""

import os
import runpy
import time

from sweep.compose import GridComposer

_compose = GridComposer.compose


def _slow_compose(self, overrides, index):
    time.sleep(float(os.environ["SLOW_COMPOSE_SECONDS"]))
    return _compose(self, overrides, index)


GridComposer.compose = _slow_compose
runpy.run_module("sweep", run_name="__main__", alter_sys=True)
