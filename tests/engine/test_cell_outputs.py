"""Per-cell analyses of a family: files in the store, step metrics and artifacts in MLflow."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient

from sweep import cell_outputs
from sweep.cell_store import CellStore, CompleteCell
from sweep.cells import Cell
from sweep.family import load_family
from sweep.results import cell_files, stored_cell_files
from sweep.schema import TrackingConfig
from sweep.summary import summarize
from sweep.tracking import MlflowTracker
from tests.sweep_dirs import arrow_rows


def fake_family(world, frame):
    weights = pd.DataFrame(np.full((4, 2), 0.5), columns=["A", "B"], index=pd.RangeIndex(4, name="job"))
    return {
        "tables": {"policy_weights": weights},
        "series": {"cumulative_regret": np.array([0.0, 0.5, 0.75, 1.0])},
        "metrics": {"final_regret": 1.0},
        "figures": {"policy_weights.png": ("heatmap", "policy_weights")},
    }


def test_cell_outputs_reach_the_store_and_mlflow(tmp_path, monkeypatch):
    world = {"family": {"name": "spot", "module": "algorithms.spot.family"}, "mechanisms": ["A", "B"], "replicates": 2}
    cell = Cell(
        index=0, name="c0", params={"job.deadline": 8}, subdir="0", world=world, config_hash="h", world_hash="w"
    )
    cell.__dict__["spec"] = dataclasses.replace(load_family("algorithms.spot.family"), cell_outputs=fake_family)
    frame = pd.DataFrame(
        {
            "cell": "c0",
            "cell_index": 0,
            "replicate": [0, 0, 1, 1],
            "mechanism": ["A", "B"] * 2,
            "utility": [1.0, 2.0, 3.0, 4.0],
            "cost": [1.0, 1.0, 1.0, 1.0],
        }
    )
    files, metrics = cell_outputs.render(cell_outputs.compute(cell, frame))
    rows = arrow_rows(frame)
    store = CellStore(tmp_path)
    store.open_for_writing()
    store.commit(
        [CompleteCell(cell, rows, files=files, metrics=metrics)],
        summarize(frame, [cell]),
    )
    entry = CellStore(tmp_path).entries[0]
    stored = stored_cell_files(CellStore(tmp_path), entry)
    assert stored == cell_files(rows, world, {}, files)
    assert set(stored) == {
        "cell.parquet",
        "config.yaml",
        "policy_weights.parquet",
        "policy_weights.png",
        "series.parquet",
    }
    assert stored["policy_weights.png"][:4] == b"\x89PNG"
    assert list(cell_outputs.read_series(stored)["cumulative_regret"]) == [0.0, 0.5, 0.75, 1.0]
    assert entry.metrics == {"final_regret": 1.0}

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    tracker = MlflowTracker(TrackingConfig(kind="sqlite", uri=uri))
    tracker.start(tmp_path, ["spot"], "test", {})
    tracker.log_cell(cell, stored, summarize(frame, [cell]), entry.metrics)
    tracker.finish(tmp_path, "FINISHED")
    assert not tracker.failed
    client = MlflowClient(tracking_uri=uri)
    run_id = json.loads((tmp_path / "tracking.json").read_text())["cells"]["0"]["run"]
    history = client.get_metric_history(run_id, "cumulative_regret")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [
        (0, 0.0),
        (1, 0.5),
        (2, 0.75),
        (3, 1.0),
    ]
    assert client.get_run(run_id).data.metrics["final_regret"] == 1.0
    artifacts = {a.path for a in client.list_artifacts(run_id)}
    assert artifacts == {
        "cell.parquet",
        "config.yaml",
        "policy_weights.parquet",
        "policy_weights.png",
        "series.parquet",
    }


def test_the_weight_heatmap_names_its_policies_or_the_heaviest_ones():
    import pandas as pd

    from sweep.cell_outputs import heatmap_rows

    few = pd.DataFrame([[0.2, 0.8], [0.3, 0.7]], columns=["UP", "AHAP(w=3,v=2,s=0.5)"])
    assert heatmap_rows(few) == ([0, 1], ["UP", "AHAP(w=3,v=2,s=0.5)"])
    many = pd.DataFrame([[1 / 20] * 20, [i / 190 for i in range(20)]], columns=[f"P{i}" for i in range(20)])
    positions, labels = heatmap_rows(many, named=3)
    assert positions == [17, 18, 19] and labels == ["P17", "P18", "P19"]
    # 112 rows: neighbours of a named row stay unnamed, so that the labels do not overlap
    wide = pd.DataFrame([[1 / 112] * 112, [i / 6216 for i in range(112)]], columns=[f"P{i}" for i in range(112)])
    positions, labels = heatmap_rows(wide)
    assert positions == list(range(78, 112, 3)) and len(labels) == 12
