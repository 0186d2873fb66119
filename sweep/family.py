"""The family contract: what a family of mechanisms provides, in one place (docs/architecture.md,
"The family contract").

A family is a module named by its config (`family.module` in `conf/family/<name>.yaml`) that
defines the names of :class:`Family` at module level. The engine knows nothing else about it:
it never imports a family by name, and a new family is new files only.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import ConfigError

# Top-level keys of every cell, whatever its family; anything else must be a section the
# cell's family owns. The execution keys say how a cell runs, never what it computes.
ENGINE_KEYS = ("family", "seed", "replicates", "mechanisms", "seed_excludes")
EXECUTION_KEYS = ("runner", "tracking", "hydra")
# The only columns the engine needs in a row.
REQUIRED_COLUMNS = ("mechanism", "utility")


@runtime_checkable
class Family(Protocol):
    """The names a family module defines. Required: ``NAME``, ``SECTIONS``, ``prepare``,
    ``mechanism_names``, ``simulate_replicate``; the rest are optional (defaults below)."""

    NAME: str
    """The family's name: `family.name` in its config, the MLflow experiment of its cells."""
    SECTIONS: tuple[str, ...]
    """The top-level config sections it owns besides the engine's keys
    (`family`, `seed`, `replicates`, `mechanisms`); any other top-level key is an error."""

    def prepare(self, config: dict) -> Any:
        """Validate the cell's resolved config and build what its replicates share (a loaded
        trace, parsed mechanism settings). Raises ValueError naming the key, or a TraceError
        naming file and line. Runs in the driver (validation) and once per cell in each worker;
        the result must pickle."""

    def mechanism_names(self, config: dict) -> list[str]:
        """The cell's mechanisms, in the order of its rows (the `mechanism` column)."""

    def simulate_replicate(self, prepared: Any, replicate: int, rng: np.random.Generator) -> list[dict]:
        """Draw one world from `rng` and run every mechanism on it (common random numbers): one
        row per mechanism, in `mechanism_names` order, each with at least `mechanism` and
        `utility`. A row may carry side tables under the key `tables` (docs/architecture.md)."""


@dataclass(frozen=True)
class FamilySpec:
    """A family module as the engine uses it, with the optional names filled in."""

    name: str
    module: str
    sections: tuple[str, ...]
    prepare: Callable[[dict], Any]
    mechanism_names: Callable[[dict], list[str]]
    simulate_replicate: Callable[[Any, int, np.random.Generator], list[dict]]
    cell_outputs: Callable[[dict, Any], dict] | None = None
    """``cell_outputs(config, frame) -> dict``: analyses of a whole cell (sweep/cell_outputs.py)."""
    has_cell_outputs: Callable[[dict], bool] | None = None
    """``has_cell_outputs(config) -> bool``: whether ``cell_outputs`` has anything for this cell;
    the engine builds the cell's frame and calls it only then (default: always)."""
    summary_columns: tuple[str, ...] = ()
    """Row columns summarised like `utility` (mean, std, Student-t 95% CI) in summary.csv and MLflow."""
    rate_columns: tuple[str, ...] = ()
    """Boolean row columns summarised as a rate (`<column>_rate`)."""
    timing_columns: tuple[str, ...] = ()
    """Wall-clock measurements (rows or side tables): they differ from run to run, so they are
    outside the determinism and byte-identity claims."""
    input_files: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    """Dotted config key -> reader of that input file's parsed content (arrays of the values
    the world is built from). The seed and the config hash see this content, not the bytes."""
    max_replicates_per_chunk: int | None = None
    """At most this many replicates per Ray call (a family whose replicate takes seconds)."""
    optional_keys: tuple[str, ...] = ()
    """Dotted keys the family's YAML lists at null only so that the command line can set them
    without `+`: null is the code's default. The engine takes a null one out of the cell's config
    before `prepare` and the hashes, so listing a key changes no cell's seeds."""
    declared_sections: Mapping[str, type] = field(default_factory=dict)
    """Section -> the dataclass that declares its keys (market/common/sections.py): their defaults,
    checks and one-line docs, which docs/usage.md and the family's YAML comments show."""
    paper: str = ""
    """The paper the family implements (number and title): MLflow's experiment description."""
    question: str = ""
    """The question the family's sweeps answer, in a sentence (README, MLflow)."""
    utility: str = ""
    """What the `utility` column means and its unit (summary, MLflow, README)."""


REQUIRED_NAMES = ("NAME", "SECTIONS", "prepare", "mechanism_names", "simulate_replicate")
_OPTIONAL = {
    "cell_outputs": ("cell_outputs", None),
    "has_cell_outputs": ("has_cell_outputs", None),
    "summary_columns": ("SUMMARY_COLUMNS", ()),
    "rate_columns": ("RATE_COLUMNS", ()),
    "timing_columns": ("TIMING_COLUMNS", ()),
    "input_files": ("INPUT_FILES", {}),
    "max_replicates_per_chunk": ("MAX_REPLICATES_PER_CHUNK", None),
    "optional_keys": ("OPTIONAL_KEYS", ()),
    "declared_sections": ("DECLARED_SECTIONS", {}),
    "paper": ("PAPER", ""),
    "question": ("QUESTION", ""),
    "utility": ("UTILITY", ""),
}


