"""`make smoke`: one multirun over every family on tiny worlds, and the example CI workflow
(docs/examples/github-actions-smoke.yml, docs/ci.md) that runs it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from .conftest import ROOT

pytestmark = pytest.mark.sweeps

WORKFLOW = ROOT / "docs" / "examples" / "github-actions-smoke.yml"
FAMILIES = sorted(p.stem for p in (ROOT / "conf" / "family").glob("*.yaml"))

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def make_commands(target: str, args: str) -> list[list[str]]:
    """The sweep commands `make TARGET ARGS=...` runs, as `make -n` prints them (the .venv
    install it may run first left out), with this test's Python in place of .venv's."""
    env = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.run(
        ["make", "--no-print-directory", "-n", target, f"ARGS={args}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    commands = [shlex.split(line) for line in proc.stdout.splitlines() if " -m sweep " in line]
    return [[sys.executable, *command[1:]] for command in commands]


def workflow_steps() -> list[dict]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    (job,) = workflow["jobs"].values()
    return job["steps"]


def smoke_step_args() -> str:
    """The ARGS the workflow passes to `make smoke`."""
    (run,) = [step["run"] for step in workflow_steps() if "make smoke" in step.get("run", "")]
    words = shlex.split(run)
    assert words[:2] == ["make", "smoke"], run
    args = [word.removeprefix("ARGS=") for word in words[2:] if word.startswith("ARGS=")]
    assert len(args) == 1 and len(words) == 3, run
    return args[0]


def override(command: list[str], key: str) -> str:
    (value,) = [word.split("=", 1)[1] for word in command if word.startswith(f"{key}=")]
    return value


@needs_make
def test_the_ci_example_runs_the_makefiles_smoke_sweep_of_every_family():
    steps = workflow_steps()
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    runs = [step.get("run", "") for step in steps]
    assert uses[0] == "actions/checkout"
    (python,) = [step for step in steps if step.get("uses", "").startswith("actions/setup-python@")]
    assert str(python["with"]["python-version"]) == "3.11"
    (cache,) = [step for step in steps if step.get("uses", "").startswith("actions/cache@")]
    assert cache["with"]["path"] == ".venv" and "hashFiles('pyproject.toml')" in cache["with"]["key"]
    install = next(i for i, run in enumerate(runs) if "make install" in run)
    smoke = next(i for i, run in enumerate(runs) if "make smoke" in run)
    upload = uses.index("actions/upload-artifact")
    assert uses.index("actions/cache") < install < smoke < upload

    # the workflow calls the target, so it runs the Makefile's command: one sweep of every family,
    # tracking off, into the folder the artifact step uploads
    (command,) = make_commands("smoke", smoke_step_args())
    assert command[1:4] == ["-m", "sweep", "-m"], command
    assert sorted(override(command, "family").split(",")) == FAMILIES
    assert override(command, "tracking") == "off"
    assert override(command, "debug") == "tiny"
    assert steps[upload]["with"]["path"].rstrip("/") == override(command, "hydra.sweep.dir")
    assert steps[upload].get("if") == "always()"  # a failed sweep's cells and logs too


@needs_make
def test_a_bad_override_stops_the_smoke_sweep_with_status_2(tmp_path):
    (command,) = make_commands("smoke", f"tracking=nope hydra.sweep.dir={tmp_path / 'sweep'}")
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.startswith("Error: tracking=nope is not an option of tracking"), proc.stderr[-3000:]
    assert not (tmp_path / "sweep").exists()


@needs_make
@pytest.mark.slow
def test_make_smoke_sweeps_every_family_and_leaves_no_mlflow_db(tmp_path):
    sweep_dir, work = tmp_path / "sweep", tmp_path / "work"
    work.mkdir()
    commands = make_commands("smoke", f"tracking=off runner.progress=false hydra.sweep.dir={sweep_dir}")
    assert commands
    for command in commands:
        proc = subprocess.run(
            command, cwd=work, env={**os.environ, "PYTHONUNBUFFERED": "1"}, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stderr[-4000:]
    results = pd.read_parquet(sweep_dir / "results.parquet")
    assert sorted(results["family"].unique()) == FAMILIES
    assert set(results.groupby("family")["cell_index"].nunique()) == {2}  # seed=0,1
    assert set(results.groupby("cell_index")["replicate"].nunique()) == {2}  # debug=tiny
    assert results["utility"].notna().all()
    assert (sweep_dir / "summary.csv").exists()
    assert list(work.iterdir()) == []  # no mlflow.db, mlruns/, outputs/ or multirun/
    assert not list(tmp_path.rglob("mlflow.db"))
