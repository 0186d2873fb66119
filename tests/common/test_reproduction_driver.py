"""The generic reproduction driver (reproduction/driver.py) and the checks it writes
(reproduction/experiment.py): no family named here but through the modules it finds."""

from __future__ import annotations

import pandas as pd
import pytest

from reproduction.driver import families, family_module
from reproduction.experiment import CHECK_COLUMNS, Check, Experiment, write_checks


def test_every_family_with_a_config_has_a_reproduction_module_and_experiments():
    from sweep.api import CONF_DIR

    configured = sorted(p.stem for p in (CONF_DIR / "family").glob("*.yaml"))
    assert families() == configured
    for name in families():
        module = family_module(name)
        assert module.EXPERIMENTS and all(isinstance(e, Experiment) for e in module.EXPERIMENTS)
        names = [e.name for e in module.EXPERIMENTS]
        assert len(set(names)) == len(names)
        for experiment in module.EXPERIMENTS:  # what it runs is an experiment file of its own family
            if experiment.experiment is not None:
                assert experiment.experiment.startswith(f"{name}/")
                assert (CONF_DIR / "experiment" / f"{experiment.experiment}.yaml").is_file()


def check(experiment: str, ours: float, holds=True) -> Check:
    return Check(experiment, f"{experiment}: x", ours, holds, "> 0")


def test_checks_of_a_subset_keep_the_other_experiments_checks(tmp_path):
    known = ["fig4", "fig8", "fig12", "fig10"]
    write_checks(
        tmp_path, [check("fig8", 1.0), check("fig12", 2.0), check("fig10", 3.0)], ["fig8", "fig12", "fig10"], known
    )
    # a rerun of fig12 and of fig4 (new): fig12's row is replaced, fig8's and fig10's are kept
    table = write_checks(tmp_path, [check("fig12", 5.0), check("fig4", 4.0)], ["fig12", "fig4"], known)
    assert list(table["experiment"]) == ["fig4", "fig8", "fig12", "fig10"]
    assert list(table["ours"]) == [4.0, 1.0, 5.0, 3.0]
    assert list(table.columns) == CHECK_COLUMNS
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "checks.csv"), table)


def test_checks_replace_an_empty_or_older_file(tmp_path):
    for earlier in ("", "check,value,holds\nold,1.0,True\n", "experiment,check,value,holds\nfig4,old,1.0,True\n"):
        (tmp_path / "checks.csv").write_text(earlier)
        table = write_checks(tmp_path, [check("fig8", 1.0)], ["fig8"], ["fig4", "fig8"])
        assert list(table["check"]) == ["fig8: x"]
    assert list(write_checks(tmp_path, [], ["fig4"], ["fig4", "fig8"])["check"]) == ["fig8: x"]


def test_a_check_states_the_papers_value_ours_and_the_rule(tmp_path):
    rows = [Check("fig5", "gain (%)", 42.7, True, "> 0", 49.0), Check("fig6", "a reference", 5.1, None, "information")]
    table = write_checks(tmp_path, rows, ["fig5", "fig6"], ["fig5", "fig6"])
    assert table.loc[0, "paper"] == 49.0 and bool(table.loc[0, "holds"]) is True
    assert pd.isna(table.loc[1, "holds"]) and pd.isna(table.loc[1, "paper"])


def test_the_driver_rejects_an_unknown_experiment(capsys):
    from reproduction.driver import main

    with pytest.raises(SystemExit) as exit_info:
        main(["spot", "--only", "fig5,fig99"])
    assert exit_info.value.code == 2
    assert "fig99" in capsys.readouterr().err
