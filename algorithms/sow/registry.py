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

from algorithms.common.registry import Entry, Param, Registry, one_of, real
from market.common.fields import integer

from .eviction import RULES
from .exponential_prices import STARTS
from .scheduler_framework import ORACLES

BASELINE = ("sequence", "realisation", "nodes")  # a price-free baseline's inputs
FRAMEWORK = ("sequence", "realisation", "settings", "rng")  # Alg. 1's, with the sections in `settings`
BOUNDS = ("OPT", "LP", "ExAnte")
STOCHASTIC = ("Stochastic", "StochasticAudit")  # Sec. 5's variant: needs births.kind: prior
SWITCHES = {"on": True, "off": False}


def _slack(value) -> bool:
    return SWITCHES[one_of("slack", SWITCHES)(value)]


def _samples(value):
    return value if value == "hoeffding" else integer(value, "samples", minimum=1)


# The sections' keys a framework mechanism's name may override (config.py); none has a default of
# its own (None: never dropped), an absent key keeps the section's value.
_SECTION_KEYS = (
    Param("epsilon", real("epsilon", 0, 1, open_low=True, open_high=True), default=None),
    Param("slack", _slack, default=None),
    Param("eviction", one_of("eviction", RULES), default=None),
    Param("oracle", one_of("oracle", ORACLES), default=None, arg="oracle_kind"),
    Param("samples", _samples, default=None),
)
REDUCTION_KEYS = (*_SECTION_KEYS, Param("start", one_of("start", STARTS), default=None, arg="price_start"))
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
