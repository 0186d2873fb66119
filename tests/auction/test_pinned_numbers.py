"""Pinned welfare of the four online mechanisms on two small days, so that a change in any
mechanism's numbers shows (the paper-sized figures live in reports/auction/)."""
from __future__ import annotations

import numpy as np
import pytest

from algorithms.auction import family
from sweep.reports.auction import CALIBRATED

# 20 A100 nodes, 12 tasks per slot over 144 slots, seeds [replicate, 2026]:
# (welfare in cents, admitted tasks) per mechanism.
PINNED = {
    0: {"pdFTSP": (44003.17617476435, 327), CALIBRATED: (109852.66236605757, 1130),
        "EFT": (102653.7087559503, 1652), "NTM": (31329.000504006013, 289)},
    1: {"pdFTSP": (47234.800089636425, 344), CALIBRATED: (113176.531331392, 1183),
        "EFT": (100216.95284038599, 1645), "NTM": (30735.891509529072, 285)},
}


@pytest.mark.parametrize("replicate", sorted(PINNED))
def test_pinned_welfare(replicate):
    prepared = family.prepare({"cluster": {"nodes": 20}, "tasks": {"load": 12},
                               "mechanisms": ["pdFTSP", CALIBRATED, "EFT", "NTM"]})
    rows = family.simulate_replicate(prepared, replicate, np.random.default_rng([replicate, 2026]))
    got = {row["mechanism"]: (row["welfare"], row["admitted"]) for row in rows}
    for mechanism, (welfare, admitted) in PINNED[replicate].items():
        assert got[mechanism][0] == pytest.approx(welfare, rel=1e-9)
        assert got[mechanism][1] == admitted
    # the shape the reproduction reports: calibrated pdFTSP > EFT > pdFTSP as printed > NTM
    assert got[CALIBRATED][0] > got["EFT"][0] > got["pdFTSP"][0] > got["NTM"][0]
