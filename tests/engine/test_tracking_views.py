"""What a researcher sees in MLflow: child runs for the first `tracking.child_runs` cells only,
named by what varies, each with a run per mechanism under it; every cell in the parent's table
and figures; the best mechanism with its margin, ties and overlapping intervals."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from sweep.comparison_tables import best_mechanism
from sweep.engine import run_cells
from sweep.plots import interval_lines
from sweep.schema import TrackingConfig

from .test_side_tables import in_process_queue, make_cell, runner

pytestmark = pytest.mark.sweeps


def summary(means, lows, highs) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mechanism": ["A", "B", "C"][: len(means)],
            "utility_mean": means,
            "utility_ci95_low": lows,
            "utility_ci95_high": highs,
        }
    )


def test_best_mechanism_has_its_margin_and_says_when_it_ties_or_overlaps():
    assert best_mechanism(summary([1.0, 3.0, 2.0], [0.5, 2.9, 1.0], [1.5, 3.1, 2.8])) == {
        "best_mechanism": "B",
        "runner_up": "C",
        "best_margin": 1.0,
        "best_tie": "false",
        "best_overlaps_second": "false",
    }
    assert best_mechanism(summary([1.0, 3.0, 2.5], [0.5, 2.0, 1.0], [1.5, 4.0, 3.0]))["best_overlaps_second"] == "true"
    tie = best_mechanism(summary([3.0, 3.0, 2.0], [2.0, 2.0, 1.0], [4.0, 4.0, 3.0]))
    assert tie["best_mechanism"] == "tie: A, B" and tie["best_tie"] == "true" and tie["best_margin"] == 0.0
    assert best_mechanism(summary([2.0], [1.0], [3.0])) == {"best_mechanism": "A"}
    assert best_mechanism(pd.DataFrame()) == {}


def test_interval_lines_draws_only_a_key_that_varies(tmp_path):
    table = pd.DataFrame(
        {
            "k": [1, 1, 2, 2],
            "other": [0, 0, 0, 0],
            "mechanism": ["A", "B", "A", "B"],
            "n": 5,
            "utility_mean": [1.0, 2.0, 3.0, 4.0],
            "utility_std": 1.0,
            "utility_ci95_low": [0.5, 1.5, 2.5, 3.5],
            "utility_ci95_high": [1.5, 2.5, 3.5, 4.5],
        }
    )
    assert interval_lines(table, "k", ["other"], tmp_path / "k.png") == 1
    assert (tmp_path / "k.png").stat().st_size > 1000
    assert not interval_lines(table, "other", ["k"], tmp_path / "other.png")
    assert not (tmp_path / "other.png").exists()


@pytest.mark.slow
def test_child_runs_stop_at_the_cap_and_the_parent_holds_every_cell(monkeypatch, tmp_path):
    in_process_queue(monkeypatch)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    cells = [make_cell(index, tasks, replicates=4) for index, tasks in enumerate([2, 3, 4])]
    run_cells(
        cells,
        tmp_path / "sweep",
        runner(chunk_size=6),
        TrackingConfig(kind="sqlite", uri=uri, child_runs=2),
        run_name="fallback",
        announce=False,
    )
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(cells[0].family)
    runs = client.search_runs([experiment.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags and "mechanism" not in r.data.tags]
    assert len(parents) == 1 and len(children) == 2
    parent = parents[0]
    assert parent.info.run_name == f"{cells[0].family} 3: tasks"
    assert parent.data.tags["grid"] == "job.tasks=2,3,4"
    assert {c.info.run_name for c in children} <= {"tasks=2", "tasks=3", "tasks=4"}
    assert parent.data.tags["mlflow.source.name"] == "python -m sweep"
    assert "`job.tasks`: 2, 3, 4" in parent.data.tags["mlflow.note.content"]
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {
        "summary.csv",
        "results.parquet",
        "summary_table.json",
        "utility_by_cell.json",
        "mechanism_names.json",
        "utility_vs_job.tasks.png",
    } <= artifacts
    table = json.loads(open(client.download_artifacts(parent.info.run_id, "summary_table.json", str(tmp_path))).read())
    assert len(table["data"]) == 3 * 3  # every cell x mechanism, the uncapped ones too
    # a dotted column name shows empty in MLflow's table viewer (a nested path to it)
    assert "job/tasks" in table["columns"] and not [c for c in table["columns"] if "." in c]
    assert {"utility_mean/A", "utility_mean/B", "utility_mean/C"} <= set(parent.data.metrics)
    for child in children:
        assert child.data.tags["best_mechanism"] and "best_margin" in child.data.metrics
        assert not [key for key in child.data.metrics if "/" in key]

    # the mechanism is a dimension: a run per logged cell and mechanism, the same metric names for
    # every mechanism, found by `params.mechanism`, ranked within its cell
    cell_runs = {child.info.run_id: child for child in children}
    for name in ("A", "B", "C"):
        found = client.search_runs([experiment.experiment_id], f"params.mechanism = '{name}'")
        assert len(found) == 2 and {r.data.tags["mlflow.parentRunId"] for r in found} == set(cell_runs)
        assert {r.info.run_name for r in found} == {name}
        assert {r.data.params["job.tasks"] for r in found} == {c.data.params["job.tasks"] for c in children}
        assert set(found[0].data.metrics) == set(found[1].data.metrics) >= {"utility_mean", "utility_rank"}
        for run in found:
            cell_run = cell_runs[run.data.tags["mlflow.parentRunId"]]
            assert (run.data.metrics["utility_rank"] == 1) == (name in cell_run.data.tags["best_mechanism"])


@pytest.mark.slow
def test_the_input_trace_is_a_dataset_of_the_parent_run(monkeypatch, tmp_path):
    from hydra import compose, initialize_config_dir

    from sweep.api import CONF_DIR
    from sweep.cells import make_cell as compose_cell

    from .conftest import TRACE

    in_process_queue(monkeypatch)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        overrides = ["market=trace", f"market.path={TRACE}", "replicates=2"]
        cell = compose_cell(compose("config", overrides=overrides), overrides, 0, "0")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    run_cells([cell], tmp_path / "sweep", runner(chunk_size=6), TrackingConfig(kind="sqlite", uri=uri), announce=False)
    client = MlflowClient(uri)
    parent = [
        r
        for r in client.search_runs([client.get_experiment_by_name("spot").experiment_id])
        if "mlflow.parentRunId" not in r.data.tags
    ][0]
    inputs = parent.inputs.dataset_inputs
    assert [i.dataset.name for i in inputs] == [TRACE.name]
    assert inputs[0].tags[0].value == "market.path"
