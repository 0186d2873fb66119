"""Cells: one composed config each, with the hashes that seed and resume it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from omegaconf import DictConfig, OmegaConf

from .schema import EXECUTION_KEYS, validate_cell
from .seeding import hashed_view, stable_hash

# Override keys that say how to run or where a grid comes from, not what a cell is.
_NON_WORLD_KEYS = EXECUTION_KEYS + ("sweep",)


def _split_override(text: str) -> tuple[str, str] | None:
    key, sep, value = text.lstrip("+~").partition("=")
    if not sep:
        return None
    return key.strip(), value.strip()


def world_params(cfg: DictConfig, overrides: Sequence[str]) -> dict[str, Any]:
    """The overrides that change the world, as key -> resolved value (a group choice stays a string)."""
    params: dict[str, Any] = {}
    for text in overrides:
        parsed = _split_override(text)
        if parsed is None:
            continue
        key, raw = parsed
        if key.split(".")[0] in _NON_WORLD_KEYS:
            continue
        value = OmegaConf.select(cfg, key, default=raw)
        params[key] = value if isinstance(value, (int, float, str, bool)) or value is None else raw
    return dict(sorted(params.items()))


@dataclass(frozen=True)
class Cell:
    index: int
    name: str
    params: dict[str, Any]
    subdir: str
    world: dict[str, Any] = field(repr=False)
    config_hash: str = ""
    world_hash: str = ""

    @property
    def family(self) -> str:
        return self.world["family"]["name"]

    @property
    def replicates(self) -> int:
        return int(self.world["replicates"])

    @property
    def mechanisms(self) -> list[str]:
        from .families import load_family

        return list(load_family(self.family).mechanism_names(self.world))

    def payload(self) -> dict[str, Any]:
        """What a worker needs to simulate this cell."""
        return {"family": self.family, "world": self.world, "world_hash": self.world_hash, "config_hash": self.config_hash}


def make_cell(cfg: DictConfig, overrides: Sequence[str], index: int, subdir: str) -> Cell:
    """Validate one composed config (raises ConfigError) and describe it as a cell."""
    world = validate_cell(cfg)
    params = world_params(cfg, overrides)
    name = ",".join(f"{k}={v}" for k, v in params.items()) or "default"
    hashed = hashed_view(world)  # input files by content: the same data seeds the same worlds anywhere
    return Cell(
        index=index,
        name=name,
        params=params,
        subdir=subdir,
        world=world,
        config_hash=stable_hash(hashed),
        world_hash=stable_hash({k: v for k, v in hashed.items() if k != "replicates"}),
    )
