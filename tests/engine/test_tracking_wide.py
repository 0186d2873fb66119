"""Comparing mechanisms across a sweep in MLflow: the parent's wide cell x mechanism table with
95% intervals, one figure per grid key in small multiples, metric names that are the mechanisms'
own (with a mapping where MLflow refuses a character), and descriptions that say what the
experiment and the sweep are."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from mlflow.utils.validation import _validate_metric_name

from sweep.comparison_tables import (
    interval_text,
    long_table,
    mechanism_key,
    mechanism_keys,
    metric_key,
    renamed_metrics,
    wide_table,
)
from sweep.engine import run_cells
from sweep.family import load_family
from sweep.plots import MAX_PANELS, interval_lines, mean_of_means
from sweep.schema import TrackingConfig
from sweep.statistics import student_t_interval
from sweep.tracking import experiment_description
from sweep.upload import upload

from .test_side_tables import in_process_queue, make_cell, runner

pytestmark = pytest.mark.sweeps

NAMES = [
    "OD-Only",
    "MSU",
    "UP",
    "AHAP",
    "AHAP(w=3,v=2,sigma=0.5)",
    "AHAP(w=1,v=1,sigma=0.6,forecast=persistence)",
    "Meta(normalisation=job_minmax)",
    "OptiLearning(grid=theta)",
    "Dynalloc(beta=0.5,b=1)",
    "a/b",
    "..",
    "x y",
    "A(x=1)",
    "A x:1",
    "Théta=2",
]


def grid_summary(
    mechanisms=("OD-Only", "MSU", "UP"), deadlines=(8, 10, 12), workloads=(60, 80), availability=(4.0, 8.0), seed=0
) -> pd.DataFrame:
    """A summary.csv of a 3-key grid with real Student-t intervals from drawn replicates."""
    rng = np.random.default_rng(seed)
    rows, index = [], 0
    for d in deadlines:
        for w in workloads:
            for a in availability:
                for j, mechanism in enumerate(mechanisms):
                    interval = student_t_interval(rng.normal(100 + d - w / 10 + j * a, 5.0, size=20))
                    rows.append(
                        {
                            "cell": f"job.deadline={d},job.workload={w},market.mean_availability={a}",
                            "cell_index": index,
                            "job.deadline": d,
                            "job.workload": w,
                            "market.mean_availability": a,
                            "mechanism": mechanism,
                            "n": 20,
                            "utility_mean": interval.mean,
                            "utility_std": interval.std,
                            "utility_ci95_low": interval.low,
                            "utility_ci95_high": interval.high,
                        }
                    )
                index += 1
    return pd.DataFrame(rows)


KEYS = ["job.deadline", "job.workload", "market.mean_availability"]


def parse(text: str) -> tuple[float, float]:
    mean, half = re.fullmatch(r"(\S+) ± (\S+)", text).groups()
    return float(mean), float(half)


def decimals(text: str) -> int:
    return len(text.split(" ± ")[1].partition(".")[2])


def test_the_wide_table_has_a_row_per_cell_and_a_column_per_mechanism_with_summary_intervals():
    summary = grid_summary()
    table = wide_table(summary, KEYS)
    assert list(table.columns) == ["deadline", "workload", "mean_availability", "OD-Only", "MSU", "UP", "best"]
    assert len(table) == summary["cell_index"].nunique() == 12
    for position, (_, cell) in enumerate(summary.groupby("cell_index", sort=True)):
        row = table.iloc[position]
        assert (row["deadline"], row["workload"], row["mean_availability"]) == tuple(cell[KEYS].iloc[0])
        for _, line in cell.iterrows():
            mean, half = parse(row[line["mechanism"]])
            tolerance = 0.5 * 10 ** -decimals(row[line["mechanism"]]) + 1e-12
            assert mean == pytest.approx(line["utility_mean"], abs=tolerance)
            assert half == pytest.approx((line["utility_ci95_high"] - line["utility_ci95_low"]) / 2, abs=tolerance)
        best = cell.sort_values("utility_mean", ascending=False).iloc[0]["mechanism"]
        assert row["best"].split(" ≈ ")[0] == best


def test_the_wide_table_marks_overlaps_and_keeps_dotted_names_visible():
    summary = grid_summary(
        mechanisms=("A", "AHAP(w=3,v=2,sigma=0.5)"), deadlines=(8,), workloads=(60,), availability=(4.0,)
    )
    summary["utility_mean"] = [10.0, 10.5]
    summary["utility_ci95_low"], summary["utility_ci95_high"] = [9.0, 10.0], [11.0, 11.0]
    table = wide_table(summary, ["job.deadline"])
    # MLflow's table viewer reads a dot as a nested path and shows such a column empty
    assert list(table.columns) == ["deadline", "A", "AHAP(w=3,v=2,sigma=0·5)", "best"]
    assert table["best"].iloc[0] == "AHAP(w=3,v=2,sigma=0.5) ≈ A"


@pytest.mark.parametrize(
    "mean,half,n,text",
    [
        (104.8312, 1.234, 500, "104.8 ± 1.2"),
        (96.0, 0.0, 500, "96 ± 0"),
        (74.13812, 0.0987, 500, "74.138 ± 0.099"),
        (5.0, 0.0, 1, "5 (n=1)"),
    ],
)
def test_interval_text_rounds_the_mean_to_its_half_width(mean, half, n, text):
    assert interval_text(mean, half, n) == text


def test_the_long_table_starts_with_the_keys_the_mechanism_and_its_utility():
    table = long_table(grid_summary(), KEYS)
    assert list(table.columns[:8]) == [
        "job/deadline",
        "job/workload",
        "market/mean_availability",
        "mechanism",
        "n",
        "utility_mean",
        "utility_ci95_low",
        "utility_ci95_high",
    ]
    assert "cell" not in table


def test_a_figure_splits_into_a_panel_per_combination_of_the_other_keys(tmp_path):
    summary = grid_summary()
    for key in KEYS:
        others = [k for k in KEYS if k != key]
        expected = int(np.prod([summary[k].nunique() for k in others]))
        assert interval_lines(summary, key, others, tmp_path / f"{key}.png") == expected
        assert (tmp_path / f"{key}.png").stat().st_size > 10_000


def test_too_many_panels_average_only_when_the_order_of_mechanisms_holds(tmp_path):
    many = grid_summary(deadlines=(8, 10), workloads=tuple(range(50, 50 + 5 * 10, 10)), availability=(4.0, 8.0, 12.0))
    others = ["job.workload", "market.mean_availability"]  # 15 combinations > MAX_PANELS
    assert many[others].drop_duplicates().shape[0] > MAX_PANELS
    # the draws put the mechanisms in the same order everywhere: one panel, averaged
    steady = many.copy()
    steady["utility_mean"] = steady["utility_mean"] + steady["mechanism"].map({"OD-Only": 0, "MSU": 100, "UP": 200})
    assert interval_lines(steady, "job.deadline", others, tmp_path / "steady.png") == 1
    # the order flips with the availability: a panel per availability (the key with fewer values)
    flips = steady.copy()
    flips.loc[(flips["market.mean_availability"] == 8.0) & (flips["mechanism"] == "OD-Only"), "utility_mean"] += 1000
    assert interval_lines(flips, "job.deadline", others, tmp_path / "flips.png") == 3


def test_the_interval_of_an_average_over_cells_is_the_cells_intervals_in_quadrature():
    summary = grid_summary(deadlines=(8,), workloads=(60,), availability=(4.0, 8.0), mechanisms=("A",))
    one = summary.iloc[[0]]
    assert mean_of_means(one) == pytest.approx(
        (one["utility_mean"].iloc[0], (one["utility_ci95_high"].iloc[0] - one["utility_ci95_low"].iloc[0]) / 2)
    )
    mean, half = mean_of_means(summary)
    singles = (summary["utility_ci95_high"] - summary["utility_ci95_low"]) / 2
    assert mean == pytest.approx(summary["utility_mean"].mean())
    assert half == pytest.approx(np.sqrt((singles**2).sum()) / 2)  # equal n: the same t quantile


def test_metric_names_are_the_mechanism_names_as_far_as_mlflow_allows():
    keys = mechanism_keys(NAMES)
    assert len(set(keys.values())) == len(NAMES)
    assert {key: name for name, key in keys.items()}.keys() == set(keys.values())  # the mapping round-trips
    for key in keys.values():
        _validate_metric_name(f"utility_mean/{key}")  # raises if MLflow refuses it
    assert keys["OD-Only"] == "OD-Only" and keys["AHAP"] == "AHAP"
    assert keys["AHAP(w=3,v=2,sigma=0.5)"] == "AHAP w:3 v:2 sigma:0.5"
    assert keys["Meta(normalisation=job_minmax)"] == "Meta normalisation:job_minmax"
    assert keys["A(x=1)"] != keys["A x:1"]
    assert mechanism_key("a/b").count("/") == 0  # one level under utility_mean/
    assert renamed_metrics({metric_key("utility_mean", "AHAP(w=3,v=2,sigma=0.5)"): 1.0, "simulations": 2.0}, keys) == {
        "utility_mean/AHAP w:3 v:2 sigma:0.5": 1.0,
        "simulations": 2.0,
    }


def test_a_store_takes_every_mapped_name(tmp_path):
    from mlflow.entities import Metric

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = client.create_run(client.create_experiment("names"))
    keys = mechanism_keys(NAMES)
    client.log_batch(run.info.run_id, metrics=[Metric(f"utility_mean/{key}", 1.0, 0, 0) for key in keys.values()])
    assert set(client.get_run(run.info.run_id).data.metrics) == {f"utility_mean/{key}" for key in keys.values()}


def test_every_family_experiment_names_its_paper_and_its_utility():
    for family in ("spot", "auction", "core", "iaas", "sow"):
        spec = load_family(f"algorithms.{family}.family")
        text = experiment_description(spec)
        assert spec.paper and spec.paper in text and spec.question in text and spec.utility in text
    arena = experiment_description(load_family("arena.family"))
    assert "000 and 003" in arena


@pytest.mark.slow
def test_the_parent_compares_every_cell_and_upload_logs_the_other_child_runs(monkeypatch, tmp_path):
    in_process_queue(monkeypatch)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    cells = [make_cell(index, tasks, replicates=4) for index, tasks in enumerate([2, 3, 4])]
    family = cells[0].family
    client = MlflowClient(uri)
    client.create_experiment(family, tags={"mlflow.note.content": "an old description"})
    sweep_dir = tmp_path / "sweep"
    run_cells(
        cells, sweep_dir, runner(chunk_size=6), TrackingConfig(kind="sqlite", uri=uri, child_runs=1), announce=False
    )
    experiment = client.get_experiment_by_name(family)
    assert experiment.tags["mlflow.note.content"] == experiment_description(cells[0].spec)
    parents = client.search_runs([experiment.experiment_id], "tags.grid != ''")
    assert len(parents) == 1
    parent = parents[0]
    note = parent.data.tags["mlflow.note.content"]
    assert "Child runs: 1 of 3 cells (`tracking.child_runs=1`)" in note
    assert f"python -m sweep.upload {sweep_dir.resolve()} --tracking-uri {uri} --child-runs 3" in note

    summary = pd.read_csv(sweep_dir / "summary.csv")
    folder = tmp_path / "artifacts"
    logged = json.loads(
        Path(client.download_artifacts(parent.info.run_id, "utility_by_cell.json", str(folder))).read_text()
    )
    expected = wide_table(summary, ["job.tasks"])
    assert logged["columns"] == ["tasks", "B", "A", "C", "best"] == list(expected.columns)
    assert [row[1:] for row in logged["data"]] == expected.drop(columns="tasks").values.tolist()
    names = json.loads(
        Path(client.download_artifacts(parent.info.run_id, "mechanism_names.json", str(folder))).read_text()
    )
    assert names == {"B": "B", "A": "A", "C": "C"}
    assert {f"utility_mean/{key}" for key in names} <= set(parent.data.metrics)

    assert upload(sweep_dir, uri, child_runs=3) == 0
    parent = client.get_run(parent.info.run_id)
    assert "Child runs: 3 of 3 cells" in parent.data.tags["mlflow.note.content"]
    children = client.search_runs([experiment.experiment_id], f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
    assert sorted(child.info.run_name for child in children) == ["tasks=2", "tasks=3", "tasks=4"]
    assert len(client.search_runs([experiment.experiment_id], "tags.grid != ''")) == 1  # no second parent


def test_the_parent_description_says_which_metric_names_differ_from_their_mechanism(tmp_path):
    from sweep.tracking import MlflowTracker

    tracker = MlflowTracker(TrackingConfig(kind="sqlite", uri=f"sqlite:///{tmp_path / 'mlflow.db'}"))
    note = tracker._description("spot", mechanism_keys(["UP", "AHAP(w=2,v=2,sigma=0.5)"]))
    assert "`utility_mean/AHAP w:2 v:2 sigma:0.5` is `AHAP(w=2,v=2,sigma=0.5)`" in note
    assert "utility_mean/UP" not in note and "mechanism_names.json" in note
