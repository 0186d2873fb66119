"""The Python API, and the same numbers whatever the number of workers or chunk size."""
from __future__ import annotations

import pandas as pd
import pytest

from sweep import batch_run

pytestmark = pytest.mark.slow
GRID = {"job.deadline": [8, 12], "market.mean_availability": [4.0, 10.0]}


def test_batch_run_returns_every_simulation(tmp_path):
    df = batch_run(GRID, overrides=["replicates=10"], number_processes=2, out_dir=tmp_path)
    assert len(df) == 4 * 10 * 3
    assert {"cell", "replicate", "mechanism", "utility", "cost", "completion_time", "job.deadline",
            "market.mean_availability"} <= set(df.columns)
    assert sorted(df["job.deadline"].unique()) == [8, 12]
    assert (tmp_path / "results.parquet").exists() and (tmp_path / "summary.csv").exists()


def test_same_numbers_with_one_or_two_workers_and_any_chunk_size(tmp_path):
    one = batch_run(GRID, overrides=["replicates=40", "runner.chunk_size=3"], number_processes=1, out_dir=tmp_path / "a")
    two = batch_run(GRID, overrides=["replicates=40", "runner.chunk_size=64"], number_processes=2, out_dir=tmp_path / "b")
    pd.testing.assert_frame_equal(one, two)


def test_more_replicates_extend_rather_than_reshuffle(tmp_path):
    small = batch_run({"job.deadline": [10]}, overrides=["replicates=5"], out_dir=tmp_path / "a")
    large = batch_run({"job.deadline": [10]}, overrides=["replicates=8"], out_dir=tmp_path / "b")
    columns = ["replicate", "mechanism", "utility", "cost", "completion_time"]
    pd.testing.assert_frame_equal(small[columns], large[large["replicate"] < 5].reset_index(drop=True)[columns])


def test_different_seed_gives_different_worlds(tmp_path):
    a = batch_run(None, overrides=["replicates=5", "seed=1"], out_dir=tmp_path / "a")
    b = batch_run(None, overrides=["replicates=5", "seed=2"], out_dir=tmp_path / "b")
    assert not a["utility"].equals(b["utility"])


def test_trace_market_runs(tmp_path):
    from .conftest import TRACE

    df = batch_run(None, overrides=["replicates=6", "market=trace", f"market.path={TRACE}"], out_dir=tmp_path)
    assert len(df) == 18 and df["utility"].notna().all()
