"""The one-call Python API for notebooks, in the manner of Mesa's ``batch_run``.

>>> from sweep import batch_run
>>> df = batch_run({"job.deadline": [8, 10, 12]}, overrides=["replicates=50"])
>>> df.groupby(["job.deadline", "mechanism"]).utility.mean()
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from .cells import make_cell
from .engine import run_cells
from .errors import ConfigError
from .schema import runner_config, tracking_config

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def grid_overrides(grid: Mapping[str, Sequence[Any]] | None) -> list[list[str]]:
    """Every combination of the grid's values, as lists of ``key=value`` overrides (last key varies fastest)."""
    if not grid:
        return [[]]
    keys = list(grid)
    values = [v if isinstance(v, (list, tuple)) else [v] for v in grid.values()]
    return [[f"{k}={v}" for k, v in zip(keys, combo)] for combo in itertools.product(*values)]


def batch_run(
    grid: Mapping[str, Sequence[Any]] | None = None,
    overrides: Sequence[str] = (),
    *,
    number_processes: int | None = None,
    out_dir: str | Path | None = None,
    tracking: str = "off",
    progress: bool = False,
    extend: bool = False,
) -> pd.DataFrame:
    """Run one cell per combination of ``grid`` and return every simulation as a DataFrame.

    ``grid`` maps config keys to values (``{"job.deadline": [8, 10]}``); ``overrides``
    apply to every cell (``["replicates=100", "market=trace", "market.path=..."]``);
    ``number_processes`` caps the Ray workers (``runner.num_workers``); ``tracking`` is a
    tracking group (``off``, ``sqlite``, ``server``). With ``out_dir`` the results are also
    written there, so a rerun into it resumes (another grid is refused: ConfigError, unless
    ``extend`` adds its cells to the ones there); without it they live in a temporary folder
    that is removed before this function returns.
    """
    common = list(overrides) + [f"tracking={tracking}", f"runner.progress={progress}"]
    if number_processes is not None:
        common.append(f"runner.num_workers={number_processes}")
    cells, configs = [], []
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for index, cell_overrides in enumerate(grid_overrides(grid)):
            everything = common + cell_overrides
            try:
                cfg = compose(config_name="config", overrides=everything)
            except Exception as err:  # Hydra's own override errors name the key
                raise ConfigError(str(err)) from None
            cells.append(make_cell(cfg, list(overrides) + cell_overrides, index, str(index)))
            configs.append(cfg)
    runner, tracking_cfg = runner_config(configs[0]), tracking_config(configs[0])
    if out_dir is not None:
        target = Path(out_dir)
        return run_cells(
            cells, target, runner, tracking_cfg, run_name=f"batch_run {target.name}", announce=False, extend=extend
        )
    with tempfile.TemporaryDirectory(prefix="batch_run-") as folder:
        return run_cells(cells, Path(folder), runner, tracking_cfg, run_name="batch_run", announce=False)
