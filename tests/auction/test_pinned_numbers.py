"""Pinned welfare of the four online mechanisms on two small days and on one paper-sized day of
the Fig. 8 run, so that a change in any mechanism's numbers shows (the figures' means over
several days live in reports/auction/). They pin numbers, not an ordering: which mechanism leads
depends on the unit of bbar (docs/auction/model.md, kappa), so an ordering here would lock one
unit choice in.

The numbers live in pinned_numbers.json and are computed by pinned_cases.py. When a change moves
them on purpose, regenerate them with `python -m tests.pinned_numbers --write` (it prints every
value that moved) and explain each moved value in the commit; `--check` lists the differences
without writing."""

from __future__ import annotations

import pytest

from tests.auction.pinned_cases import (
    CASES,
    REL,
    SMALL_DAY_REPLICATES,
    load_pinned,
    paper_sized_day,
    small_day,
    small_day_key,
)

PINNED = load_pinned()


def assert_outcomes(got: dict, pinned: dict) -> None:
    """Each pinned mechanism's welfare (within REL) and admitted tasks (exactly), named on failure."""
    assert set(got) == set(pinned), "the pinned mechanisms differ from the computed ones"
    for name, want in pinned.items():
        assert got[name]["welfare_cents"] == pytest.approx(want["welfare_cents"], rel=REL), name
        assert got[name]["admitted_tasks"] == want["admitted_tasks"], name


def test_the_file_pins_exactly_the_computed_cases():
    """A case added or dropped in pinned_cases.py without rerunning the script shows here."""
    assert list(PINNED) == list(CASES)


@pytest.mark.parametrize("replicate", SMALL_DAY_REPLICATES)
def test_pinned_welfare(replicate):
    assert_outcomes(small_day(replicate), PINNED[small_day_key(replicate)])


@pytest.mark.slow
def test_pinned_welfare_of_a_paper_sized_day():
    got, pinned = paper_sized_day(), PINNED["paper_sized_day"]
    assert got["tasks"] == pinned["tasks"]
    assert_outcomes(got["mechanisms"], pinned["mechanisms"])
