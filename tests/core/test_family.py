"""The `core` family through its contract (algorithms/core/family.py): bad input rejected
before any work naming the key or the file and line, rows and side tables, OPT beside every
mechanism."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.core import family
from market.common.csv_trace import TraceError

BASE = {
    "family": {"name": "core", "module": "algorithms.core.family"},
    "bundle": {"kind": "table1"},
    "lara": {},
    "baselines": {},
    "outputs": {},
    "mechanisms": ["LARA", "UA", "STF", "LRF", "ETF", "OPT"],
}


def config(**sections):
    out = {key: (dict(value) if isinstance(value, dict) else value) for key, value in BASE.items()}
    for key, value in sections.items():
        out[key] = {**out[key], **value} if isinstance(value, dict) else value
    return out


@pytest.mark.parametrize(
    "sections, key",
    [
        (
            {"bundle": {"kind": "custom", "budget": [1.0], "deadline": [5], "threshold": [0.0], "difficulty": [0.5]}},
            "bundle.threshold",
        ),
        (
            {"bundle": {"kind": "custom", "budget": [-1.0], "deadline": [5], "threshold": [0.1], "difficulty": [0.5]}},
            "bundle.budget",
        ),
        (
            {
                "bundle": {
                    "kind": "custom",
                    "budget": [1.0],
                    "begin": [5],
                    "deadline": [5],
                    "threshold": [0.1],
                    "difficulty": [0.5],
                }
            },
            "bundle",
        ),
        ({"lara": {"gamma": 0.0}}, "lara.gamma"),
        ({"lara": {"gamma": 1.5}}, "lara.gamma"),
        ({"lara": {"exploration": -1}}, "lara.exploration"),
        ({"lara": {"speed": 1}}, "lara"),
        ({"lara": {"delivery": "edf"}}, "lara.delivery must be one of cascade, deadline, got 'edf'"),
        ({"lara": {"min_need": -1}}, "lara.min_need"),
        ({"mechanisms": ["LARA(delivery=x)"]}, "LARA\\(delivery=x\\): delivery"),
        ({"baselines": {"explore": "maybe"}}, "baselines.explore"),
        ({"outputs": {"trajectories": -1}}, "outputs.trajectories"),
        ({"mechanisms": ["LARA", "FIFO"]}, "mechanisms"),
        ({"mechanisms": ["LARA", "LARA"]}, "mechanisms"),
        ({"mechanisms": ["LARA(gamma=2)"]}, "LARA\\(gamma=2\\)"),
        ({"mechanisms": ["UA(x=1)"]}, "UA takes no parameters"),
        ({"bundle": {"kind": "tables"}}, "bundle.kind"),
    ],
)
def test_bad_values_are_rejected_naming_the_key(sections, key):
    with pytest.raises(ValueError, match=key):
        family.prepare(config(**sections))


@pytest.mark.parametrize(
    "text, line",
    [
        ("curve,anchor,seed\nx,16,0\n", 1),  # no loss column
        ("curve,anchor,seed,loss\nx,16,0,0.5\nx,32,0,nan\n", 3),  # a non-finite loss
        ("curve,anchor,seed,loss\nx,16,0,0.5\nx,32,0,-1\n", 3),  # a negative loss
    ],
)
def test_a_bad_curve_file_is_rejected_naming_file_and_line(tmp_path, text, line):
    path = tmp_path / "curves.csv"
    path.write_text(text)
    with pytest.raises(TraceError, match=f"curves.csv.*line {line}|curves.csv:{line}"):
        family.prepare(config(bundle={"kind": "real", "path": str(path)}))


def test_rows_threads_table_and_opt_columns():
    prepared = family.prepare(config())
    rows = family.simulate_replicate(prepared, 0, np.random.default_rng(0))
    assert [r["mechanism"] for r in rows] == BASE["mechanisms"]
    best = rows[-1]["utility"]
    for row in rows:
        table = row["tables"]["threads"]
        assert row["utility"] == float(np.sum(table["completed"])) and row["threads"] == 5
        assert row["of_opt"] == row["utility"] / best and row["utility"] <= best
        assert row["opt_proven"] is True
        assert row["starved_by_fit"] == 0  # Table 1: no thread is done by its fit
        assert "allocations" in row["tables"]  # replicate 0 < outputs.trajectories
    assert "predictions" in rows[0]["tables"] and "predictions" not in rows[1]["tables"]  # LARA yes, UA no
    later = family.simulate_replicate(prepared, 1, np.random.default_rng(1))
    assert all("allocations" not in row["tables"] for row in later)


def test_a_variant_takes_the_lara_section_and_overrides_one_key():
    specs = family.prepare(
        config(
            mechanisms=["LARA", "LARA(exploration=4000,gamma=0.85)", "LRF"],
            lara={"gamma": 0.8},
            baselines={"explore": False},
        )
    ).specs
    assert [(s.settings.exploration, s.settings.gamma, s.settings.explore) for s in specs] == [
        (8000.0, 0.8, True),
        (4000.0, 0.85, True),
        (8000.0, 0.8, False),
    ]


def test_the_issue_33_keys_listed_at_null_are_the_defaults():
    """conf/family/core.yaml lists lara.delivery and lara.min_need at null (OPTIONAL_KEYS): the
    paper's cascade and no need floor, and the cell's hashes as without them."""
    assert {"lara.delivery", "lara.min_need"} <= set(family.OPTIONAL_KEYS)
    specs = family.prepare(config(lara={"delivery": None, "min_need": None})).specs
    assert {(s.settings.delivery, s.settings.min_need) for s in specs if s.settings} == {("cascade", 0.0)}
    assert family.mechanism_names(config(lara={"delivery": None})) == BASE["mechanisms"]
    specs = family.prepare(
        config(lara={"delivery": "deadline", "min_need": 1}, mechanisms=["LARA", "LRF", "LARA(delivery=cascade)"])
    ).specs
    assert [(s.settings.delivery, s.settings.min_need) for s in specs] == [
        ("deadline", 1.0),
        ("deadline", 1.0),
        ("cascade", 1.0),
    ]
