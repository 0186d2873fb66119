"""The Python API, and the same numbers whatever the number of workers or chunk size."""

from __future__ import annotations

import pandas as pd
import pytest

from sweep import batch_run

pytestmark = pytest.mark.sweeps

GRID = {"job.deadline": [8, 12], "market.mean_availability": [4.0, 10.0]}


@pytest.mark.slow
def test_batch_run_returns_every_simulation(tmp_path):
    df = batch_run(GRID, overrides=["replicates=10"], number_processes=2, out_dir=tmp_path)
    assert len(df) == 4 * 10 * 3
    assert {
        "cell",
        "replicate",
        "mechanism",
        "utility",
        "cost",
        "completion_time",
        "job.deadline",
        "market.mean_availability",
    } <= set(df.columns)
    assert sorted(df["job.deadline"].unique()) == [8, 12]
    assert (tmp_path / "results.parquet").exists() and (tmp_path / "summary.csv").exists()


@pytest.mark.slow
def test_same_numbers_with_one_or_two_workers_and_any_chunk_size(tmp_path):
    one = batch_run(
        GRID, overrides=["replicates=40", "runner.chunk_size=3"], number_processes=1, out_dir=tmp_path / "a"
    )
    two = batch_run(
        GRID, overrides=["replicates=40", "runner.chunk_size=64"], number_processes=2, out_dir=tmp_path / "b"
    )
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


def test_an_input_file_seeds_by_its_content_not_its_path(tmp_path):
    """The same trace in two checkouts gives the same worlds; an edited trace does not."""
    import shutil

    from hydra import compose, initialize_config_dir

    from sweep.api import CONF_DIR
    from sweep.cells import make_cell

    from .conftest import TRACE

    def cell(path):
        overrides = ["market=trace", f"market.path={path}", "tracking=off"]
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return make_cell(compose("config", overrides=overrides), overrides, 0, "0")

    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        shutil.copy(TRACE, tmp_path / name / "trace.csv")
    a, b = cell(tmp_path / "a" / "trace.csv"), cell(tmp_path / "b" / "trace.csv")
    assert a.world["market"]["path"] != b.world["market"]["path"]
    assert (a.world_hash, a.config_hash) == (b.world_hash, b.config_hash)
    edited = tmp_path / "b" / "trace.csv"
    with open(edited, "a") as handle:
        handle.write("\n")
    assert cell(edited).world_hash == a.world_hash, "a trailing blank line is not content"
    lines = edited.read_bytes().split(b"\n")
    fields = lines[1].split(b",")
    fields[2] = str(float(fields[2]) + 0.01).encode()
    lines[1] = b",".join(fields)
    edited.write_bytes(b"\n".join(lines))
    assert cell(edited).world_hash != a.world_hash


def test_batch_run_without_out_dir_leaves_no_folder_behind(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    df = batch_run(None, overrides=["replicates=2", "tracking=off"])
    assert len(df) == 6
    assert list(tmp_path.iterdir()) == []
