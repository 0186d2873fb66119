"""Check or regenerate the pinned numbers of the test suite.

    python -m tests.pinned_numbers --check   # recompute, list what moved, exit 1 if anything did
    python -m tests.pinned_numbers --write   # recompute and rewrite every pinned_numbers.json

Each family with pinned numbers has a tests/<family>/pinned_cases.py whose CASES map every entry
of its pinned_numbers.json to the function that computes it; its test_pinned_numbers.py calls
the same functions, so what this script writes is what the tests compare against. --check uses
the tests' tolerance (the module's REL for floats, exact for everything else); --write rewrites a
value whenever it changed at all and prints every change, so a moved number shows in the diff
and its commit can say why it moved."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ("tests.auction.pinned_cases", "tests.core.pinned_cases")


def compute(cases) -> dict:
    """Every case's numbers, in the order of `cases`, which is the order of the file."""
    return {name: function() for name, function in cases.items()}


def same(pinned, computed, rel: float | None) -> bool:
    """Whether a computed leaf matches its pinned value: floats within `rel` as the tests'
    pytest.approx does, everything else (and floats when `rel` is None) exactly."""
    if rel is not None and isinstance(pinned, float) and isinstance(computed, float):
        return computed == pytest.approx(pinned, rel=rel)
    return type(pinned) is type(computed) and pinned == computed


def differences(pinned, computed, rel: float | None, path: str = "") -> list[str]:
    """One line per leaf that differs between two nested dicts, named by its dotted path."""
    if not (isinstance(pinned, dict) and isinstance(computed, dict)):
        if same(pinned, computed, rel):
            return []
        return [f"{path}: pinned {pinned!r}, computed {computed!r}"]
    lines = []
    for key in [*pinned, *(k for k in computed if k not in pinned)]:
        where = f"{path}.{key}" if path else str(key)
        if key not in computed:
            lines.append(f"{where}: pinned {pinned[key]!r}, no longer computed")
        elif key not in pinned:
            lines.append(f"{where}: not pinned, computed {computed[key]!r}")
        else:
            lines.extend(differences(pinned[key], computed[key], rel, where))
    return lines


def render(numbers: dict) -> str:
    """The file's text: json keeps a float's repr, so every value keeps its full precision."""
    return json.dumps(numbers, indent=2, ensure_ascii=False) + "\n"


def read(path: Path) -> dict:
    """The pinned numbers in `path`, or none when the file does not exist yet."""
    return json.loads(path.read_text()) if path.exists() else {}


def check(module) -> list[str]:
    """The differences, at the tests' tolerance, between a family's file and its computation."""
    return differences(read(module.PINNED_FILE), compute(module.CASES), getattr(module, "REL", None))


def write(module) -> list[str]:
    """Rewrite a family's file from its computation; return every change, however small."""
    pinned, computed = read(module.PINNED_FILE), compute(module.CASES)
    text = render(computed)
    if not module.PINNED_FILE.exists() or module.PINNED_FILE.read_text() != text:
        module.PINNED_FILE.write_text(text)
    return differences(pinned, computed, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.pinned_numbers", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="recompute and list differences; exit 1 if any")
    mode.add_argument("--write", action="store_true", help="recompute and rewrite the pinned_numbers.json files")
    args = parser.parse_args(argv)
    action = write if args.write else check
    found = False
    for name in FAMILIES:
        module = importlib.import_module(name)
        label = module.PINNED_FILE.relative_to(ROOT)
        lines = action(module)
        found = found or bool(lines)
        verb = "change(s) written" if args.write else "difference(s)"
        print(f"{label}: {len(lines)} {verb}" if lines else f"{label}: unchanged")
        for line in lines:
            print(f"  {line}")
    return 1 if found and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
