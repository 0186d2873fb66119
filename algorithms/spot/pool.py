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
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Mapping, Sequence

from algorithms.common.mechanism_names import check_unique, parse_name
from market.common.fields import as_section, choice, number_list, reject_unknown_keys

BASELINES = ("OD-Only", "MSU", "UP", "UP-track")
SIGMA_READINGS = ("ahead", "line")  # pool.sigma_reading (ahap.py)
OPTIMUM = "OPT"
GROUPS = ("AHAP", "AHANP")
MSU_SWITCHES = ("safety_net", "time")  # MSU's readings of "near the deadline" (algorithms/spot/msu.py)
_KEYS = {"AHAP": ("w", "v", "sigma"), "AHANP": ("sigma",)}


def ahap_name(window: int, commitment: int, threshold: float) -> str:
    return f"AHAP(w={window},v={commitment},sigma={threshold:g})"


def ahanp_name(threshold: float) -> str:
    return f"AHANP(sigma={threshold:g})"


@dataclass(frozen=True)
class PoolConfig:
    """`pool.window`, `pool.commitment` (null: every v in 1..omega) and `pool.threshold` (Sec. VI-A);
    `pool.sigma_reading`: where sigma acts in AHAP, "ahead" (Alg. 1 lines 6-11 only) or "line"
    (also in problem (10): algorithms/spot/window_problem.py, "Reading of sigma")."""

    window: tuple[int, ...] = (1, 2, 3, 4, 5)
    commitment: tuple[int, ...] | None = None
    threshold: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    sigma_reading: str = "ahead"

    @classmethod
    def from_dict(cls, d: Mapping | None) -> "PoolConfig":
        d = as_section(d, "pool")
        reject_unknown_keys(cls, d, "pool")
        return cls(
            window=number_list(d.get("window", cls.window), "pool.window", int, 1),
            commitment=None if d.get("commitment") is None else number_list(d["commitment"], "pool.commitment", int, 1),
            threshold=number_list(d.get("threshold", cls.threshold), "pool.threshold", float, 0, strict_min=True),
            sigma_reading=choice(d.get("sigma_reading", cls.sigma_reading), "pool.sigma_reading", SIGMA_READINGS),
        )

    def ahap(self) -> list[str]:
        names = []
        for window in self.window:
            commitments = range(1, window + 1) if self.commitment is None else [v for v in self.commitment if v <= window]
            for commitment in commitments:
                names.extend(ahap_name(window, commitment, sigma) for sigma in self.threshold)
        return names

    def ahanp(self) -> list[str]:
        return [ahanp_name(sigma) for sigma in self.threshold]


def parse(name: str) -> tuple[str, dict]:
    """The kind and parameters of a single mechanism name; ValueError for an unknown name."""
    parsed = parse_name(name)
    if parsed.kind in BASELINES + (OPTIMUM,) and not parsed.params:
        return parsed.kind, {}
    if parsed.kind == "MSU" and list(parsed.params) == ["switch"]:  # algorithms/spot/msu.py
        if parsed.params["switch"] not in MSU_SWITCHES:
            raise ValueError(f"mechanisms: {name}: switch must be one of {', '.join(MSU_SWITCHES)}")
        return "MSU", {"switch": parsed.params["switch"]}
    if parsed.kind in _KEYS and parsed.params:
        keys = _KEYS[parsed.kind]
        if sorted(parsed.params) != sorted(keys):
            raise ValueError(f"mechanisms: {name}: {parsed.kind} takes the keys {', '.join(keys)}")
        sigma = parsed.params["sigma"]
        if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real) or not sigma > 0:
            raise ValueError(f"mechanisms: {name}: sigma must be a number > 0")
        if parsed.kind == "AHANP":
            return "AHANP", {"threshold": float(sigma)}
        window, commitment = parsed.params["w"], parsed.params["v"]
        if not all(isinstance(x, int) and x >= 1 for x in (window, commitment)):
            raise ValueError(f"mechanisms: {name}: w and v must be positive integers")
        if not commitment <= window:
            raise ValueError(f"mechanisms: {name}: the commitment v must be in 1..w (Sec. VI-A)")
        return "AHAP", {"window": window, "commitment": commitment, "threshold": float(sigma)}
    known = ", ".join([*BASELINES, OPTIMUM, *GROUPS, "AHAP(w=W,v=V,sigma=S)", "AHANP(sigma=S)", "MSU(switch=time)"])
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
