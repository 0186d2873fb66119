"""A user's own spot policy named by import path (docs/extending.md): the worked example of the
doc, run from a folder outside the project, checked against MSU, on the local Ray pool with 1 and
2 workers, and each kind of mistake refused before any work."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from algorithms.common.mechanism_names import parse_name
from algorithms.common.user_mechanisms import is_import_path
from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.seeding import replicate_rng
from tests.user_mechanism_checks import assert_refused, example_source, outside_folder, results_on_1_and_2_workers

pytestmark = pytest.mark.sweeps
EXAMPLE = "my_policies:CheapSpot"


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A folder outside the project holding the doc's example as `my_policies.py`, on sys.path."""
    return outside_folder(
        tmp_path, monkeypatch, {"my_policies.py": example_source("spot"), "not_a_policy.py": "class Plain:\n    pass\n"}
    )


def cell_with(mechanisms: str):
    args = ["family=spot", f"mechanisms={mechanisms}", "debug=tiny", "tracking=off"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return make_cell(compose("config", overrides=args), args, 0, "0")


def test_the_grammar_takes_an_import_path_with_parameters():
    parsed = parse_name("my_policies.cheap:CheapSpot(threshold=0.5)")
    assert (parsed.kind, parsed.params) == ("my_policies.cheap:CheapSpot", {"threshold": 0.5})
    assert is_import_path(parsed.kind) and not is_import_path(parse_name("AHAP(w=1,v=1,sigma=0.5)").kind)


def test_above_every_price_the_example_is_msu_exactly(folder):
    """With a threshold no price reaches, every slot's spot is cheap: CheapSpot is MSU."""
    cell = cell_with(f'[MSU,"{EXAMPLE}(threshold=1000)","{EXAMPLE}(threshold=0.5)"]')
    prepared = cell.spec.prepare(cell.world)
    for replicate in range(3):
        rows = cell.spec.simulate_replicate(prepared, replicate, replicate_rng(cell.world_hash, replicate))
        msu, cheap_always, cheap_half = rows
        assert cheap_always["mechanism"] == f"{EXAMPLE}(threshold=1000)"
        same = {k: v for k, v in cheap_always.items() if k != "mechanism"}
        assert same == {k: v for k, v in msu.items() if k != "mechanism"}
        assert cheap_half["mechanism"] == f"{EXAMPLE}(threshold=0.5)"


@pytest.mark.parametrize(
    ("mechanism", "says"),
    [
        ("nowhere_module:CheapSpot", "cannot import the module 'nowhere_module'"),
        ("my_policies:Missing", "the module 'my_policies' defines no 'Missing'"),
        ("not_a_policy:Plain", "is not a subclass of algorithms.spot.simulation.SpotPolicy"),
        (f"{EXAMPLE}(threshold=-1)", "its constructor refused threshold=-1 (threshold must be > 0, got -1)"),
        (f"{EXAMPLE}(speed=2)", "its constructor refused speed=2"),
    ],
)
def test_a_bad_user_mechanism_is_one_error_line_before_any_work(folder, tmp_path, mechanism, says):
    mechanisms = f'mechanisms=[MSU,"{mechanism}"]'
    assert_refused(folder, tmp_path / "run", [mechanisms], says)


@pytest.mark.slow
def test_a_sweep_with_the_example_gives_the_same_numbers_on_1_and_2_workers(folder, tmp_path):
    one, two = results_on_1_and_2_workers(
        folder, tmp_path, ["job.deadline=8,12", f'mechanisms=[MSU,UP,"{EXAMPLE}(threshold=0.5)"]', "replicates=6"]
    )
    pd.testing.assert_frame_equal(one, two)
    mine = one[one["mechanism"] == f"{EXAMPLE}(threshold=0.5)"]
    assert len(mine) == 12 and mine["utility"].notna().all()
