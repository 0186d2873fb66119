"""One grammar for mechanism names, in configs and in results: `Name` or `Name(key=value,...)`.

`Name` starts with a letter (letters, digits, `_` and `-` follow: `OD-Only`, `pdFTSP`), or is a
user's own mechanism named by import path, `package.module:Class` (algorithms/common/
user_mechanisms.py, docs/extending.md); a
parameter value is an integer, a number or a bare word (`AHAP(w=3,v=2,sigma=0.5)`,
`pdFTSP(beta=lemma2_tight,price_scale=0.1)`). A family decides which names and keys it knows
and how it writes them in its results. One rule for duplicates, every family: a mechanism
listed twice (also through a group such as spot's `AHAP`) is an error, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

Value = int | float | str
_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_\-]*|[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*)(?:\((.*)\))?$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-.]*$")


@dataclass(frozen=True)
class MechanismName:
    """A parsed name: its kind and its parameters in the order written."""

    kind: str
    params: dict[str, Value] = field(default_factory=dict)

    def format(self, order: Iterable[str] | None = None) -> str:
        """The name written back: `kind` alone, or `kind(k=v,...)` with the keys in `order`
        (default: as parsed); numbers as Python's `g` format (0.50 -> 0.5)."""
        keys = list(order) if order is not None else list(self.params)
        if not keys:
            return self.kind
        return f"{self.kind}({','.join(f'{key}={format_value(self.params[key])}' for key in keys)})"


def format_value(value: Value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def parse_value(text: str) -> Value:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_name(text: object, where: str = "mechanisms") -> MechanismName:
    """Parse `Name` or `Name(key=value,...)`; ValueError naming `where` and the text otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"{where}: a mechanism name must be a string, got {text!r}")
    match = _NAME.match(text.strip())
    if not match:
        raise ValueError(f"{where}: {text!r} is not a mechanism name (Name or Name(key=value,...))")
    kind, body = match[1], match[2]
    params: dict[str, Value] = {}
    if body is not None:
        for part in body.split(","):
            key, sep, value = (piece.strip() for piece in part.partition("="))
            if not sep or not _KEY.match(key) or not value:
                raise ValueError(f"{where}: {text!r}: expected key=value, got {part.strip()!r}")
            if key in params:
                raise ValueError(f"{where}: {text!r}: the key {key!r} is given twice")
            parsed = parse_value(value)
            if isinstance(parsed, str) and not _WORD.match(parsed):
                raise ValueError(f"{where}: {text!r}: {key}={value!r} is neither a number nor a word")
            params[key] = parsed
    return MechanismName(kind, params)


def check_unique(names: Iterable[str], where: str = "mechanisms") -> list[str]:
    """The names as a list; ValueError naming the first one that appears twice."""
    seen: set[str] = set()
    out = []
    for name in names:
        if name in seen:
            raise ValueError(f"{where}: {name!r} is listed twice (directly or through a group)")
        seen.add(name)
        out.append(name)
    return out


def listed_names(config, where: str = "mechanisms") -> list:
    """The config's `mechanisms` as a list: ValueError unless a non-empty list (not a string)."""
    names = config.get("mechanisms")
    if isinstance(names, str) or not isinstance(names, Sequence) or not names:
        raise ValueError(f"{where}: must be a non-empty list of names, got {names!r}")
    return list(names)
