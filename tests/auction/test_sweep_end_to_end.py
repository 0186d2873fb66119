"""The auction family through `python -m sweep -m` end to end: Hydra grid, Ray (2 workers),
results, tasks and summary files, MLflow (SQLite) child runs with the auction's metrics."""

from __future__ import annotations

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from tests.engine.conftest import run_cli

pytestmark = pytest.mark.sweeps

MECHANISMS = ["pdFTSP", "Titan", "EFT", "NTM", "OPT"]


@pytest.mark.slow
def test_a_small_auction_grid_end_to_end(tmp_path):
    sweep_dir, uri = tmp_path / "sweep", f"sqlite:///{tmp_path / 'mlflow.db'}"
    proc = run_cli(
        "-m",
        "family=auction",
        "cluster.nodes=3,4",
        "tasks.load=1.0",
        "tasks.slots=12",
        f"mechanisms=[{','.join(MECHANISMS)}]",
        "titan.time_limit=0.5",
        "replicates=2",
        "runner.num_workers=2",
        f"tracking.uri={uri}",
        f"hydra.sweep.dir={sweep_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "tasks (the family's side table, all cells)" in proc.stdout

    results = pd.read_parquet(sweep_dir / "results.parquet")
    assert len(results) == 2 * 2 * len(MECHANISMS) and set(results["mechanism"]) == set(MECHANISMS)
    assert (results["utility"] == results["welfare"]).all()
    tasks = pd.read_parquet(sweep_dir / "tasks.parquet")
    assert {"cell", "replicate", "mechanism", "task", "bid", "payment", "admitted"} <= set(tasks.columns)
    admitted = tasks.groupby(["cell", "replicate", "mechanism"])["admitted"].sum()
    per_row = results.set_index(["cell", "replicate", "mechanism"])["admitted"]
    assert (per_row == admitted.reindex(per_row.index)).all()
    assert (tasks.loc[tasks["admitted"], "payment"] <= tasks.loc[tasks["admitted"], "bid"] + 1e-9).all()

    summary = pd.read_csv(sweep_dir / "summary.csv")
    for column in (
        "welfare_mean",
        "payments_mean",
        "admitted_mean",
        "admission_rate_ci95_high",
        "provider_utility_mean",
        "users_utility_mean",
        "utilisation_mean",
        "opt_ratio_mean",
    ):
        assert column in summary.columns, column
    means = results.groupby(["cluster.nodes", "mechanism"])["payments"].mean()
    for _, row in summary.iterrows():
        assert row["payments_mean"] == pytest.approx(means[(row["cluster.nodes"], row["mechanism"])])
    assert (summary.loc[summary["mechanism"] != "OPT", "opt_ratio_mean"] >= 1 - 1e-9).all()

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("auction")
    runs = [r for r in client.search_runs([experiment.experiment_id]) if "mlflow.parentRunId" in r.data.tags]
    children = [r for r in runs if "mechanism" not in r.data.tags]
    assert len(children) == 2
    for child in children:
        assert {a.path for a in client.list_artifacts(child.info.run_id)} >= {"cell.parquet", "tasks.parquet"}
    by_mechanism = {
        (r.data.params["cluster.nodes"], r.data.params["mechanism"]): r for r in runs if "mechanism" in r.data.tags
    }
    for child in children:
        nodes = child.data.params["cluster.nodes"]
        row = summary[(summary["cluster.nodes"] == int(nodes)) & (summary["mechanism"] == "pdFTSP")].iloc[0]
        assert by_mechanism[(nodes, "pdFTSP")].data.metrics["welfare_mean"] == pytest.approx(row["welfare_mean"])
        assert "admission_rate_mean" in by_mechanism[(nodes, "Titan")].data.metrics
        assert "opt_ratio_mean" in by_mechanism[(nodes, "EFT")].data.metrics
