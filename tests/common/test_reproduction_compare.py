"""reproduction/compare.py: means matched on their key columns, judged within the combined interval."""

import math

import pandas as pd

from reproduction.compare import compare_dirs, main


def write(folder, rows):
    folder.mkdir()
    pd.DataFrame(rows, columns=["tasks.load", "mechanism", "n", "welfare_mean", "welfare_ci95"]).to_csv(
        folder / "fig8_load.csv", index=False
    )


def test_agreement_is_judged_within_the_combined_interval(tmp_path, capsys):
    write(
        tmp_path / "old", [["high", "EFT", 3, 100.0, 3.0], ["high", "NTM", 3, 50.0, 3.0], ["low", "EFT", 1, 10.0, None]]
    )
    write(
        tmp_path / "new", [["high", "NTM", 3, 60.0, 4.0], ["high", "EFT", 3, 104.0, 4.0], ["low", "EFT", 1, 11.0, None]]
    )
    table = compare_dirs(tmp_path / "old", tmp_path / "new").set_index("row")
    eft = table.loc["tasks.load=high, mechanism=EFT"]
    assert eft["difference"] == 4.0 and eft["combined_ci95"] == 5.0 and eft["agree"]
    ntm = table.loc["tasks.load=high, mechanism=NTM"]
    assert ntm["difference"] == 10.0 and not ntm["agree"]
    assert math.isnan(table.loc["tasks.load=low, mechanism=EFT"]["combined_ci95"])
    assert main([str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    assert "1 of 2 means agree within the combined 95% interval (1 without an interval)" in capsys.readouterr().out
