"""The policy pool of paper 000 Sec. VI-A ("Policy Pool") and mechanism names.

AHAP policies vary the window omega, the commitment v in 1..omega and the price
threshold sigma; AHANP policies vary sigma. The paper's pool (omega in 1..5,
sigma in 0.3..0.9) has 15 x 7 = 105 AHAP and 7 AHANP policies, indexed 1..112 in
Fig. 10 in that order: AHAP by omega, then v, then sigma, then AHANP by sigma.

In a config, `mechanisms` lists names: `OD-Only`, `MSU`, `UP`, `OPT`, an explicit
`AHAP(w=3,v=2,sigma=0.5)` or `AHANP(sigma=0.7)`, or the group names `AHAP` and
`AHANP`, which expand to every member of the configured pool.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

BASELINES = ("OD-Only", "MSU", "UP")
OPTIMUM = "OPT"
_AHAP = re.compile(r"^AHAP\(w=(\d+),v=(\d+),sigma=([0-9.]+)\)$")
_AHANP = re.compile(r"^AHANP\(sigma=([0-9.]+)\)$")


def ahap_name(window: int, commitment: int, threshold: float) -> str:
    return f"AHAP(w={window},v={commitment},sigma={threshold:g})"


def ahanp_name(threshold: float) -> str:
    return f"AHANP(sigma={threshold:g})"


@dataclass(frozen=True)
class PoolConfig:
    """`pool.window`, `pool.commitment` (null: every v in 1..omega) and `pool.threshold` (Sec. VI-A)."""

    window: tuple[int, ...] = (1, 2, 3, 4, 5)
    commitment: tuple[int, ...] | None = None
    threshold: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

    @classmethod
    def from_dict(cls, d: Mapping | None) -> "PoolConfig":
        d = dict(d or {})
        unknown = sorted(set(d) - {"window", "commitment", "threshold"})
        if unknown:
            raise ValueError(f"pool: unknown key(s) {', '.join(map(repr, unknown))} (known: window, commitment, threshold)")
        pool = cls(
            window=_ints(d.get("window", cls.window), "pool.window"),
            commitment=None if d.get("commitment") is None else _ints(d["commitment"], "pool.commitment"),
            threshold=_floats(d.get("threshold", cls.threshold), "pool.threshold"),
        )
        return pool

    def ahap(self) -> list[str]:
        names = []
        for window in self.window:
            commitments = range(1, window + 1) if self.commitment is None else [v for v in self.commitment if v <= window]
            for commitment in commitments:
                names.extend(ahap_name(window, commitment, sigma) for sigma in self.threshold)
        return names

    def ahanp(self) -> list[str]:
        return [ahanp_name(sigma) for sigma in self.threshold]


def _ints(values, key: str) -> tuple[int, ...]:
    values = values if isinstance(values, (list, tuple)) else [values]
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"{key} must be a non-empty list of positive integers, got {values!r}")
    return tuple(values)


def _floats(values, key: str) -> tuple[float, ...]:
    values = values if isinstance(values, (list, tuple)) else [values]
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 for v in values):
        raise ValueError(f"{key} must be a non-empty list of positive numbers, got {values!r}")
    return tuple(float(v) for v in values)


def parse(name: str) -> tuple[str, dict]:
    """The kind and parameters of a single mechanism name; ValueError for an unknown name."""
    if name in BASELINES or name == OPTIMUM:
        return name, {}
    match = _AHAP.match(name)
    if match:
        window, commitment, threshold = int(match[1]), int(match[2]), float(match[3])
        if not 1 <= commitment <= window:
            raise ValueError(f"mechanisms: {name}: the commitment v must be in 1..w (Sec. VI-A)")
        if not threshold > 0:
            raise ValueError(f"mechanisms: {name}: sigma must be > 0")
        return "AHAP", {"window": window, "commitment": commitment, "threshold": threshold}
    match = _AHANP.match(name)
    if match:
        return "AHANP", {"threshold": float(match[1])}
    known = ", ".join([*BASELINES, OPTIMUM, "AHAP", "AHANP", "AHAP(w=W,v=V,sigma=S)", "AHANP(sigma=S)"])
    raise ValueError(f"mechanisms: unknown mechanism '{name}' (known: {known})")


def expand(names: Sequence[str], pool: PoolConfig) -> list[str]:
    """Config names -> the mechanism names of the results, groups expanded, duplicates dropped, order kept."""
    out: list[str] = []
    for name in names:
        if name == "AHAP":
            group = pool.ahap()
        elif name == "AHANP":
            group = pool.ahanp()
        else:
            kind, params = parse(name)
            group = [ahap_name(**params) if kind == "AHAP" else ahanp_name(**params) if kind == "AHANP" else name]
        out.extend(n for n in group if n not in out)
    return out
