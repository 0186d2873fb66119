"""summary.csv's rows computed for every group at once equal those of one group at a time."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings, strategies as st

from sweep.cells import Cell
from sweep.family import load_family
from sweep.statistics import student_t_interval
from sweep.summary import summarize

SPOT = load_family("algorithms.spot.family")


def one_group_at_a_time(frame: pd.DataFrame, cells: list[Cell]) -> pd.DataFrame:
    """The summary built row by row, each group through ``student_t_interval`` on its own."""
    by_index = {cell.index: cell for cell in cells}
    rows = []
    for (cell_index, mechanism), group in frame.groupby(["cell_index", "mechanism"], sort=False):
        cell = by_index[cell_index]
        row: dict[str, Any] = {
            "cell": cell.name,
            "cell_index": cell_index,
            **cell.params,
            "mechanism": mechanism,
            "n": len(group),
        }
        for metric in ("utility", *cell.spec.summary_columns):
            if metric not in frame:
                continue
            values = pd.to_numeric(group[metric], errors="coerce").to_numpy(dtype=float)
            if metric != "utility" and np.isnan(values).all():
                continue
            interval = student_t_interval(values)
            row |= {
                f"{metric}_mean": interval.mean,
                f"{metric}_std": interval.std,
                f"{metric}_ci95_low": interval.low,
                f"{metric}_ci95_high": interval.high,
            }
        for name in cell.spec.rate_columns:
            if name in frame:
                values = group[name]
                if values.dtype == np.bool_:
                    row[f"{name}_rate"] = float(values.sum()) / len(values)
                elif not values.isna().all():
                    row[f"{name}_rate"] = float(pd.to_numeric(values, errors="coerce").mean())
        rows.append(row)
    return pd.DataFrame(rows)


def make_cells(count: int, spec) -> list[Cell]:
    cells = []
    for index in range(count):
        world = {"family": {"name": spec.name, "module": spec.module}, "mechanisms": ["A", "B"], "replicates": 1}
        cell = Cell(index, f"x={index}", {"x": index}, str(index), world, "h", "w")
        cell.__dict__["spec"] = spec
        cells.append(cell)
    return cells


@st.composite
def frames(draw):
    spec = dataclasses.replace(SPOT, summary_columns=("cost", "extra"), rate_columns=("met_deadline",))
    cells = make_cells(draw(st.integers(1, 4)), spec)
    rows = []
    for cell in cells:
        for mechanism in draw(st.permutations(["A", "B", "C"]))[: draw(st.integers(1, 3))]:
            for replicate in range(draw(st.integers(1, 6))):
                rows.append(
                    {
                        "cell": cell.name,
                        "cell_index": cell.index,
                        "replicate": replicate,
                        "mechanism": mechanism,
                        "utility": draw(st.floats(-1e6, 1e6, allow_nan=False)),
                        "cost": draw(st.one_of(st.none(), st.floats(0, 1e3, allow_nan=False))),
                        "extra": None if mechanism == "A" else draw(st.floats(-5, 5, allow_nan=False)),
                        "met_deadline": draw(st.booleans()),
                    }
                )
    frame = pd.DataFrame(rows)
    order = draw(st.permutations(range(len(frame))))
    return frame.iloc[list(order)].reset_index(drop=True), cells


@settings(max_examples=60, deadline=None)
@given(frames())
def test_every_group_at_once_equals_one_group_at_a_time(case):
    frame, cells = case
    expected = one_group_at_a_time(frame, cells)
    got = summarize(frame, cells)
    assert list(got.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(got, expected, check_exact=True, check_dtype=False)


def test_rates_of_a_column_with_missing_values_leave_them_out():
    spec = dataclasses.replace(SPOT, summary_columns=(), rate_columns=("met_deadline",))
    cells = make_cells(1, spec)
    frame = pd.DataFrame(
        {
            "cell": "x=0",
            "cell_index": 0,
            "replicate": [0, 1, 2],
            "mechanism": "A",
            "utility": [1.0, 2.0, 6.0],
            "met_deadline": [True, None, False],
        }
    )
    row = summarize(frame, cells).iloc[0]
    assert row["met_deadline_rate"] == 0.5
    assert row["utility_mean"] == 3.0 and row["n"] == 3


@settings(max_examples=40, deadline=None)
@given(frames())
def test_without_params_the_same_rows_without_the_override_columns(case):
    frame, cells = case
    keys = {key for cell in cells for key in cell.params}
    whole = summarize(frame, cells)
    expected = whole.drop(columns=[c for c in whole.columns if c in keys])
    got = summarize(frame, cells, params=False)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert (
        pa.Table.from_pandas(got, preserve_index=False).schema
        == pa.Table.from_pandas(expected, preserve_index=False).schema
    )
