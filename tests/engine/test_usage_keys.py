"""docs/usage.md's key tables are the families' own configs (sweep/config_keys.py).

A table written by hand went stale as keys and defaults changed, and four families had none.
Each family's block is generated from conf/family/<name>.yaml; these tests fail when a block no
longer equals what the generator prints, when a family has no block, or when a key of a family's
YAML is missing from its table or has no comment saying what it is.
"""

from __future__ import annotations

import pytest
import yaml

from market.common.sections import describe, parse
from sweep import config_keys
from sweep.config_keys import FAMILY_DIR, REPO, key_comments, leaves, split_comment

USAGE = REPO / "docs" / "usage.md"
FIX = "run `python -m sweep.config_keys --write docs/usage.md`"
FAMILIES = config_keys.families()


def _family_values(family: str) -> dict:
    """The family's YAML values, its `defaults` list (the groups) left out."""
    values = yaml.safe_load((FAMILY_DIR / f"{family}.yaml").read_text(encoding="utf-8"))
    return {key: value for key, value in values.items() if key != "defaults"}


def test_there_are_families():
    """The checks below loop over conf/family/: an empty loop would pass silently."""
    assert len(FAMILIES) >= 2


@pytest.mark.parametrize("family", FAMILIES)
def test_usage_has_the_generated_block_of_every_family(family):
    blocks = config_keys.blocks(USAGE.read_text(encoding="utf-8"))
    assert family in blocks, (
        f"docs/usage.md has no <!-- keys:{family} --> ... <!-- /keys:{family} --> block; add one and {FIX}"
    )
    assert blocks[family] == config_keys.table(family), f"docs/usage.md's {family} keys are stale: {FIX}"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_leaf_key_of_the_family_is_in_its_table_with_a_comment(family):
    """Every key a user can set appears, and the YAML says what it is (a trailing comment or the
    block above it): the table's meaning column is only as good as the comments."""
    rendered = config_keys.table(family)
    comments = key_comments((FAMILY_DIR / f"{family}.yaml").read_text(encoding="utf-8")).keys
    for key, _, is_section in leaves(_family_values(family)):
        assert f"| `{key}` |" in rendered, f"{family}: {key} is missing from its table"
        if not is_section:
            assert comments.get(key), f"conf/family/{family}.yaml: {key} has no comment; add one (comments only)"


def test_optional_keys_show_the_codes_default():
    text = "family:\n  module: algorithms.spot.family\nnoise:\n  growth: null   # flat | sqrt\n"
    rows = config_keys._rows(yaml.safe_load(text), key_comments(text), frozenset({"noise.growth"}))
    assert [(row.key, row.default) for row in rows][-1] == ("noise.growth", config_keys.OPTIONAL_DEFAULT)


SAMPLE = """\
# @package _global_
# The header: what the file is.
# Its second line.
family:
  name: demo

# A section's block.
job:
  size: 80.0          # a trailing comment
  mode: a             # a | b: a long trailing comment
                      # continued past the key's colon
  # A block above a key
  # on two lines.
  plain: 3
  both: 1             # the trailing comment wins over the block
  quoted: "a # b"     # after the quotes
  bare: 2

  # A note apart from any key (a blank line follows).

  after_note: 4
nested:
  inner:              # the inner section
    # the leaf's block: left of the colon of `inner`, so not its continuation
    leaf: [1, 2]
mechanisms: ['X(a=1)', Y]   # names
"""


def test_comments_of_the_sample():
    comments = key_comments(SAMPLE)
    assert comments.header == "The header: what the file is. Its second line."
    assert comments.keys["family"] == ""
    assert comments.keys["job"] == "A section's block."
    assert comments.keys["job.size"] == "a trailing comment"
    assert comments.keys["job.mode"] == "a | b: a long trailing comment continued past the key's colon"
    assert comments.keys["job.plain"] == "A block above a key on two lines."
    assert comments.keys["job.both"] == "the trailing comment wins over the block"
    assert comments.keys["job.quoted"] == "after the quotes"
    assert comments.keys["job.bare"] == ""
    assert comments.keys["job.after_note"] == ""
    assert comments.keys["nested.inner"] == "the inner section"
    assert comments.keys["nested.inner.leaf"].startswith("the leaf's block")
    assert comments.keys["mechanisms"] == "names"


