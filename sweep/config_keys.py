"""A family's config keys as a Markdown table, generated from its own YAML (docs/usage.md).

docs/usage.md documents every key of every family; a table written by hand goes stale as soon as
a key, a default or its explanation changes. The table is therefore generated from
``conf/family/<name>.yaml`` itself: every leaf key (dotted), its default, and the YAML comment
that documents it, plus the family's config groups (its ``defaults`` list) and the keys of each
group's default option. This module names no family: it reads whatever ``conf/family/`` holds,
and takes the keys the code defaults (``OPTIONAL_KEYS``) from the module the YAML names in
``family.module``.

    python -m sweep.config_keys spot                    # print the spot family's table
    python -m sweep.config_keys --write docs/usage.md   # rewrite every <!-- keys:<family> --> block

Values come from PyYAML; comments need a line-based pass (:func:`key_comments`) that follows the
style of ``conf/``: a trailing ``# ...`` on the key's line, continued on comment lines indented
past the key's colon, or else the comment block directly above the key (no blank line between).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from market.common.sections import describe

REPO = Path(__file__).resolve().parent.parent
CONF_DIR = REPO / "conf"
FAMILY_DIR = CONF_DIR / "family"
OPTIONAL_DEFAULT = "null (the code's default)"
SECTION = "section"

_KEY_LINE = re.compile(r"^( *)([A-Za-z_][\w\-]*)\s*:(\s.*|)$")
_GROUP_LINE = re.compile(r"^\s*-\s*(?:optional\s+)?/?([\w/@]+)\s*:\s*([^\s#]+)(.*)$")
_MARKERS = re.compile(r"(<!-- keys:([\w-]+) -->\n)(.*?)(\n?<!-- /keys:\2 -->)", re.S)


@dataclass(frozen=True)
class Row:
    """One line of a family's table: a group, a section or a leaf key."""

    key: str
    default: str
    meaning: str


@dataclass(frozen=True)
class Comments:
    """What the comments of one YAML file say: its header and the doc of each dotted key."""

    header: str
    keys: dict[str, str]
    groups: dict[str, str]


def split_comment(rest: str) -> tuple[str, str]:
    """Split what follows a key's colon into its value and its trailing comment.

    A ``#`` starts a comment only outside quotes and after whitespace (YAML's rule), so a quoted
    mechanism name or a URL fragment stays in the value."""
    quote = None
    for i, char in enumerate(rest):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or rest[i - 1].isspace()):
            return rest[:i].strip(), rest[i + 1 :].strip()
    return rest.strip(), ""


def _comment_text(stripped: str) -> str:
    """A comment line's text without its ``#``."""
    return stripped[1:].strip()


def key_comments(text: str) -> Comments:
    """Map every key of a YAML text (dotted, sections included) to the comment that documents it.

    A key's doc is its trailing comment, continued on the comment lines that follow it indented
    past its colon; without one, the comment block directly above it. The block before the first
    key is the file's header (``# @package`` left out), not the first key's doc; a blank line
    ends a block, so a note about several keys that stands apart documents none of them."""
    reader = _CommentReader()
    for line in text.splitlines():
        reader.read(line)
    return Comments(reader.header or " ".join(reader.block), reader.keys, reader.groups)


class _CommentReader:
    """The state of :func:`key_comments`' one pass: the open block, the enclosing keys, and the
    key whose trailing comment may continue on the next lines."""

    def __init__(self) -> None:
        self.keys: dict[str, str] = {}
        self.groups: dict[str, str] = {}
        self.header: str | None = None
        self.stack: list[tuple[int, str]] = []  # (indent, name) of the enclosing keys
        self.block: list[str] = []
        self.continued: tuple[str, int] | None = None  # (key, column its continuation lines pass)

    def read(self, line: str) -> None:
        """Take one line of the file: a blank, a comment, a key or a `defaults` entry."""
        stripped = line.strip()
        if not stripped:
            self.block, self.continued = [], None
        elif stripped.startswith("#"):
            self._comment(_comment_text(stripped), len(line) - len(line.lstrip()))
        else:
            self.continued = None
            match = _KEY_LINE.match(line)
            if match:
                self._key(len(match.group(1)), match.group(2), split_comment(match.group(3))[1])
            else:
                _group_comment(line, self.groups)
            self.block = []

    def _comment(self, text: str, column: int) -> None:
        """A comment line continues the last key's trailing comment or adds to the open block."""
        if self.continued and column > self.continued[1]:
            key = self.continued[0]
            self.keys[key] = f"{self.keys[key]} {text}".strip()
        elif not text.startswith("@package"):
            self.continued = None
            self.block.append(text)

    def _key(self, indent: int, name: str, trailing: str) -> None:
        """A key line: its dotted path from the enclosing keys, and its doc."""
        if self.header is None:
            self.header, self.block = " ".join(self.block), []
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()
        self.stack.append((indent, name))
        path = ".".join(part for _, part in self.stack)
        self.keys[path] = trailing or " ".join(self.block)
        self.continued = (path, indent + len(name) + 1) if trailing else None


