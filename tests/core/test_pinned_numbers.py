"""Key numbers of the core reproduction (docs/core/reproduction.md) pinned on five bundles of
each kind drawn from seeds 0-4: threads completed, summed over the bundles, by each online
mechanism. The paper's per-bundle counts (Fig. 4) are LARA 4 / UA 0 / STF 0 / LRF 2 / ETF 2 on
Table 1, 8 / 6 / 2 / 4 / 4 on Table 2 eps^1 and LARA 6 / UA 3 / STF 5 on eps^2; Fig. 6(a) has
LARA ahead of every baseline. A change to a mechanism, the calibration or the generators that
moves these numbers must update docs/core/reproduction.md too.

The numbers live in pinned_numbers.json and are computed by pinned_cases.py. When a change moves
them on purpose, regenerate them with `python -m tests.pinned_numbers --write` (it prints every
value that moved) and explain each moved value in the commit; `--check` lists the differences
without writing."""

from __future__ import annotations

import pytest

from tests.core.pinned_cases import CASES, load_pinned

PINNED = load_pinned()


def test_the_file_pins_exactly_the_computed_cases():
    """A case added or dropped in pinned_cases.py without rerunning the script shows here."""
    assert list(PINNED) == list(CASES)


@pytest.mark.parametrize("case", list(CASES))
def test_threads_completed_over_five_bundles(case):
    assert CASES[case]() == PINNED[case]
