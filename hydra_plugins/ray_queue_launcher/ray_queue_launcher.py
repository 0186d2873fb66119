"""The `ray_queue` Hydra launcher (docs/architecture.md, "Launcher").

Instead of running the task function once per job, it composes and validates every
cell of the batch first, then hands them all to ``sweep.engine.run_cells``: one
Ray actor pool and one task queue serve the whole multirun.
"""

import gc
import importlib
import logging
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hydra.core.config_store import ConfigStore
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, setup_globals
from hydra.errors import HydraException
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

log = logging.getLogger(__name__)

_START_UP_SWITCH_INTERVAL = 0.0005  # seconds; Python's default is 0.005


@dataclass
class RayQueueLauncherConf:
    _target_: str = "hydra_plugins.ray_queue_launcher.ray_queue_launcher.RayQueueLauncher"


ConfigStore.instance().store(group="hydra/launcher", name="ray_queue", node=RayQueueLauncherConf, provider="sweep")


class RayQueueLauncher(Launcher):
    def __init__(self) -> None:
        super().__init__()
        self.config: DictConfig | None = None
        self.hydra_context: HydraContext | None = None
        self.task_function: TaskFunction | None = None
        self._collecting = True  # whether Python's cyclic GC was on when the launch began

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.task_function = task_function

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from sweep.cli import (
            counted,
            exit_with_error,
            interrupted,
            mark_engine_reached,
            remove_if_no_results,
            run_cells_or_exit,
        )
        from sweep.errors import ConfigError
        from sweep.timeline import Timeline
        from sweep.tracking import parent_params

        mark_engine_reached()
        setup_globals()
        assert self.config is not None and self.hydra_context is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        timeline = Timeline()
        timeline.mark("launcher_started")
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        progress = bool(OmegaConf.select(self.config, "runner.progress", default=True))
        print(f"Sweep of {counted(len(job_overrides), 'cell')} into {sweep_dir}", flush=True)
        # Composing 100,000 cells ran 5,000 collections over a growing heap (3.9 s): the cyclic GC
        # is off while the cells make no reference cycles (GridComposer.plain), on again otherwise.
        self._collecting = gc.isenabled()
        gc.disable()
        try:
            cells, runner, tracking, ray_error, head = self._compose(
                job_overrides, initial_job_idx, sweep_dir, progress, timeline
            )
        except KeyboardInterrupt as err:
            remove_if_no_results(sweep_dir)
            interrupted("while composing the cells: nothing was written", err)
        finally:
            plain = not gc.isenabled()  # still off: no cell made OmegaConf nodes
            if self._collecting:
                gc.enable()
        if not plain:
            gc.collect()  # the cycles composing left (OmegaConf's nodes point to their parents)
        gc.freeze()  # the cells live to the end: later collections need not walk them (0.3 s at 100,000 cells)
        if ray_error is not None:
            remove_if_no_results(sweep_dir)
            if isinstance(ray_error, ConfigError):
                exit_with_error(str(ray_error))
            raise ray_error
        timeline.mark("cells_composed")
        simulations = sum(cell.replicates * len(cell.mechanisms) for cell in cells)
        meanwhile = f" ({counted(len(head), 'cell')} simulated meanwhile)" if head else ""
        print(
            f"{counted(len(cells), 'cell')}, {counted(simulations, 'simulation')}: composed and checked, "
            f"and Ray started, {timeline.between('command_started', 'cells_composed'):.1f} s after the command"
            f"{meanwhile}",
            flush=True,
        )
        log.info("Launching %s on a Ray actor pool", counted(len(cells), "cell"))
        sweep_overrides = list(self.config.hydra.overrides.task)
        run_cells_or_exit(
            cells,
            sweep_dir,
            runner,
            tracking,
            run_name=f"multirun {sweep_dir.parent.name}/{sweep_dir.name}",
            run_params=parent_params(sweep_overrides) | {"cells": len(cells)},
            timeline=timeline,
            early=head,
        )
        returns: list[JobReturn] = []
        working_dir = str(sweep_dir)  # every cell's rows are in the sweep dir's store
        task_name = str(self.config.hydra.job.name)  # read once: an OmegaConf lookup costs 25 µs
        for overrides, cell in zip(job_overrides, cells):
            ret = JobReturn(
                overrides=list(overrides), working_dir=working_dir, task_name=task_name, status=JobStatus.COMPLETED
            )
            ret.return_value = cell.index
            returns.append(ret)
        return returns

    def _compose(self, job_overrides, initial_job_idx: int, sweep_dir: Path, progress: bool, timeline):
        """Every cell of the batch, composed and validated before any work (sweep/compose.py);
        a bad one exits with status 2 naming its key and the cell, leaving no sweep dir.

        Ray starts while the cells are composed: a thread composes them, and the main thread
        starts or joins Ray as the sweep's own config says (runner.*, mostly waiting for Ray's
        processes), again if the cells say otherwise or name a family whose code Ray was not given
        (``_ships_every_family``). Ray is shut down again if a cell is bad.
        Into a dir that already holds a sweep, the cells are composed and checked against it
        (``sweep_dir.reconcile``) before Ray starts, so that another grid is refused at once.
        Once Ray is up, the actors simulate the whole small cells composed so far, in memory, until
        every cell is composed (sweep/head_start.py): nothing is written before every cell is
        checked.
        Returns the cells, their runner and tracking settings, Ray's start-up error if any, and the
        head start (None where the dir holds a sweep).
        """
        from concurrent.futures import ThreadPoolExecutor

        from tqdm import tqdm

        from sweep import stop_signals
        from sweep.cli import exit_with_error, extend_requested, remove_if_no_results
        from sweep.compose import GridComposer
        from sweep.errors import ConfigError
        from sweep.sweep_dir import read_record, reconcile

        assert self.config is not None and self.hydra_context is not None
        loader = self.hydra_context.config_loader
        composer = GridComposer(
            lambda overrides: loader.load_sweep_config(self.config, overrides),
            loader.repository.group_exists,  # type: ignore[attr-defined]
            lambda config, index: str(config.hydra.sweep.subdir),
        )
        bar = tqdm(
            total=len(job_overrides), unit="cell", desc="composing cells", delay=1.0, disable=not progress, leave=False
        )
        stop = threading.Event()

        def compose(offset: int, overrides):
            idx = initial_job_idx + offset
            listed = " ".join(filter_overrides(overrides)) or "(no overrides)"
            try:
                composed = composer.compose(list(overrides), idx)
            except (HydraException, OmegaConfBaseException) as err:  # a key or group typo, a bad value
                from sweep.config_errors import config_error_message

                message = config_error_message(err, list(overrides), sweep=list(self.config.hydra.overrides.task))
                raise ConfigError(f"{message} [cell #{idx}: {listed}]") from None
            except ConfigError as err:
                raise ConfigError(f"{err} [cell #{idx}: {listed}]") from None
            bar.update()
            return composed

        so_far: list = []  # the cells composed so far, read by the head start while this thread composes

        def compose_all(first=None):
            if first is None:
                first = compose(0, job_overrides[0])
            timeline.mark("first_cell_composed")
            cells = so_far
            cells.append(first.cell)
            for offset, overrides in enumerate(job_overrides[1:], start=1):
                if stop.is_set():
                    raise KeyboardInterrupt
                stop_signals.check()
                composed = compose(offset, overrides)
                if composed.runner != first.runner or composed.tracking != first.tracking:
                    raise ConfigError(
                        f"runner.* and tracking.* must be the same in every cell of a multirun "
                        f"(one actor pool serves them all); cell #{initial_job_idx + offset} differs"
                    )
                cells.append(composed.cell)
                if self._collecting and not gc.isenabled() and not composer.plain:
                    gc.enable()  # OmegaConf's nodes form cycles: about 1 MB a full composition
            timeline.mark("every_cell_composed")
            if bar.format_dict["elapsed"] >= 1.0:  # shown (delay=1.0): draw the last count while Ray may still start
                bar.refresh()
            return first, cells

        ray_error: BaseException | None = None
        head = None
        switch_interval = sys.getswitchinterval()
        try:
            importlib.import_module("sweep.task_queue")  # Ray, before the composing thread holds the GIL
            timeline.mark("ray_imported")
            if read_record(sweep_dir) is not None:
                # The dir holds a sweep: every cell is composed and checked against it before Ray
                # starts, so that another grid is refused at once (sweep/sweep_dir.py).
                first, cells = compose_all()
                reconcile(sweep_dir, cells, extend_requested())
                ray_error, _ = _start_ray(first.runner, timeline, len(job_overrides), _family_modules(cells))
                stop_signals.check()
                log.debug(
                    "composed %d cells, %d of them by Hydra's full composition", len(cells), composer.full_compositions
                )
                return cells, first.runner, first.tracking, ray_error, None
            # Ray starts at once when the sweep's own config is valid: a mistake outside the
            # swept keys is then reported by the first cell before Ray starts.
            early = _valid_master_runner(self.config)
            _preload_tracking(self.config)
            first = None if early is not None else compose(0, job_overrides[0])
            # Ray's start-up waits on its processes and reads files: with the default 5 ms switch
            # interval each of those waits for the composing thread's turn (a 10,000-cell grid's
            # Ray took 9.5 s instead of 4.5 s).
            sys.setswitchinterval(_START_UP_SWITCH_INTERVAL)
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="compose") as pool:
                composing = pool.submit(compose_all, first)
                try:
                    runner = early or first.runner
                    shipped = _master_family_modules(self.config) if first is None else [first.cell.module]
                    ray_error, cpus = _start_ray(runner, timeline, len(job_overrides), shipped)
                    if ray_error is None:  # the actors simulate while this thread waits for the cells
                        head = _head_start(runner, cpus, len(job_overrides), shipped, so_far, composing, timeline)
                    first, cells = _result_unless_stopped(composing)
                    needed = _family_modules(cells)
                    if _ray_settings(runner) != _ray_settings(first.runner) or not _ships_every_family(
                        runner, shipped, needed
                    ):
                        _stop_ray()
                        ray_error, _ = _start_ray(first.runner, timeline, len(job_overrides), needed)
                    stop_signals.check()
                finally:
                    stop.set()
        except ConfigError as err:
            bar.close()
            _stop_ray()
            remove_if_no_results(sweep_dir)
            exit_with_error(str(err))
        except BaseException:
            _stop_ray()
            raise
        finally:
            sys.setswitchinterval(switch_interval)
            bar.close()
        log.debug("composed %d cells, %d of them by Hydra's full composition", len(cells), composer.full_compositions)
        return cells, first.runner, first.tracking, ray_error, head


