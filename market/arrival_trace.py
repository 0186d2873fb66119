"""Per-slot arrival counts from a CSV trace, replayed as the task arrivals of the
`auction` family (paper 001_16667b406bf23ec3.txt, Sec. 5.1, "real-world traces";
SEED_NOTES `auction`: replay real per-slot counts scaled to the load asked for).

Format (/work/shared/data/README.md): a header row with at least the columns `slot`
(0, 1, 2, ... consecutive) and `arrivals` (integer >= 0); `timestamp` and any other
column are allowed and ignored.
"""
from __future__ import annotations

import csv
import os

import numpy as np

from market.spot_trace import TraceError, _parse_int

REQUIRED_COLUMNS = ("slot", "arrivals")


def load_arrival_trace(path) -> np.ndarray:
    """The `arrivals` column as an int64 array (read-only); errors name the file and line."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise TraceError(path, None, "file not found")
    counts: list[int] = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames
        if not header:
            raise TraceError(path, None, "empty file (no header row)")
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise TraceError(path, 1, f"missing column(s) {', '.join(repr(c) for c in missing)} "
                                      f"(found: {', '.join(repr(c) for c in header)})")
        for row in reader:
            line = reader.line_num
            slot_text = (row.get("slot") or "").strip()
            count_text = (row.get("arrivals") or "").strip()
            if not slot_text or not count_text:
                raise TraceError(path, line, "missing value for column 'slot' or 'arrivals'")
            if _parse_int(slot_text) != len(counts):
                raise TraceError(path, line, f"slot {slot_text!r}, expected {len(counts)} "
                                             "(slots must be consecutive integers from 0)")
            count = _parse_int(count_text)
            if count is None or count < 0:
                raise TraceError(path, line, f"arrivals {count_text!r} must be an integer >= 0")
            counts.append(count)
    if not counts:
        raise TraceError(path, None, "no data rows after the header")
    out = np.asarray(counts, dtype=np.int64)
    out.setflags(write=False)
    return out


def scaled_window(trace: np.ndarray, slots: int, mean: float, rng: np.random.Generator,
                  start: int | None = None) -> np.ndarray:
    """`slots` consecutive counts of `trace` (at `start`, or a uniform random start: one
    draw from rng), scaled so that their mean is `mean` per slot.

    Scaling keeps the trace's shape: each scaled count c * mean / window_mean is rounded
    down, and the fractional parts are rounded up at random with their own probability
    (one uniform draw per slot), so the expected total is exactly slots * mean. A window
    without any arrival cannot be scaled and is an error.
    """
    n = len(trace)
    if slots > n:
        raise ValueError(f"the arrival trace has {n} slots, fewer than the {slots} a day needs")
    if start is None:
        start = int(rng.integers(n - slots + 1))
    elif not 0 <= start <= n - slots:
        raise ValueError(f"arrival start {start} does not fit: must be in [0, {n - slots}]")
    window = trace[start:start + slots].astype(float)
    total = window.sum()
    if total == 0:
        raise ValueError(f"the arrival trace has no arrivals in slots {start}..{start + slots - 1}")
    scaled = window * (mean * slots / total)
    whole = np.floor(scaled)
    return (whole + (rng.random(slots) < scaled - whole)).astype(np.int64)
