"""The grid composer (sweep/compose.py) gives every cell exactly what Hydra's own composition
gives it: the same resolved world, hashes, name, params, output folder, runner and tracking,
and the same errors, for every experiment file's grid and for the overrides it hands back to
Hydra (`+key`, `~key`, dict values, interpolations)."""

from __future__ import annotations

import pytest
from hydra import initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import open_dict
from omegaconf.errors import OmegaConfBaseException

from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.compose import GridComposer
from sweep.errors import ConfigError
from sweep.schema import runner_config, tracking_config

from .test_experiments import EXPERIMENTS


class Grid:
    """A multirun's master config and jobs, as Hydra's basic sweeper expands them."""

    def __init__(self, arguments: list[str]):
        GlobalHydra.instance().clear()
        self._context = initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3")
        self._context.__enter__()
        hydra = GlobalHydra.instance().hydra
        self.loader = hydra.config_loader
        self.master = hydra.compose_config("config", overrides=arguments, run_mode=RunMode.MULTIRUN)
        params = [f"{k}={v}" for k, v in (self.master.hydra.sweeper.params or {}).items()]
        parsed = OverridesParser.create(config_loader=self.loader).parse_overrides(
            params + list(self.master.hydra.overrides.task)
        )
        self.jobs = BasicSweeper.split_arguments(parsed, None)[0]

    def close(self) -> None:
        self._context.__exit__(None, None, None)
        GlobalHydra.instance().clear()

    def composer(self) -> GridComposer:
        return GridComposer(
            lambda overrides: self.loader.load_sweep_config(self.master, overrides),
            self.loader.repository.group_exists,
            lambda config, index: str(config.hydra.sweep.subdir),
        )

    def reference(self, overrides: list[str], index: int):
        """What the launcher did before the composer: Hydra's full composition of the job."""
        config = self.loader.load_sweep_config(self.master, list(overrides))
        with open_dict(config):
            config.hydra.job.id = index
            config.hydra.job.num = index
        HydraConfig.instance().set_config(config)
        cell = make_cell(config, list(overrides), index, str(config.hydra.sweep.subdir))
        return cell, runner_config(config), tracking_config(config)


def assert_same(grid: Grid, composer: GridComposer, overrides: list[str], index: int) -> None:
    cell, runner, tracking = grid.reference(overrides, index)
    composed = composer.compose(list(overrides), index)
    got = composed.cell
    assert got.world == cell.world, overrides
    assert (got.config_hash, got.world_hash) == (cell.config_hash, cell.world_hash), overrides
    assert (got.name, got.params, got.subdir, got.mechanisms) == (
        cell.name,
        cell.params,
        cell.subdir,
        cell.mechanisms,
    ), overrides
    assert (composed.runner, composed.tracking) == (runner, tracking), overrides


