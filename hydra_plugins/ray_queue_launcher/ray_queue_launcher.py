"""The `ray_queue` Hydra launcher (docs/architecture.md, "Launcher").

Instead of running the task function once per job, it composes and validates every
cell of the batch first, then hands them all to ``sweep.engine.run_cells``: one
Ray actor pool and one task queue serve the whole multirun.
"""

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, setup_globals
from hydra.errors import HydraException
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

log = logging.getLogger(__name__)


@dataclass
class RayQueueLauncherConf:
    _target_: str = "hydra_plugins.ray_queue_launcher.ray_queue_launcher.RayQueueLauncher"


ConfigStore.instance().store(group="hydra/launcher", name="ray_queue", node=RayQueueLauncherConf, provider="sweep")


class RayQueueLauncher(Launcher):
    def __init__(self) -> None:
        super().__init__()
        self.config: Optional[DictConfig] = None
        self.hydra_context: Optional[HydraContext] = None
        self.task_function: Optional[TaskFunction] = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.task_function = task_function

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from sweep.cells import make_cell
        from sweep.cli import exit_with_error, mark_engine_reached, remove_if_no_results, run_cells_or_exit
        from sweep.errors import ConfigError
        from sweep.schema import runner_config, tracking_config
        from sweep.tracking import parent_params

        mark_engine_reached()
        setup_globals()
        assert self.config is not None and self.hydra_context is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        cells, configs = [], []
        try:
            for offset, overrides in enumerate(job_overrides):
                idx = initial_job_idx + offset
                listed = " ".join(filter_overrides(overrides)) or "(no overrides)"
                try:
                    sweep_config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
                except (HydraException, OmegaConfBaseException) as err:  # a key or group typo, a bad value
                    raise ConfigError(f"{' '.join(str(err).split())} [cell #{idx}: {listed}]") from None
                with open_dict(sweep_config):
                    sweep_config.hydra.job.id = idx
                    sweep_config.hydra.job.num = idx
                HydraConfig.instance().set_config(sweep_config)
                subdir = str(sweep_config.hydra.sweep.subdir)
                try:
                    cells.append(make_cell(sweep_config, list(overrides), idx, subdir))
                except ConfigError as err:
                    raise ConfigError(f"{err} [cell #{idx}: {listed}]") from None
                configs.append(sweep_config)
            runner, tracking = runner_config(configs[0]), tracking_config(configs[0])
            for sweep_config, cell in zip(configs[1:], cells[1:]):
                if runner_config(sweep_config) != runner or tracking_config(sweep_config) != tracking:
                    raise ConfigError(
                        f"runner.* and tracking.* must be the same in every cell of a multirun "
                        f"(one actor pool serves them all); cell #{cell.index} differs"
                    )
        except ConfigError as err:
            remove_if_no_results(sweep_dir)
            exit_with_error(str(err))

        log.info("Launching %d cells on a Ray actor pool", len(cells))
        sweep_overrides = list(self.config.hydra.overrides.task)
        run_cells_or_exit(
            cells,
            sweep_dir,
            runner,
            tracking,
            run_name=f"multirun {sweep_dir.parent.name}/{sweep_dir.name}",
            run_params=parent_params(sweep_overrides) | {"cells": len(cells)},
        )
        returns: List[JobReturn] = []
        for sweep_config, overrides, cell in zip(configs, job_overrides, cells):
            ret = JobReturn(
                overrides=list(overrides),
                cfg=OmegaConf.create(cell.world),
                hydra_cfg=sweep_config,
                working_dir=str(sweep_dir / cell.subdir),
                task_name=str(sweep_config.hydra.job.name),
                status=JobStatus.COMPLETED,
            )
            ret.return_value = str(sweep_dir / cell.subdir)
            returns.append(ret)
        return returns
