"""Checks of config values, written once for every family.

Config sections reach the model code as plain dicts (Hydra/YAML, after
``OmegaConf.to_container``). Every check here raises ``ValueError`` with a message
that names the full dotted key and the bad value, ``f"{key} must be {what}, got {value!r}"``:

    job.deadline must be a positive integer, got -1
    market.mean_price must be > 0, got -0.5
    cluster.start_hour must be in [0, 24), got 25
    cluster: unknown key(s) 'nodez' (known: nodes, node_type, base_model_gb, start_hour)

Numbers: ``bool`` is never a number (``True`` is not 1 here); NaN is never in a range.
``integer`` accepts an integral float (3.0, as YAML or a Hydra override may write 3)
unless ``allow_float=False``.

Pure Python (standard library only): no Ray, MLflow, Hydra or OmegaConf.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import fields, is_dataclass

__all__ = [
    "as_section",
    "choice",
    "in_range",
    "integer",
    "interval",
    "is_integral",
    "is_real",
    "number_list",
    "real",
    "reject_unknown_keys",
]


# --- sections and keys -----------------------------------------------------


def as_section(value, key: str) -> dict:
    """A config section as a new dict: a mapping is copied, None is an empty section;
    anything else is an error naming `key` (``cluster: must be a mapping, got list``)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{key}: must be a mapping, got {type(value).__name__}")
    return dict(value)


def reject_unknown_keys(
    cls: type | Sequence[str], d: Mapping, section: str, context: str = "", also_known: Sequence[str] = ()
) -> None:
    """Raise ValueError naming every key of ``d`` that is not known, sorted.

    The known keys are the fields of the dataclass ``cls`` (or the names in ``cls`` when
    it is a sequence of strings) plus ``also_known``; ``context`` is appended to the
    list of unknown keys (`` for kind 'trace'``)."""
    names = [f.name for f in fields(cls)] if is_dataclass(cls) else list(cls)
    known = [*also_known, *names]
    unknown = sorted(str(k) for k in d if k not in known)
    if unknown:
        raise ValueError(
            f"{section}: unknown key(s) {', '.join(repr(k) for k in unknown)}{context} (known: {', '.join(known)})"
        )


def choice(value, key: str, choices: Sequence):
    """`value` if it is one of `choices`, else ``{key} must be one of a, b, c, got 'x'``."""
    if value not in tuple(choices):
        raise ValueError(f"{key} must be one of {', '.join(map(str, choices))}, got {value!r}")
    return value


# --- numbers -----------------------------------------------------------------


def is_real(x) -> bool:
    """A real number (int, float, numpy scalar, ...) and not a bool."""
    kind = type(x)
    if kind is int or kind is float:  # the common case, without the ABC check (thousands of cells)
        return True
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def is_integral(x, allow_float: bool = True) -> bool:
    """An integer and not a bool; with `allow_float` also a float with an integral value
    (3.0, but not 3.5, NaN or inf)."""
    if type(x) is int:
        return True
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Integral):
        return True
    return allow_float and isinstance(x, float) and x.is_integer()


