"""The auction family's config sections and mechanism names (paper 001): the `pdftsp` section and
the pdFTSP names' settings over it (PdftspParams), the `titan` section, and the parser of the
`mechanisms` list, derived from the table of algorithms/auction/registry.py. The `cluster`,
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
from algorithms.auction.registry import PDFTSP_SETTINGS, REGISTRY, WORK_UNITS, ZERO_PRICE, switch
from algorithms.common.mechanism_names import check_unique, listed_names, parse_name
from algorithms.common.registry import REQUIRED
from algorithms.common.user_mechanisms import is_import_path
from market.auction.gpu_cluster import ClusterParams
from market.auction.lora_tasks import TaskParams
from market.common.fields import as_section, real, reject_unknown_keys

OPTIMUM = "OPT"
PDFTSP_KEYS = tuple(param.key for param in PDFTSP_SETTINGS)
# The registry's kinds whose keys are settings over the `pdftsp` section, with their fixed settings
OVER_PDFTSP = {"pdFTSP": {}, "ZeroPrice": ZERO_PRICE}


def pdftsp_settings(d: Mapping, where: str = "pdftsp") -> dict:
    """Check a pdFTSP settings mapping (the `pdftsp` section, or one merged with a name's keys)
    key by key with the registry's checks; errors name `where` and the key."""
    reject_unknown_keys(PDFTSP_KEYS, d, where)
    for param in PDFTSP_SETTINGS:
        try:
            if param.key in d:
                param.check(d[param.key])
        except ValueError as err:
            raise ValueError(f"{where}.{err}") from None
    return dict(d)


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
        d = pdftsp_settings(dict(d or {}), where)
        fastest = max(t.task_rate for t in cluster.build(1).types)
        bounds = {
            "lemma2": {"alpha": tasks.value_density_bound, "beta": tasks.value_per_memory_bound},
            "lemma2_tight": {"beta": tasks.value_per_memory_slot_bound(fastest)},
        }
        values = {}
        for key in ("alpha", "beta"):
            raw = d.get(key, "lemma2")
            values[key] = bounds[raw][key] if isinstance(raw, str) else float(raw)
        scale = float(d.get("price_scale", 1.0))
        work_unit = WORK_UNITS[d.get("work_unit", "ksamples")]
        kappa = d.get("kappa", 1.0)
        if kappa == "lemma":
            floor = tasks.gross_bbar_floor(work_unit)
            if not floor > 0:
                raise ValueError(
                    f"{where}.kappa=lemma needs a positive lowest value per ksample "
                    f"(tasks.value_per_ksample), got {list(tasks.value_per_ksample)}"
                )
            kappa = 1.0 / floor
        selector = d.get("selector", "dp")
        if selector == "exact" and len(cluster.build(1).types) != 1:
            raise ValueError(
                f"{where}.selector=exact needs one node type, got cluster.node_type="
                f"{cluster.node_type} with {cluster.nodes} nodes"
            )
        return cls(
            values["alpha"] * scale,
            values["beta"] * scale,
            d.get("payment", "critical"),
            d.get("schedule_space", "paper"),
            float(kappa),
            work_unit,
            switch(f"{where}.prices")(d.get("prices", "on")),
            selector,
        )


def merged(section: Mapping, settings: Mapping) -> dict:
    """The `pdftsp` section with a name's settings over it; kappa and price_scale are one
    quantity (the unit of money in eq. 7-8), so a name that sets either replaces both of the
    section's."""
    base = dict(section)
    if {"kappa", "price_scale"} & set(settings):
        base.pop("kappa", None)
        base.pop("price_scale", None)
    return {**base, **settings}


def titan_time_limit(config: Mapping) -> float:
    """`titan.time_limit`: CP-SAT's deterministic time per slot (algorithms/auction/titan.py)."""
    section = as_section(config.get("titan"), "titan")
    reject_unknown_keys(("time_limit",), section, "titan")
    return real(section.get("time_limit", 2.0), "titan.time_limit", 0, strict_min=True)


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


def pdftsp_section(config: Mapping) -> dict:
    """The `pdftsp` section, checked (its keys are pdFTSP's: registry.PDFTSP_SETTINGS)."""
    return pdftsp_settings(as_section(config.get("pdftsp"), "pdftsp"), "pdftsp")


def pdftsp_params(
    section: Mapping, names: tuple[str, ...], tasks: TaskParams, cluster: ClusterParams
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
