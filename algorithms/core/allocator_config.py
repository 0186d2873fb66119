"""The config sections of the `core` family's allocators (paper 002): `lara` (Alg. 2's H_k and
gamma, Remark 2's UCB bonus, what an empty Alg. 1 selection does, how the unit is delivered to
Alg. 1's selected threads, the need floor of threads done by the fit) and `baselines` (whether
the prediction-based baselines LRF and ETF explore first), and the mechanism names with their
variants, e.g. `LARA(exploration=4000,gamma=0.85)`, `LARA(delivery=deadline)`,
`LRF(min_need=1)` (algorithms/common/mechanism_names.py), and a user's own allocator named by
import path, `package.module:Class(key=value,...)` (docs/extending.md: any class with the
`Allocator` methods of simulation.py, built with the name's parameters).

`delivery` and `when_none_selected` are LARA's alone: LRF and ETF ignore them in the `lara`
section, and a variant of LRF or ETF that names `delivery` is an error. `min_need` applies to
LARA, LRF and ETF (explore_then_exploit.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from algorithms.common.mechanism_names import Value, check_unique, listed_names, parse_name
from algorithms.common.user_mechanisms import build, is_import_path
from algorithms.core.easiest_thread_first import EasiestThreadFirst
from algorithms.core.lara import DELIVERIES, WHEN_NONE_SELECTED
from algorithms.core.lara_kernel import CompiledLARA
from algorithms.core.least_resources_first import LeastResourcesFirst
from algorithms.core.shortest_thread_first import ShortestThreadFirst
from algorithms.core.simulation import Allocator
from algorithms.core.uniform_allocation import UniformAllocation
from market.common.fields import as_section, choice, real, reject_unknown_keys

OPTIMUM = "OPT"
# LARA runs compiled (lara_kernel.py: the same outcomes bit for bit as lara.LARA, the reference)
PREDICTIVE = {"LARA": CompiledLARA, "LRF": LeastResourcesFirst, "ETF": EasiestThreadFirst}
SIMPLE = {"UA": UniformAllocation, "STF": ShortestThreadFirst}
KINDS = (*PREDICTIVE, *SIMPLE, OPTIMUM)


@dataclass(frozen=True)
class PredictionSettings:
    """Config section `lara` (and the variant keys of LARA, LRF, ETF)."""

    exploration: float = 8000.0  # H_k, data units (Sec. 4.1: 8000 for Table 1)
    gamma: float = 0.9  # eq. 3.3's discount (Sec. 4.4: 0.9)
    ucb_beta: float = 0.0  # Remark 2's bonus; 0 = off (the paper's LARA)
    when_none_selected: str = "uniform"
    explore: bool = True
    delivery: str = "cascade"  # cascade (eq. 3.8, line 11) | deadline (lara.py); LARA only
    min_need: float = 0.0  # need of a thread done by the fit; 0 = as printed

    @classmethod
    def from_config(cls, section, where: str = "lara", base: PredictionSettings | None = None):
        d = as_section(section, where)
        reject_unknown_keys(cls, d, where)
        out = base or cls()
        values = {}
        if "exploration" in d:
            values["exploration"] = real(d["exploration"], f"{where}.exploration", 0)
        if "gamma" in d:
            values["gamma"] = real(d["gamma"], f"{where}.gamma", 0, 1, strict_min=True)
        if "ucb_beta" in d:
            values["ucb_beta"] = real(d["ucb_beta"], f"{where}.ucb_beta", 0)
        if "when_none_selected" in d:
            values["when_none_selected"] = choice(
                d["when_none_selected"], f"{where}.when_none_selected", WHEN_NONE_SELECTED
            )
        if "explore" in d:
            values["explore"] = _flag(d["explore"], f"{where}.explore")
        if "delivery" in d:
            values["delivery"] = choice(d["delivery"], f"{where}.delivery", DELIVERIES)
        if "min_need" in d:
            values["min_need"] = real(d["min_need"], f"{where}.min_need", 0)
        return replace(out, **values)


def _flag(value, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"{key} must be true or false, got {value!r}")


@dataclass(frozen=True)
class AllocatorSpec:
    """One mechanism of a cell: its name in the rows, its kind and its settings (a user's
    allocator: kind = its import path, `params` = the name's parameters, its keyword arguments)."""

    name: str
    kind: str
    settings: PredictionSettings | None
    params: tuple[tuple[str, Value], ...] = ()


def allocator_specs(config: Mapping) -> tuple[AllocatorSpec, ...]:
    """The cell's mechanisms (`mechanisms`), validated: LARA, LRF, ETF (with the `lara` section's
    settings; LRF and ETF also `baselines.explore`), UA, STF, OPT, and variants Name(key=value)
    of the three predictive ones with keys of `lara`; a user's allocator by import path is
    parsed here and imported and built by `check_user_allocators` (family.prepare)."""
    lara = PredictionSettings.from_config(config.get("lara"), "lara")
    section = as_section(config.get("baselines"), "baselines")
    reject_unknown_keys(("explore",), section, "baselines")
    baseline = replace(lara, explore=_flag(section.get("explore", True), "baselines.explore"))
    names = listed_names(config)
    specs = []
    for name in check_unique(names):
        parsed = parse_name(name)
        if is_import_path(parsed.kind):  # a user's own allocator: checked by check_user_allocators
            specs.append(AllocatorSpec(name, parsed.kind, None, tuple(parsed.params.items())))
            continue
        if parsed.kind not in KINDS:
            raise ValueError(
                f"mechanisms: unknown mechanism {name!r} for family core (known: {', '.join(KINDS)}, "
                "or LARA/LRF/ETF(key=value,...), or package.module:Class(key=value,...): docs/extending.md)"
            )
        if parsed.kind in PREDICTIVE:
            if parsed.kind != "LARA" and "delivery" in parsed.params:
                raise ValueError(f"mechanisms: {name!r}: delivery is a setting of LARA only")
            base = lara if parsed.kind == "LARA" else baseline
            settings = (
                PredictionSettings.from_config(parsed.params, f"mechanisms: {name}", base) if parsed.params else base
            )
            specs.append(AllocatorSpec(name, parsed.kind, settings))
        else:
            if parsed.params:
                raise ValueError(f"mechanisms: {name!r}: {parsed.kind} takes no parameters")
            specs.append(AllocatorSpec(name, parsed.kind, None))
    return tuple(specs)


def check_user_allocators(specs: tuple[AllocatorSpec, ...]) -> None:
    """Import and build each user's allocator once, before any work: ValueError naming the
    mechanism for a missing module or class, a class without the `Allocator` methods or
    parameters its constructor refuses (algorithms/common/user_mechanisms.py)."""
    for spec in specs:
        if is_import_path(spec.kind):
            build(spec.kind, dict(spec.params), Allocator)


def make_allocator(spec: AllocatorSpec, log_predictions: bool = False):
    """A fresh allocator for one bundle (OPT is not an online allocator: see offline_optimum);
    its `name` is the mechanism's name as written."""
    if is_import_path(spec.kind):
        allocator = build(spec.kind, dict(spec.params), Allocator)
    elif spec.kind in SIMPLE:
        allocator = SIMPLE[spec.kind]()
    elif spec.kind in PREDICTIVE:
        s = spec.settings
        kwargs = dict(
            exploration=s.exploration,
            gamma=s.gamma,
            explore=s.explore,
            ucb_beta=s.ucb_beta,
            log_predictions=log_predictions,
            min_need=s.min_need,
        )
        if spec.kind == "LARA":
            kwargs["when_none_selected"] = s.when_none_selected
            kwargs["delivery"] = s.delivery
        allocator = PREDICTIVE[spec.kind](**kwargs)
    else:
        raise ValueError(f"{spec.name} is not an online allocator")
    allocator.name = spec.name
    return allocator