OPTIONAL_NAMES = tuple(attr for attr, _ in _OPTIONAL.values())


def spec_of(module: ModuleType) -> FamilySpec:
    """Check that a module provides the family contract; raise TypeError naming what is missing."""
    where = f"family module '{module.__name__}'"
    missing = [name for name in REQUIRED_NAMES if not hasattr(module, name)]
    if missing:
        raise TypeError(f"{where} does not define {', '.join(missing)} (docs/architecture.md, 'The family contract')")
    if not isinstance(module.NAME, str) or not module.NAME:
        raise TypeError(f"{where}: NAME must be a non-empty string")
    sections = _names(module.SECTIONS, f"{where}: SECTIONS")
    clash = sorted(set(sections) & set(ENGINE_KEYS + EXECUTION_KEYS))
    if clash:
        raise TypeError(f"{where}: SECTIONS may not name the engine's keys ({', '.join(clash)})")
    for name in ("prepare", "mechanism_names", "simulate_replicate"):
        if not callable(getattr(module, name)):
            raise TypeError(f"{where}: {name} must be a function")
    values = {key: getattr(module, attr, default) for key, (attr, default) in _OPTIONAL.items()}
    for key in ("summary_columns", "rate_columns", "timing_columns", "optional_keys"):
        values[key] = _names(values[key], f"{where}: {_OPTIONAL[key][0]}")
    for key in values["optional_keys"]:
        if key.split(".")[0] not in sections or "." not in key:
            raise TypeError(f"{where}: OPTIONAL_KEYS key '{key}' is not a key inside one of its SECTIONS")
    for key in ("paper", "question", "utility"):
        if not isinstance(values[key], str):
            raise TypeError(f"{where}: {_OPTIONAL[key][0]} must be a string")
    for key in ("cell_outputs", "has_cell_outputs"):
        if values[key] is not None and not callable(values[key]):
            raise TypeError(f"{where}: {key} must be a function")
    files = values["input_files"]
    if not isinstance(files, Mapping) or not all(isinstance(k, str) and callable(v) for k, v in files.items()):
        raise TypeError(f"{where}: INPUT_FILES must map dotted config keys to reader functions")
    for key in files:
        if key.split(".")[0] not in sections:
            raise TypeError(f"{where}: INPUT_FILES key '{key}' is not inside one of its SECTIONS")
    declared = values["declared_sections"]
    if not isinstance(declared, Mapping) or not all(dataclasses.is_dataclass(v) for v in declared.values()):
        raise TypeError(f"{where}: DECLARED_SECTIONS must map section names to dataclasses")
    for key in declared:
        if key not in sections:
            raise TypeError(f"{where}: DECLARED_SECTIONS names '{key}', which is not one of its SECTIONS")
    cap = values["max_replicates_per_chunk"]
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, numbers.Integral) or cap < 1):
        raise TypeError(f"{where}: MAX_REPLICATES_PER_CHUNK must be a positive integer or None")
    return FamilySpec(
        name=module.NAME,
        module=module.__name__,
        sections=sections,
        prepare=module.prepare,
        mechanism_names=module.mechanism_names,
        simulate_replicate=module.simulate_replicate,
        **values,
    )


def _names(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{where} must be a tuple of names, got {value!r}")
    return tuple(value)


@functools.cache
def load_family(module_name: str) -> FamilySpec:
    """Import the family module `module_name` and check it; ConfigError if it cannot be used."""
    if not isinstance(module_name, str) or not module_name:
        raise ConfigError(f"family.module must name a Python module (algorithms.<family>.family), got {module_name!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(f"family.module: cannot import '{module_name}' ({err})") from None
    try:
        return spec_of(module)
    except TypeError as err:
        raise ConfigError(f"family.module: {err}") from None


def family_of(world: Mapping) -> FamilySpec:
    """The family a cell's resolved config names (`family.module`), checked against `family.name`."""
    section = world.get("family")
    if not isinstance(section, Mapping):
        raise ConfigError(f"family must be a config group with 'name' and 'module' (family=<name>), got {section!r}")
    unknown = sorted(str(key) for key in section if key not in ("name", "module"))
    if unknown:
        raise ConfigError(f"family: unknown key(s) {', '.join(map(repr, unknown))} (known: name, module)")
    spec = load_family(section.get("module"))
    if section.get("name") != spec.name:
        raise ConfigError(
            f"family.name is '{section.get('name')}' but family.module '{spec.module}' defines the family '{spec.name}'"
        )
    return spec
