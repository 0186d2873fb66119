"""Reading the CSV traces of `data/` (spot markets, arrivals): the header check and
per-row values, with errors that name the file and line (TraceError).

A file is UTF-8 text with or without a byte-order mark (spreadsheets write one), with LF or
CRLF line endings; the values read are the same either way.
"""

from __future__ import annotations

import codecs
import csv
import io
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


def read_text(path) -> str:
    """The file's text: UTF-8, a leading byte-order mark dropped. TraceError for a path that is
    missing or not a regular file, and for bytes that are not UTF-8 (with the line and column)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise TraceError(path, None, "is a directory, not a CSV file")
    if not os.path.isfile(path):
        raise TraceError(path, None, "file not found")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as err:
        raise TraceError(path, None, f"cannot be read ({err.strerror or err})") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise TraceError(
            path, line, f"not UTF-8 text (byte 0x{data[err.start]:02x} in column {column}); save the file as UTF-8"
        ) from None


def read_rows(path, required: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: stripped text}) for each data row; other columns are ignored.
    Raises TraceError for a missing or unreadable file, an empty file, a missing column or
    value, and a file without data rows."""
    path = os.fspath(path)
    text = read_text(path)
    rows = 0
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames
    if not header:
        raise TraceError(path, None, "empty file (no header row)")
    header = [name.strip() for name in header]
    reader.fieldnames = header
    missing = [c for c in required if c not in header]
    if missing:
        raise TraceError(
            path,
            1,
            f"missing column(s) {', '.join(repr(c) for c in missing)} (found: {', '.join(repr(c) for c in header)})",
        )
    try:
        for row in reader:
            values = {}
            for column in required:
                text_value = row.get(column)
                if text_value is None or text_value.strip() == "":
                    raise TraceError(path, reader.line_num, f"missing value for column '{column}'")
                values[column] = text_value.strip()
            rows += 1
            yield reader.line_num, values
    except csv.Error as err:
        raise TraceError(path, reader.line_num, f"not a CSV row ({err})") from None
    if not rows:
        raise TraceError(path, None, "no data rows after the header")


def check_slot(path, line: int, text: str, expected: int) -> None:
    """A `slot` column must count 0, 1, 2, ...: TraceError naming file and line otherwise."""
    if parse_int(text) != expected:
        raise TraceError(path, line, f"slot {text!r}, expected {expected} (slots must be consecutive integers from 0)")


def positive_number(path, line: int, column: str, text: str) -> float:
    """A finite number > 0 (a price): TraceError naming file, line and column otherwise."""
    try:
        value = float(text)
    except ValueError:
        raise TraceError(path, line, f"{column} {text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise TraceError(path, line, f"{column} {text!r} must be > 0")
    return value
