"""Test-session set-up shared by every folder.

`make test` runs the suite on two pytest-xdist workers (`-n 2 --dist loadgroup`). The tests that
start sweeps (a Ray cluster, subprocesses, MLflow servers) take most of the time and load both
cores themselves, so they share one worker (the xdist group `sweeps`) and never overlap one
another; the unit tests run beside them on the other worker."""

from __future__ import annotations

# isort: off
import sweep.common_env  # noqa: F401  (first: the pinned arithmetic, before anything loads numpy)
# isort: on

from pathlib import Path

import pytest

SWEEP_MARKERS = ("run_cli", "subprocess", "mlflow_server")


def _starts_sweeps(path: Path, cache: dict) -> bool:
    if path not in cache:
        text = path.read_text(encoding="utf-8") if path.suffix == ".py" else ""
        cache[path] = "tests/engine" in path.as_posix() or any(marker in text for marker in SWEEP_MARKERS)
    return cache[path]


def pytest_collection_modifyitems(config, items):
    cache: dict = {}
    for item in items:
        if _starts_sweeps(Path(str(item.path)), cache):
            item.add_marker(pytest.mark.xdist_group("sweeps"))
