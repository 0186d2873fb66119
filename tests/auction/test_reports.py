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


def test_checks_of_a_subset_keep_the_other_experiments_checks(tmp_path):
    from reproduction.driver import write_checks

    known = ["fig4", "fig8", "fig12", "fig10"]

    def row(experiment: str, value: float) -> dict:
        return {"experiment": experiment, "check": f"{experiment}: x", "value": value, "holds": True}

    write_checks(tmp_path, [row("fig8", 1.0), row("fig12", 2.0), row("fig10", 3.0)], ["fig8", "fig12", "fig10"], known)
    # a rerun of fig12 and of fig4 (new): fig12's row is replaced, fig8's and fig10's are kept
    table = write_checks(tmp_path, [row("fig12", 5.0), row("fig4", 4.0)], ["fig12", "fig4"], known)
    assert list(table["experiment"]) == ["fig4", "fig8", "fig12", "fig10"]
    assert list(table["value"]) == [4.0, 1.0, 5.0, 3.0]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "checks.csv"), table)


def test_checks_replace_an_empty_or_older_file(tmp_path):
    from reproduction.driver import write_checks

    row = {"experiment": "fig8", "check": "fig8: x", "value": 1.0, "holds": True}
    for earlier in ("", "check,value,holds\nold,1.0,True\n"):
        (tmp_path / "checks.csv").write_text(earlier)
        table = write_checks(tmp_path, [row], ["fig8"], ["fig8"])
        assert list(table["check"]) == ["fig8: x"]
    assert list(write_checks(tmp_path, [], ["fig4"], ["fig4", "fig8"])["check"]) == ["fig8: x"]
