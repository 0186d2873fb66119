"""The core registry (algorithms/core/registry.py): the parser, the dispatch and the error text
derive from it, the variants' keys share the `lara` section's checks, and a new baseline is one
module plus one registry line, which the core family runs with no other edit (docs/extending.md,
"Adding a built-in mechanism")."""

from __future__ import annotations

import pytest

from algorithms.core.config import OPTIMUM, allocator_specs, make_allocator
from algorithms.core.registry import REGISTRY, SETTINGS
from algorithms.core.simulation import Allocator
from tests.registry_checks import add_baseline, project_copy, run_replicate

LATEST_DEADLINE = '''"""LDF: the whole unit to the active thread with the latest deadline (the lowest index on ties),
STF's mirror image; a test baseline."""

import numpy as np


class LatestDeadlineFirst:
    name = "LDF"

    def reset(self, threads) -> None:
        self.deadline = threads.deadline

    def allocate(self, view) -> np.ndarray:
        shares = np.zeros(view.active.size)
        candidates = np.flatnonzero(view.active)
        shares[candidates[np.argmax(self.deadline[candidates])]] = 1.0
        return shares
'''
LINE = 'Entry("LDF", "algorithms.core.latest_deadline_first:LatestDeadlineFirst", "test baseline"),'


def test_every_entry_builds_and_is_named_in_the_error_text():
    with pytest.raises(ValueError, match="unknown mechanism 'Nope' for family core") as refused:
        allocator_specs({"mechanisms": ["Nope"]})
    for text in (*REGISTRY.examples(), OPTIMUM, "package.module:Class(key=value,...)"):
        assert text in str(refused.value)
    for entry in REGISTRY:
        (spec,) = allocator_specs({"mechanisms": [entry.name]})
        allocator = make_allocator(spec)
        assert isinstance(allocator, Allocator) and allocator.name == entry.name
        assert (spec.settings is None) == (not entry.context)


def test_a_variant_key_overrides_the_section_even_at_the_code_default_and_keeps_its_name():
    specs = allocator_specs(
        {"mechanisms": ["LARA", "LARA(gamma=0.90,exploration=8000)", "LRF"], "lara": {"gamma": 0.5, "exploration": 0}}
    )
    assert [spec.name for spec in specs] == ["LARA", "LARA(gamma=0.90,exploration=8000)", "LRF"]
    assert [(spec.settings.gamma, spec.settings.exploration) for spec in specs] == [(0.5, 0), (0.9, 8000), (0.5, 0)]


@pytest.mark.parametrize("key, bad", [("gamma", 2), ("exploration", -1), ("explore", "maybe"), ("delivery", "edf")])
def test_a_variant_and_the_section_refuse_a_bad_value_alike(key, bad):
    assert key in SETTINGS
    with pytest.raises(ValueError) as section:
        allocator_specs({"mechanisms": ["LARA"], "lara": {key: bad}})
    with pytest.raises(ValueError) as variant:
        allocator_specs({"mechanisms": [f"LARA({key}={bad})"]})
    assert str(section.value) == f"lara.{key} {str(variant.value).split(f': {key} ', 1)[1]}"


@pytest.mark.parametrize("name", ["LRF(delivery=deadline)", "ETF(when_none_selected=idle)", "UA(x=1)", "OPT(x=1)"])
def test_a_key_the_entry_does_not_take_is_an_error_naming_the_mechanism(name):
    with pytest.raises(ValueError, match=rf"^mechanisms: {name.replace('(', '[(]').replace(')', '[)]')}: "):
        allocator_specs({"mechanisms": [name]})


@pytest.mark.slow
def test_a_new_baseline_is_one_file_and_one_registry_line(tmp_path):
    project = project_copy(tmp_path)
    add_baseline(project, "core", "latest_deadline_first", LATEST_DEADLINE, LINE)
    rows = dict(run_replicate(project, ["family=core"], ["STF", "LDF"]))
    assert set(rows) == {"STF", "LDF"}
    assert all(isinstance(utility, float) and utility >= 0 for utility in rows.values())
