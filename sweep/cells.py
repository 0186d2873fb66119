"""Cells: one composed config each, with the hashes that seed and resume it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from omegaconf import DictConfig, OmegaConf

from .family import EXECUTION_KEYS, FamilySpec, family_of
from .schema import validate_cell
from .seeding import hashed_view, stable_hash, without_dotted

# Override keys that say how to run or which file a grid comes from, not what a cell is:
# an experiment's or debug profile's effect on the world is in the cell's resolved values.
_NON_WORLD_KEYS = EXECUTION_KEYS + ("experiment", "debug")


def _split_override(text: str) -> tuple[str, str] | None:
    key, sep, value = text.lstrip("+~").partition("=")
    if not sep:
        return None
    return key.strip(), value.strip()


def world_params(cfg: DictConfig | dict, overrides: Sequence[str]) -> dict[str, Any]:
    """The overrides that change the world, as key -> resolved value (a group choice stays a
    string). ``cfg`` is the composed config or its resolved container."""
    params: dict[str, Any] = {}
    for text in overrides:
        parsed = _split_override(text)
        if parsed is None:
            continue
        key, raw = parsed
        if key.split(".")[0].split("/")[0] in _NON_WORLD_KEYS:
            continue
        if isinstance(cfg, DictConfig):
            value = OmegaConf.select(cfg, key, default=raw)
        else:
            value = _select(cfg, key, raw)
        params[key] = value if isinstance(value, (int, float, str, bool)) or value is None else raw
    return dict(sorted(params.items()))


def _select(tree: dict, key: str, default: Any) -> Any:
    """`OmegaConf.select` on a resolved container: the value at a dotted key, else ``default``."""
    node: Any = tree
    for part in key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return default
    return node


@dataclass(frozen=True)
class Cell:
    index: int
    name: str
    params: dict[str, Any]
    subdir: str
    world: dict[str, Any] = field(repr=False)
    config_hash: str = ""
    world_hash: str = ""

    @cached_property
    def spec(self) -> FamilySpec:
        """The cell's family (sweep/family.py), found from its config's `family.module`."""
        return family_of(self.world)

    @property
    def family(self) -> str:
        return self.world["family"]["name"]

    @property
    def module(self) -> str:
        return self.world["family"]["module"]

    @property
    def replicates(self) -> int:
        return int(self.world["replicates"])

    @cached_property
    def mechanisms(self) -> tuple[str, ...]:
        return tuple(self.spec.mechanism_names(self.world))

    def payload(self) -> dict[str, Any]:
        """What a worker needs to simulate this cell."""
        return {
            "module": self.module,
            "world": self.world,
            "world_hash": self.world_hash,
            "config_hash": self.config_hash,
            "mechanisms": self.mechanisms,
            "name": self.name,
            "index": self.index,
        }


def cell_hashes(world: dict, spec: FamilySpec) -> tuple[str, str]:
    """(config_hash, world_hash): the world as its hashes see it (sweep/seeding.py), whole, and
    without `replicates` and the keys `seed_excludes` names (cells that differ only in those
    draw the same worlds: common random numbers across them). Replicate r draws from the world
    hash and r only."""
    hashed = hashed_view(world, spec.input_files)
    excluded = ["replicates", *(world.get("seed_excludes") or ())]
    return stable_hash(hashed), stable_hash(without_dotted(hashed, excluded))


def make_cell(cfg: DictConfig, overrides: Sequence[str], index: int, subdir: str) -> Cell:
    """Validate one composed config (raises ConfigError) and describe it as a cell."""
    world, spec, mechanisms = validate_cell(cfg)
    return cell_of_world(world, spec, mechanisms, world_params(cfg, overrides), index, subdir)


def cell_of_world(
    world: dict, spec: FamilySpec, mechanisms: tuple[str, ...], params: dict[str, Any], index: int, subdir: str
) -> Cell:
    """A cell from its validated world (schema.validate_world) and its overrides' values."""
    name = ",".join(f"{k}={v}" for k, v in params.items()) or "default"
    config_hash, world_hash = cell_hashes(world, spec)
    cell = Cell(
        index=index,
        name=name,
        params=params,
        subdir=subdir,
        world=world,
        config_hash=config_hash,
        world_hash=world_hash,
    )
    cell.__dict__["spec"] = spec  # validated already: no second lookup
    cell.__dict__["mechanisms"] = mechanisms
    return cell
