"""The sow family's built-in mechanisms, one line each (algorithms/common/registry.py): the names
a config's `mechanisms` takes, the function that runs each on one replicate, and the section of
paper 004 it implements. The family's parser, its dispatch and its "known: ..." text derive from
these tables (algorithms/sow/config.py, algorithms/sow/family.py).

An entry's function is called with the name's parameters and the keyword arguments its `context`
lists among
  sequence, realisation: the replicate's birth sequence and every job's realised (arrival, duration);
  nodes: `cluster.nodes`;
  settings: Alg. 1's `FrameworkSettings` from the sections (algorithms/sow/config.py);
  rng: the mechanism's own random stream;
and returns the run's `JobOutcomes` (outcome.py; `Stochastic`: its `StochasticRun`). An entry
that takes `settings` (the Reduction, the stochastic variant, the audits) reads its name's keys
from there: they override the sections for that mechanism (`Reduction(epsilon=0.05)`), and its
name in the results is the name as written. Every other entry gets its keys as keyword arguments
and is written with them in the entry's order, a key at its default dropped.

Adding a baseline is one new module in algorithms/sow/ with a function
`(sequence, realisation, nodes) -> JobOutcomes` (first_come_greedy.py is one) and one line in
`REGISTRY` with `context=BASELINE`; the family, its parser and its error text see it from here.

Not in `REGISTRY`, and listed in the error text after it: the offline benchmarks `BOUNDS` (OPT:
the hindsight optimum, LP: its relaxation, ExAnte: the relaxed problem's optimum;
offline_optimum.py), which take no keys, and the audits `AUDITS`, the Reduction's (or
Stochastic's) truthful run audited, with its keys: their rows are built by family.py.
"""

from __future__ import annotations

from algorithms.common.registry import Entry, Param, Registry, one_of
from market.common import fields
from market.common.sections import checked

from .eviction import RULES
from .exponential_prices import STARTS
from .scheduler_framework import ORACLES

BASELINE = ("sequence", "realisation", "nodes")  # a price-free baseline's inputs
FRAMEWORK = ("sequence", "realisation", "settings", "rng")  # Alg. 1's, with the sections in `settings`
BOUNDS = ("OPT", "LP", "ExAnte")
STOCHASTIC = ("Stochastic", "StochasticAudit")  # Sec. 5's variant: needs births.kind: prior
SWITCHES = {"on": True, "off": False}


# The checks of the section keys a framework mechanism's name may also set: config.py's section
# declarations and the name parameters below share them, `check(value, key)` -> the value.
EPSILON = checked(fields.real, 0.0, 1.0, strict_min=True, strict_max=True)  # Alg. 2's eps in (0, 1)
EVICTION = checked(fields.choice, RULES)
ORACLE_KIND = checked(fields.choice, ORACLES)
PRICE_START = checked(fields.choice, STARTS)


def check_samples(value, where: str):
    """The failure oracle's replays R: `hoeffding` (Lemma F.1's R from eps0 and delta0) or a
    positive integer."""
    return value if value == "hoeffding" else fields.integer(value, where, minimum=1)


def _named(check, name: str):
    """A section key's `check(value, key)` as a name parameter's check: errors name the key."""
    return lambda value: check(value, name)


def _slack(value) -> bool:
    """A name's `slack`: on | off (the section's `reduction.slack` is true or false)."""
    return SWITCHES[one_of("slack", SWITCHES)(value)]


# The sections' keys a framework mechanism's name may override (config.py); none has a default of
# its own (None: never dropped), an absent key keeps the section's value.
_SECTION_KEYS = (
    Param("epsilon", _named(EPSILON, "epsilon"), default=None),
    Param("slack", _slack, default=None),
    Param("eviction", _named(EVICTION, "eviction"), default=None),
    Param("oracle", _named(ORACLE_KIND, "oracle"), default=None, arg="oracle_kind"),
    Param("samples", _named(check_samples, "samples"), default=None),
)
REDUCTION_KEYS = (*_SECTION_KEYS, Param("start", _named(PRICE_START, "start"), default=None, arg="price_start"))
STOCHASTIC_KEYS = _SECTION_KEYS  # no eq. (7) prices: Lemma E.2's menu prices instead

AUDITS = Registry(
    "sow",
    [
        Entry(
            "TruthAudit",
            "algorithms.sow.truthfulness:audit_run",
            "Theorem 3.2, Appendix B",
            REDUCTION_KEYS,
            context=FRAMEWORK,
        ),
        Entry(
            "PrefixAudit",
            "algorithms.sow.prefix_invariance:prefix_changes",
            "Lemma 3.1 (Sec. 3)",
            REDUCTION_KEYS,
            context=("sequence", "realisation", "settings", "seed", "cuts"),
        ),
        Entry(
            "StochasticAudit",
            "algorithms.sow.stochastic_menu:audit_stochastic",
            "Sec. 5 with Theorem 3.2",
            STOCHASTIC_KEYS,
            context=FRAMEWORK,
        ),
    ],
)

# Last in the file: a new baseline's line goes before its closing `],` (tests/registry_checks.py).
REGISTRY = Registry(
    "sow",
    [
        Entry(
            "Reduction",
            "algorithms.sow.scheduler_framework:run_framework",
            "Alg. 1 (Sec. 3) with Alg. 2 (Sec. 4.2) and Alg. 3's prices (Sec. 5)",
            REDUCTION_KEYS,
            context=FRAMEWORK,
        ),
        Entry("ReserveWorstCase", "algorithms.sow.reserve_worst_case:reserve_worst_case", "Sec. 1", context=BASELINE),
        Entry("FirstComeGreedy", "algorithms.sow.first_come_greedy:first_come_greedy", "Sec. 1-2", context=BASELINE),
        Entry(
            "ValueDensityGreedy",
            "algorithms.sow.value_density_greedy:value_density_greedy",
            "ours (a price-free yardstick, not in the paper)",
            context=BASELINE,
        ),
        Entry(
            "Stochastic",
            "algorithms.sow.stochastic_menu:run_stochastic",
            "Sec. 5 (stochastic variant), Theorem 5.2, Appendix E (Lemma E.2)",
            STOCHASTIC_KEYS,
            context=FRAMEWORK,
        ),
    ],
)


def entry(kind: str) -> Entry | None:
    """The entry of a built-in mechanism or an audit, None for a bound or an unknown name."""
    return REGISTRY.entries.get(kind) or AUDITS.entries.get(kind)


def takes_settings(kind: str) -> bool:
    """Whether `kind` runs Alg. 1 with the sections (its name's keys override them)."""
    found = entry(kind)
    return found is not None and "settings" in found.context


def known_text() -> str:
    """The names the error for an unknown mechanism lists."""
    return ", ".join(
        [
            *REGISTRY.examples(),
            *BOUNDS,
            *AUDITS.examples(),
            "package.module:Class(key=value,...) (your own: docs/extending.md)",
        ]
    )
