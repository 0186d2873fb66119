"""The spot registry (algorithms/spot/registry.py): the parser, the dispatch and the error text
derive from it, and a new baseline is one module plus one registry line, which the spot family
and the arena both run with no other edit (docs/extending.md, "Adding a built-in mechanism")."""

from __future__ import annotations

import pytest

from algorithms.spot.registry import REGISTRY, parse
from arena.config import known_names
from tests.registry_checks import add_baseline, project_copy, run_replicate

HALF_PRICE = '''"""HalfPrice: all usable spot below half the on-demand price, none above; MSU's safety net."""

from algorithms.spot.simulation import SlotState, SpotPolicy, safe_or_n_max, usable_spot


class HalfPrice(SpotPolicy):
    name = "HalfPrice"

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        spot = usable_spot(state.availability, state.job) if state.price < 0.5 * state.on_demand_price else 0
        return safe_or_n_max(state, 0, spot)
'''
LINE = 'Entry("HalfPrice", "algorithms.spot.half_price:HalfPrice", "test baseline"),'


def test_every_entry_builds_and_is_named_in_the_error_text():
    with pytest.raises(ValueError) as refused:
        parse("Nope")
    for entry in REGISTRY:
        assert entry.example() in str(refused.value) and entry.example() in known_names()
        values = {"W": 3, "V": 2, "S": 0.5}
        keys = ",".join(f"{p.key}={values[p.placeholder]}" for p in entry.params if p.placeholder)
        kind, params = parse(f"{entry.name}({keys})" if keys else entry.name)
        assert REGISTRY.build(kind, params).name.startswith(entry.name)


def test_a_parameter_at_its_default_is_dropped_and_names_are_canonical():
    assert parse("MSU(switch=safety_net)") == parse("MSU") == ("MSU", {})
    assert REGISTRY.canonical(*parse("AHAP(sigma=0.50,v=1,w=2)")) == "AHAP(w=2,v=1,sigma=0.5)"
    assert REGISTRY.canonical(*parse("MSU(switch=time)")) == "MSU(switch=time)"


@pytest.mark.slow
def test_a_new_baseline_is_one_file_and_one_registry_line_for_spot_and_the_arena(tmp_path):
    project = project_copy(tmp_path)
    add_baseline(project, "spot", "half_price", HALF_PRICE, LINE)
    spot = dict(run_replicate(project, ["family=spot"], ["MSU", "HalfPrice"]))
    arena = dict(run_replicate(project, ["family=arena"], ["MSU", "HalfPrice"]))
    assert set(spot) == set(arena) == {"MSU", "HalfPrice"}
    assert all(isinstance(utility, float) for utility in (*spot.values(), *arena.values()))
