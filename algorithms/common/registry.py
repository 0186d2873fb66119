"""One registry per family: each built-in mechanism is one `Entry` (its name, the class or
function that makes it by import path, the paper section it implements, its parameters with
their checks), and the family's name parser, its dispatch and its "known: ..." error text are
all derived from the table (docs/extending.md, "Adding a built-in mechanism").

A parameter is written in the name under its `key` (`AHAP(w=3,...)`) and handed to the factory
under its `arg` (`window=3`); an optional parameter (one with a `default`) given at its default
is dropped, so that `AHANP(sigma=0.7,start=literal)` and `AHANP(sigma=0.7)` are one mechanism.
Factories are imported on first use, so a registry line names its module and needs no import.
"""

from __future__ import annotations

import functools
import importlib
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from algorithms.common.mechanism_names import MechanismName, Value, format_value

REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """A parameter: `check(value)` returns the value the factory gets, or raises ValueError with
    the reason (the registry adds the mechanism's name)."""

    key: str
    check: Callable[[Value], Any]
    default: Any = REQUIRED
    arg: str = ""
    placeholder: str = ""

    @property
    def keyword(self) -> str:
        return self.arg or self.key


@dataclass(frozen=True)
class Entry:
    """One built-in mechanism. `target` is `package.module:attribute`; `context` lists the keyword
    arguments the family hands the factory beside the name's parameters (spot's AHAP: its window
    solver); `check(params)` checks the parameters together (AHAP: v <= w)."""

    name: str
    target: str
    section: str
    params: tuple[Param, ...] = ()
    context: tuple[str, ...] = ()
    check: Callable[[Mapping[str, Any]], None] | None = None

    def example(self) -> str:
        """`AHAP(w=W,v=V,sigma=S)`: the name with its required parameters, for error messages."""
        required = [p for p in self.params if p.default is REQUIRED]
        if not required:
            return self.name
        return f"{self.name}({','.join(f'{p.key}={p.placeholder or p.key.upper()}' for p in required)})"

    def key_text(self) -> str:
        if not self.params:
            return f"{self.name} takes no parameters"
        required = [p.key for p in self.params if p.default is REQUIRED]
        optional = [p.key for p in self.params if p.default is not REQUIRED]
        if not required:
            return f"{self.name} takes the optional keys {', '.join(optional)}"
        also = f" (and optionally {', '.join(optional)})" if optional else ""
        return f"{self.name} takes the keys {', '.join(required)}{also}"


@functools.cache
def load(target: str) -> Callable[..., Any]:
    """The attribute `package.module:attribute` names."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class Registry:
    """A family's table of built-in mechanisms, in the order its docs and errors list them."""

    def __init__(self, family: str, entries: Iterable[Entry]):
        self.family = family
        self.entries: dict[str, Entry] = {}
        for entry in entries:
            if entry.name in self.entries:
                raise ValueError(f"{family}'s registry lists {entry.name} twice")
            self.entries[entry.name] = entry

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __iter__(self):
        return iter(self.entries.values())

    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def examples(self) -> list[str]:
        """Each mechanism as the error text lists it: its name, with its required parameters."""
        return [entry.example() for entry in self]

    def params(self, parsed: MechanismName, where: str = "mechanisms") -> dict[str, Any]:
        """The factory's keyword arguments for a parsed built-in name: its keys checked against
        the entry, each value by its check, optional values at their default dropped; ValueError
        naming the mechanism and the key otherwise."""
        entry = self.entries[parsed.kind]
        text = parsed.format()
        keys = {p.key: p for p in entry.params}
        required = {p.key for p in entry.params if p.default is REQUIRED}
        unknown = [key for key in parsed.params if key not in keys]
        missing = [key for key in keys if key in required and key not in parsed.params]
        if unknown or missing:
            what = f"unknown key(s) {', '.join(map(repr, unknown))}" if unknown else f"no {', '.join(missing)}"
            raise ValueError(f"{where}: {text}: {what}: {entry.key_text()}")
        out: dict[str, Any] = {}
        for key, value in parsed.params.items():
            param = keys[key]
            try:
                checked = param.check(value)
            except ValueError as err:
                raise ValueError(f"{where}: {text}: {err}") from None
            if param.default is REQUIRED or checked != param.default:
                out[param.keyword] = checked
        if entry.check is not None:
            try:
                entry.check(out)
            except ValueError as err:
                raise ValueError(f"{where}: {text}: {err}") from None
        return out

    def build(self, kind: str, params: Mapping[str, Any], **context: Any) -> Any:
        """A fresh mechanism of `kind` with the checked `params`, and those of the family's
        `context` its entry takes."""
        entry = self.entries[kind]
        return load(entry.target)(**params, **{key: context[key] for key in entry.context if key in context})

    def canonical(self, kind: str, params: Mapping[str, Any]) -> str:
        """The name the results write: the keys in the entry's order, numbers as `g`."""
        entry = self.entries[kind]
        keys = [p for p in entry.params if p.keyword in params]
        if not keys:
            return kind
        return f"{kind}({','.join(f'{p.key}={format_value(params[p.keyword])}' for p in keys)})"


def positive_int(name: str) -> Callable[[Value], int]:
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
        return value

    return check


def real(name: str, low: float | None = None, high: float | None = None, *, open_low=False, open_high=False):
    """A number in [low, high] (either end open, or absent); returned as a float."""

    def check(value):
        ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
        if ok and low is not None:
            ok = value > low if open_low else value >= low
        if ok and high is not None:
            ok = value < high if open_high else value <= high
        if not ok:
            lo = "" if low is None else f"{'(' if open_low else '['}{low:g}"
            hi = "" if high is None else f"{high:g}{')' if open_high else ']'}"
            where = f" in {lo or '(-inf'}, {hi or 'inf)'}" if low is not None or high is not None else ""
            raise ValueError(f"{name} must be a number{where}, got {value!r}")
        return float(value)

    return check


def one_of(name: str, choices: Iterable[str]) -> Callable[[Value], str]:
    choices = tuple(choices)

    def check(value):
        if value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return value

    return check
