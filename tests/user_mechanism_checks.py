"""What every family's user-mechanism test does the same way (docs/extending.md): the doc's
worked example written into a folder outside the project, a bad mechanism refused before any
work, and a sweep with the example on 1 and 2 workers."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from tests.engine.conftest import run_cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def example_source(family: str) -> str:
    """The doc's worked example for `family`: the python block after the heading `## <family>:`."""
    return re.search(rf"^## {family}:.*?```python\n(.*?)```", DOC.read_text(), flags=re.S | re.M)[1]


def outside_folder(tmp_path: Path, monkeypatch, files: dict[str, str]) -> Path:
    """A folder outside the project holding `files` (name -> source), put on sys.path."""
    outside = tmp_path / "mine"
    outside.mkdir()
    for name, source in files.items():
        (outside / name).write_text(source)
    monkeypatch.syspath_prepend(str(outside))
    return outside


def assert_refused(folder: Path, out: Path, overrides: list[str], says: str) -> None:
    """`python -m sweep OVERRIDES` with `folder` on PYTHONPATH stops with exit 2 and one
    `Error: mechanisms: ...` line containing `says`, and writes nothing to `out`."""
    done = run_cli(*overrides, "tracking=off", f"hydra.run.dir={out}", env={"PYTHONPATH": str(folder)})
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: mechanisms: ") and says in lines[0], lines
    assert not out.exists()


def results_on_1_and_2_workers(folder: Path, tmp_path: Path, overrides: list[str]) -> list[pd.DataFrame]:
    """results.parquet of the multirun `overrides` on 1 and on 2 workers, `folder` on PYTHONPATH."""
    frames = []
    for workers in (1, 2):
        out = tmp_path / f"workers{workers}"
        done = run_cli(
            "-m",
            *overrides,
            f"runner.num_workers={workers}",
            "runner.progress=false",
            "tracking=off",
            f"hydra.sweep.dir={out}",
            env={"PYTHONPATH": str(folder)},
        )
        assert done.returncode == 0, done.stderr[-3000:]
        frames.append(pd.read_parquet(out / "results.parquet"))
    return frames
