"""The parent run's comparison of mechanisms, as MLflow shows it (docs/mlflow.md): the wide cell x
mechanism table (mean utility ± its 95% half-width per mechanism, and the best), the long table,
and the mechanism names written as MLflow metric keys with their map back. Pure functions of
``summary.csv``'s frame; ``sweep/tracking.py`` logs what they build."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

_ALLOWED = re.compile(r"[^A-Za-z0-9_\-. /:]")
_KEY_PUNCTUATION = str.maketrans({"(": " ", ")": " ", ",": " ", "=": ":", "/": " "})
WIDE_TABLE = "utility_by_cell.json"
LONG_TABLE = "summary_table.json"
NAMES_FILE = "mechanism_names.json"


def metric_key(*parts: str) -> str:
    """A metric name MLflow accepts: mechanism names like ``AHAP(w=3,v=2)`` become ``AHAP_w3_v2``."""
    text = "/".join(parts)
    text = text.replace("(", "_").replace(")", "").replace(",", "_").replace("=", "")
    return _ALLOWED.sub("_", text)


def mechanism_key(name: str) -> str:
    """The mechanism's name as MLflow takes it in a metric name: MLflow 3.17 accepts letters,
    digits, ``_ - . : /`` and spaces, so ``AHAP(w=3,v=2,sigma=0.5)`` becomes
    ``AHAP w:3 v:2 sigma:0.5`` (``=`` -> ``:``; brackets, commas and ``/`` -> spaces), which
    still reads as the name; ``OD-Only`` stays ``OD-Only``."""
    text = " ".join(_ALLOWED.sub("_", name.translate(_KEY_PUNCTUATION)).split())
    return "_" + text if text in ("", ".", "..") else text


def mechanism_keys(names: Sequence[str]) -> dict[str, str]:
    """Name -> metric key for a sweep's mechanisms, one key per name: two names that read alike
    after ``mechanism_key`` get ``_2``, ``_3`` ... (``mechanism_names.json`` maps them back)."""
    keys: dict[str, str] = {}
    taken: set[str] = set()
    for name in dict.fromkeys(names):
        key, count = mechanism_key(name), 1
        while key in taken:
            count += 1
            key = f"{mechanism_key(name)}_{count}"
        keys[name] = key
        taken.add(key)
    return keys


def table_header(name: str) -> str:
    """A column name MLflow's table viewer shows: it reads ``a.b`` as a nested path and shows
    the column empty (seen in the UI), so grid keys write ``job/deadline`` and mechanism names
    ``sigma=0·5``."""
    return name.replace(".", "·")


def interval_text(mean: float, half: float, n: float) -> str:
    """``104.8 ± 1.2``: the mean to the precision of its 95% half-width (two significant digits)."""
    if pd.isna(mean):
        return ""
    if pd.isna(half) or n < 2:
        return f"{mean:.4g} (n={int(n)})"
    if half == 0:
        return f"{mean:g} ± 0"
    digits = min(max(0, 1 - math.floor(math.log10(half))), 8)
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def wide_table(summary: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """One row per cell (its grid ``keys``, by their last part: the viewer's columns show about
    15 characters), one column per mechanism: mean utility ± the 95%
    half-width as text, then ``best``: the best mechanism, ``A ≈ B`` when the two best 95%
    intervals overlap (the ranking is not settled), ``tie: A, B`` when equal. Text rather than
    number columns: the UI's table viewer has room for a column per mechanism but not three,
    and the numbers stay in ``summary.csv`` and ``summary_table.json``. Built from plain lists,
    a cell at a time (a DataFrame per cell took 99 s for 100,000 cells)."""
    keys = [key for key in keys if key in summary]
    headers = dict(zip(keys, short_keys(keys)))
    if not len(summary):
        return pd.DataFrame()
    ordered = summary.sort_values("cell_index", kind="stable")
    column = {name: ordered[name].tolist() for name in dict.fromkeys(["cell_index", *keys, *_INTERVAL])}
    cells, mechanisms, means, lows, highs, counts = (column[name] for name in ("cell_index", *_INTERVAL))
    rows = []
    start = 0
    while start < len(cells):
        stop = start + 1
        while stop < len(cells) and cells[stop] == cells[start]:
            stop += 1
        row = {headers[key].replace(".", "/"): column[key][start] for key in keys}
        for i in range(start, stop):
            row[table_header(str(mechanisms[i]))] = interval_text(means[i], (highs[i] - lows[i]) / 2, counts[i])
        row["best"] = best_text(best_of(mechanisms[start:stop], means[start:stop], lows[start:stop], highs[start:stop]))
        rows.append(row)
        start = stop
    return pd.DataFrame(rows)


_INTERVAL = ("mechanism", "utility_mean", "utility_ci95_low", "utility_ci95_high", "n")


def best_text(best: dict[str, str | float]) -> str:
    """The wide table's ``best`` column from ``best_mechanism``."""
    if not best:
        return ""
    name = str(best["best_mechanism"])
    overlaps = best.get("best_overlaps_second") == "true" and "runner_up" in best
    return f"{name} ≈ {best['runner_up']}" if overlaps else name


