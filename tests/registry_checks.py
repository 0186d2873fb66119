"""What every family's new-baseline test does the same way (docs/extending.md, "Adding a built-in
mechanism"): copy the project, add one module to algorithms/<family>/ and one line to its
registry, and run a family's replicate in the copy with the new name among its mechanisms."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("algorithms", "market", "arena", "sweep", "hydra_plugins", "conf", "data")
_CLOSE = re.compile(r"\n    \],\n\)\n")

# Run in the copy: one replicate of `family` on the config `experiment` composes at debug=tiny,
# its `mechanisms` replaced; prints the rows' mechanism and utility as JSON.
_RUN = """
import json, sys
from hydra import compose, initialize_config_dir
from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.seeding import replicate_rng
overrides, mechanisms = json.loads(sys.argv[1])
with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
    cfg = compose("config", overrides=[*overrides, "debug=tiny", "tracking=off"])
cell = make_cell(cfg, overrides, 0, "0")
world = {**cell.world, "mechanisms": mechanisms}
prepared = cell.spec.prepare(world)
rows = cell.spec.simulate_replicate(prepared, 0, replicate_rng(cell.world_hash, 0))
print(json.dumps([[row["mechanism"], row["utility"]] for row in rows]))
"""


def project_copy(tmp_path: Path) -> Path:
    """The project's code, configs and data copied to `tmp_path/project` (no caches)."""
    project = tmp_path / "project"
    for name in PACKAGES:
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    return project


def add_baseline(project: Path, family: str, module: str, source: str, line: str) -> None:
    """Write algorithms/<family>/<module>.py and add `line` as the last entry of the family's
    registry (algorithms/<family>/registry.py): the two edits the doc asks for, and no other."""
    (project / "algorithms" / family / f"{module}.py").write_text(source)
    registry = project / "algorithms" / family / "registry.py"
    text = registry.read_text()
    close = list(_CLOSE.finditer(text))[-1]
    edited = f"{text[: close.start()]}\n        {line}{text[close.start() :]}"
    assert len(edited.splitlines()) == len(text.splitlines()) + 1
    registry.write_text(edited)


def run_replicate(project: Path, overrides: list[str], mechanisms: list[str]) -> list[tuple[str, float]]:
    """(mechanism, utility) of every row of replicate 0 of the config `overrides` in `project`
    (its `mechanisms` set to the given list), run by the copy's own code."""
    done = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps([overrides, mechanisms])],
        cwd=project,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(project), "HOME": str(project)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [tuple(row) for row in json.loads(done.stdout.strip().splitlines()[-1])]
