"""summary.csv's text as pandas writes it (``DataFrame.to_csv(index=False)``), built column by
column: a grid of 100,000 cells writes 300,000 summary rows, and pandas spent 2.5 s of them
formatting floats one by one.

Each float column formats each distinct value once, with ``repr``: the text NumPy's
``astype(str)`` gives, which is what pandas writes when no ``float_format`` is set. Strings are
quoted as the ``csv`` module's QUOTE_MINIMAL quotes them. A frame with a column of another kind
(nullable integers, categories, dates, mixed objects), a carriage return in a string (whether
``csv`` quotes it depends on Python's version) or fewer than two columns is left to pandas:
``csv_text`` returns None.
"""

from __future__ import annotations

import os
from typing import TextIO

import numpy as np
import pandas as pd

_SPECIAL = (",", '"', "\n")
ROWS_AT_ONCE = 10_000  # a row's text is about 22 short strings: 10,000 rows hold some 15 MB


def write_csv(frame: pd.DataFrame, out: TextIO, header: bool) -> None:
    """Write ``frame.to_csv(index=False, header=header)``'s text to ``out``, ``ROWS_AT_ONCE``
    rows at a time."""
    for start in range(0, max(len(frame), 1), ROWS_AT_ONCE):
        part = frame.iloc[start : start + ROWS_AT_ONCE]
        text = csv_text(part, header and start == 0)
        if text is None:
            part.to_csv(out, index=False, header=header and start == 0)
        else:
            out.write(text)


def csv_text(frame: pd.DataFrame, header: bool) -> str | None:
    """``frame.to_csv(index=False, header=header)``'s text, or None where this module does
    not cover a column."""
    names = list(frame.columns)
    if len(names) < 2 or not all(isinstance(name, str) and "\r" not in name for name in names):
        return None
    columns = []
    for name in names:
        column = _column_text(frame[name])
        if column is None:
            return None
        columns.append(column)
    end = os.linesep
    lines = [",".join(row) + end for row in zip(*columns)]
    if header:
        lines.insert(0, ",".join(map(_quoted, names)) + end)
    return "".join(lines)


def _column_text(series: pd.Series) -> list[str] | None:
    dtype = series.dtype
    if isinstance(dtype, np.dtype):
        if dtype == np.float64:
            return _floats(series.to_numpy())
        if dtype.kind in "iub":
            return list(map(str, series.to_numpy().tolist()))
        if dtype.kind != "O":
            return None
    elif not isinstance(dtype, pd.StringDtype):
        return None
    missing = series.isna().to_numpy()
    texts: dict[str, str] = {}
    out = []
    for value, absent in zip(series.to_numpy(dtype=object).tolist(), missing.tolist()):
        if absent:
            out.append("")
        elif type(value) is not str or "\r" in value:
            return None
        else:
            text = texts.get(value)
            if text is None:
                text = texts[value] = _quoted(value)
            out.append(text)
    return out


def _floats(values: np.ndarray) -> list[str]:
    codes, uniques = pd.factorize(values.view(np.int64))  # by bits: 0.0 and -0.0 print apart
    texts = np.array(list(map(repr, uniques.view(np.float64).tolist())), dtype=object)
    out = texts[codes] if len(texts) else np.empty(len(values), dtype=object)
    out[np.isnan(values)] = ""
    return out.tolist()


def _quoted(text: str) -> str:
    if any(char in text for char in _SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text
