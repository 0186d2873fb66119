"""docs/architecture.md states the family contract of sweep/family.py, name for name."""

from __future__ import annotations

import re
from pathlib import Path

from sweep.family import OPTIONAL_NAMES, REQUIRED_NAMES

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def contract_table() -> dict[str, str]:
    text = DOC.read_text()
    section = text[text.index("## The family contract") :]
    section = section[: section.index("\n## ", 4)]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `(\w+)(?:\([^`]*\))?` \| (yes|no[^|]*) \|", line)
        if match:
            rows[match[1]] = match[2]
    return rows


def test_the_contract_table_lists_every_name_of_the_code():
    rows = contract_table()
    assert list(rows) == [*REQUIRED_NAMES, *OPTIONAL_NAMES]
    assert all(rows[name] == "yes" for name in REQUIRED_NAMES)
    assert all(rows[name].startswith("no") for name in OPTIONAL_NAMES)