def _result_unless_stopped(future):
    """The composing thread's result; a stop signal ends the wait within a poll interval."""
    from concurrent.futures import TimeoutError as Pending

    from sweep import stop_signals

    while True:
        stop_signals.check()
        try:
            return future.result(timeout=stop_signals.POLL_SECONDS)
        except Pending:
            continue


def _valid_master_runner(config: DictConfig):
    """The sweep's runner.* when its own config (the swept keys at their defaults) is a valid
    cell, else None. Every cell must agree with it, or Ray is restarted as the cells say."""
    from sweep.schema import runner_config, validate_cell

    try:
        runner = runner_config(config)
        validate_cell(config)
    except Exception:  # the cells will say what is wrong, if anything is
        return None
    return runner


def _preload_tracking(config: DictConfig) -> None:
    """MLflow imported while the cells are composed, when the sweep's own config tracks
    (`sweep.tracking.preload`: nothing is written)."""
    from sweep.schema import tracking_config
    from sweep.tracking import preload

    try:
        tracking = tracking_config(config)
    except Exception:  # the cells will say what is wrong, if anything is
        return
    preload(tracking)


def _ray_settings(runner) -> tuple:
    return runner.kind, runner.address, runner.num_workers, runner.ship_code


def _master_family_modules(config: DictConfig) -> list[str]:
    """The ``family.module`` of the sweep's own config, if it resolves: the family of the cells
    unless they sweep ``family``."""
    try:
        module = OmegaConf.select(config, "family.module", default=None)
    except OmegaConfBaseException:  # the cells will say what is wrong
        return []
    return [str(module)] if module else []


