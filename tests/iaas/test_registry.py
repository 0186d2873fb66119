"""The iaas registry (algorithms/iaas/registry.py): the parser, the dispatch and the error text
derive from it, and a new baseline is one module plus one registry line, which the iaas family
and the arena both run with no other edit (docs/extending.md, "Adding a built-in mechanism")."""

from __future__ import annotations

import pytest

from algorithms.iaas import family
from algorithms.iaas.policies import Policy
from algorithms.iaas.registry import REGISTRY
from arena.config import known_names
from tests.registry_checks import add_baseline, project_copy, run_replicate

ALL_SPOT = '''"""AllSpot: every instance on spot at the bid b, on-demand from the first spot loss."""

from algorithms.iaas.policies import Policy


def all_spot(bid: float = 0.19) -> Policy:
    return Policy("theta_once", bid, theta=1.0)
'''
LINE = (
    'Entry("AllSpot", "algorithms.iaas.all_spot:all_spot", "test baseline", '
    '(Param("b", real("b", 0, open_low=True), default=0.19, arg="bid", placeholder="P"),)),'
)


def config(mechanisms):
    return {"jobs": {"slots": 60}, "mechanisms": mechanisms}


def test_every_entry_is_named_in_the_error_texts_and_builds_its_policy():
    with pytest.raises(ValueError) as refused:
        family.prepare(config(["Nope"]))
    for entry in REGISTRY:
        assert entry.name in str(refused.value) and entry.name in known_names()
    specs = family.prepare(config(["Dynalloc(beta=0.5,b=0.19,beta0=naive)", "Theta(theta=0.3)"])).specs
    assert [s.policy for s in specs] == [Policy("dynalloc", 0.19, 0.5), Policy("theta_once", 0.19, theta=0.3)]


@pytest.mark.slow
def test_a_new_baseline_is_one_file_and_one_registry_line_for_iaas_and_the_arena(tmp_path):
    project = project_copy(tmp_path)
    add_baseline(project, "iaas", "all_spot", ALL_SPOT, LINE)
    iaas = dict(run_replicate(project, ["family=iaas"], ["Theta(theta=1,b=0.19)", "AllSpot"]))
    arena = dict(run_replicate(project, ["family=arena"], ["Theta(theta=1,b=0.5)", "AllSpot(b=0.5)"]))
    # all spot until the first loss is the theta = 1 policy read `once` (the default reading)
    assert iaas["AllSpot"] == iaas["Theta(theta=1,b=0.19)"]
    assert arena["AllSpot(b=0.5)"] == arena["Theta(theta=1,b=0.5)"]
