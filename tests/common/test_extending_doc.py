"""The registry lines docs/extending.md shows ("Adding a built-in mechanism") are valid `Entry`
lines in their family's registry module, and name a mechanism the registry does not hold yet."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from algorithms.common.registry import Entry

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
SECTION = DOC.read_text().split("## Adding a built-in mechanism", 1)[1]
BULLETS = dict(re.findall(r"^- \*\*(\w+)\*\*: (.*?)(?=^- \*\*|^\S)", SECTION, flags=re.S | re.M))


@pytest.mark.parametrize("family", ["spot", "iaas", "core", "auction", "sow"])
def test_the_docs_registry_line_is_a_valid_entry_of_the_family(family):
    line = re.search(r"`(Entry\(.*?\)),`", " ".join(BULLETS[family].split()), flags=re.S)[1]
    registry = importlib.import_module(f"algorithms.{family}.registry")
    entry = eval(line.replace("( ", "("), vars(registry))  # the names the registry module has in scope
    assert isinstance(entry, Entry) and entry.name not in registry.REGISTRY
