"""One declaration per config section: a frozen dataclass whose fields are the section's keys,
each declared with `key(default, check, doc)`. From it come the section's validation and its
error messages (`parse`: unknown keys, then each given value through its check, named
`section.key`, then the section's own cross-key `check()`), and its documentation (`describe`:
each key's default and one-line doc, which sweep/config_keys.py writes into docs/usage.md and
beside the key in conf/family/<family>.yaml).

A check is `check(value, "section.key") -> value`, usually one of market/common/fields.py's
with its bounds bound by `checked`. A value of null takes the key's default where the key is
`optional` (null is "the code's default", algorithms/common/optional_keys.py) or where the
default is null itself; elsewhere null goes to the check, which refuses it.

Pure Python (standard library only): no Ray, MLflow, Hydra or OmegaConf.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from market.common.fields import as_section, reject_unknown_keys

T = TypeVar("T")
Check = Callable[[Any, str], Any]


def key(default: Any, check: Check | None, doc: str, optional: bool = False) -> Any:
    """A section key: its default, its check (None: any value) and its one-line doc."""
    return dataclasses.field(default=default, metadata={"check": check, "doc": doc, "optional": optional})


def checked(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Check:
    """`function(value, key, *args, **kwargs)` as a check: `checked(integer, minimum=1)`."""

    def check(value, where):
        return function(value, where, *args, **kwargs)

    return check


_PARSED: dict[tuple, Any] = {}  # (cls, section, the values with their types) -> the parsed section
_PARSED_MAX = 4096
_UNHASHABLE = object()


def parse(cls: type[T], raw: Mapping | None, section: str) -> T:
    """The section `raw` (a mapping, or null for an empty one) as a `cls`, every key checked;
    ValueError naming the section and key otherwise.

    A section of plain values parsed before is returned again without its checks: the cells of
    a grid share most of their sections, and each is parsed when its cell is checked and again
    by the worker that simulates it."""
    return memoized(cls, raw, section, lambda: _parse(cls, raw, section))


def memoized(cls: type, raw: Mapping | None, section: str, build: Callable[[], T]) -> T:
    """``build()``, the ``cls`` of the section ``raw``, remembered for a section of plain values
    (as ``parse`` remembers its own): ``cls`` must be immutable, since every equal section gets
    the same object."""
    memo = _memo_key(cls, raw, section)
    if memo is not None:
        found = _PARSED.get(memo)
        if found is not None:
            return found
    parsed = build()
    if memo is not None:
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[memo] = parsed
    return parsed


_SCALARS = (str, int, float, bool, type(None))


def _memo_key(cls: type, raw: Any, section: str) -> tuple | None:
    """A key for a section whose values are plain (null, booleans, numbers, text, lists of them),
    each with its type (1, 1.0 and True are different values here); None for any other."""
    if raw is None:
        return (cls, section, None)
    if not isinstance(raw, Mapping):
        return None
    items = []
    for name, value in raw.items():
        if type(name) is not str:
            return None
        kind = type(value)
        if kind in _SCALARS:
            items.append((name, kind, value))
            continue
        frozen = _frozen(value)
        if frozen is _UNHASHABLE:
            return None
        items.append((name, kind, frozen))
    return (cls, section, tuple(sorted(items)))


def _frozen(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value), value)
    if isinstance(value, (list, tuple)):
        parts = tuple(_frozen(item) for item in value)
        return _UNHASHABLE if any(part is _UNHASHABLE for part in parts) else (type(value), parts)
    return _UNHASHABLE


def _parse(cls: type[T], raw: Mapping | None, section: str) -> T:
    given = as_section(raw, section)
    reject_unknown_keys(cls, given, section)
    values = {}
    for field in dataclasses.fields(cls):
        if field.name not in given:
            continue
        value = given[field.name]
        if value is None and (field.metadata.get("optional") or field.default is None):
            continue
        check = field.metadata.get("check")
        values[field.name] = check(value, f"{section}.{field.name}") if check else value
    parsed = cls(**values)
    cross_check = getattr(parsed, "check", None)
    if callable(cross_check):
        cross_check()
    return parsed


@dataclasses.dataclass(frozen=True)
class KeyDoc:
    """One key as the docs show it."""

    name: str
    default: Any
    doc: str


def describe(cls: type) -> list[KeyDoc]:
    """Every declared key of the section `cls`, in declaration order."""
    return [
        KeyDoc(field.name, field.default, field.metadata["doc"])
        for field in dataclasses.fields(cls)
        if "doc" in field.metadata
    ]
