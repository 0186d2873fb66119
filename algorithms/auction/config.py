"""The auction family's config sections and mechanism names (paper 001): the `pdftsp` section
(PdftspSection) and the pdFTSP names' settings over it, resolved on the world (PdftspParams), the
`titan` section (TitanSection), and the parser of the `mechanisms` list, derived from the table
of algorithms/auction/registry.py. The sections are declared once (market/common/sections.py):
each key's default, check and doc, from which come their validation, docs/usage.md's rows and
the comments beside the keys in conf/family/auction.yaml. The `cluster`,
`tasks` and `vendors` sections are the world's (market/auction/).

Names (the grammar of algorithms/common/mechanism_names.py): each entry of the registry, bare or
with its keys (`Titan(start=cheapest,solve=off)`, `EFT(admit=positive)`, `pdFTSP(key=value,...)`
whose keys override the `pdftsp` section's), `OPT` (the offline optimum, small worlds only), or a
user's own mechanism by import path, `package.module:Class(key=value,...)` (docs/extending.md). A
result row carries the name as written; a name listed twice is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from algorithms.auction.pdftsp import PdFTSP
from algorithms.auction.registry import PDFTSP_CHECKS, REGISTRY, WORK_UNITS, ZERO_PRICE
from algorithms.common.mechanism_names import check_unique, listed_names, parse_name
from algorithms.common.registry import REQUIRED
from algorithms.common.user_mechanisms import is_import_path
from market.auction.gpu_cluster import ClusterParams
from market.auction.lora_tasks import TaskParams
from market.common import sections
from market.common.fields import real
from market.common.sections import checked, key

OPTIMUM = "OPT"
# The registry's kinds whose keys are settings over the `pdftsp` section, with their fixed settings
OVER_PDFTSP = {"pdFTSP": {}, "ZeroPrice": ZERO_PRICE}


@dataclass(frozen=True)
class PdftspSection:
    """Config section `pdftsp`: pdFTSP's settings as written (Sec. 3.3, Lemma 2), each key checked by
    registry.PDFTSP_CHECKS, the check of pdFTSP's name keys too; PdftspParams resolves them on
    the world."""

    alpha: str | float = key("lemma2", PDFTSP_CHECKS["alpha"], "lemma2 (Lemma 2) or a number")
    beta: str | float = key("lemma2", PDFTSP_CHECKS["beta"], "lemma2 | lemma2_tight (per slot of memory) or a number")
    kappa: str | float = key(1.0, PDFTSP_CHECKS["kappa"], "multiplies bbar: a number or lemma", optional=True)
    work_unit: str = key(
        "ksamples", PDFTSP_CHECKS["work_unit"], "what bbar's computation counts: ksamples | samples", optional=True
    )
    price_scale: float = key(1.0, PDFTSP_CHECKS["price_scale"], "multiplies alpha and beta")
    payment: str = key(
        "critical", PDFTSP_CHECKS["payment"], "critical (b - F, the proofs' reading) | eq14 (as printed)"
    )
    schedule_space: str = key(
        "paper", PDFTSP_CHECKS["schedule_space"], "paper (any (k, t)) | fitting (only where the task fits)"
    )
    prices: bool = key(True, PDFTSP_CHECKS["prices"], "on | off (the zero-price ablation's reading)", optional=True)
    selector: str = key("dp", PDFTSP_CHECKS["selector"], "dp | exact", optional=True)


@dataclass(frozen=True)
class TitanSection:
    """Config section `titan`: Titan's per-slot MILP (Sec. 5.1, baseline i; algorithms/auction/titan.py)."""

    time_limit: float = key(2.0, checked(real, 0, strict_min=True), "CP-SAT deterministic time per slot")


