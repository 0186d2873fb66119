"""summary.csv's rows: per cell and mechanism, the Student-t interval of each summarised column.

The groups are computed together, a NumPy reduction over every group of the same size at
once, rather than a Python call per group (a grid of 100,000 cells has 300,000 groups); each
group's numbers are those ``statistics.student_t_interval`` gives it on its own, bit for bit
(``tests/engine/test_summary.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .cells import Cell
from .statistics import t_quantile

_STATS = ("mean", "std", "ci95_low", "ci95_high")


def summarize(frame: pd.DataFrame, cells: list[Cell], params: bool = True) -> pd.DataFrame:
    """One row per cell and mechanism: the cell, its overrides' values (unless ``params`` is
    false: the store types those once for the sweep), the mechanism and n, then mean, std and
    95% CI (Student t) of `utility` and of the family's ``SUMMARY_COLUMNS`` where a mechanism has
    them, then `<column>_rate` for its ``RATE_COLUMNS`` (sweep/family.py). Groups come in the
    order of their first row; the columns in the order in which the groups first have them."""
    if not len(frame):
        return pd.DataFrame()
    by_index = {cell.index: cell for cell in cells}
    codes, keys = pd.factorize(pd.MultiIndex.from_arrays([frame["cell_index"], frame["mechanism"]]), sort=False)
    groups = Groups(codes, len(keys))
    group_cells = [by_index[index] for index in keys.get_level_values(0)]
    columns: dict[str, np.ndarray] = {}  # a computed column, NaN where a group has no value
    present: list[tuple[list[str], np.ndarray]] = []  # (output columns, the groups that have them)

    specs = {id(cell.spec): cell.spec for cell in group_cells}
    spec_of = np.array([id(cell.spec) for cell in group_cells])
    metrics = list(dict.fromkeys(m for spec in specs.values() for m in ("utility", *spec.summary_columns)))
    rates = list(dict.fromkeys(r for spec in specs.values() for r in spec.rate_columns))
    for metric in metrics:
        if metric not in frame:
            continue
        wanted = _groups_of(specs, spec_of, lambda spec: metric == "utility" or metric in spec.summary_columns)
        values = pd.to_numeric(frame[metric], errors="coerce").to_numpy(dtype=float)
        stats, has = groups.intervals(values)
        if metric != "utility":
            has &= wanted
        else:
            has = wanted.copy()
        names = [f"{metric}_{stat}" for stat in _STATS]
        for name, column in zip(names, stats):
            columns[name] = np.where(has, column, np.nan)
        present.append((names, has))
    for rate in rates:
        if rate not in frame:
            continue
        wanted = _groups_of(specs, spec_of, lambda spec: rate in spec.rate_columns)
        column, has = groups.rates(frame[rate].to_numpy())
        columns[f"{rate}_rate"] = np.where(has & wanted, column, np.nan)
        present.append(([f"{rate}_rate"], has & wanted))

    if params:
        base: list[dict[str, Any]] = [
            {"cell": cell.name, "cell_index": index, **cell.params, "mechanism": mechanism, "n": int(n)}
            for cell, index, mechanism, n in zip(
                group_cells, keys.get_level_values(0), keys.get_level_values(1), groups.counts
            )
        ]
        table = pd.DataFrame(base)
    else:
        table = pd.DataFrame(
            {
                "cell": [cell.name for cell in group_cells],
                "cell_index": keys.get_level_values(0).to_numpy(dtype=np.int64),
                "mechanism": keys.get_level_values(1).tolist(),
                "n": groups.counts.astype(np.int64),
            }
        )
    order = _column_order(present)
    extra = pd.DataFrame({name: columns[name] for name in order}, index=table.index)
    return pd.concat([table, extra], axis=1)


def _groups_of(specs: dict, spec_of: np.ndarray, test) -> np.ndarray:
    keep = [key for key, spec in specs.items() if test(spec)]
    return np.isin(spec_of, keep)


def _column_order(present: list[tuple[list[str], np.ndarray]]) -> list[str]:
    """The output columns in the order a row-by-row build gives them: each group's columns in
    their own order, appended at the first group that has them."""
    if not present:
        return []
    matrix = np.column_stack([has for _, has in present])
    patterns, first = np.unique(matrix, axis=0, return_index=True)
    order: dict[str, None] = {}
    for row in patterns[np.argsort(first)]:
        for (names, _), has in zip(present, row):
            if has:
                order.update(dict.fromkeys(names))
    return list(order)


class Groups:
    """Rows grouped by ``codes`` (0 .. count - 1), reduced group by group with NumPy."""

    def __init__(self, codes: np.ndarray, count: int):
        self.order = np.argsort(codes, kind="stable")
        self.counts = np.bincount(codes, minlength=count)
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    def _by_size(self):
        for n in np.unique(self.counts):
            members = np.flatnonzero(self.counts == n)
            rows = self.order[self.starts[members][:, None] + np.arange(n)]
            yield int(n), members, rows

    def intervals(self, values: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """Per group: (mean, std, low, high) as ``student_t_interval`` computes them, and whether
        the group has a value that is not NaN."""
        size = len(self.counts)
        mean, std, half = np.full(size, np.nan), np.zeros(size), np.zeros(size)
        has = np.zeros(size, dtype=bool)
        for n, members, rows in self._by_size():
            block = values[rows]  # C-contiguous: each row is reduced as a 1-D array would be
            mean[members] = np.mean(block, axis=1)
            has[members] = ~np.isnan(block).all(axis=1)
            if n > 1:
                spread = np.std(block, axis=1, ddof=1)
                std[members] = spread
                half[members] = t_quantile(n) * spread / np.sqrt(n)  # t_half_width's arithmetic
        return (mean, std, mean - half, mean + half), has

    def rates(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per group: the share of true values (NaN and None left out), and whether it has any."""
        size = len(self.counts)
        rate, has = np.full(size, np.nan), np.zeros(size, dtype=bool)
        if values.dtype == np.bool_:
            numbers = values.astype(float)
        else:
            numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float)
        for _, members, rows in self._by_size():
            block = numbers[rows]
            known = ~np.isnan(block)
            counted = known.sum(axis=1)
            has[members] = counted > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                rate[members] = np.where(known, block, 0.0).sum(axis=1) / counted
        return rate, has
