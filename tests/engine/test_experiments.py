"""Every experiment file (conf/experiment/**.yaml) composes the right family, in its single-run
form and in every cell of its grid, and runs end to end under `debug=tiny` (the way
lightning-hydra-template runs `experiment=glob(*)` with a fast-dev flag)."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser

from sweep.api import CONF_DIR
from sweep.cells import make_cell

from .conftest import run_cli

pytestmark = pytest.mark.sweeps

EXPERIMENTS = sorted(
    str(p.relative_to(CONF_DIR / "experiment").with_suffix("")) for p in (CONF_DIR / "experiment").rglob("*.yaml")
)


def family_of(experiment: str) -> str:
    return experiment.split("/")[0] if "/" in experiment else "spot"


def grid(experiment: str, extra=()) -> list[list[str]]:
    """Every cell of the experiment's grid (its `hydra.sweeper.params`), as override lists."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={experiment}", *extra], return_hydra_config=True)
    params = cfg.hydra.sweeper.params or {}
    parsed = OverridesParser.create().parse_overrides([f"{key}={value}" for key, value in params.items()])
    axes = [
        [f"{o.get_key_element()}={v}" for v in o.sweep_string_iterator()]
        if o.is_sweep_override()
        else [f"{o.get_key_element()}={o.get_value_element_as_str()}"]
        for o in parsed
    ]
    return [list(combo) for combo in itertools.product(*axes)]


def test_there_are_experiments_of_every_family():
    assert {family_of(e) for e in EXPERIMENTS} == {p.stem for p in (CONF_DIR / "family").glob("*.yaml")}
    assert {"smoke", "demo"} <= set(EXPERIMENTS)


# demo's 36 cells take about 9 s to compose (pytest --durations): slow, like every test over 5 s.
@pytest.mark.parametrize(
    "experiment", [pytest.param(e, marks=pytest.mark.slow) if e == "demo" else e for e in EXPERIMENTS]
)
def test_every_cell_of_every_experiment_composes_and_validates(experiment):
    cells = grid(experiment)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for index, overrides in enumerate([[]] + cells):  # [] = the single-run form
            cfg = compose("config", overrides=[f"experiment={experiment}", "tracking=off", *overrides])
            cell = make_cell(cfg, overrides, index, str(index))
            assert cell.family == family_of(experiment), overrides
            assert cell.replicates >= 1


@pytest.mark.slow
def test_every_experiment_runs_end_to_end_under_debug_tiny(tmp_path):
    """One multirun over every experiment file's single-run form, at debug=tiny size."""
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        f"experiment={','.join(EXPERIMENTS)}",
        "debug=tiny",
        "tracking=off",
        "runner.num_workers=2",
        "runner.progress=false",
        f"hydra.sweep.dir={sweep_dir}",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = pd.read_parquet(sweep_dir / "results.parquet")
    assert results["cell_index"].nunique() == len(EXPERIMENTS)
    assert set(results.groupby("cell_index")["replicate"].nunique()) == {2}  # debug=tiny: 2 replicates each
    assert results["utility"].notna().all()


def test_a_familys_own_values_win_over_the_roots_and_it_composes_only_its_groups():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        auction = compose("config", overrides=["family=auction", "tracking=off"])
        spot = compose("config", overrides=["tracking=off"])
    assert auction.replicates == 10 and spot.replicates == 200  # conf/family/auction.yaml over conf/config.yaml
    assert "market" not in auction and spot.market.kind == "synthetic"
    assert make_cell(auction, ["family=auction"], 0, "0").world_hash != make_cell(spot, [], 0, "0").world_hash
