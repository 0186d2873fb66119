"""Test-session set-up shared by every folder.

`make test` runs the suite on two pytest-xdist workers (`-n 2 --dist load`); the tests that start
sweeps (a Ray cluster, subprocesses, MLflow servers) run on both, beside the unit tests. A module
says it starts sweeps with `pytestmark = pytest.mark.sweeps` (tests/common/test_sweeps_marker.py
checks that those that do say so): `-m "not sweeps"` runs the rest."""

from __future__ import annotations

# isort: off
import sweep.common_env  # noqa: F401  (first: the pinned arithmetic, before anything loads numpy)
# isort: on


SWEEPS = "sweeps: starts a sweep, a Ray instance, a subprocess sweep or an MLflow server"


def pytest_configure(config):
    config.addinivalue_line("markers", SWEEPS)
