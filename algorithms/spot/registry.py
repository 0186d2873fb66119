"""The spot family's mechanism names (paper 000 Sec. VI-A, "Policy Pool"): the registry of built-in
policies, one line each (algorithms/common/registry.py: the name, the class that runs it, the
section of paper 000 it implements, its parameters with their checks), and the parser and group
expansion derived from it, which the spot family and the arena both use.

In a config, `mechanisms` lists names (the grammar of algorithms/common/mechanism_names.py):
`OD-Only`, `MSU`, `UP`, `UP-track`, `OPT`, an explicit `AHAP(w=3,v=2,sigma=0.5)` or `AHANP(sigma=0.7)`
(keys in any order; results write them in this order), or the group names `AHAP` and
`AHANP`, which expand to every member of the configured pool (`pool`, algorithms/spot/config.py:
AHAP by omega, then v, then sigma, then AHANP by sigma, Fig. 10's order). A policy listed twice,
also through a group, is an error. The offline optimum `OPT` and the groups are not policies
and are not in the table.

AHANP takes an optional reading of its start, `AHANP(sigma=0.7,start=fresh)` or `start=cold`
(algorithms/spot/ahanp.py, AHANP_STARTS); `start=literal` is the default and is written as the
plain `AHANP(sigma=0.7)`, so the literal policy's name (and every result and hash that holds
it) is the one it had before the readings.

Adding a baseline is one new module in algorithms/spot/ with a `SpotPolicy` subclass and one
line at the end of the table below; the spot family, the arena, their parsers and their error
texts see it from here.
"""

from __future__ import annotations

from collections.abc import Sequence

from algorithms.common.mechanism_names import check_unique, parse_name
from algorithms.common.registry import Entry, Param, Registry, one_of, positive_int, real
from algorithms.common.user_mechanisms import is_import_path

MSU_SWITCHES = ("safety_net", "time")  # MSU's readings of "near the deadline" (algorithms/spot/msu.py)
AHANP_STARTS = ("literal", "fresh", "cold")  # AHANP's readings of its start (algorithms/spot/ahanp.py)
OPTIMUM = "OPT"
GROUPS = ("AHAP", "AHANP")


def ahap_name(window: int, commitment: int, threshold: float) -> str:
    return f"AHAP(w={window},v={commitment},sigma={threshold:g})"


def ahanp_name(threshold: float, start: str = "literal") -> str:
    """`AHANP(sigma=S)` for the literal start, `AHANP(sigma=S,start=fresh|cold)` otherwise."""
    if start == "literal":
        return f"AHANP(sigma={threshold:g})"
    return f"AHANP(sigma={threshold:g},start={start})"


def parse(name: str, where: str = "mechanisms") -> tuple[str, dict]:
    """The kind and parameters of a single mechanism name (the factory's keyword arguments, from
    the table below); ValueError naming `where` for a bad or unknown name."""
    parsed = parse_name(name, where)
    if is_import_path(parsed.kind):  # a user's own SpotPolicy: checked by family.prepare
        return parsed.kind, dict(parsed.params)
    if parsed.kind == OPTIMUM and not parsed.params:
        return OPTIMUM, {}
    if parsed.kind in REGISTRY:
        return parsed.kind, REGISTRY.params(parsed, where)
    known = ", ".join(
        [
            *(example for example in REGISTRY.examples() if "(" not in example),
            OPTIMUM,
            *GROUPS,
            *(example for example in REGISTRY.examples() if "(" in example),
            "AHANP(sigma=S,start=fresh|cold)",
            "MSU(switch=time)",
            "package.module:Class(key=value,...) (your own: docs/extending.md)",
        ]
    )
    raise ValueError(f"{where}: unknown mechanism '{name}' (known: {known})")


def expand(names: Sequence[str], pool) -> list[str]:
    """Config names -> the mechanism names of the results, groups expanded over `pool` (a
    config.PoolConfig), order kept; a name listed twice (also through a group) is an error."""
    out: list[str] = []
    for name in names:
        if name == "AHAP":
            out.extend(pool.ahap())
        elif name == "AHANP":
            out.extend(pool.ahanp())
        else:
            kind, params = parse(name)
            out.append(ahap_name(**params) if kind == "AHAP" else ahanp_name(**params) if kind == "AHANP" else name)
    return check_unique(out)


def _commitment_within_window(params) -> None:
    if not params["commitment"] <= params["window"]:
        raise ValueError("the commitment v must be in 1..w (Sec. VI-A)")


_SIGMA = Param("sigma", real("sigma", 0, open_low=True), arg="threshold", placeholder="S")

REGISTRY = Registry(
    "spot",
    [
        Entry("OD-Only", "algorithms.spot.od_only:OnDemandOnly", "Sec. VI-A"),
        Entry(
            "MSU",
            "algorithms.spot.msu:MaximalSpotUtilization",
            "Sec. VI-A",
            (Param("switch", one_of("switch", MSU_SWITCHES), default="safety_net"),),
        ),
        Entry("UP", "algorithms.spot.uniform_progress:UniformProgress", "Sec. VI-A"),
        Entry("UP-track", "algorithms.spot.uniform_progress_track:UniformProgressTrack", "Sec. VI-A (ours)"),
        Entry(
            "AHAP",
            "algorithms.spot.ahap:AHAP",
            "Sec. IV-A, Alg. 1",
            (
                Param("w", positive_int("w"), arg="window", placeholder="W"),
                Param("v", positive_int("v"), arg="commitment", placeholder="V"),
                _SIGMA,
            ),
            context=("solver", "sigma_reading"),
            check=_commitment_within_window,
        ),
        Entry(
            "AHANP",
            "algorithms.spot.ahanp:AHANP",
            "Sec. IV-B, Alg. 3",
            (_SIGMA, Param("start", one_of("start", AHANP_STARTS), default="literal")),
        ),
    ],
)
