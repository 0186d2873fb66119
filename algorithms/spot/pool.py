"""The policy pool of paper 000 Sec. VI-A ("Policy Pool") and mechanism names.

AHAP policies vary the window omega, the commitment v in 1..omega and the price
threshold sigma; AHANP policies vary sigma. The paper's pool (omega in 1..5,
sigma in 0.3..0.9) has 15 x 7 = 105 AHAP and 7 AHANP policies, indexed 1..112 in
Fig. 10 in that order: AHAP by omega, then v, then sigma, then AHANP by sigma.

In a config, `mechanisms` lists names (the grammar of algorithms/common/mechanism_names.py):
`OD-Only`, `MSU`, `UP`, `UP-track`, `OPT`, an explicit `AHAP(w=3,v=2,sigma=0.5)` or `AHANP(sigma=0.7)`
(keys in any order; results write them in this order), or the group names `AHAP` and
`AHANP`, which expand to every member of the configured pool. A policy listed twice, also
through a group, is an error.

AHANP takes an optional reading of its start, `AHANP(sigma=0.7,start=fresh)` or `start=cold`
(algorithms/spot/ahanp.py, AHANP_STARTS); `start=literal` is the default and is written as the
plain `AHANP(sigma=0.7)`, so the literal policy's name (and every result and hash that holds
it) is the one it had before the readings. `pool.ahanp_start` lists the starts the group
`AHANP` expands to: sigma x start, start-major in AHANP_STARTS order (literal first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from algorithms.common.mechanism_names import check_unique, parse_name
from algorithms.common.user_mechanisms import is_import_path
from algorithms.spot.registry import AHANP_STARTS, REGISTRY
from market.common.fields import as_section, choice, number_list, reject_unknown_keys

SIGMA_READINGS = ("ahead", "line")  # pool.sigma_reading (ahap.py)
OPTIMUM = "OPT"
GROUPS = ("AHAP", "AHANP")


def ahap_name(window: int, commitment: int, threshold: float) -> str:
    return f"AHAP(w={window},v={commitment},sigma={threshold:g})"


def ahanp_name(threshold: float, start: str = "literal") -> str:
    """`AHANP(sigma=S)` for the literal start, `AHANP(sigma=S,start=fresh|cold)` otherwise."""
    if start == "literal":
        return f"AHANP(sigma={threshold:g})"
    return f"AHANP(sigma={threshold:g},start={start})"


def _starts(value) -> tuple[str, ...]:
    """`pool.ahanp_start`: a non-empty list of AHANP_STARTS without repeats (a single word is a list
    of one), in AHANP_STARTS order."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items or not all(isinstance(x, str) and x in AHANP_STARTS for x in items) or len(set(items)) < len(items):
        raise ValueError(
            f"pool.ahanp_start must be a non-empty list of distinct values among "
            f"{', '.join(AHANP_STARTS)}, got {items!r}"
        )
    return tuple(start for start in AHANP_STARTS if start in items)


@dataclass(frozen=True)
class PoolConfig:
    """`pool.window`, `pool.commitment` (null: every v in 1..omega) and `pool.threshold` (Sec. VI-A);
    `pool.sigma_reading`: where sigma acts in AHAP, "ahead" (Alg. 1 lines 6-11 only) or "line"
    (also in problem (10): algorithms/spot/window_problem.py, "Reading of sigma");
    `pool.ahanp_start`: the readings of AHANP's start the group `AHANP` expands to (AHANP_STARTS,
    algorithms/spot/ahanp.py; null: literal only)."""

    window: tuple[int, ...] = (1, 2, 3, 4, 5)
    commitment: tuple[int, ...] | None = None
    threshold: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    sigma_reading: str = "ahead"
    ahanp_start: tuple[str, ...] = ("literal",)

    @classmethod
    def from_dict(cls, d: Mapping | None) -> PoolConfig:
        d = as_section(d, "pool")
        reject_unknown_keys(cls, d, "pool")
        return cls(
            window=number_list(d.get("window", cls.window), "pool.window", int, 1),
            commitment=None if d.get("commitment") is None else number_list(d["commitment"], "pool.commitment", int, 1),
            threshold=number_list(d.get("threshold", cls.threshold), "pool.threshold", float, 0, strict_min=True),
            sigma_reading=choice(d.get("sigma_reading", cls.sigma_reading), "pool.sigma_reading", SIGMA_READINGS),
            ahanp_start=cls.ahanp_start if d.get("ahanp_start") is None else _starts(d["ahanp_start"]),
        )

    def ahap(self) -> list[str]:
        names = []
        for window in self.window:
            commitments = (
                range(1, window + 1) if self.commitment is None else [v for v in self.commitment if v <= window]
            )
            for commitment in commitments:
                names.extend(ahap_name(window, commitment, sigma) for sigma in self.threshold)
        return names

    def ahanp(self) -> list[str]:
        """sigma x start, start-major: the literal policies first, as without the readings."""
        return [ahanp_name(sigma, start) for start in self.ahanp_start for sigma in self.threshold]


def parse(name: str) -> tuple[str, dict]:
    """The kind and parameters of a single mechanism name (the factory's keyword arguments, from
    algorithms/spot/registry.py); ValueError for an unknown name."""
    parsed = parse_name(name)
    if is_import_path(parsed.kind):  # a user's own SpotPolicy: checked by family.prepare
        return parsed.kind, dict(parsed.params)
    if parsed.kind == OPTIMUM and not parsed.params:
        return OPTIMUM, {}
    if parsed.kind in REGISTRY:
        return parsed.kind, REGISTRY.params(parsed)
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
    raise ValueError(f"mechanisms: unknown mechanism '{name}' (known: {known})")


def expand(names: Sequence[str], pool: PoolConfig) -> list[str]:
    """Config names -> the mechanism names of the results, groups expanded, order kept; a name
    listed twice (also through a group) is an error."""
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
