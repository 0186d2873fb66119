"""A user's own spot policy in the arena (docs/extending.md): the spot worked example, from a
folder outside the project, runs on the arena's market and billing as paper 000's policies do,
and above every price it is MSU exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.seeding import replicate_rng
from tests.spot.test_user_mechanism import EXAMPLE
from tests.user_mechanism_checks import example_source, outside_folder


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """The spot section's example as `my_policies.py` in a folder outside the project, on sys.path."""
    return outside_folder(
        tmp_path, monkeypatch, {"my_policies.py": example_source("spot"), "not_a_policy.py": "class Plain:\n    pass\n"}
    )


def arena_cell(mechanisms: str):
    args = ["family=arena", f"mechanisms={mechanisms}", "debug=tiny", "tracking=off"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return make_cell(compose("config", overrides=args), args, 0, "0")


def test_above_every_price_the_example_is_msu_in_the_arena(folder):
    cell = arena_cell(f'[MSU,"{EXAMPLE}(threshold=1000)"]')
    prepared = cell.spec.prepare(cell.world)
    for replicate in range(2):
        msu, mine = cell.spec.simulate_replicate(prepared, replicate, replicate_rng(cell.world_hash, replicate))
        assert (mine["mechanism"], mine["paper"]) == (f"{EXAMPLE}(threshold=1000)", "user")
        assert msu["paper"] == "000"
        strip = ("mechanism", "paper")
        assert {k: v for k, v in mine.items() if k not in strip} == {k: v for k, v in msu.items() if k not in strip}


def test_a_bad_user_policy_is_refused_by_the_arena_before_any_work(folder):
    with pytest.raises(Exception, match="is not a subclass of algorithms.spot.simulation.SpotPolicy"):
        cell = arena_cell('[MSU,"not_a_policy:Plain"]')
        cell.spec.prepare(cell.world)
