"""`python -m sweep [overrides]` runs one cell; `python -m sweep -m [overrides]` a multirun.

See README.md and docs/usage.md for the config groups and examples.
"""

from __future__ import annotations

from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> str:
    from . import stop_signals
    from .cells import make_cell
    from .cli import exit_with_error, mark_engine_reached, remove_if_no_results, run_cells_or_exit
    from .errors import ConfigError
    from .schema import runner_config, tracking_config
    from .timeline import Timeline
    from .tracking import parent_params

    mark_engine_reached()
    stop_signals.check()
    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    overrides = list(hydra_cfg.overrides.task)
    try:
        cell = make_cell(cfg, overrides, index=0, subdir="cell")
        runner, tracking = runner_config(cfg), tracking_config(cfg)
    except ConfigError as err:
        remove_if_no_results(out_dir)
        exit_with_error(str(err))
    run_cells_or_exit(
        [cell],
        out_dir,
        runner,
        tracking,
        run_name=f"run {cell.name}",
        run_params=parent_params(overrides),
        timeline=Timeline(),
    )
    return str(out_dir)


if __name__ == "__main__":
    import sys

    from . import stop_signals
    from .cli import check_output_dirs, engine_reached, take_command_line
    from .config_errors import install as one_line_config_errors
    from .sweep_dir import HydraFiles

    stop_signals.install()  # SIGINT, SIGTERM, SIGHUP: recorded, acted on at the engine's next safe point
    sys.argv = take_command_line(sys.argv)
    one_line_config_errors()  # Hydra's composition errors: one `Error:` line, exit 2 (sweep/config_errors.py)
    existing = [HydraFiles(folder) for folder in check_output_dirs(sys.argv[1:])]
    try:
        try:
            main()
        except KeyboardInterrupt as err:  # before the engine took over (Hydra's start-up)
            from .cli import interrupted

            interrupted("before any cell was composed: nothing was run", err)
        else:
            if "ray" in sys.modules:  # the sweep is done and its files written
                from .task_queue import shutdown_own_ray

                shutdown_own_ray()
    except SystemExit as stop:
        if stop.code not in (0, None):  # refused or stopped: an existing dir's Hydra files as they were
            for files in existing:
                files.restore()
        # Hydra exits 1 when it rejects the command line or composes no config (a key or group
        # typo): bad input, status 2 like every other config error. Later failures keep theirs.
        if stop.code == 1 and not engine_reached():
            raise SystemExit(2) from None
        if stop_signals.ends(stop.code):
            stop_signals.exit_now(stop.code)  # not after the threads of a busy MLflow or Ray
        raise
