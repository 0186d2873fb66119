"""The `checked` Hydra sweeper: Hydra's basic sweeper (grids from `-m` and
`hydra.sweeper.params`) whose bad input stops the run cleanly (docs/architecture.md,
"Launcher and entry points").

- A key or group typo in a swept override, or a swept value that does not compose, exits with
  status 2 and a one-line message naming it, and leaves no sweep dir behind (the basic sweeper
  exits 1 and leaves `multirun.yaml`).
- `hydra.sweep.dir` naming an existing file is an error, not a traceback.
- Cells are composed once, by the `ray_queue` launcher, which validates every cell before any
  work; the basic sweeper's own composition of every job beforehand is skipped.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper, BasicSweeperConf
from hydra.core.config_store import ConfigStore
from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException


@dataclass
class CheckedSweeperConf(BasicSweeperConf):
    _target_: str = "hydra_plugins.ray_queue_launcher.checked_sweeper.CheckedSweeper"


ConfigStore.instance().store(group="hydra/sweeper", name="checked", node=CheckedSweeperConf, provider="sweep")


class CheckedSweeper(BasicSweeper):
    def sweep(self, arguments: list[str]) -> Any:
        from sweep import stop_signals
        from sweep.cli import (
            exit_if_not_a_folder,
            exit_with_error,
            interrupted,
            mark_engine_reached,
            remove_if_no_results,
        )

        mark_engine_reached()
        assert self.config is not None
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        exit_if_not_a_folder("hydra.sweep.dir", sweep_dir)
        try:
            stop_signals.check()
            return super().sweep(arguments)
        except (HydraException, OmegaConfBaseException) as err:
            from sweep.config_errors import config_error_message

            remove_if_no_results(sweep_dir)
            exit_with_error(config_error_message(err, arguments, multirun=True, sweep=arguments))
        except KeyboardInterrupt as err:  # before the launcher took over (it ends its own Ctrl-C)
            remove_if_no_results(sweep_dir)
            interrupted("before any cell was composed: nothing was run", err)

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Nothing: the launcher composes and validates every cell of the batch before any work."""
