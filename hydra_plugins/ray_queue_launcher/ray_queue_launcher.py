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
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, setup_globals
from hydra.errors import HydraException
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf
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
        from sweep.cli import interrupted, mark_engine_reached, remove_if_no_results, run_cells_or_exit
        from sweep.timeline import Timeline
        from sweep.tracking import parent_params

        mark_engine_reached()
        setup_globals()
        assert self.config is not None and self.hydra_context is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        timeline = Timeline()
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        progress = bool(OmegaConf.select(self.config, "runner.progress", default=True))
        print(f"Sweep of {len(job_overrides):,} cells into {sweep_dir}", flush=True)
        try:
            cells, runner, tracking = self._compose(job_overrides, initial_job_idx, sweep_dir, progress)
        except KeyboardInterrupt:
            remove_if_no_results(sweep_dir)
            interrupted("while composing the cells: nothing was run")
        timeline.mark("cells_composed")
        simulations = sum(cell.replicates * len(cell.mechanisms) for cell in cells)
        print(f"{len(cells):,} cells, {simulations:,} simulations (composed in "
              f"{timeline.between('command_started', 'cells_composed'):.1f} s since the command started)", flush=True)
        log.info("Launching %d cells on a Ray actor pool", len(cells))
        sweep_overrides = list(self.config.hydra.overrides.task)
        run_cells_or_exit(
            cells,
            sweep_dir,
            runner,
            tracking,
            run_name=f"multirun {sweep_dir.parent.name}/{sweep_dir.name}",
            run_params=parent_params(sweep_overrides) | {"cells": len(cells)},
            timeline=timeline,
        )
        returns: List[JobReturn] = []
        for overrides, cell in zip(job_overrides, cells):
            ret = JobReturn(
                overrides=list(overrides),
                working_dir=str(sweep_dir / cell.subdir),
                task_name=str(self.config.hydra.job.name),
                status=JobStatus.COMPLETED,
            )
            ret.return_value = str(sweep_dir / cell.subdir)
            returns.append(ret)
        return returns

    def _compose(self, job_overrides, initial_job_idx: int, sweep_dir: Path, progress: bool):
        """Every cell of the batch, composed and validated before any work (sweep/compose.py);
        a bad one exits with status 2 naming its key and the cell, leaving no sweep dir."""
        from tqdm import tqdm

        from sweep.cli import exit_with_error, remove_if_no_results
        from sweep.compose import GridComposer
        from sweep.errors import ConfigError

        assert self.config is not None and self.hydra_context is not None
        loader = self.hydra_context.config_loader
        composer = GridComposer(
            lambda overrides: loader.load_sweep_config(self.config, overrides),
            loader.repository.group_exists,  # type: ignore[attr-defined]
            lambda config, index: str(config.hydra.sweep.subdir),
        )
        cells = []
        runner = tracking = None
        bar = tqdm(total=len(job_overrides), unit="cell", desc="composing cells", delay=1.0, disable=not progress,
                   leave=False)
        try:
            for offset, overrides in enumerate(job_overrides):
                idx = initial_job_idx + offset
                listed = " ".join(filter_overrides(overrides)) or "(no overrides)"
                try:
                    composed = composer.compose(list(overrides), idx)
                except (HydraException, OmegaConfBaseException) as err:  # a key or group typo, a bad value
                    raise ConfigError(f"{' '.join(str(err).split())} [cell #{idx}: {listed}]") from None
                except ConfigError as err:
                    raise ConfigError(f"{err} [cell #{idx}: {listed}]") from None
                if runner is None:
                    runner, tracking = composed.runner, composed.tracking
                elif composed.runner != runner or composed.tracking != tracking:
                    raise ConfigError(
                        f"runner.* and tracking.* must be the same in every cell of a multirun "
                        f"(one actor pool serves them all); cell #{idx} differs"
                    )
                cells.append(composed.cell)
                bar.update()
        except ConfigError as err:
            bar.close()
            remove_if_no_results(sweep_dir)
            exit_with_error(str(err))
        finally:
            bar.close()
        log.debug("composed %d cells, %d of them by Hydra's full composition", len(cells), composer.full_compositions)
        return cells, runner, tracking
