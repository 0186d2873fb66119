"""A user's own sow scheduler named by import path (docs/extending.md, "sow: a scheduler"): the
worked example of the doc, run from a folder outside the project, checked against
FirstComeGreedy, on the local Ray pool with 1 and 2 workers, and each kind of mistake refused
before any work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from algorithms.sow.config import SowSettings, mechanism_specs
from algorithms.sow.first_come_greedy import first_come_greedy
from algorithms.sow.scheduler import FirstComeGreedy, ValueDensityGreedy, account
from algorithms.sow.value_density_greedy import value_density_greedy
from market.sow.birth_sequences import draw_births
from market.sow.statement_of_work import realise
from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.seeding import replicate_rng
from tests.user_mechanism_checks import assert_refused, example_source, outside_folder, results_on_1_and_2_workers

pytestmark = pytest.mark.sweeps
EXAMPLE = "my_schedulers:FirstCome"


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A folder outside the project holding the doc's example as `my_schedulers.py`, on sys.path."""
    return outside_folder(
        tmp_path,
        monkeypatch,
        {"my_schedulers.py": example_source("sow"), "not_a_scheduler.py": "class Plain:\n    pass\n"},
    )


def cell_with(mechanisms: str, *more: str):
    args = ["family=sow", f"mechanisms={mechanisms}", "tracking=off", *more]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return make_cell(compose("config", overrides=args), args, 0, "0")


def test_the_name_parser_keeps_an_import_path_and_its_parameters():
    specs = mechanism_specs({"mechanisms": ["FirstComeGreedy", "my.mod:Mine(patience=2,rule=fifo)"]}, SowSettings())
    assert specs[1].name == "my.mod:Mine(patience=2,rule=fifo)"
    assert (specs[1].kind, dict(specs[1].params)) == ("my.mod:Mine", {"patience": 2, "rule": "fifo"})


@pytest.mark.parametrize("births", ["recurring", "dense", "toy"])
@pytest.mark.parametrize("signal", ["none", "duration"])
def test_the_built_in_greedies_fit_the_interface(births, signal):
    """Their start rounds, accounted by the family, are their own outcomes."""
    cell = cell_with("[FirstComeGreedy]", f"births={births}", f"births.signal={signal}", "cluster.nodes=12")
    prepared = cell.spec.prepare(cell.world)
    rng = replicate_rng(cell.world_hash, 0)
    sequence = draw_births(prepared.births, prepared.bounds, rng)
    real = realise(sequence, rng)
    for scheduler, function in ((FirstComeGreedy(), first_come_greedy), (ValueDensityGreedy(), value_density_greedy)):
        built_in = function(sequence, real, 12)
        mine = account(sequence, real, 12, scheduler.schedule(sequence, real, 12, rng), "x")
        for column in ("start", "finish", "completed", "evicted", "cancelled", "value", "payment"):
            assert np.array_equal(getattr(mine, column), getattr(built_in, column)), column


@pytest.mark.parametrize("births", ["recurring", "dense", "toy"])
@pytest.mark.parametrize("signal", ["none", "duration"])
def test_without_patience_the_example_is_first_come_greedy_exactly(folder, births, signal):
    names = f'[FirstComeGreedy,"{EXAMPLE}","{EXAMPLE}(patience=0)"]'
    cell = cell_with(names, f"births={births}", f"births.signal={signal}", "cluster.nodes=12")
    prepared = cell.spec.prepare(cell.world)
    for replicate in range(2):
        built_in, mine, impatient = cell.spec.simulate_replicate(
            prepared, replicate, replicate_rng(cell.world_hash, replicate)
        )
        assert (mine["mechanism"], impatient["mechanism"]) == (EXAMPLE, f"{EXAMPLE}(patience=0)")
        jobs, my_jobs = built_in.pop("tables")["jobs"], mine.pop("tables")["jobs"]
        assert {k: v for k, v in mine.items() if k != "mechanism"} == {
            k: v for k, v in built_in.items() if k != "mechanism"
        }
        assert list(my_jobs) == list(jobs)
        for column, values in jobs.items():
            assert np.array_equal(my_jobs[column], values), column
        started = impatient["tables"]["jobs"]
        assert (started["start"][started["start"] >= 0] == started["arrival"][started["start"] >= 0]).all()


def test_an_infeasible_schedule_is_refused(folder):
    cell = cell_with(f'["{EXAMPLE}"]', "births=toy")
    prepared = cell.spec.prepare(cell.world)
    rng = replicate_rng(cell.world_hash, 0)
    sequence = draw_births(prepared.births, prepared.bounds, rng)
    real = realise(sequence, rng)
    early = np.asarray(real.arrival) - 1
    with pytest.raises(ValueError, match=r"^mine: job \d+ starts at -?\d+, outside its arrival"):
        account(sequence, real, 40, np.where(early >= 0, early, 0), "mine")
    everything = np.asarray(real.arrival)
    with pytest.raises(ValueError, match=r"^mine: \d+ nodes in use in round \d+, above the 1 nodes"):
        account(sequence, real, 1, everything, "mine")
    with pytest.raises(ValueError, match=r"^mine: schedule must return \d+ integer start rounds"):
        account(sequence, real, 40, everything[:-1], "mine")


@pytest.mark.parametrize(
    ("mechanism", "says"),
    [
        ("nowhere_module:FirstCome", "cannot import the module 'nowhere_module'"),
        ("my_schedulers:Missing", "the module 'my_schedulers' defines no 'Missing'"),
        ("not_a_scheduler:Plain", "is not a subclass of algorithms.sow.scheduler.Scheduler"),
        (f"{EXAMPLE}(patience=-1)", "its constructor refused patience=-1 (patience must be an integer >= 0, got -1)"),
        (f"{EXAMPLE}(speed=2)", "its constructor refused speed=2"),
    ],
)
def test_a_bad_user_mechanism_is_one_error_line_before_any_work(folder, tmp_path, mechanism, says):
    mechanisms = f'mechanisms=[FirstComeGreedy,"{mechanism}"]'
    assert_refused(folder, tmp_path / "run", ["family=sow", mechanisms], says)


@pytest.mark.slow
def test_a_sweep_with_the_example_gives_the_same_numbers_on_1_and_2_workers(folder, tmp_path):
    one, two = results_on_1_and_2_workers(
        folder,
        tmp_path,
        [
            "family=sow",
            "births=recurring,dense",
            "cluster.nodes=12",
            f'mechanisms=[FirstComeGreedy,ValueDensityGreedy,"{EXAMPLE}","{EXAMPLE}(patience=0)"]',
            "replicates=3",
        ],
    )
    pd.testing.assert_frame_equal(one, two)
    mine = one[one["mechanism"] == f"{EXAMPLE}(patience=0)"]
    assert len(mine) == 6 and mine["utility"].notna().all()
    utility = one.set_index(["cell", "replicate", "mechanism"])["utility"]
    assert utility.xs("FirstComeGreedy", level="mechanism").equals(utility.xs(EXAMPLE, level="mechanism"))
