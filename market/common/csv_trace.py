"""Reading the CSV traces of `data/` (spot markets, arrivals): the header check and
per-row values, with errors that name the file and line (TraceError)."""
from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator, Sequence


class TraceError(ValueError):
    """A trace file that cannot be used; `path` and `line` (1-based, or None) locate it."""

    def __init__(self, path, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")


def parse_int(text: str) -> int | None:
    """An integer written as `3` or `3.0`; None for anything else."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        x = float(text)
    except ValueError:
        return None
    return int(x) if math.isfinite(x) and x.is_integer() else None


def read_rows(path, required: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: stripped text}) for each data row; other columns are ignored.
    Raises TraceError for a missing file, an empty file, a missing column or value, and a file
    without data rows."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise TraceError(path, None, "file not found")
    rows = 0
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames
        if not header:
            raise TraceError(path, None, "empty file (no header row)")
        missing = [c for c in required if c not in header]
        if missing:
            raise TraceError(path, 1, f"missing column(s) {', '.join(repr(c) for c in missing)} "
                                      f"(found: {', '.join(repr(c) for c in header)})")
        for row in reader:
            values = {}
            for column in required:
                text = row.get(column)
                if text is None or text.strip() == "":
                    raise TraceError(path, reader.line_num, f"missing value for column '{column}'")
                values[column] = text.strip()
            rows += 1
            yield reader.line_num, values
    if not rows:
        raise TraceError(path, None, "no data rows after the header")
