"""The auction reproduction reports on small hand-made sweep dirs (no Ray)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorithms.auction import family
from reproduction import auction


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A results.parquet + tasks.parquet shaped like the engine's, two cells of two replicates."""
    out = tmp_path_factory.mktemp("run")
    rows, tasks = [], []
    for index, nodes in enumerate((3, 6)):
        config = {"cluster": {"nodes": nodes}, "tasks": {"load": 2, "slots": 24},
                  "mechanisms": [auction.PDFTSP, auction.CALIBRATED, "EFT", "NTM"]}
        prepared = family.prepare(config)
        for replicate in range(2):
            for row in family.simulate_replicate(prepared, replicate, np.random.default_rng([index, replicate])):
                table = pd.DataFrame(row.pop("tables")["tasks"])
                tasks.append(table.assign(cell=f"n{nodes}", cell_index=index, replicate=replicate,
                                          mechanism=row["mechanism"]))
                rows.append({"cell": f"n{nodes}", "cell_index": index, "cluster.nodes": nodes,
                             "replicate": replicate, **row})
    pd.DataFrame(rows).to_parquet(out / "results.parquet")
    pd.concat(tasks).to_parquet(out / "tasks.parquet")
    return out


def test_summary_and_improvements(run_dir, tmp_path):
    figure = auction.COMPARISONS[0]
    table = auction.comparison_report(run_dir, figure, tmp_path)
    assert (tmp_path / "fig4_nodes.csv").exists() and (tmp_path / "fig4_nodes.png").exists()
    assert set(table["mechanism"]) == {auction.PDFTSP, auction.CALIBRATED, "EFT", "NTM"}
    results = pd.read_parquet(run_dir / "results.parquet")
    for nodes in (3, 6):
        mean = results[results["cluster.nodes"] == nodes].groupby("mechanism")["welfare"].mean()
        expected = 100 * (mean[auction.PDFTSP] / mean["EFT"] - 1)
        assert auction.improvement(table, "cluster.nodes", nodes, auction.PDFTSP, "EFT") == pytest.approx(expected)
    assert table.loc[table["mechanism"] == "EFT", "vs_EFT_pct"].isna().all()


def test_payments_report_is_individually_rational(run_dir, tmp_path):
    table = auction.payments_report(run_dir, tmp_path, sample=5)
    assert len(table) <= 5 and (table["payment"] <= table["bid"]).all()
    assert table["max_payment_over_bid_all"].iloc[0] <= 1.0


def test_truthfulness_report_small_world(tmp_path):
    config = {"cluster": {"nodes": 3}, "tasks": {"load": 2, "slots": 12}, "mechanisms": ["pdFTSP"]}
    table = auction.truthfulness_report(tmp_path, config=config, tasks_to_probe=2)
    gap = auction.truthful_gap(table)
    assert gap["critical"] <= 1e-9
    assert (tmp_path / "fig10_truthfulness.png").exists()