def sample(jobs: list, count: int) -> list[tuple[int, list[str]]]:
    step = max(1, len(jobs) // count)
    return [(index, jobs[index]) for index in range(0, len(jobs), step)][:count]


# debug=tiny adds an optional config group (conf/debug/family/<f>_tiny.yaml): checked on one
# experiment of each family and on the everyday grids, to keep the suite's time down.
@pytest.mark.slow
@pytest.mark.parametrize(
    "experiment,debug",
    [(e, "none") for e in EXPERIMENTS] + [(e, "tiny") for e in ("smoke", "demo", "spot/fig6", "auction/fig4")],
)
def test_every_experiment_grid_composes_as_hydra_composes_it(experiment, debug):
    grid = Grid([f"experiment={experiment}", f"debug={debug}", "tracking=off"])
    try:
        composer = grid.composer()
        for index, overrides in sample(grid.jobs, 4):
            assert_same(grid, composer, overrides, index)
        # one Hydra composition per choice of config groups; the cells themselves are copies
        assert composer.full_compositions == 0
    finally:
        grid.close()


@pytest.mark.parametrize(
    "arguments",
    [
        ["job.deadline=6,9", "job.workload=40,60.5", "replicates=3"],
        ["family=spot,auction", "replicates=2", "debug=tiny"],
        ["market=trace", "market.path=data/market_aws_us-west-2a_v100.csv", "market.capacity=8,16", "replicates=2"],
        ["market=synthetic,trace", "market.capacity=8,16", "replicates=2"],  # trace: market.path is missing
        ["experiment=spot/fig6", "replicates=2", "job.mu1=0.3,0.5"],  # job.mu2 is ${job.mu1}
        ["mechanisms=[OD-Only,UP],[MSU]", "replicates=2"],
        ["pool.threshold=[0.5],[0.4,0.6]", "mechanisms=[AHAP]", "replicates=2"],
        ["+job_sampling.extra=1,2", "replicates=2"],  # +key: Hydra's full path (and an error: not a key)
        ["~job.gamma", "job.deadline=6,7", "replicates=2"],
        ["job={deadline:6},{deadline:7}", "replicates=2"],  # a dict value merges: Hydra's full path
        ["noise.level=0.1,0.2", "noise.kind=fixed_uniform", "seed=1,2", "replicates=2"],
    ],
)
def test_special_overrides_compose_as_hydra_composes_them(arguments):
    grid = Grid([*arguments, "tracking=off"])
    try:
        composer = grid.composer()
        for index, overrides in enumerate(grid.jobs):
            try:
                reference = grid.reference(overrides, index)
            except (ConfigError, HydraException, OmegaConfBaseException) as err:
                with pytest.raises(type(err)) as raised:
                    composer.compose(list(overrides), index)
                assert str(raised.value) == str(err)
                continue
            assert_same(grid, composer, overrides, index)
            assert reference
        # the launcher keeps Python's cyclic GC off only while no cell made OmegaConf nodes
        full = any(a.startswith(("~", "+")) or "={" in a for a in arguments) or "fig6" in str(arguments)
        assert composer.plain is not full, (composer.full_compositions, composer.resolved)
    finally:
        grid.close()


def test_the_composer_composes_once_per_choice_of_groups_and_copies_the_rest():
    grid = Grid(["job.deadline=6,7,8", "family=spot", "market=synthetic", "replicates=2", "tracking=off"])
    try:
        calls: list[list[str]] = []
        composer = GridComposer(
            lambda overrides: calls.append(overrides) or grid.loader.load_sweep_config(grid.master, overrides),
            grid.loader.repository.group_exists,
            lambda config, index: "",
        )
        for index, overrides in enumerate(grid.jobs):
            composer.compose(list(overrides), index)
        assert calls == [["family=spot", "market=synthetic", "tracking=off"]]
        assert composer.full_compositions == 0
    finally:
        grid.close()


def test_a_missing_value_is_named_as_hydra_names_it():
    grid = Grid(["market=trace", "replicates=2", "job.deadline=6,7", "tracking=off"])
    try:
        with pytest.raises(ConfigError, match=r"market.path: a value is required"):
            grid.composer().compose(list(grid.jobs[0]), 0)
        with pytest.raises(ConfigError, match=r"market.path: a value is required"):
            grid.reference(grid.jobs[0], 0)
    finally:
        grid.close()


def test_ray_starts_before_the_cells_only_from_a_valid_sweep_config():
    """The launcher starts Ray from the sweep's own config while the cells are composed when that
    config is a valid cell (so a mistake outside the swept keys is reported before Ray starts);
    otherwise the first cell is composed first and says how."""
    from hydra_plugins.ray_queue_launcher.ray_queue_launcher import _valid_master_runner

    grid = Grid(["job.deadline=6,7", "runner.num_workers=1", "replicates=2", "tracking=off"])
    try:
        HydraConfig.instance().set_config(grid.master)
        runner = _valid_master_runner(grid.master)
        assert runner == runner_config(grid.master) and runner.num_workers == 1
    finally:
        grid.close()
    for arguments in (
        ["market=trace", "replicates=2", "job.deadline=6,7", "tracking=off"],
        ["job.deadline=6,7", "market.capacity=0", "replicates=2", "tracking=off"],
        ["job.deadline=6,7", "runner.num_workers=0", "replicates=2", "tracking=off"],
    ):
        grid = Grid(arguments)
        try:
            HydraConfig.instance().set_config(grid.master)
            assert _valid_master_runner(grid.master) is None, arguments
        finally:
            grid.close()
