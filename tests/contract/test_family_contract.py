"""The family contract (sweep/family.py), checked for every family in conf/family/: a new family
gets these tests for free. Each runs on the family's default config and on its experiment with
the most mechanisms, both at `debug=tiny` size."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.family import ENGINE_KEYS, REQUIRED_COLUMNS, FamilySpec
from sweep.seeding import replicate_rng

FAMILIES = sorted(p.stem for p in (CONF_DIR / "family").glob("*.yaml"))
REPLICATES = (0, 1)


def compose_cell(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[*overrides, "debug=tiny", "tracking=off"])
    return make_cell(cfg, overrides, 0, "0")


def richest_experiment(family: str) -> str | None:
    """The family's experiment file whose single-run form has the most mechanisms."""
    found = [f"{family}/{p.stem}" for p in sorted((CONF_DIR / "experiment" / family).glob("*.yaml"))]
    return max(found, key=lambda e: len(compose_cell([f"experiment={e}"]).mechanisms), default=None)


CASES = [(family, [f"family={family}"]) for family in FAMILIES]
CASES += [(family, [f"experiment={e}"]) for family in FAMILIES if (e := richest_experiment(family))]


def comparable(row: dict, spec: FamilySpec) -> dict:
    """A row without what is measured rather than simulated (the family's timing columns, also
    inside its side tables): those differ run to run, outside the determinism claims."""
    out = {key: value for key, value in row.items() if key not in spec.timing_columns and key != "tables"}
    for name, table in (row.get("tables") or {}).items():
        for column, values in table.items():
            if column not in spec.timing_columns:
                out[f"tables.{name}.{column}"] = np.asarray(values).tolist()
    return out


def same(a, b) -> bool:
    """Equal, with nan equal to nan (also inside the lists of side-table columns)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def simulate(cell, replicate: int, world: dict | None = None) -> list[dict]:
    spec = cell.spec
    prepared = spec.prepare(world or cell.world)
    return spec.simulate_replicate(prepared, replicate, replicate_rng(cell.world_hash, replicate))


@pytest.fixture(scope="module", params=CASES, ids=[" ".join(o) for _, o in CASES])
def case(request):
    family, overrides = request.param
    return family, compose_cell(overrides)


def test_the_family_is_found_from_its_config(case):
    family, cell = case
    assert cell.spec.name == family == cell.world["family"]["name"]
    assert cell.world["family"]["module"] == cell.spec.module


@pytest.mark.parametrize("family", FAMILIES)
def test_it_says_its_paper_question_and_what_its_utility_means(family):
    """README's family table and the MLflow experiment's description come from these."""
    spec = compose_cell([f"family={family}"]).spec
    assert spec.paper and spec.question.endswith("?") and "higher" in spec.utility


def test_its_config_holds_the_engine_keys_and_its_own_sections(case):
    _, cell = case
    assert set(cell.world) - set(ENGINE_KEYS) <= set(cell.spec.sections)
    assert {"seed", "replicates", "family"} <= set(cell.world)


def test_rows_follow_mechanism_names_and_carry_the_required_columns(case):
    _, cell = case
    names = list(cell.spec.mechanism_names(cell.world))
    assert names and len(set(names)) == len(names)
    for replicate in REPLICATES:
        rows = simulate(cell, replicate)
        assert [row["mechanism"] for row in rows] == names
        for row in rows:
            assert set(REQUIRED_COLUMNS) <= set(row)
            assert isinstance(row["utility"], float | int) and not isinstance(row["utility"], bool)
    declared = set(cell.spec.summary_columns) | set(cell.spec.rate_columns)
    seen = {key for row in rows for key in row}
    assert declared - seen <= {"opt_ratio", "of_opt"} or "OPT" in names, declared - seen  # OPT's columns need OPT


def test_the_same_rng_gives_the_same_rows(case):
    _, cell = case
    for replicate in REPLICATES:
        first = [comparable(row, cell.spec) for row in simulate(cell, replicate)]
        second = [comparable(row, cell.spec) for row in simulate(cell, replicate)]
        for a, b in zip(first, second):
            assert a.keys() == b.keys()
            assert all(same(a[k], b[k]) for k in a), [k for k in a if not same(a[k], b[k])]


def test_every_mechanism_sees_the_same_world(case):
    """Common random numbers: a mechanism run alone gives the row it gives among the others (the
    world does not depend on which mechanisms run, nor a mechanism's own randomness on them).
    Columns that compare with the offline optimum need OPT beside it and are left out. Only
    `mechanisms` changes: a section that lists some of the cell's mechanisms for an analysis of
    the whole cell (spot's `selection.mechanisms`) is empty in every case here, as in the family
    defaults; a case with one set would have `prepare` reject the narrowed config, and the
    contract would need a name for such keys."""
    _, cell = case
    relative = {"regret_vs_opt", "opt_ratio", "opt_proven", "opt_bound"}
    for replicate in REPLICATES:
        together = {row["mechanism"]: comparable(row, cell.spec) for row in simulate(cell, replicate)}
        for name in together:
            world = copy.deepcopy(cell.world)
            world["mechanisms"] = [name]
            (alone,) = [comparable(row, cell.spec) for row in simulate(cell, replicate, world)]
            for key in set(alone) - relative:
                assert same(alone[key], together[name][key]), (name, key, alone[key], together[name][key])


def test_what_prepare_returns_pickles(case):
    _, cell = case
    prepared = cell.spec.prepare(cell.world)
    again = pickle.loads(pickle.dumps(prepared))
    rows = cell.spec.simulate_replicate(again, 0, replicate_rng(cell.world_hash, 0))
    expected = [comparable(r, cell.spec) for r in simulate(cell, 0)]
    got = [comparable(r, cell.spec) for r in rows]
    assert [r.keys() for r in got] == [r.keys() for r in expected]
    assert all(same(a[k], b[k]) for a, b in zip(got, expected) for k in a)


def test_bad_sections_are_rejected_naming_the_key(case):
    _, cell = case
    for section in cell.spec.sections:
        if section not in cell.world:
            continue
        section_value = cell.world[section]
        extra = {**section_value, "no_such_key": 1} if isinstance(section_value, dict) else {"no_such_key": 1}
        for bad, needle in ((extra, "no_such_key"), (5, section)):
            world = copy.deepcopy(cell.world)
            world[section] = bad
            with pytest.raises(ValueError) as info:
                cell.spec.prepare(world)
            assert section in str(info.value) and needle in str(info.value), str(info.value)


def test_input_files_and_timing_columns_are_declared_where_the_family_has_them(case):
    _, cell = case
    for key in cell.spec.input_files:
        assert key.split(".")[0] in cell.spec.sections
    for column in cell.spec.timing_columns:
        assert isinstance(column, str) and column not in REQUIRED_COLUMNS


def test_optional_keys_must_lie_inside_the_familys_sections():
    import types

    from sweep.family import spec_of

    module = types.ModuleType("fake_family_with_optional_keys")
    module.NAME, module.SECTIONS = "fake", ("jobs",)
    module.prepare = module.mechanism_names = module.simulate_replicate = lambda *args: None
    module.OPTIONAL_KEYS = ("jobs.size_hours",)
    assert spec_of(module).optional_keys == ("jobs.size_hours",)
    for bad in (("prices.path",), ("jobs",), "jobs.size_hours"):
        module.OPTIONAL_KEYS = bad
        with pytest.raises(TypeError, match="OPTIONAL_KEYS"):
            spec_of(module)
