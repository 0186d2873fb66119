"""A user's own mechanism, named by import path in a sweep's `mechanisms`:
`package.module:Class` or `package.module:Class(key=value,...)` (docs/extending.md).

The module is imported like any Python module (its folder on `PYTHONPATH`, or the directory the
sweep runs from: a local Ray's workers share the driver's paths and working directory); the
class must subclass the family's mechanism interface (spot: `SpotPolicy`), or, when that
interface is a runtime-checkable Protocol (core: `Allocator`), define its methods; it is built
with the name's parameters as keyword arguments. The family checks all of it in `prepare`,
before any work, so a missing module, a missing class, a class of another interface or a parameter its
constructor refuses is one error naming the mechanism. Seeds, results and MLflow treat the name
like any other: the rows carry it as written.
"""

from __future__ import annotations

import importlib
import typing
from typing import Any


def is_import_path(kind: str) -> bool:
    """Whether a parsed name's kind is `package.module:Class` rather than a built-in name."""
    return ":" in kind


def protocol_methods(base: type) -> tuple[str, ...] | None:
    """The methods a runtime-checkable Protocol `base` asks for (its data members, such as a
    `name` the family sets, are not checked); None when `base` is an ordinary class."""
    if not (getattr(base, "_is_protocol", False) and getattr(base, "_is_runtime_protocol", False)):
        return None
    methods: dict[str, None] = {}
    for klass in reversed(base.__mro__):
        if klass in (object, typing.Protocol, typing.Generic) or not getattr(klass, "_is_protocol", False):
            continue
        methods.update((name, None) for name, value in vars(klass).items() if callable(value) and name[0] != "_")
    return tuple(methods)


def load_class(kind: str, base: type, where: str = "mechanisms") -> type:
    """The class `kind` names, checked to subclass `base` (or, `base` a runtime-checkable
    Protocol, to define its methods); ValueError naming what is wrong."""
    module_name, _, attribute = kind.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # ImportError, or whatever the module raises while it loads
        raise ValueError(
            f"{where}: {kind}: cannot import the module '{module_name}' ({type(err).__name__}: {err}); "
            "is its folder on PYTHONPATH?"
        ) from None
    found = getattr(module, attribute, None)
    if found is None:
        raise ValueError(f"{where}: {kind}: the module '{module_name}' defines no '{attribute}'")
    methods = protocol_methods(base)
    if methods is not None:
        missing = [name for name in methods if not callable(getattr(found, name, None))]
        if not isinstance(found, type) or missing:
            why = f"it defines no {', '.join(missing)}" if isinstance(found, type) else "it is not a class"
            raise ValueError(
                f"{where}: {kind}: '{attribute}' does not implement {base.__module__}.{base.__qualname__}, "
                f"the family's mechanism interface ({why}; docs/extending.md)"
            )
    elif not isinstance(found, type) or not issubclass(found, base):
        raise ValueError(
            f"{where}: {kind}: '{attribute}' is not a subclass of {base.__module__}.{base.__qualname__}, "
            "the family's mechanism interface (docs/extending.md)"
        )
    return found


def build(kind: str, params: dict[str, Any], base: type, where: str = "mechanisms") -> Any:
    """An instance of the class `kind` names, built with `params`; ValueError when its constructor
    refuses them (an unknown key, a value it checks)."""
    cls = load_class(kind, base, where)
    try:
        return cls(**params)
    except (TypeError, ValueError) as err:
        given = ", ".join(f"{key}={value!r}" for key, value in params.items()) or "no parameters"
        raise ValueError(f"{where}: {kind}: its constructor refused {given} ({err})") from None