def long_table(summary: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``summary.csv`` as the UI's table viewer shows it: the grid keys, the mechanism and its
    utility first (the viewer has room for about seven columns), the cell's long name dropped
    (its keys are the first columns), ``.`` in names written ``/``."""
    first = [key for key in keys if key in summary] + [
        "mechanism",
        "n",
        "utility_mean",
        "utility_ci95_low",
        "utility_ci95_high",
    ]
    first = [column for column in first if column in summary]
    rest = [column for column in summary.columns if column not in first and column != "cell"]
    table = summary[first + rest]
    return table.rename(columns={column: column.replace(".", "/") for column in table.columns})


def best_mechanism(summary: pd.DataFrame) -> dict[str, str | float]:
    """The cell's best mechanism by mean utility, with its margin over the second and whether
    the two are tied or their 95% intervals overlap (tags ``best_*``, metric ``best_margin``;
    ``runner_up`` names the second)."""
    if not len(summary) or "utility_mean" not in summary:
        return {}
    return best_of(*(summary[name].tolist() for name in _INTERVAL[:4]))


def best_of(mechanisms: list, means: list, lows: list, highs: list) -> dict[str, str | float]:
    """``best_mechanism`` of one cell's rows given as lists (the mechanisms in summary order)."""
    if not mechanisms:
        return {}
    # ranked by mean, highest first, NaN last, equal means in their order (pandas' stable sort)
    ranked = sorted(
        range(len(means)), key=lambda i: (math.isnan(means[i]), -means[i] if not math.isnan(means[i]) else 0)
    )
    first = ranked[0]
    best: dict[str, str | float] = {"best_mechanism": str(mechanisms[first])}
    if len(ranked) > 1:
        second = ranked[1]
        tied = [str(mechanisms[i]) for i in ranked if means[i] == means[first]]
        best.update(
            {
                "runner_up": str(mechanisms[second]),
                "best_margin": float(means[first] - means[second]),
                "best_tie": "true" if len(tied) > 1 else "false",
                "best_overlaps_second": "true" if float(highs[second]) >= float(lows[first]) else "false",
            }
        )
        if len(tied) > 1:
            best["best_mechanism"] = "tie: " + ", ".join(tied)
    return best


def short_keys(keys: Sequence[str]) -> list[str]:
    """Grid keys by their last part (``job.deadline`` -> ``deadline``), in full where two share it."""
    last = [key.split(".")[-1] for key in keys]
    return [short if last.count(short) == 1 else key for key, short in zip(keys, last)]


def renamed_metrics(values: dict[str, float], names: dict[str, str]) -> dict[str, float]:
    """The parent's metrics with ``utility_mean/<metric_key(name)>`` (the engine's) renamed to
    ``utility_mean/<mechanism_key(name)>``, the name MLflow shows for the mechanism."""
    renames = {metric_key("utility_mean", name): f"utility_mean/{key}" for name, key in names.items()}
    return {renames.get(key, key): value for key, value in values.items()}
