"""The config excerpts in the docs still match their files.

An excerpt copied into a page stays as it was while the file moves on (docs/usage.md showed an
experiment file that had changed). Convention: a ```yaml block in README.md or docs/**/*.md is an
excerpt, and its first line is a comment naming the file (`# conf/experiment/auction/fig8.yaml`,
optionally followed by a remark). Its other non-comment lines must appear in the file in the same
order (exact lines, trailing whitespace ignored); a line `...` marks a gap, and lines that are
not adjacent in the file need one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^\s*```")
_NAMED = re.compile(r"^#\s*(\S+\.ya?ml)\b")
GAP = "..."


@dataclass(frozen=True)
class Excerpt:
    """One ```yaml block: where it is, the file it names (or None) and its lines."""

    page: Path
    line: int
    source: str | None
    lines: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def yaml_blocks(text: str, page: Path) -> list[Excerpt]:
    """Every ```yaml (or ```yml) block of a Markdown text, with the file its first line names."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = lines[i].strip()
        if opening in ("```yaml", "```yml"):
            end = next((j for j in range(i + 1, len(lines)) if _FENCE.match(lines[j])), len(lines))
            body = tuple(lines[i + 1 : end])
            named = _NAMED.match(body[0].strip()) if body else None
            blocks.append(Excerpt(page, i + 1, named.group(1) if named else None, body))
            i = end
        i += 1
    return blocks


def code_lines(lines: tuple[str, ...]) -> list[str]:
    """The lines an excerpt claims are in its file: not blank, not a whole-line comment."""
    return [line.rstrip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def mismatch(excerpt_lines: list[str], file_lines: list[str]) -> str | None:
    """Why the excerpt's lines are not the file's lines in order (adjacent unless `...` comes
    between them), or None when they are."""
    file_lines = [line.rstrip() for line in file_lines]
    position, adjacent = 0, False
    for line in (line.rstrip() for line in excerpt_lines):
        if line.strip() == GAP:
            adjacent = False
            continue
        if adjacent:
            found = position if position < len(file_lines) and file_lines[position] == line else None
            if found is None:
                # comment and blank lines of the file may sit between two excerpt lines
                found = _next_code_line(file_lines, position)
                found = found if found is not None and file_lines[found] == line else None
        else:
            found = next((k for k in range(position, len(file_lines)) if file_lines[k] == line), None)
        if found is None:
            return f"{line!r} is not {'the next line' if adjacent else 'a later line'} of the file"
        position, adjacent = found + 1, True
    return None


def _next_code_line(file_lines: list[str], start: int) -> int | None:
    """The index of the first line at or after `start` that is neither blank nor a comment."""
    return next(
        (
            k
            for k in range(start, len(file_lines))
            if file_lines[k].strip() and not file_lines[k].lstrip().startswith("#")
        ),
        None,
    )


EXCERPTS = [block for page in PAGES for block in yaml_blocks(page.read_text(encoding="utf-8"), page)]


def test_the_docs_have_excerpts():
    """The scan found the docs' excerpts (an empty list would pass the checks below)."""
    assert any(block.source for block in EXCERPTS)


@pytest.mark.parametrize("excerpt", EXCERPTS, ids=lambda block: block.where)
def test_an_excerpt_matches_its_file(excerpt):
    assert excerpt.source, (
        f"{excerpt.where}: a ```yaml block is a config excerpt: its first line must name "
        "the file (# conf/...yaml) so that this test can check it"
    )
    path = REPO / excerpt.source
    assert path.is_file(), f"{excerpt.where}: names {excerpt.source}, which does not exist"
    why = mismatch(code_lines(excerpt.lines[1:]), path.read_text(encoding="utf-8").splitlines())
    assert why is None, f"{excerpt.where} no longer matches {excerpt.source}: {why}; copy the file's lines again"


FILE = ["a: 1", "# note", "b:", "  c: 2", "", "d: [x,", "    y]", "e: 3"]


@pytest.mark.parametrize(
    "lines, ok",
    [
        (["a: 1", "b:", "  c: 2"], True),  # comments of the file between: still adjacent
        (["a: 1", "...", "e: 3"], True),  # a gap
        (["a: 1", "e: 3"], False),  # not adjacent without a gap
        (["b:", "a: 1"], False),  # out of order
        (["a: 2"], False),  # a changed value
        (["d: [x,", "    y]   "], True),  # trailing whitespace ignored
        (["  c:  2"], False),  # inner whitespace counts
    ],
)
def test_mismatch(lines, ok):
    assert (mismatch(lines, FILE) is None) is ok


def test_yaml_blocks_finds_the_named_file():
    text = "x\n```yaml\n# conf/a.yaml (comments left out)\nk: 1\n```\n```bash\nls\n```\n```yaml\nk: 2\n```\n"
    blocks = yaml_blocks(text, REPO / "README.md")
    assert [(block.source, block.lines[1:]) for block in blocks] == [("conf/a.yaml", ("k: 1",)), (None, ())]
