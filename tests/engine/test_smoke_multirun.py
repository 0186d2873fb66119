"""The smoke multirun end to end: real Ray (2 workers), real MLflow (SQLite and a server)."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from sweep.cell_store import CellStore

from .conftest import run_cli

pytestmark = pytest.mark.sweeps

CELLS = 4  # conf/experiment/smoke.yaml: job.deadline 8,12 x job.workload 60,80
REPLICATES = 20
MECHANISMS = ["OD-Only", "MSU", "UP"]


def check_sweep_dir(sweep_dir):
    results = pd.read_parquet(sweep_dir / "results.parquet")
    for column in (
        "cell",
        "replicate",
        "mechanism",
        "utility",
        "cost",
        "completion_time",
        "job.deadline",
        "job.workload",
    ):
        assert column in results.columns, column
    assert len(results) == CELLS * REPLICATES * len(MECHANISMS)
    assert sorted(results["mechanism"].unique()) == sorted(MECHANISMS)
    assert results.groupby("cell")["replicate"].nunique().eq(REPLICATES).all()
    summary = pd.read_csv(sweep_dir / "summary.csv")
    assert len(summary) == CELLS * len(MECHANISMS)
    for column in (
        "job.deadline",
        "job.workload",
        "mechanism",
        "n",
        "utility_mean",
        "utility_std",
        "utility_ci95_low",
        "utility_ci95_high",
        "cost_mean",
        "cost_std",
        "cost_ci95_low",
        "cost_ci95_high",
    ):
        assert column in summary.columns, column
    assert (summary["utility_ci95_low"] <= summary["utility_mean"]).all()
    assert (summary["utility_mean"] <= summary["utility_ci95_high"]).all()
    # the summary is computed from the results, cell by cell
    means = results.groupby(["job.deadline", "job.workload", "mechanism"])["utility"].mean()
    for _, row in summary.iterrows():
        assert means[(row["job.deadline"], row["job.workload"], row["mechanism"])] == pytest.approx(row["utility_mean"])
    return results, summary


def check_mlflow(uri, summary, server=False):
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("spot")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags and "mechanism" not in r.data.tags]
    mechanism_runs = [r for r in runs if "mechanism" in r.data.tags]
    assert len(parents) == 1 and len(children) == CELLS and len(mechanism_runs) == CELLS * len(MECHANISMS)
    parent = parents[0]
    assert parent.info.status == "FINISHED"
    assert parent.data.metrics["simulations"] == CELLS * REPLICATES * len(MECHANISMS)
    assert {a.path for a in client.list_artifacts(parent.info.run_id)} >= {"summary.csv", "results.parquet"}
    for child in children:
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.info.status == "FINISHED"
        assert len(child.data.tags["config_hash"]) == 64
        assert child.data.tags["git_commit"]
        assert {"job.deadline", "job.workload"} <= set(child.data.params)
        assert {a.path for a in client.list_artifacts(child.info.run_id)} == {"cell.parquet", "config.yaml"}
        assert not [key for key in child.data.metrics if "/" in key]  # per-mechanism numbers live one level down
    cell_runs = {child.info.run_id for child in children}
    for run in mechanism_runs:
        assert run.data.tags["mlflow.parentRunId"] in cell_runs and run.info.status == "FINISHED"
        assert run.data.params["mechanism"] == run.data.tags["mechanism"]
        row = summary[
            (summary["job.deadline"] == int(run.data.params["job.deadline"]))
            & (summary["job.workload"] == float(run.data.params["job.workload"]))
            & (summary["mechanism"] == run.data.params["mechanism"])
        ].iloc[0]
        assert run.data.metrics["utility_mean"] == pytest.approx(row["utility_mean"])
        assert run.data.metrics["cost_ci95_high"] == pytest.approx(row["cost_ci95_high"])
        assert 1 <= run.data.metrics["utility_rank"] <= len(MECHANISMS)


@pytest.mark.slow
def test_smoke_multirun_sqlite(tmp_path):
    sweep_dir = tmp_path / "sweep"
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    proc = run_cli(
        "-m", "experiment=smoke", "runner.num_workers=2", f"tracking.uri={uri}", f"hydra.sweep.dir={sweep_dir}"
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "results (one row per simulation)" in proc.stdout
    assert "RAY_AUTH_MODE=disabled" not in proc.stderr  # no advice to turn authentication off
    _, summary = check_sweep_dir(sweep_dir)
    check_mlflow(uri, summary)


@pytest.mark.slow
def test_smoke_multirun_mlflow_server(tmp_path, mlflow_server):
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        "experiment=smoke",
        "runner.num_workers=2",
        "tracking=server",
        f"tracking.uri={mlflow_server}",
        f"hydra.sweep.dir={sweep_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    _, summary = check_sweep_dir(sweep_dir)
    check_mlflow(mlflow_server, summary, server=True)


@pytest.mark.slow
def test_single_run_writes_the_same_files(tmp_path):
    run_dir = tmp_path / "run"
    proc = run_cli("job.deadline=12", "replicates=15", "tracking=off", f"hydra.run.dir={run_dir}")
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = pd.read_parquet(run_dir / "results.parquet")
    assert len(results) == 15 * len(MECHANISMS)
    assert (results["cell"] == "job.deadline=12,replicates=15").all()
    summary = pd.read_csv(run_dir / "summary.csv")
    assert list(summary["mechanism"]) == MECHANISMS


@pytest.mark.slow
def test_unreachable_tracking_server_still_finishes_on_disk(tmp_path):
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        "job.deadline=8,10",
        "replicates=5",
        "tracking=server",
        "tracking.uri=http://127.0.0.1:9",
        f"hydra.sweep.dir={sweep_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stderr.count("MLflow tracking at http://127.0.0.1:9 failed") == 1
    assert "python -m sweep.upload" in proc.stderr
    assert len(pd.read_parquet(sweep_dir / "results.parquet")) == 2 * 5 * len(MECHANISMS)


@pytest.mark.slow
def test_upload_a_finished_sweep_later(tmp_path):
    from sweep.upload import main as upload_main

    sweep_dir = tmp_path / "sweep"
    proc = run_cli("-m", "job.deadline=8,10", "replicates=5", "tracking=off", f"hydra.sweep.dir={sweep_dir}")
    assert proc.returncode == 0, proc.stderr[-4000:]
    uri = f"sqlite:///{tmp_path / 'later.db'}"
    assert upload_main([str(sweep_dir), "--tracking-uri", uri]) == 0
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name("spot").experiment_id])
    assert len([r for r in runs if "mlflow.parentRunId" in r.data.tags and "mechanism" not in r.data.tags]) == 2


@pytest.mark.slow
def test_policy_selection_outputs_of_a_small_fig9_grid(tmp_path):
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        "experiment=spot/fig9",
        "replicates=12",
        "pool.window=[1,2]",
        "pool.threshold=[0.5,0.9]",
        "tracking=off",
        f"hydra.sweep.dir={sweep_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = pd.read_parquet(sweep_dir / "results.parquet")
    assert sorted(results["noise.kind"].unique()) == [
        "fixed_heavy",
        "fixed_uniform",
        "mag_dep_heavy",
        "mag_dep_uniform",
    ]
    pool = [
        "AHAP(w=1,v=1,sigma=0.5)",
        "AHAP(w=1,v=1,sigma=0.9)",
        "AHAP(w=2,v=1,sigma=0.5)",
        "AHAP(w=2,v=1,sigma=0.9)",
        "AHAP(w=2,v=2,sigma=0.5)",
        "AHAP(w=2,v=2,sigma=0.9)",
        "AHANP(sigma=0.5)",
        "AHANP(sigma=0.9)",
    ]
    store = CellStore(sweep_dir)
    assert len(store.entries) == 4
    for entry in store.entries.values():
        files = store.files_of(entry)
        weights = pd.read_parquet(io.BytesIO(files["policy_weights.parquet"]))
        assert list(weights.columns) == pool and len(weights) == 13
        assert files["policy_weights.png"][:4] == b"\x89PNG"
        series = pd.read_parquet(io.BytesIO(files["series.parquet"]))
        assert len(series["selection/cumulative_regret"]) == 12


@pytest.mark.slow
def test_the_design_cards_grid_keys_sweep_from_the_command_line(tmp_path):
    """Window, commitment and threshold (of the pool), the availability cap, the synthetic
    market's means and the noise kind and level are all grid keys of one multirun."""
    sweep_dir = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        "pool.window=[1],[2]",
        "pool.commitment=[1]",
        "pool.threshold=[0.5],[0.9]",
        "market.capacity=4,16",
        "market.mean_availability=3.0",
        "market.mean_price=0.4",
        "noise.kind=fixed_heavy",
        "noise.level=0.5",
        "mechanisms=[UP,AHAP]",
        "replicates=3",
        "tracking=off",
        "runner.progress=false",
        f"hydra.sweep.dir={sweep_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = pd.read_parquet(sweep_dir / "results.parquet")
    assert results["cell"].nunique() == 8
    for column in ("pool.window", "pool.threshold", "market.capacity"):
        assert column in results.columns, column
    ahap = sorted(results.loc[results["mechanism"] != "UP", "mechanism"].unique())
    assert ahap == [
        "AHAP(w=1,v=1,sigma=0.5)",
        "AHAP(w=1,v=1,sigma=0.9)",
        "AHAP(w=2,v=1,sigma=0.5)",
        "AHAP(w=2,v=1,sigma=0.9)",
    ]
    for world in CellStore(sweep_dir).configs().values():
        assert world["noise"] == {"kind": "fixed_heavy", "level": 0.5, "phases": None}
        assert world["market"]["mean_price"] == 0.4 and world["market"]["capacity"] in (4, 16)
