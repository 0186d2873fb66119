"""The sow registry (algorithms/sow/registry.py): the parser, the dispatch and the error text
derive from it, and a new baseline is one module plus one registry line, which the sow family runs
with no other edit (docs/extending.md, "Adding a built-in mechanism")."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from algorithms.sow import family
from algorithms.sow.config import SowSettings, mechanism_specs
from algorithms.sow.registry import AUDITS, BOUNDS, REGISTRY, STOCHASTIC
from tests.registry_checks import add_baseline, project_copy, run_replicate

WIDTH_FIRST = '''"""WidthFirst: the greedy baselines' list scheduling (first_come_greedy.py), the narrowest
waiting jobs first (order=wide: the widest), ties in arrival order; no prices."""

from algorithms.sow.first_come_greedy import list_schedule


def width_first(sequence, realisation, nodes, order="narrow"):
    sign = 1 if order == "narrow" else -1
    return list_schedule(sequence, realisation, nodes, lambda j, t: sign * sequence.jobs[j].concurrency)
'''
LINE = (
    'Entry("WidthFirst", "algorithms.sow.width_first:width_first", "test baseline", '
    '(Param("order", one_of("order", ("narrow", "wide")), default="narrow"),), context=BASELINE),'
)

# A prior world (Sec. 5) with one lane, so that every entry runs in it, Stochastic too.
WORLD = {
    "bounds": {"max_concurrency": 2, "max_duration": 3, "horizon": 16, "max_value": 16.0},
    "births": {"kind": "prior", "signal": "duration", "jobs": 10},
    "cluster": {"nodes": 8},
    "oracle": {"kind": "exact"},
}


def rows(mechanisms: list[str]) -> list[dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = family.prepare({**WORLD, "mechanisms": mechanisms})
    return family.simulate_replicate(prepared, 0, np.random.default_rng(3))


def test_every_name_is_in_the_error_text_and_every_entry_runs():
    with pytest.raises(ValueError, match=r"^mechanisms\[0\]: unknown mechanism 'Nope' \(known: ") as refused:
        mechanism_specs({"mechanisms": ["Nope"]}, SowSettings())
    for name in (*REGISTRY.examples(), *BOUNDS, *AUDITS.examples(), "package.module:Class(key=value,...)"):
        assert name in str(refused.value)
    names = [*REGISTRY.names(), *AUDITS.names()]
    assert [row["mechanism"] for row in rows(names)] == names
    assert set(STOCHASTIC) <= set(names)


def test_a_baseline_is_built_by_its_entry_and_gives_its_functions_outcome():
    from algorithms.sow.first_come_greedy import first_come_greedy
    from market.sow.birth_sequences import BirthParams, bounds_from_config, draw_births
    from market.sow.statement_of_work import realise

    bounds = bounds_from_config(WORLD["bounds"])
    rng = np.random.default_rng(1)
    sequence = draw_births(BirthParams.from_config(WORLD["births"], bounds), bounds, rng)
    real = realise(sequence, rng)
    built = REGISTRY.build("FirstComeGreedy", {}, sequence=sequence, realisation=real, nodes=8, rng=rng)
    assert np.array_equal(built.start, first_come_greedy(sequence, real, 8).start)


def test_a_framework_mechanisms_keys_override_the_sections_and_its_name_is_kept_as_written():
    base = SowSettings()
    (spec,) = mechanism_specs({"mechanisms": ["Reduction(slack=off,samples=20.0,epsilon=0.50)"]}, base)
    assert spec.name == "Reduction(slack=off,samples=20,epsilon=0.5)" and spec.params == ()
    assert (spec.settings.slack, spec.settings.oracle.samples, spec.settings.epsilon) == (False, 20, 0.5)
    assert spec.settings.oracle.kind == base.oracle.kind and spec.settings.eviction == base.eviction
    (spec,) = mechanism_specs({"mechanisms": ["PrefixAudit(oracle=none,start=concurrency)"]}, base)
    assert (spec.settings.oracle.kind, spec.settings.price_start) == ("none", "concurrency")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Reduction(epsilon=1)", r"epsilon must be in \(0, 1\), got 1$"),
        ("TruthAudit(slack=no)", r"slack must be one of on, off, got 'no'$"),
        ("PrefixAudit(samples=0)", r"samples must be a positive integer, got 0$"),
        ("Reduction(eviction=random)", r"eviction must be one of lifo, fifo, all, got 'random'$"),
        ("Stochastic(start=paper)", r"Stochastic takes the optional keys epsilon, slack, eviction, oracle, samples$"),
        ("FirstComeGreedy(x=1)", r"FirstComeGreedy takes no parameters$"),
        ("ExAnte(x=1)", r"ExAnte takes no parameters$"),
    ],
)
def test_bad_keys_are_refused_naming_the_mechanism(name, message):
    with pytest.raises(ValueError, match=rf"^mechanisms\[0\]: '?{re.escape(name)}'?: "):
        mechanism_specs({"mechanisms": [name]}, SowSettings())
    with pytest.raises(ValueError, match=message):
        mechanism_specs({"mechanisms": [name]}, SowSettings())


@pytest.mark.slow
def test_a_new_baseline_is_one_file_and_one_registry_line(tmp_path):
    project = project_copy(tmp_path)
    add_baseline(project, "sow", "width_first", WIDTH_FIRST, LINE)
    mechanisms = ["FirstComeGreedy", "WidthFirst", "WidthFirst(order=wide)"]
    got = dict(run_replicate(project, ["family=sow"], mechanisms))
    assert set(got) == set(mechanisms)
    assert all(isinstance(welfare, float) for welfare in got.values())
