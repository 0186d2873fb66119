"""The parent run's wide table, built from lists a cell at a time, equals the table built with a
DataFrame per cell (pandas' stable sort for the ranking), ties and missing means included."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from sweep.comparison_tables import best_text, interval_text, short_keys, table_header, wide_table


def best_by_pandas(cell: pd.DataFrame) -> dict:
    ranked = cell.sort_values("utility_mean", ascending=False, kind="stable")
    first = ranked.iloc[0]
    best = {"best_mechanism": str(first["mechanism"])}
    if len(ranked) > 1:
        second = ranked.iloc[1]
        tied = list(ranked.loc[ranked["utility_mean"] == first["utility_mean"], "mechanism"].astype(str))
        best |= {
            "runner_up": str(second["mechanism"]),
            "best_margin": float(first["utility_mean"] - second["utility_mean"]),
            "best_tie": "true" if len(tied) > 1 else "false",
            "best_overlaps_second": "true"
            if float(second["utility_ci95_high"]) >= float(first["utility_ci95_low"])
            else "false",
        }
        if len(tied) > 1:
            best["best_mechanism"] = "tie: " + ", ".join(tied)
    return best


def wide_by_pandas(summary: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    headers = dict(zip(keys, short_keys(keys)))
    rows = []
    for _, cell in summary.groupby("cell_index", sort=True):
        row = {headers[key].replace(".", "/"): cell[key].iloc[0] for key in keys}
        for _, line in cell.iterrows():
            half = (line["utility_ci95_high"] - line["utility_ci95_low"]) / 2
            row[table_header(str(line["mechanism"]))] = interval_text(line["utility_mean"], half, line["n"])
        row["best"] = best_text(best_by_pandas(cell))
        rows.append(row)
    return pd.DataFrame(rows)


@st.composite
def summaries(draw):
    rows = []
    means = st.one_of(st.sampled_from([1.0, 2.0, np.nan]), st.floats(-5, 5, allow_nan=False))
    for cell in draw(st.permutations(range(draw(st.integers(1, 5))))):
        for mechanism in draw(st.permutations(["A", "B", "C(x=1)"]))[: draw(st.integers(1, 3))]:
            mean, half = draw(means), draw(st.sampled_from([0.0, 0.5, 3.0]))
            rows.append(
                {
                    "cell": f"k={cell}",
                    "cell_index": cell,
                    "job.k": cell * 10,
                    "mechanism": mechanism,
                    "n": draw(st.sampled_from([1, 5])),
                    "utility_mean": mean,
                    "utility_ci95_low": mean - half,
                    "utility_ci95_high": mean + half,
                }
            )
    return pd.DataFrame(rows)


@settings(max_examples=80, deadline=None)
@given(summaries())
def test_the_wide_table_equals_the_one_built_a_dataframe_per_cell(summary):
    pd.testing.assert_frame_equal(wide_table(summary, ["job.k"]), wide_by_pandas(summary, ["job.k"]))
