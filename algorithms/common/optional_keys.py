"""Optional config keys: listed in a family's YAML at ``null`` only so that the command line can
set them without ``+`` (``prices.path=FILE``); ``null`` stands for the code's default.

A family names them in ``OPTIONAL_KEYS`` (dotted keys, docs/architecture.md, "The family
contract"). The engine takes a null one out of a cell's config before validating and hashing it,
so listing a key changes no cell's hashes or seeds; ``prepare`` does the same for a caller that
hands it a composed config directly.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any


def without_null_keys(config: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``config`` without those of ``keys`` whose value is None. Sections on the way to a dropped
    key are copied, never changed: the cells of a grid may share them."""
    result = dict(config)
    for path in _paths(tuple(keys)):
        _drop(result, path)
    return result


@functools.lru_cache(maxsize=64)
def _paths(keys: tuple[str, ...]) -> tuple[list[str], ...]:
    return tuple(key.split(".") for key in keys)


def _drop(node: dict, path: list[str]) -> None:
    head, rest = path[0], path[1:]
    if head not in node:
        return
    if not rest:
        if node[head] is None:
            del node[head]
        return
    child = node[head]
    if isinstance(child, Mapping) and _holds_null(child, rest):
        node[head] = dict(child)
        _drop(node[head], rest)


def _holds_null(node: Mapping, path: list[str]) -> bool:
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping):
            return False
    return path[-1] in node and node[path[-1]] is None
