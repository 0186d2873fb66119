"""Orchestration: Hydra entry point, cells and seeding, the Ray task queue, results and MLflow.

``sweep.batch_run`` is the one-call Python API (see sweep/api.py).
"""

from . import common_env  # noqa: F401  (first: pins the arithmetic before numpy loads; sweep/common_env.py)


def batch_run(*args, **kwargs):
    from .api import batch_run as _batch_run

    return _batch_run(*args, **kwargs)


batch_run.__doc__ = "Run a grid of cells and return one row per simulation; see sweep.api.batch_run."
