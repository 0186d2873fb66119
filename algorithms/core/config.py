"""The config sections of the `core` family's allocators (paper 002) and its mechanism names:
`lara` (Alg. 2's H_k and gamma, Remark 2's UCB bonus, what an empty Alg. 1 selection does, how
the unit is delivered to Alg. 1's selected threads, the need floor of threads done by the fit),
`baselines` (whether the prediction-based baselines explore first), and `mechanisms`: the
built-in allocators of registry.py with their variants, e.g. `LARA(exploration=4000,gamma=0.85)`,
`LARA(delivery=deadline)`, `LRF(min_need=1)` (algorithms/common/mechanism_names.py), the offline
optimum `OPT`, and a user's own allocator named by import path, `package.module:Class(key=value,...)`
(docs/extending.md: any class with the `Allocator` methods of simulation.py, built with the
name's parameters).

`delivery` and `when_none_selected` are LARA's alone: LRF and ETF ignore them in the `lara`
section, and a variant of LRF or ETF that names either is an error. `min_need` applies to
LARA, LRF and ETF (explore_then_exploit.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from algorithms.common.mechanism_names import Value, check_unique, listed_names, parse_name
from algorithms.common.user_mechanisms import build, is_import_path
from algorithms.core.registry import REGISTRY, SETTINGS, flag
from algorithms.core.simulation import Allocator
from market.common.sections import key, parse

OPTIMUM = "OPT"
PAPER = "LARA"  # the paper's allocator takes the `lara` section as is; every other one with `baselines.explore`


@dataclass(frozen=True)
class PredictionSettings:
    """Config section `lara`: Alg. 2's H_k and gamma (Sec. 4.1, 4.4), Remark 2's UCB bonus, what an
    empty Alg. 1 selection does, how the unit is delivered, the need floor of threads done by the
    fit; also the variant keys of LARA, LRF and ETF. Each key's check is registry.SETTINGS's, the
    one the names' keys use."""

    exploration: float = key(
        8000.0, SETTINGS["exploration"], "H_k: data units each thread gets before its curve is fitted (Sec. 4.1)"
    )
    gamma: float = key(0.9, SETTINGS["gamma"], "WLS discount of older observations (Sec. 4.4)")
    ucb_beta: float = key(0.0, SETTINGS["ucb_beta"], "Remark 2's UCB bonus; 0 = off (the paper's LARA)")
    when_none_selected: str = key(
        "uniform", SETTINGS["when_none_selected"], "uniform | idle: the unit when Alg. 1 selects no thread"
    )
    explore: bool = key(
        True,
        SETTINGS["explore"],
        "false: LARA predicts without exploring first (Alg. 2 lines 5-8; LRF and ETF: baselines.explore); "
        "null = true, as printed",
        optional=True,
    )
    delivery: str = key(
        "cascade",
        SETTINGS["delivery"],
        "cascade | deadline: how Alg. 1's selected threads share the unit (LARA only); null = cascade, eq. "
        "3.8 (Alg. 2 line 11), as printed",
        optional=True,
    )
    min_need: float = key(
        0.0,
        SETTINGS["min_need"],
        ">= 0: the need (data units) of an active thread done by the fit (S_hat = 0), for LARA, LRF, ETF; "
        "null = 0, as printed",
        optional=True,
    )

    @classmethod
    def from_config(cls, section, where: str = "lara") -> PredictionSettings:
        return parse(cls, section, where)


@dataclass(frozen=True)
class BaselineSettings:
    """Config section `baselines`: LRF and ETF "use the same resource prediction method as ours"
    (Sec. 4.1), exploring first with LARA's H_k and gamma unless `explore` is false."""

    explore: bool = key(True, flag, "false: LRF and ETF predict without exploring first")

    @classmethod
    def from_config(cls, section) -> BaselineSettings:
        return parse(cls, section, "baselines")


@dataclass(frozen=True)
class AllocatorSpec:
    """One mechanism of a cell: its name in the rows, its kind and its settings (None for an
    allocator that takes none), and the keyword arguments of its name's other parameters (a
    user's allocator: kind = its import path, `params` = all of the name's parameters)."""

    name: str
    kind: str
    settings: PredictionSettings | None
    params: tuple[tuple[str, Value], ...] = ()


def unknown_text(name: str) -> str:
    """The error for a name that is neither built in (registry.py), OPT, nor an import path."""
    variants = "/".join(entry.name for entry in REGISTRY if entry.params)
    known = ", ".join([*REGISTRY.examples(), OPTIMUM])
    return (
        f"mechanisms: unknown mechanism {name!r} for family core (known: {known}, or {variants}(key=value,...), "
        "or package.module:Class(key=value,...): docs/extending.md)"
    )


def allocator_specs(config: Mapping) -> tuple[AllocatorSpec, ...]:
    """The cell's mechanisms (`mechanisms`), validated: the built-in allocators of registry.py,
    with the `lara` section's settings for LARA and with `baselines.explore` too for the others
    (LRF, ETF), a variant's keys over the section's, OPT, and a user's allocator by import path,
    parsed here and imported and built by `check_user_allocators` (family.prepare)."""
    lara = PredictionSettings.from_config(config.get("lara"), "lara")
    baseline = replace(lara, explore=BaselineSettings.from_config(config.get("baselines")).explore)
    specs = []
    for name in check_unique(listed_names(config)):
        parsed = parse_name(name)
        if is_import_path(parsed.kind):  # a user's own allocator: checked by check_user_allocators
            specs.append(AllocatorSpec(name, parsed.kind, None, tuple(parsed.params.items())))
        elif parsed.kind == OPTIMUM:
            if parsed.params:
                raise ValueError(f"mechanisms: {name}: {OPTIMUM} takes no parameters")
            specs.append(AllocatorSpec(name, OPTIMUM, None))
        elif parsed.kind in REGISTRY:
            params = REGISTRY.params(parsed)
            settings = {key: value for key, value in params.items() if key in SETTINGS}
            others = tuple((key, value) for key, value in params.items() if key not in SETTINGS)
            takes_settings = any(key in SETTINGS for key in REGISTRY.entries[parsed.kind].context)
            base = lara if parsed.kind == PAPER else baseline
            specs.append(
                AllocatorSpec(name, parsed.kind, replace(base, **settings) if takes_settings else None, others)
            )
        else:
            raise ValueError(unknown_text(name))
    return tuple(specs)


def check_user_allocators(specs: tuple[AllocatorSpec, ...]) -> None:
    """Import and build each user's allocator once, before any work: ValueError naming the
    mechanism for a missing module or class, a class without the `Allocator` methods or
    parameters its constructor refuses (algorithms/common/user_mechanisms.py)."""
    for spec in specs:
        if is_import_path(spec.kind):
            build(spec.kind, dict(spec.params), Allocator)


def make_allocator(spec: AllocatorSpec, log_predictions: bool = False):
    """A fresh allocator for one bundle, built by its registry entry with the settings its entry
    takes (OPT is not an online allocator: see offline_optimum); its `name` is the mechanism's
    name as written."""
    if is_import_path(spec.kind):
        allocator = build(spec.kind, dict(spec.params), Allocator)
    elif spec.kind in REGISTRY:
        settings = asdict(spec.settings) if spec.settings is not None else {}
        allocator = REGISTRY.build(spec.kind, dict(spec.params), **settings, log_predictions=log_predictions)
    else:
        raise ValueError(f"{spec.name} is not an online allocator")
    allocator.name = spec.name
    return allocator
