"""Bad input stops the run before any work: non-zero exit, a message naming the key or file
and line, no results dir and no MLflow store left behind."""

from __future__ import annotations

import pytest

from .conftest import TRACE, run_cli

pytestmark = pytest.mark.sweeps


def assert_rejected(tmp_path, args, *needles, multirun=True):
    sweep_dir = tmp_path / "out"
    db = tmp_path / "mlflow.db"
    where = f"hydra.sweep.dir={sweep_dir}" if multirun else f"hydra.run.dir={sweep_dir}"
    proc = run_cli(*(["-m"] if multirun else []), *args, f"tracking.uri=sqlite:///{db}", where, timeout=120)
    assert proc.returncode != 0, proc.stdout
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not sweep_dir.exists(), list(sweep_dir.rglob("*"))
    assert not db.exists()
    return proc.stderr


@pytest.mark.parametrize("multirun", [True, False])
def test_negative_deadline(tmp_path, multirun):
    assert_rejected(tmp_path, ["job.deadline=-1"], "job.deadline", multirun=multirun)


def test_n_min_above_n_max(tmp_path):
    assert_rejected(tmp_path, ["job.n_min=13"], "job.n_min")


def test_negative_price(tmp_path):
    assert_rejected(tmp_path, ["market.mean_price=-0.5"], "market.mean_price")


def test_one_bad_cell_stops_the_whole_grid(tmp_path):
    err = assert_rejected(tmp_path, ["job.deadline=10,-3"], "job.deadline")
    assert "cell #1" in err


def test_wrong_type(tmp_path):
    assert_rejected(tmp_path, ["runner.num_workers=many"], "runner.num_workers")


def test_zero_workers(tmp_path):
    assert_rejected(tmp_path, ["runner.num_workers=0"], "runner.num_workers")


def test_unknown_mechanism(tmp_path):
    assert_rejected(tmp_path, ["mechanisms=[OD-Only,NOPE]"], "NOPE")


def test_trace_path_missing(tmp_path):
    assert_rejected(tmp_path, ["market=trace", f"market.path={tmp_path / 'nope.csv'}"], "nope.csv")


def test_trace_path_required(tmp_path):
    assert_rejected(tmp_path, ["market=trace"], "market.path")


def test_trace_missing_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("slot,timestamp,spot_price\n0,2023-01-01T00:00:00,0.5\n")
    assert_rejected(tmp_path, ["market=trace", f"market.path={bad}"], str(bad), "availability")


def test_trace_bad_value_names_the_line(tmp_path):
    lines = TRACE.read_text().splitlines()
    slot, stamp, price, avail = lines[5].split(",")
    lines[5] = ",".join([slot, stamp, "-0.3", avail])
    bad = tmp_path / "bad_value.csv"
    bad.write_text("\n".join(lines) + "\n")
    assert_rejected(tmp_path, ["market=trace", f"market.path={bad}"], f"{bad}:6:", "spot_price")


def test_a_trace_that_is_not_utf8_names_the_file_and_line(tmp_path):
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(TRACE.read_bytes().replace(b"2023-08-27T00:30", "2023-08-27T00:30\u00e9".encode("latin-1"), 1))
    assert_rejected(tmp_path, ["market=trace", f"market.path={bad}"], f"{bad}:3:", "not UTF-8")


def test_a_folder_as_trace_path_is_not_a_missing_file(tmp_path):
    assert_rejected(tmp_path, ["market=trace", f"market.path={tmp_path}"], "is a directory")


@pytest.mark.parametrize(
    "typo, key",
    [
        ("job.deadlin=5,6", "job.deadlin"),
        ("markt=trace,synthetic", "markt"),
        ("family=auction,spot", "market.mean_price"),
    ],
)
def test_a_typo_in_a_multirun_exits_2_and_leaves_nothing(tmp_path, typo, key):
    # the third: market.mean_price is not a key of an auction cell
    args = [typo] + (["market.mean_price=0.3"] if typo.startswith("family") else [])
    err = assert_rejected(tmp_path, args, key)
    assert "cell #" in err


def test_a_key_of_another_family_is_rejected(tmp_path):
    assert_rejected(tmp_path, ["+cluster.nodes=5"], "cluster: not a key of the spot family's cells")


def test_an_unwritable_sqlite_store_is_rejected_before_any_work(tmp_path):
    sweep_dir = tmp_path / "out"
    proc = run_cli("-m", "tracking.uri=sqlite:////proc/no/mlflow.db", f"hydra.sweep.dir={sweep_dir}", timeout=120)
    assert proc.returncode == 2 and "tracking.uri" in proc.stderr, proc.stderr
    assert not sweep_dir.exists()


@pytest.mark.parametrize("multirun", [True, False])
def test_an_output_dir_that_is_a_file(tmp_path, multirun):
    target = tmp_path / "taken"
    target.write_text("not a folder")
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    proc = run_cli(*(["-m"] if multirun else []), f"{key}={target}", "tracking=off", timeout=120)
    assert proc.returncode == 2 and f"{key}: {target} exists and is not a folder" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert target.read_text() == "not a folder"
