"""Hydra's config errors in the project's voice (sweep/config_errors.py): one `Error:` line that
says what works, exit status 2, no traceback and nothing left behind, in a single run and in a
multirun; and the documented keys that have a null default in the YAML can be set without `+`
while leaving every existing cell's config and hashes as they were."""

from __future__ import annotations

import importlib

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf, open_dict

from sweep.api import CONF_DIR
from sweep.cell_store import CellStore
from sweep.cells import make_cell
from sweep.config_errors import config_error_message

from .conftest import TRACE, run_cli

pytestmark = pytest.mark.sweeps


def rejected(tmp_path, *args: str, multirun: bool = False) -> str:
    """Run the CLI; assert exit 2, one `Error:` line last on stderr, no traceback and no output
    dir; return that line without `Error: `."""
    out = tmp_path / "out"
    where = f"hydra.sweep.dir={out}" if multirun else f"hydra.run.dir={out}"
    proc = run_cli(*(["-m"] if multirun else []), *args, where, timeout=180)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("Error: "), proc.stderr
    assert sum(line.startswith("Error:") for line in lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "HYDRA_FULL_ERROR" not in proc.stderr, proc.stderr
    assert not out.exists(), list(out.rglob("*"))
    return lines[-1][len("Error: ") :]


def test_a_key_of_another_family_names_the_family_that_has_it(tmp_path):
    assert rejected(tmp_path, "family=auction", "job.deadline=5", "tracking=off") == (
        "job.deadline is not a key of the auction family's cells (job is a section of the spot family: add family=spot)"
    )


@pytest.mark.slow
def test_a_key_of_another_family_in_a_swept_family_names_the_cell(tmp_path):
    error = rejected(tmp_path, "family=spot,auction", "market.mean_price=0.3", "tracking=off", multirun=True)
    assert error.startswith(
        "market.mean_price is not a key of the auction family's cells (market is a section "
        "of the spot family: run the auction cells without market.mean_price"
    ), error
    assert error.endswith("[cell #1: family=auction market.mean_price=0.3 tracking=off]"), error


def test_an_unknown_experiment_lists_every_experiment(tmp_path):
    error = rejected(tmp_path, "experiment=nope")
    assert error.startswith("experiment=nope is not an option of experiment"), error
    assert "demo, smoke" in error
    for experiment in (
        p.relative_to(CONF_DIR / "experiment").with_suffix("").as_posix()
        for p in (CONF_DIR / "experiment").glob("*/*.yaml")
    ):
        assert experiment in error, experiment
    assert "spot/fig5, spot/fig6" in error


@pytest.mark.parametrize(
    "group, options",
    [
        ("family", "arena, auction, core, iaas, sow, spot"),
        ("market", "paper_like, synthetic, trace, vast_like"),
        ("runner", "cluster, local"),
    ],
)
def test_an_unknown_option_lists_the_options(tmp_path, group, options):
    assert rejected(tmp_path, f"{group}=nope") == (
        f"{group}=nope is not an option of {group}; the options (conf/{group}/): {options}"
    )


def test_an_unknown_experiment_in_a_multirun(tmp_path):
    assert "spot/fig5" in rejected(tmp_path, "experiment=spot/fig55", multirun=True)


@pytest.mark.slow
def test_the_iaas_trace_path_is_set_without_plus(tmp_path):
    out = tmp_path / "out"
    proc = run_cli(
        "family=iaas",
        "prices.kind=trace",
        f"prices.path={TRACE}",
        "replicates=1",
        "debug=tiny",
        "tracking=off",
        f"hydra.run.dir={out}",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "results.parquet").exists()


@pytest.mark.slow
def test_a_core_bundle_key_is_set_without_plus(tmp_path):
    out = tmp_path / "out"
    proc = run_cli(
        "family=core",
        "bundle.shape=floor",
        "debug=tiny",
        "tracking=off",
        "replicates=1",
        f"hydra.run.dir={out}",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "results.parquet").exists()
    cell = OmegaConf.create(next(iter(CellStore(out).configs().values())))
    assert cell.bundle.shape == "floor" and "floor" not in cell.bundle  # the other null keys left out


# -- the messages, composed in-process ---------------------------------------------------------
@pytest.fixture
def hydra():
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield GlobalHydra.instance().hydra
    GlobalHydra.instance().clear()


def message(hydra, *overrides: str, multirun: bool = False) -> str:
    mode = RunMode.MULTIRUN if multirun else RunMode.RUN
    with pytest.raises(Exception) as caught:
        hydra.compose_config("config", overrides=list(overrides), run_mode=mode, with_log_configuration=False)
    return config_error_message(caught.value, list(overrides), multirun=multirun)


@pytest.mark.parametrize(
    "overrides, expected",
    [
        (["job.deadlin=5"], "job.deadlin is not a key of the spot family's cells; did you mean job.deadline?"),
        (
            ["market.path=x.csv"],
            "market.path is not a key of the spot family's cells with market=synthetic "
            "(market.path is one with market=trace: add market=trace)",
        ),
        (
            ["family=auction", "market=trace"],
            "market=trace: market is not a config group of the auction family's "
            "cells (market is a config group of the spot family: add family=spot)",
        ),
        (
            ["experiment=auction/fig5", "job.deadline=5"],
            "job.deadline is not a key of the auction family's cells (job "
            "is a section of the spot family: family=spot without "
            "experiment=auction/fig5)",
        ),
        (
            ["+job.deadline=5"],
            "+job.deadline=5: job.deadline is already a key of the config: set it without + (job.deadline=5)",
        ),
        (
            ["job.deadline=8,10"],
            "job.deadline=8,10 is a sweep, which needs a multirun: add -m to run one cell per value "
            "(or, for one value that is a list, write job.deadline=[8,10])",
        ),
    ],
)
def test_messages(hydra, overrides, expected):
    assert message(hydra, *overrides) == expected


def test_an_override_that_does_not_parse_is_named(hydra):
    assert message(hydra, "job.deadline=[1,").startswith("job.deadline=[1,: not an override Hydra can read")


def test_a_multirun_with_a_sweep_beside_the_bad_key(hydra):
    assert message(hydra, "family=auction", "job.deadline=5", "seed=1,2", multirun=True) == (
        "job.deadline is not a key of the auction family's cells (job is a section of the spot family: add family=spot)"
    )


# -- null defaults: set without `+`, and every existing cell as it was -------------------------
FAMILIES = {
    "spot": [[]],
    "iaas": [[]],
    "arena": [[]],
    "auction": [[]],
    "sow": [["births=recurring"], ["births=adversarial"], ["births=blocking"]],
    "core": [
        ["bundle=table1"],
        ["bundle=table2"],
        ["bundle=scalability"],
        ["bundle=random"],
        ["bundle=real"],
        ["bundle=live"],
    ],
}


@pytest.mark.parametrize("family, groups", [(f, g) for f, options in FAMILIES.items() for g in options])
def test_null_defaults_leave_the_cell_and_its_hashes_as_without_them(hydra, family, groups):
    spec_module = importlib.import_module(compose("config", overrides=[f"family={family}"]).family.module)
    base = [f"family={family}", *groups, "tracking=off"]
    cfg = compose("config", overrides=base)
    present = [key for key in spec_module.OPTIONAL_KEYS if OmegaConf.select(cfg, key, default="absent") is None]
    assert present, "the YAML lists none of the family's null defaults"
    cell = make_cell(cfg, base, 0, "0")
    before = compose("config", overrides=base)  # the config as it was before the YAML listed the keys
    with open_dict(before):
        for key in present:
            section, name = key.split(".")
            del before[section][name]
    without = make_cell(before, base, 0, "0")
    assert cell.world == without.world
    assert (cell.config_hash, cell.world_hash) == (without.config_hash, without.world_hash)
