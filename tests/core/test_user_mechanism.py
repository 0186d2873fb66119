"""A user's own core allocator named by import path (docs/extending.md, "core: an allocator"): the
worked example of the doc, run from a folder outside the project, checked against STF and UA, on
the local Ray pool with 1 and 2 workers, and each kind of mistake refused before any work."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from algorithms.common.mechanism_names import parse_name
from algorithms.common.user_mechanisms import is_import_path
from algorithms.core.config import allocator_specs, make_allocator
from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.seeding import replicate_rng
from tests.user_mechanism_checks import assert_refused, example_source, outside_folder, results_on_1_and_2_workers

pytestmark = pytest.mark.sweeps
EXAMPLE = "my_allocators:NearestDeadlines"


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A folder outside the project holding the doc's example as `my_allocators.py`, on sys.path."""
    return outside_folder(
        tmp_path,
        monkeypatch,
        {
            "my_allocators.py": example_source("core"),
            "not_an_allocator.py": "class Plain:\n    def reset(self, threads):\n        pass\n",
        },
    )


def cell_with(mechanisms: str):
    args = ["family=core", f"mechanisms={mechanisms}", "debug=tiny", "tracking=off"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return make_cell(compose("config", overrides=args), args, 0, "0")


def same(a, b) -> bool:
    """Equal values, nan equal to nan; arrays equal element for element with the same dtype."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (np.ndarray, list, tuple)):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def test_core_takes_an_import_path_with_its_parameters_and_the_name_as_written():
    parsed = parse_name(f"{EXAMPLE}(top=3)")
    assert is_import_path(parsed.kind) and parsed.params == {"top": 3}
    (spec,) = allocator_specs({"mechanisms": [f"{EXAMPLE}(top=3)"]})
    assert (spec.name, spec.kind, spec.settings, spec.params) == (f"{EXAMPLE}(top=3)", EXAMPLE, None, (("top", 3),))


def test_the_example_builds_with_the_name_written_and_its_parameters(folder):
    (spec,) = allocator_specs({"mechanisms": [f"{EXAMPLE}(top=3)"]})
    allocator = make_allocator(spec)
    assert allocator.name == f"{EXAMPLE}(top=3)" and allocator.top == 3


def test_top_1_is_stf_and_top_1000_is_ua_exactly(folder):
    """The example at its two ends: the whole unit to the nearest deadline (STF's rule, the lowest
    index on ties), and an equal share for every active thread (UA's)."""
    cell = cell_with(f'[UA,STF,"{EXAMPLE}(top=1)","{EXAMPLE}(top=1000)","{EXAMPLE}"]')
    prepared = cell.spec.prepare(cell.world)
    for replicate in range(3):  # replicate 0 records the shares (outputs.trajectories)
        rows = cell.spec.simulate_replicate(prepared, replicate, replicate_rng(cell.world_hash, replicate))
        ua, stf, top1, top1000, default = rows
        assert [top1["mechanism"], top1000["mechanism"], default["mechanism"]] == [
            f"{EXAMPLE}(top=1)",
            f"{EXAMPLE}(top=1000)",
            EXAMPLE,
        ]
        for built_in, mine in ((stf, top1), (ua, top1000)):
            skip = ("mechanism", "decision_ms")
            assert same(
                {k: v for k, v in mine.items() if k not in skip}, {k: v for k, v in built_in.items() if k not in skip}
            )
        assert ("allocations" in top1["tables"]) == (replicate == 0)
        assert "predictions" not in top1["tables"] and top1["starved_by_fit"] == 0


@pytest.mark.parametrize(
    ("mechanism", "says"),
    [
        ("nowhere_module:NearestDeadlines", "cannot import the module 'nowhere_module'"),
        ("my_allocators:Missing", "the module 'my_allocators' defines no 'Missing'"),
        (
            "not_an_allocator:Plain",
            "'Plain' does not implement algorithms.core.simulation.Allocator, the family's mechanism interface "
            "(it defines no allocate;",
        ),
        (f"{EXAMPLE}(top=0)", "its constructor refused top=0 (top must be an integer >= 1, got 0)"),
        (f"{EXAMPLE}(speed=2)", "its constructor refused speed=2"),
    ],
)
def test_a_bad_user_allocator_is_one_error_line_before_any_work(folder, tmp_path, mechanism, says):
    mechanisms = f'mechanisms=[UA,"{mechanism}"]'
    assert_refused(folder, tmp_path / "run", ["family=core", mechanisms], says)


@pytest.mark.slow
def test_a_sweep_with_the_example_gives_the_same_numbers_on_1_and_2_workers(folder, tmp_path):
    one, two = results_on_1_and_2_workers(
        folder,
        tmp_path,
        ["family=core", "bundle.jitter=0.05,0.1", f'mechanisms=[UA,STF,"{EXAMPLE}(top=2)"]', "replicates=4"],
    )
    one, two = (frame.drop(columns="decision_ms", errors="ignore") for frame in (one, two))
    pd.testing.assert_frame_equal(one, two)
    mine = one[one["mechanism"] == f"{EXAMPLE}(top=2)"]
    assert len(mine) == 8 and mine["utility"].notna().all()