def test_a_group_entrys_comment():
    text = "defaults:\n  - /market: synthetic   # the family's own group\n  - _self_\nfamily:\n  name: x\n"
    assert key_comments(text).groups == {"market": "the family's own group"}


@pytest.mark.parametrize(
    "rest, expected",
    [
        (" 80.0   # L", ("80.0", "L")),
        (" 'a#b'  # c", ("'a#b'", "c")),
        (' "x # y"', ('"x # y"', "")),
        (" url#frag", ("url#frag", "")),
        ("", ("", "")),
    ],
)
def test_split_comment(rest, expected):
    assert split_comment(rest) == expected


def test_rewrite_replaces_only_the_marked_blocks(monkeypatch):
    monkeypatch.setattr(config_keys, "table", lambda family: f"TABLE {family}")
    text = "a\n<!-- keys:one -->\nold\nlines\n<!-- /keys:one -->\nb\n<!-- keys:two -->\n<!-- /keys:two -->\n"
    assert config_keys.rewrite(text) == (
        "a\n<!-- keys:one -->\nTABLE one\n<!-- /keys:one -->\nb\n<!-- keys:two -->\nTABLE two\n<!-- /keys:two -->\n"
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_the_comments_of_declared_keys_are_their_declarations(family):
    """A key of a section the family declares (DECLARED_SECTIONS) is documented once, in code:
    the YAML's comment beside it is generated from the declaration."""
    text = (FAMILY_DIR / f"{family}.yaml").read_text(encoding="utf-8")
    docs = config_keys.declared_docs(yaml.safe_load(text))
    assert config_keys.sync_comments(text, docs) == text, f"conf/family/{family}.yaml's comments are stale: {FIX}"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_yaml_of_a_declared_section_lists_every_key(family):
    """Every declared key is in the family's YAML (so the command line sets it without `+`), at a
    value of the family's choosing; null only where null means the declared default."""
    values = yaml.safe_load((FAMILY_DIR / f"{family}.yaml").read_text(encoding="utf-8"))
    module = config_keys.family_module(values)
    optional = config_keys.optional_keys(values)
    for section, cls in getattr(module, "DECLARED_SECTIONS", {}).items():
        for item in describe(cls):
            where = f"{section}.{item.name}"
            assert item.name in values[section], f"conf/family/{family}.yaml does not list {where}"
            if values[section][item.name] is None:
                assert item.default is None or where in optional, f"{where} is null but has no null default"


def test_sync_comments_rewrites_only_the_declared_keys_comments():
    text = "a:\n  x: 1      # old\n              # old, continued\n  y: 2  # kept\nb: 3\n"
    synced = config_keys.sync_comments(text, {"a.x": "new doc", "b": "top"})
    assert synced == "a:\n  x: 1      # new doc\n  y: 2  # kept\nb: 3  # top\n"


def _plain(value):
    return [_plain(item) for item in value] if isinstance(value, (tuple, list)) else value


@pytest.mark.parametrize("family", FAMILIES)
def test_every_declared_section_parses_the_familys_yaml_and_reads_back_its_values(family):
    values = yaml.safe_load((FAMILY_DIR / f"{family}.yaml").read_text(encoding="utf-8"))
    for section, cls in getattr(config_keys.family_module(values), "DECLARED_SECTIONS", {}).items():
        parsed = parse(cls, values[section], section)
        for name, written in values[section].items():
            if written is not None:
                assert _plain(getattr(parsed, name)) == _plain(written), f"{section}.{name}"