def _family_modules(cells) -> list[str]:
    return list(dict.fromkeys(cell.module for cell in cells))


def _ships_every_family(runner, shipped: list[str], needed: list[str]) -> bool:
    """Whether Ray, joined with ``shipped`` family modules, was given the code of every family the
    cells name (``task_queue.shipped_packages``): a cluster's workers import no other."""
    from sweep.task_queue import shipped_packages

    return set(shipped_packages(runner, needed)) <= set(shipped_packages(runner, shipped))


def _start_ray(runner, timeline, cells: int, family_modules: list[str]) -> tuple[BaseException | None, int]:
    """Start or join Ray as ``runner`` says, with the code of ``family_modules`` when it ships code,
    and start the actors (no more than there are ``cells``) while the cells are still being
    composed; returns the error, if any, for after the cells, and the CPUs Ray offers."""
    from sweep import stop_signals
    from sweep.task_queue import connect, prestart_pool

    try:
        with stop_signals.around_ray_init():
            cpus = connect(runner, family_modules)
        timeline.mark("ray_connected")
        prestart_pool(runner, cpus, cells)
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # reported once every cell is checked: bad cells first
        return err, 0
    timeline.mark("ray_ready")
    return None, cpus


def _head_start(runner, cpus: int, cells: int, shipped: list[str], composed: list, composing, timeline):
    """The head start (sweep/head_start.py), run until the composing thread is done; a cell whose
    family's code this Ray was not given waits for the sweep."""
    from sweep.head_start import HeadStart, run_while_composing
    from sweep.task_queue import pool_size

    head = HeadStart(runner, pool_size(runner, cpus, cells))
    shipped_with: dict[str, bool] = {}  # family module -> whether this Ray has its code (read once)

    def runs_here(cell) -> bool:
        if cell.module not in shipped_with:
            shipped_with[cell.module] = _ships_every_family(runner, shipped, [cell.module])
        return shipped_with[cell.module]

    run_while_composing(head, composed, composing, runs_here, timeline)
    return head


def _stop_ray() -> None:
    import ray

    from sweep.task_queue import close_pool

    if ray.is_initialized():
        close_pool()
        ray.shutdown()
