"""README.md's family table and commands, and docs/benchmarks.md's goals table, kept equal to
the code: the families in conf/family/, their contract strings (PAPER, QUESTION, UTILITY),
their mechanism names, the Makefile's targets, the files the docs link to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from sweep.api import CONF_DIR
from sweep.cells import make_cell

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BENCHMARKS = (ROOT / "docs" / "benchmarks.md").read_text()
FAMILIES = sorted(p.stem for p in (CONF_DIR / "family").glob("*.yaml"))
MAKE_TARGETS = set(re.findall(r"^([a-z0-9-]+):", (ROOT / "Makefile").read_text(), flags=re.M))
COLUMNS = ("family", "paper", "question", "mechanisms", "reproduce", "utility", "docs")


def table_rows(text: str, header_start: str) -> list[list[str]]:
    """The body rows of the Markdown table whose header line starts with `header_start`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


FAMILY_TABLE = {row[0].strip("`"): dict(zip(COLUMNS, row)) for row in table_rows(README, "| family | paper |")}


def test_the_family_table_has_one_row_per_family_in_conf():
    assert sorted(FAMILY_TABLE) == FAMILIES


def test_every_reproduce_target_of_the_makefile_has_its_row_and_back():
    targets = sorted(t.removeprefix("reproduce-") for t in MAKE_TARGETS if t.startswith("reproduce-"))
    assert targets == FAMILIES
    for family, row in FAMILY_TABLE.items():
        assert row["reproduce"] == f"`make reproduce-{family}`"


def cell_of(family: str, overrides: list[str]):
    args = [f"family={family}", *overrides, "debug=tiny", "tracking=off"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return make_cell(compose("config", overrides=args), args, 0, "0")


@pytest.mark.parametrize("family", FAMILIES)
def test_paper_question_and_utility_are_the_family_modules_own(family):
    spec = cell_of(family, []).spec
    row = FAMILY_TABLE[family]
    assert (row["paper"], row["question"], row["utility"]) == (spec.paper, spec.question, spec.utility), (
        f"README's row for {family} differs from PAPER / QUESTION / UTILITY in {spec.module}"
    )


def mechanism_entries(cell: str) -> list[tuple[str, list[str]]]:
    """`A, B (with `k=v`), "C(x=1)"` -> [(A, []), (B, [k=v]), ("C(x=1)", [])]."""
    entries = []
    for part in re.split(r",\s*(?![^()]*\))", cell):
        match = re.fullmatch(r"(.+?)(?: \(with ((?:`[^`]+`,? ?)+)\))?", part.strip())
        entries.append((match[1], re.findall(r"`([^`]+)`", match[2] or "")))
    return entries


@pytest.mark.parametrize("family", FAMILIES)
def test_the_mechanisms_column_names_mechanisms_the_family_runs(family):
    entries = mechanism_entries(FAMILY_TABLE[family]["mechanisms"])
    plain = [name for name, overrides in entries if not overrides]
    assert cell_of(family, [f"mechanisms=[{','.join(plain)}]"]).mechanisms
    for name, overrides in entries:
        if overrides:
            assert cell_of(family, [*overrides, f"mechanisms=[{name}]"]).mechanisms


def test_every_doc_the_readme_links_exists():
    linked = set(re.findall(r"\]\(([^)#]+)\)", README)) | set(re.findall(r"`((?:docs|data|conf)/[^`*<>]+)`", README))
    missing = sorted(path for path in linked if not (ROOT / path).exists())
    assert not missing


def test_every_make_target_the_readme_names_exists():
    named = set(re.findall(r"`make ([a-z0-9-]+)", README)) - {"reproduce-"}
    assert named and named <= MAKE_TARGETS, sorted(named - MAKE_TARGETS)


def test_every_experiment_the_readme_names_exists():
    named = set(re.findall(r"experiment=([\w/]+)", README)) - {"<name>/<experiment>"}
    assert named
    assert all((CONF_DIR / "experiment" / f"{name}.yaml").exists() for name in named), named


def test_benchmarks_has_one_current_line_per_goal_and_stays_short():
    assert len(BENCHMARKS.splitlines()) < 300
    rows = table_rows(BENCHMARKS, "| goal | measured |")
    goals = [row[0] for row in rows]
    assert len(goals) == len(set(goals)), "a goal has two lines"
    for goal, _measured, when, command, results in rows:
        assert re.match(r"\d{4}-\d\d-\d\d, ", when), goal
        for module in re.findall(r"python -m (bench\.\w+)", command):
            assert (ROOT / (module.replace(".", "/") + ".py")).exists(), module
        for name in re.findall(r"`(\w+\.json)`", results):
            assert (ROOT / "bench" / "results" / name).exists(), name
