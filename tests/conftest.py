"""Test-session set-up shared by every folder.

`make test` runs the suite on two pytest-xdist workers (`-n 2 --dist loadgroup`). The tests that
start sweeps (a Ray cluster, subprocesses, MLflow servers) take most of the time and load both
cores themselves, so they share one worker (the xdist group `sweeps`) and never overlap one
another; the unit tests run beside them on the other worker. A module says it starts sweeps with
`pytestmark = pytest.mark.sweeps` (tests/common/test_sweeps_marker.py checks that those that do
say so)."""

from __future__ import annotations

# isort: off
import sweep.common_env  # noqa: F401  (first: the pinned arithmetic, before anything loads numpy)
# isort: on

import pytest

SWEEPS = (
    "sweeps: starts a sweep, a Ray instance, a subprocess sweep or an MLflow server: "
    "one xdist worker runs these one at a time"
)


def pytest_configure(config):
    config.addinivalue_line("markers", SWEEPS)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("sweeps"):
            item.add_marker(pytest.mark.xdist_group("sweeps"))
