"""Strict construction of the model dataclasses from config mappings."""
from __future__ import annotations

from dataclasses import fields
from typing import Mapping, Sequence


def reject_unknown_keys(cls: type, d: Mapping, section: str, context: str = "", also_known: Sequence[str] = ()) -> None:
    """Raise ValueError naming every key of ``d`` that is not a field of ``cls``."""
    known = [*also_known, *(f.name for f in fields(cls))]
    unknown = sorted(str(k) for k in d if k not in known)
    if unknown:
        raise ValueError(
            f"{section}: unknown key(s) {', '.join(repr(k) for k in unknown)}{context} (known: {', '.join(known)})"
        )