def _group_comment(line: str, groups: dict[str, str]) -> None:
    """Record the trailing comment of a ``defaults`` entry (``- /market: synthetic  # ...``)."""
    match = _GROUP_LINE.match(line)
    if match:
        groups[match.group(1)] = split_comment(match.group(3))[1]


def leaves(values: Any, prefix: str = "") -> Iterator[tuple[str, Any, bool]]:
    """Yield (dotted key, value, is_section) depth first in the file's order; a section is a
    non-empty mapping, and it comes before its keys."""
    for name, value in values.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict) and value:
            yield key, value, True
            yield from leaves(value, f"{key}.")
        else:
            yield key, value, False


def render_value(value: Any) -> str:
    """A default as the YAML a user would type on the command line (flow style, no quotes)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(render_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {render_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def _rows(
    values: dict, comments: Comments, optional: frozenset[str], prefix: str = "", declared: dict | None = None
) -> list[Row]:
    """The section and leaf rows of one file's values (``defaults`` left out: the groups); a key
    the family declares (``declared_docs``) is explained by its declaration."""
    declared = declared or {}
    rows = []
    for key, value, is_section in leaves({k: v for k, v in values.items() if k != "defaults"}):
        full = f"{prefix}{key}"
        if is_section:
            default = SECTION
        elif full in optional and value is None:
            default = OPTIONAL_DEFAULT
        else:
            default = f"`{render_value(value)}`"
        rows.append(Row(full, default, declared.get(full) or comments.keys.get(key, "")))
    return rows


def family_file(family: str) -> Path:
    """The family's YAML; a family is whatever conf/family/ holds."""
    path = FAMILY_DIR / f"{family}.yaml"
    if not path.is_file():
        known = ", ".join(families())
        raise SystemExit(f"Error: no family '{family}' in conf/family/ (the families: {known})")
    return path


def families() -> list[str]:
    """Every family of conf/family/, sorted."""
    return sorted(path.stem for path in FAMILY_DIR.glob("*.yaml"))


def family_module(values: dict) -> Any:
    """The module the YAML names in ``family.module`` (the family contract), or None."""
    name = (values.get("family") or {}).get("module")
    return importlib.import_module(name) if name else None


def optional_keys(values: dict) -> frozenset[str]:
    """The keys whose null the family's code fills in: ``OPTIONAL_KEYS`` of ``family.module``."""
    return frozenset(getattr(family_module(values), "OPTIONAL_KEYS", ()))


def declared_docs(values: dict) -> dict[str, str]:
    """The one-line doc of every key of the sections the family declares (``DECLARED_SECTIONS`` of
    ``family.module``: section -> a dataclass of market/common/sections.py), by dotted key."""
    sections = getattr(family_module(values), "DECLARED_SECTIONS", {})
    return {f"{section}.{item.name}": item.doc for section, cls in sections.items() for item in describe(cls)}


def sync_comments(text: str, docs: dict[str, str], width: int = 106) -> str:
    """A YAML text with the comment beside every key of ``docs`` replaced by its doc: on the key's
    line from the column its comment had (two spaces after the value when it had none), wrapped
    at ``width`` columns onto comment lines at that column; the key's old continuation lines go."""
    out: list[str] = []
    stack: list[tuple[int, str]] = []
    skip_past: int | None = None  # drop the comment lines indented past this column
    for line in text.splitlines():
        stripped = line.strip()
        if skip_past is not None and stripped.startswith("#") and len(line) - len(line.lstrip()) > skip_past:
            continue
        skip_past = None
        match = _KEY_LINE.match(line)
        if not match or stripped.startswith("#"):
            out.append(line)
            continue
        indent, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, name))
        path = ".".join(part for _, part in stack)
        value, comment = split_comment(match.group(3))
        if path not in docs or not value:
            out.append(line)
            continue
        head = f"{match.group(1)}{name}: {value}"
        column = line.index("#", len(head)) if comment else len(head) + 2
        column = max(column, len(head) + 1)
        chunks = textwrap.wrap(docs[path], max(width - column - 2, 30), break_on_hyphens=False)
        out.append(f"{head.ljust(column)}# {chunks[0]}")
        out += [f"{' ' * column}# {chunk}" for chunk in chunks[1:]]
        skip_past = indent + len(name) + 1
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _utility(values: dict) -> str:
    """What the family's `utility` column means, from its contract (``UTILITY``), as a sentence."""
    utility = getattr(family_module(values), "UTILITY", "")
    return f" The `utility` column: {utility}." if utility else ""


