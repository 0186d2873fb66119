"""The core family's built-in allocators (paper 002), one line each (algorithms/common/registry.py):
the names a config's `mechanisms` take, the class that runs each, and the section of the paper it
implements. The offline optimum `OPT` (offline_optimum.py) is not an online allocator and is not
listed here; config.py's parser and its error text add it.

The keys of a variant such as `LARA(exploration=4000,gamma=0.85)` are the `lara` section's
(config.py), checked by `SETTINGS` below, which the section uses too. A key the name does not give
comes from the section, so each key's default is FROM_SECTION: no value given in a name is
dropped, and the results keep the name as written. An entry's `context` lists the settings its
class takes (LRF and ETF not LARA's `delivery` and `when_none_selected`), which
config.make_allocator hands it with `log_predictions`.

Adding a baseline is one new module in algorithms/core/ with a class that has the `Allocator`
methods of simulation.py and one line below; the family's parser, dispatch and error text see it
from here.
"""

from __future__ import annotations

import functools

from algorithms.common.registry import Entry, Param, Registry
from algorithms.core.lara import DELIVERIES, WHEN_NONE_SELECTED
from market.common.fields import choice, real

FROM_SECTION = None


def flag(value, key: str) -> bool:
    """true / false (also 1 / 0 and their words in any case)."""
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"{key} must be true or false, got {value!r}")


# The `lara` section's keys: check(value, key) returns the value or raises ValueError naming `key`.
SETTINGS = {
    "exploration": lambda value, key: real(value, key, 0),  # Alg. 2's H_k, data units
    "gamma": lambda value, key: real(value, key, 0, 1, strict_min=True),  # eq. 3.3's discount
    "ucb_beta": lambda value, key: real(value, key, 0),  # Remark 2's bonus
    "explore": flag,  # lines 5-8: explore first
    "min_need": lambda value, key: real(value, key, 0),  # need of a thread done by the fit
    "when_none_selected": lambda value, key: choice(value, key, WHEN_NONE_SELECTED),
    "delivery": lambda value, key: choice(value, key, DELIVERIES),
}
PREDICTION = ("exploration", "gamma", "ucb_beta", "explore", "min_need")  # LARA's, LRF's and ETF's
LARA_ONLY = ("when_none_selected", "delivery")


def _settings(*keys: str) -> tuple[Param, ...]:
    return tuple(Param(key, functools.partial(SETTINGS[key], key=key), default=FROM_SECTION) for key in keys)


REGISTRY = Registry(
    "core",
    [
        Entry(
            "LARA",
            "algorithms.core.lara_kernel:CompiledLARA",  # lara.LARA compiled, the same outcomes bit for bit
            "Sec. 3, Alg. 2 with Alg. 1",
            _settings(*PREDICTION, *LARA_ONLY),
            context=(*PREDICTION, *LARA_ONLY, "log_predictions"),
        ),
        Entry(
            "LRF",
            "algorithms.core.least_resources_first:LeastResourcesFirst",
            "Sec. 4.1",
            _settings(*PREDICTION),
            context=(*PREDICTION, "log_predictions"),
        ),
        Entry(
            "ETF",
            "algorithms.core.easiest_thread_first:EasiestThreadFirst",
            "Sec. 4.1",
            _settings(*PREDICTION),
            context=(*PREDICTION, "log_predictions"),
        ),
        Entry("UA", "algorithms.core.uniform_allocation:UniformAllocation", "Sec. 4.1"),
        Entry("STF", "algorithms.core.shortest_thread_first:ShortestThreadFirst", "Sec. 4.1"),
    ],
)
