"""The families the engine knows, by the name used in `family.name`.

A family module (see docs/architecture.md, "Family interface") provides:
``NAME``, ``check_inputs(config)``, ``prepare(config)``, ``mechanism_names(config)``
and ``simulate_replicate(prepared, replicate, rng) -> list[dict]``.
"""
from __future__ import annotations

import importlib
from types import ModuleType

FAMILY_MODULES = {
    "spot": "algorithms.spot.family",
    "auction": "algorithms.auction.family",
}


def load_family(name: str) -> ModuleType:
    try:
        module_name = FAMILY_MODULES[name]
    except KeyError:
        from .errors import ConfigError

        known = ", ".join(sorted(FAMILY_MODULES))
        raise ConfigError(f"family.name: unknown family '{name}' (known: {known})") from None
    return importlib.import_module(module_name)