def _bound(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _range_text(minimum, maximum, strict_min: bool, strict_max: bool) -> str:
    """``[0, 1)``, ``> 0``, ``<= 5`` or '' (no bounds)."""
    if minimum is not None and maximum is not None:
        return f"{'(' if strict_min else '['}{_bound(minimum)}, {_bound(maximum)}{')' if strict_max else ']'}"
    if minimum is not None:
        return f"{'>' if strict_min else '>='} {_bound(minimum)}"
    if maximum is not None:
        return f"{'<' if strict_max else '<='} {_bound(maximum)}"
    return ""


def _in_range(x, minimum, maximum, strict_min: bool, strict_max: bool) -> bool:
    """NaN is never in range, with or without bounds."""
    if x != x:
        return False
    if minimum is not None and not (x > minimum if strict_min else x >= minimum):
        return False
    if maximum is not None and not (x < maximum if strict_max else x <= maximum):
        return False
    return True


def _fail(key: str, what: str, value, optional: bool) -> ValueError:
    return ValueError(f"{key} must be {'null or ' if optional else ''}{what}, got {value!r}")


def integer(
    value,
    key: str,
    minimum: int | None = None,
    maximum: int | None = None,
    *,
    allow_float: bool = True,
    optional: bool = False,
) -> int | None:
    """`value` as an int: an integer (not a bool) in [minimum, maximum], both inclusive.

    `allow_float` accepts a float with an integral value (3.0, not 3.5); `optional`
    lets None through (returned as None). Errors read ``{key} must be a positive integer``
    (minimum 1), ``an integer >= 0``, ``an integer in [1, 5]`` or ``an integer``, with
    ``null or`` in front when `optional`."""
    if value is None and optional:
        return None
    if not is_integral(value, allow_float) or not _in_range(value, minimum, maximum, False, False):
        if minimum == 1 and maximum is None:
            what = "a positive integer"
        elif minimum is not None and maximum is not None:
            what = f"an integer in {_range_text(minimum, maximum, False, False)}"
        else:
            what = f"an integer {_range_text(minimum, maximum, False, False)}".rstrip()
        raise _fail(key, what, value, optional)
    return int(value)


def real(
    value,
    key: str,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_min: bool = False,
    strict_max: bool = False,
    *,
    finite: bool = True,
    optional: bool = False,
) -> float | None:
    """`value` as a float: a real number (not a bool) within the bounds (inclusive unless
    `strict_min` / `strict_max`).

    `finite` rejects NaN and +-inf; with ``finite=False`` +-inf pass if the bounds allow
    them, NaN never does. Errors read ``{key} must be in [0, 1)`` (two bounds),
    ``a finite number >= 0`` / ``a number > 0`` (one bound) or ``a finite number``."""
    if value is None and optional:
        return None
    ok = is_real(value) and (math.isfinite(value) if finite else not math.isnan(value))
    if not ok or not _in_range(value, minimum, maximum, strict_min, strict_max):
        text = _range_text(minimum, maximum, strict_min, strict_max)
        noun = "a finite number" if finite else "a number"
        if minimum is not None and maximum is not None:
            what = f"in {text}"
        else:
            what = f"{noun} {text}".rstrip()
        raise _fail(key, what, value, optional)
    return float(value)


def in_range(value, key: str, minimum=None, maximum=None, strict_min: bool = False, strict_max: bool = False):
    """`value` (already known to be a number) within the bounds, else
    ``{key} must be > 0, got -0.5`` or ``{key} must be in (0, 1], got 1.1``."""
    if not _in_range(value, minimum, maximum, strict_min, strict_max):
        what = _range_text(minimum, maximum, strict_min, strict_max) or "a number"
        raise ValueError(
            f"{key} must be {'in ' if minimum is not None and maximum is not None else ''}{what}, got {value!r}"
        )
    return value


def interval(
    value, key: str, kind: type = float, minimum=None, strict_min: bool = False, *, allow_float: bool = True
) -> tuple:
    """A ``[low, high]`` pair (list, tuple or other non-string sequence of two numbers, not
    bools) with minimum <= low <= high, as a tuple of `kind` (float or int).

    ``kind=int`` needs integral values: 3 and, with `allow_float`, 3.0 (any float-like
    number with an integral value), else only integers. high may be inf for floats. Errors:
    ``{key} must be a pair [low, high] of numbers``, ``{key} must hold integers``,
    ``{key} must satisfy 0 <= low <= high``, each with ``got [...]``."""
    if kind not in (float, int):
        raise TypeError(f"interval: kind must be float or int, got {kind!r}")
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
        or len(value) != 2
        or not all(is_real(x) for x in value)
    ):
        raise ValueError(f"{key} must be a pair [low, high] of numbers, got {value!r}")
    low, high = value
    if kind is int and not all(float(x).is_integer() if allow_float else is_integral(x, False) for x in value):
        raise ValueError(f"{key} must hold integers, got {value!r}")
    if minimum is None:
        ok, bound = low <= high, ""
    else:
        ok = (minimum < low if strict_min else minimum <= low) and low <= high
        bound = f"{_bound(minimum)} {'<' if strict_min else '<='} "
    if not ok:
        raise ValueError(f"{key} must satisfy {bound}low <= high, got {value!r}")
    return (kind(low), kind(high))


def number_list(value, key: str, kind: type = float, minimum=None, strict_min: bool = False) -> tuple:
    """A non-empty list of numbers (a single number is a list of one), each a `kind` (int: an
    integer, not a bool; float: a finite number) within the bound, as a tuple of `kind`.
    Errors read ``{key} must be a non-empty list of positive integers, got [...]``."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if kind is int:
        ok = [is_integral(x, False) and _in_range(x, minimum, None, strict_min, False) for x in items]
        noun = (
            "positive integers"
            if minimum == 1 and not strict_min
            else f"integers {_range_text(minimum, None, strict_min, False)}"
        )
    else:
        ok = [is_real(x) and math.isfinite(x) and _in_range(x, minimum, None, strict_min, False) for x in items]
        noun = (
            "positive numbers"
            if minimum == 0 and strict_min
            else f"numbers {_range_text(minimum, None, strict_min, False)}"
        )
    if not items or not all(ok):
        raise ValueError(f"{key} must be a non-empty list of {noun.rstrip()}, got {items!r}")
    return tuple(kind(x) for x in items)