@dataclass(frozen=True)
class PdftspParams:
    """pdFTSP's settings (Sec. 3.3, Lemma 2): alpha and beta of Lemma 2 (`lemma2`: max b_i / M_i and
    max b_i / r_i from the workload's bounds; beta `lemma2_tight`: max b_i / (r_i n_i), n_i the
    fewest slots task i can run in, which Lemma 2's proof allows since sum_t r_kt(il) >= r_i n_i;
    or numbers), both multiplied by `price_scale`; `kappa` and `work_unit`, the unit of bbar in eq.
    7-8 (docs/auction/model.md; kappa `lemma` = 1 / TaskParams.gross_bbar_floor, so that every
    task's bbar on its gross value is >= 1); `prices` off: the zero-price ablation."""

    alpha: float
    beta: float
    payment: str = "critical"
    schedule_space: str = "paper"
    kappa: float = 1.0
    work_unit: float = 1.0
    prices: bool = True
    selector: str = "dp"

    def build(self, cls: type[PdFTSP] = PdFTSP, **overrides) -> PdFTSP:
        """The mechanism with these settings (`overrides` replace some, e.g. payment="eq14")."""
        return cls(**{**asdict(self), **overrides})

    @classmethod
    def from_dict(
        cls, d: Mapping | None, tasks: TaskParams, cluster: ClusterParams, where: str = "pdftsp"
    ) -> PdftspParams:
        d = sections.parse(PdftspSection, d, where)
        fastest = max(t.task_rate for t in cluster.build(1).types)
        bounds = {
            "lemma2": {"alpha": tasks.value_density_bound, "beta": tasks.value_per_memory_bound},
            "lemma2_tight": {"beta": tasks.value_per_memory_slot_bound(fastest)},
        }
        values = {}
        for name in ("alpha", "beta"):
            raw = getattr(d, name)
            values[name] = bounds[raw][name] if isinstance(raw, str) else float(raw)
        work_unit = WORK_UNITS[d.work_unit]
        kappa = d.kappa
        if kappa == "lemma":
            floor = tasks.gross_bbar_floor(work_unit)
            if not floor > 0:
                raise ValueError(
                    f"{where}.kappa=lemma needs a positive lowest value per ksample "
                    f"(tasks.value_per_ksample), got {list(tasks.value_per_ksample)}"
                )
            kappa = 1.0 / floor
        if d.selector == "exact" and len(cluster.build(1).types) != 1:
            raise ValueError(
                f"{where}.selector=exact needs one node type, got cluster.node_type="
                f"{cluster.node_type} with {cluster.nodes} nodes"
            )
        return cls(
            values["alpha"] * d.price_scale,
            values["beta"] * d.price_scale,
            d.payment,
            d.schedule_space,
            float(kappa),
            work_unit,
            d.prices,
            d.selector,
        )


def merged(section: PdftspSection, settings: Mapping) -> dict:
    """The `pdftsp` section with a name's settings over it; kappa and price_scale are one
    quantity (the unit of money in eq. 7-8), so a name that sets either replaces both of the
    section's (by their defaults)."""
    base = asdict(section)
    if {"kappa", "price_scale"} & set(settings):
        base.pop("kappa", None)
        base.pop("price_scale", None)
    return {**base, **settings}


def titan_time_limit(config: Mapping) -> float:
    """`titan.time_limit`: CP-SAT's deterministic time per slot (algorithms/auction/titan.py)."""
    return sections.parse(TitanSection, config.get("titan"), "titan").time_limit


def known() -> str:
    """The names the unknown-name error lists: every entry, OPT, each entry's keys, a user's own."""
    variants = [
        f"{entry.name}({','.join(f'{p.key}={p.placeholder or p.key.upper()}' for p in entry.params)})"
        for entry in REGISTRY
        if any(p.default is not REQUIRED for p in entry.params)
    ]
    return ", ".join(
        [*REGISTRY.examples(), OPTIMUM, *variants, "package.module:Class(key=value,...) (your own: docs/extending.md)"]
    )


def parse(name: str) -> tuple[str, dict]:
    """The kind and parameters of a mechanism name: a registry entry's checked keys
    (algorithms/auction/registry.py), OPT, or a user's import path with its raw parameters
    (checked by building it: family.check_user_mechanisms); ValueError for any other name."""
    parsed = parse_name(name)
    if is_import_path(parsed.kind):
        return parsed.kind, dict(parsed.params)
    if parsed.kind == OPTIMUM and not parsed.params:
        return OPTIMUM, {}
    if parsed.kind in REGISTRY:
        return parsed.kind, REGISTRY.params(parsed)
    raise ValueError(f"mechanisms: unknown mechanism {name!r} for family auction (known: {known()})")


def mechanisms(config: Mapping) -> tuple[str, ...]:
    """The config's `mechanisms`, each name parsed (checked), none listed twice."""
    names = listed_names(config)
    for name in names:
        parse(name)
    return tuple(check_unique(names))


def pdftsp_section(config: Mapping) -> PdftspSection:
    """The `pdftsp` section, checked (its keys are pdFTSP's: registry.PDFTSP_CHECKS)."""
    return sections.parse(PdftspSection, config.get("pdftsp"), "pdftsp")


def pdftsp_params(
    section: PdftspSection, names: tuple[str, ...], tasks: TaskParams, cluster: ClusterParams
) -> dict[str, PdftspParams]:
    """The settings of each pdFTSP name (OVER_PDFTSP) among `names`: its keys over the checked
    `pdftsp` section, resolved on the world."""
    out = {}
    for name in names:
        kind, settings = parse(name)
        if kind in OVER_PDFTSP:
            where = "pdftsp" if name == "pdFTSP" else f"mechanisms: {name}"
            out[name] = PdftspParams.from_dict(
                merged(section, {**OVER_PDFTSP[kind], **settings}), tasks, cluster, where
            )
    return out
