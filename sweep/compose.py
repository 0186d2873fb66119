"""Compose the cells of a grid without composing each one from scratch (docs/architecture.md,
"Composing a grid").

Hydra composes a job's config in two steps: the defaults list, from the overrides that choose
config groups (``family=auction``, ``market=trace``), then the other overrides applied as values
(``job.deadline=6``) with ``ConfigLoaderImpl._apply_overrides_to_config``. Every cell of a grid
that makes the same group choices shares the first step, which is nearly all of the cost (about
0.15 s a cell). :class:`GridComposer` asks Hydra for that composition once per distinct choice
of groups and applies each cell's value overrides to a copy of its container, parsed by Hydra's
own override parser.

The copy path covers what grids are made of: ``key=value`` on an existing key holding a plain
value (or a list given a list), with no interpolation in the value. Anything else (``+key``,
``~key``, ``key@pkg``, a dict value, a key the base lacks, a typed node, a ``hydra.*`` key, a
config whose values refer to Hydra's node, a sweep subdir other than ``${hydra.job.num}``)
goes through Hydra's full composition for that cell, as before, so the result is always the
config Hydra would compose. ``tests/engine/test_grid_compose.py`` composes every experiment's
cells both ways and compares them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException
from omegaconf.nodes import AnyNode

from algorithms.common.optional_keys import without_null_keys

from .cells import Cell, cell_of_world, make_cell, world_params
from .errors import ConfigError
from .family import EXECUTION_KEYS, family_of
from .schema import RunnerConfig, TrackingConfig, missing_message, runner_config, tracking_config, validate_world

_MISSING = "???"
_JOB_NUM_SUBDIR = "${hydra.job.num}"


@dataclass
class Composed:
    """One cell and the execution settings its config holds."""

    cell: Cell
    runner: RunnerConfig
    tracking: TrackingConfig
    config: DictConfig | None = None  # Hydra's full config, when this cell needed the full composition


@dataclass
class _Base:
    """Hydra's composition of one choice of config groups."""

    config: DictConfig
    plain: dict  # everything but `hydra`, unresolved
    interpolated: bool  # a value refers to another (``${...}``): resolve each cell with OmegaConf
    copyable: bool  # False: every cell of these groups takes the full composition
    missing: list[str]  # keys whose value is ``???``
    leaf_kinds: dict[str, str | None] = field(default_factory=dict)  # key -> "value" | "list" | None


class GridComposer:
    """Cells of one sweep from their override lists.

    ``compose_full(overrides)`` is Hydra's composition of one job (the launcher's
    ``config_loader.load_sweep_config``); ``is_group(key)`` says whether a key names a config
    group (``config_loader.repository.group_exists``); ``subdir_of(config, index)`` is the
    job's ``hydra.sweep.subdir`` in a fully composed config.
    """

    def __init__(
        self,
        compose_full: Callable[[list[str]], DictConfig],
        is_group: Callable[[str], bool],
        subdir_of: Callable[[DictConfig, int], str],
    ):
        self._compose_full = compose_full
        self._is_group = is_group
        self._subdir_of = subdir_of
        self._parser = OverridesParser.create()
        self._parsed: dict[str, Override] = {}
        self._group_keys: dict[str, bool] = {}
        self._bases: dict[tuple[str, ...], _Base] = {}
        self._execution: dict[str, tuple[RunnerConfig, TrackingConfig]] = {}
        self.full_compositions = 0  # cells that took Hydra's full composition (tests read it)
        self.resolved = 0  # cells whose values were resolved by OmegaConf (interpolations)

    @property
    def plain(self) -> bool:
        """Whether every cell so far was composed from plain containers alone: no OmegaConf
        node (whose parent links make reference cycles) was made for any of them."""
        return self.full_compositions == 0 and self.resolved == 0

    def compose(self, overrides: Sequence[str], index: int) -> Composed:
        """The cell of one job; raises ConfigError (naming the key) or Hydra's own error."""
        parsed = [self._parse(text) for text in overrides]
        groups = [o for o in parsed if self._is_group_override(o)]
        values = [o for o in parsed if not self._is_group_override(o)]
        base = self._base(tuple(o.input_line for o in groups))
        if not base.copyable or not all(self._copyable(base, o) for o in values):
            return self._full(list(overrides), index)
        tree = dict(base.plain)  # each override copies the dicts on its path; the rest is shared
        for override in values:
            _set(tree, override.key_or_group, _copy_tree(override.value()))
        overridden = {override.key_or_group for override in values}
        missing = [key for key in base.missing if key not in overridden]
        if missing:
            raise ConfigError(missing_message(missing[0]))
        if base.interpolated:
            self.resolved += 1
            try:
                tree = OmegaConf.to_container(OmegaConf.create(tree), resolve=True)
            except OmegaConfBaseException as err:
                raise ConfigError(f"{getattr(err, 'full_key', '') or 'config'}: {err.msg}") from None
        runner, tracking = self._execution_of(tree)
        params = world_params(tree, overrides)  # before validate_world makes input paths absolute
        world = {key: value for key, value in tree.items() if key not in EXECUTION_KEYS}
        world, spec, mechanisms = validate_world(world)
        cell = cell_of_world(world, spec, mechanisms, params, index, str(index))
        return Composed(cell, runner, tracking)

    # -- Hydra's full composition: the reference, and the path of every case the copy does not cover
    def _full(self, overrides: list[str], index: int) -> Composed:
        self.full_compositions += 1
        config = self._compose_full(overrides)
        with open_dict(config):
            config.hydra.job.id = index
            config.hydra.job.num = index
        HydraConfig.instance().set_config(config)
        cell = make_cell(config, overrides, index, self._subdir_of(config, index))
        return Composed(cell, runner_config(config), tracking_config(config), config)

    def _parse(self, text: str) -> Override:
        override = self._parsed.get(text)
        if override is None:
            override = self._parsed[text] = self._parser.parse_override(text)
        return override

    def _is_group_override(self, override: Override) -> bool:
        """Hydra's rule (hydra/_internal/defaults_list.py, ``Overrides``): a key naming a config
        group, with a value that is not a dict, chooses from the group."""
        key = override.key_or_group
        if key not in self._group_keys:
            self._group_keys[key] = bool(self._is_group(key))
        return self._group_keys[key] and not isinstance(override.value(), dict)

    def _base(self, groups: tuple[str, ...]) -> _Base:
        base = self._bases.get(groups)
        if base is None:
            config = self._compose_full(list(groups))
            plain = OmegaConf.to_container(
                OmegaConf.masked_copy(config, [k for k in config if k != "hydra"]), resolve=False
            )
            text = json.dumps(plain, default=str)
            if "${" not in text:
                plain = _without_null_optional_keys(plain)
            subdir = OmegaConf.to_container(config.hydra.sweep, resolve=False).get("subdir")
            copyable = subdir == _JOB_NUM_SUBDIR and "hydra" not in _interpolations(plain)
            base = self._bases[groups] = _Base(config, plain, "${" in text, copyable, _missing_keys(plain))
        return base

    def _copyable(self, base: _Base, override: Override) -> bool:
        key = override.key_or_group
        if (
            override.type != OverrideType.CHANGE
            or override.package is not None
            or key.startswith("hydra")
            or override.is_sweep_override()
        ):
            return False
        value = override.value()
        if not _plain_value(value):
            return False
        if key not in base.leaf_kinds:
            base.leaf_kinds[key] = _leaf_kind(base.config, key)
        kind = base.leaf_kinds[key]
        return kind == "value" and not isinstance(value, list) or kind == "list" and isinstance(value, list)

    def _execution_of(self, tree: dict) -> tuple[RunnerConfig, TrackingConfig]:
        sections = {key: tree.get(key) for key in ("runner", "tracking")}
        key = json.dumps(sections, sort_keys=True, default=str)
        if key not in self._execution:
            config = OmegaConf.create(sections)
            self._execution[key] = (runner_config(config), tracking_config(config))
        return self._execution[key]


