"""A user's own spot policy named by import path (docs/extending.md): the worked example of the
doc, run from a folder outside the project, checked against MSU, on the local Ray pool with 1 and
2 workers, and each kind of mistake refused before any work."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from algorithms.common.mechanism_names import parse_name
from algorithms.common.user_mechanisms import is_import_path
from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.seeding import replicate_rng
from tests.engine.conftest import run_cli

pytestmark = pytest.mark.sweeps
DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
EXAMPLE = "my_policies:CheapSpot"


def example_source() -> str:
    """The doc's worked example: its first python block."""
    return re.search(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)[1]


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A folder outside the project holding the example as `my_policies.py`, on sys.path."""
    outside = tmp_path / "mine"
    outside.mkdir()
    (outside / "my_policies.py").write_text(example_source())
    (outside / "not_a_policy.py").write_text("class Plain:\n    pass\n")
    monkeypatch.syspath_prepend(str(outside))
    return outside


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
    out = tmp_path / "run"
    done = run_cli(
        f'mechanisms=[MSU,"{mechanism}"]', "tracking=off", f"hydra.run.dir={out}", env={"PYTHONPATH": str(folder)}
    )
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: mechanisms: ") and says in lines[0], lines
    assert not out.exists()


@pytest.mark.slow
def test_a_sweep_with_the_example_gives_the_same_numbers_on_1_and_2_workers(folder, tmp_path):
    frames = []
    for workers in (1, 2):
        out = tmp_path / f"workers{workers}"
        done = run_cli(
            "-m",
            "job.deadline=8,12",
            f'mechanisms=[MSU,UP,"{EXAMPLE}(threshold=0.5)"]',
            "replicates=6",
            f"runner.num_workers={workers}",
            "runner.progress=false",
            "tracking=off",
            f"hydra.sweep.dir={out}",
            env={"PYTHONPATH": str(folder)},
        )
        assert done.returncode == 0, done.stderr[-3000:]
        frames.append(pd.read_parquet(out / "results.parquet"))
    one, two = frames
    pd.testing.assert_frame_equal(one, two)
    mine = one[one["mechanism"] == f"{EXAMPLE}(threshold=0.5)"]
    assert len(mine) == 12 and mine["utility"].notna().all()