def _group_entries(values: dict) -> list[tuple[str, str]]:
    """(group, default option) of the family's ``defaults`` list, ``_self_`` left out."""
    entries = []
    for item in values.get("defaults") or []:
        if isinstance(item, dict):
            for name, option in item.items():
                entries.append((name.split()[-1].lstrip("/"), str(option)))
    return entries


def _is_global(text: str) -> bool:
    """Whether an option file merges into the root (``# @package _global_``) rather than its group."""
    return any(line.strip().replace(" ", "") == "#@package_global_" for line in text.splitlines()[:3])


def _joined(comment: str, words: str) -> str:
    """A group's comment with the generated words after it, in parentheses when there is one."""
    return f"{comment} ({words})" if comment else words


def _group_rows(group: str, option: str, comment: str, optional: frozenset[str]) -> list[Row]:
    """The row of one config group and the keys of its default option (under the group's name)."""
    folder = CONF_DIR / group
    options = ", ".join(sorted(path.stem for path in folder.glob("*.yaml")))
    source = folder / f"{option}.yaml"
    text = source.read_text(encoding="utf-8")
    words = f"config group: `{group}=<option>`, the options in conf/{group}/: {options}."
    if _is_global(text):
        return [Row(group, f"`{option}`", _joined(comment, f"{words} The option sets keys of the sections below."))]
    meaning = _joined(comment, f"{words} Its keys below are those of conf/{group}/{option}.yaml.")
    rows = [Row(group, f"`{option}`", meaning)]
    values = yaml.safe_load(text) or {}
    return rows + _rows(values, key_comments(text), optional, prefix=f"{group}.")


def table(family: str) -> str:
    """The Markdown block of one family: its file's header and a table of groups and keys."""
    path = family_file(family)
    text = path.read_text(encoding="utf-8")
    values = yaml.safe_load(text) or {}
    comments = key_comments(text)
    optional = optional_keys(values)
    rows = []
    for group, option in _group_entries(values):
        rows += _group_rows(group, option, comments.groups.get(group, ""), optional)
    rows += _rows(values, comments, optional, declared=declared_docs(values))
    name = path.relative_to(REPO).as_posix()
    lines = [
        f"`{name}` (generated by `python -m sweep.config_keys {family}`): {comments.header}{_utility(values)}",
        "",
        "| key | default | meaning |",
        "|---|---|---|",
    ]
    lines += [f"| `{row.key}` | {_cell(row.default)} | {_cell(row.meaning)} |" for row in rows]
    return "\n".join(lines)


def rewrite(markdown: str) -> str:
    """Markdown with every ``<!-- keys:<family> -->`` block replaced by the family's table."""

    def replace(match: re.Match) -> str:
        return f"{match.group(1)}{table(match.group(2))}\n<!-- /keys:{match.group(2)} -->"

    return _MARKERS.sub(replace, markdown)


def blocks(markdown: str) -> dict[str, str]:
    """The text of every ``<!-- keys:<family> -->`` block, by family."""
    return {match.group(2): match.group(3).strip("\n") for match in _MARKERS.finditer(markdown)}


def main(argv: list[str] | None = None) -> int:
    """Print one family's table, or rewrite the marker blocks of a Markdown file in place."""
    parser = argparse.ArgumentParser(prog="python -m sweep.config_keys", description=__doc__.split("\n")[0])
    parser.add_argument("family", nargs="?", help="a family of conf/family/ (its table goes to stdout)")
    parser.add_argument("--write", metavar="FILE", help="rewrite every <!-- keys:<family> --> block of FILE")
    args = parser.parse_args(argv)
    if args.write:
        for family in families():
            source = family_file(family)
            text = source.read_text(encoding="utf-8")
            synced = sync_comments(text, declared_docs(yaml.safe_load(text) or {}))
            if synced != text:
                source.write_text(synced, encoding="utf-8")
                print(f"{source.relative_to(REPO)}: the comments of its declared keys rewritten")
        path = Path(args.write)
        old = path.read_text(encoding="utf-8")
        new = rewrite(old)
        path.write_text(new, encoding="utf-8")
        print(f"{path}: {len(blocks(new))} blocks ({'changed' if new != old else 'unchanged'})")
        return 0
    if not args.family:
        parser.error("give a family or --write FILE")
    print(table(args.family))
    return 0


if __name__ == "__main__":
    sys.exit(main())