def _without_null_optional_keys(plain: dict) -> dict:
    """The base without its family's null optional keys (``OPTIONAL_KEYS``), as
    ``schema.validate_world`` takes them out of each cell: done once here, the cells share the
    sections it would otherwise copy for each of them (1.1 KB a spot cell). A base whose family
    cannot be loaded is left as it is: its first cell says what is wrong."""
    try:
        optional = family_of(plain).optional_keys
    except Exception:
        return plain
    return without_null_keys(plain, optional) if optional else plain


def _leaf_kind(config: DictConfig, key: str) -> str | None:
    """ "value" for an untyped leaf, "list" for a list, None for anything the copy path leaves to
    Hydra (a dict, a typed node, a key that is not there).

    It reads the node with ``_get_node``: OmegaConf has no public call that returns a node
    (``OmegaConf.select`` returns its value), and the node's class is what says whether a value
    is typed (an ``IntegerNode`` converts or rejects what Hydra would set; an ``AnyNode`` takes it
    as it is).
    """
    node: Any = config
    try:
        for part in key.split("."):
            if OmegaConf.is_list(node):
                node = node._get_node(int(part)) if part.isdigit() and int(part) < len(node) else None
            elif OmegaConf.is_dict(node):
                node = node._get_node(part, throw_on_missing_key=False)
            else:
                return None
            if node is None:
                return None
    except OmegaConfBaseException:
        return None
    if node is None:
        return None
    if OmegaConf.is_list(node):
        return "list"
    if isinstance(node, AnyNode):
        return "value"
    return None


def _plain_value(value: Any) -> bool:
    """A value the copy path stores as it is: no dict, no interpolation, no missing marker."""
    if isinstance(value, list):
        return all(_plain_value(item) and not isinstance(item, list) for item in value)
    if isinstance(value, str):
        return "${" not in value and value != _MISSING
    return value is None or isinstance(value, (bool, int, float))


def _copy_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_tree(item) for item in value]
    return value


def _set(tree: dict, key: str, value: Any) -> None:
    """Set a dotted key, copying each dict or list on its path (the rest stays shared)."""
    *parents, last = key.split(".")
    node: Any = tree
    for part in parents:
        index: Any = int(part) if isinstance(node, list) else part
        node[index] = list(node[index]) if isinstance(node[index], list) else dict(node[index])
        node = node[index]
    node[int(last) if isinstance(node, list) else last] = value


def _missing_keys(tree: Any, prefix: str = "") -> list[str]:
    found: list[str] = []
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for key, value in items:
        path = f"{prefix}{key}" if isinstance(tree, dict) else f"{prefix.rstrip('.')}[{key}]"
        if value == _MISSING and isinstance(value, str):
            found.append(path)
        elif isinstance(value, (dict, list)):
            found.extend(_missing_keys(value, f"{path}."))
    return sorted(found)


def _interpolations(tree: Any) -> str:
    """Every interpolation in the tree's strings, joined (to look for references to Hydra's node)."""
    if isinstance(tree, dict):
        return " ".join(_interpolations(v) for v in tree.values())
    if isinstance(tree, list):
        return " ".join(_interpolations(v) for v in tree)
    return tree if isinstance(tree, str) and "${" in tree else ""
