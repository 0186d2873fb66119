"""Per-slot arrival counts from a CSV trace, replayed as the task arrivals of the
`auction` family (paper 001, Sec. 5.1, "real-world traces";
reading notes `auction`: replay real per-slot counts scaled to the load asked for).

Format (data/README.md): a header row with at least the columns `slot`
(0, 1, 2, ... consecutive) and `arrivals` (integer >= 0); `timestamp` and any other
column are allowed and ignored.
"""

from __future__ import annotations

import os

import numpy as np

from market.common.csv_trace import TraceError, parse_int, read_rows

REQUIRED_COLUMNS = ("slot", "arrivals")


def load_arrival_trace(path) -> np.ndarray:
    """The `arrivals` column as an int64 array (read-only); errors name the file and line."""
    path = os.fspath(path)
    counts: list[int] = []
    for line, values in read_rows(path, REQUIRED_COLUMNS):
        if parse_int(values["slot"]) != len(counts):
            raise TraceError(
                path,
                line,
                f"slot {values['slot']!r}, expected {len(counts)} (slots must be consecutive integers from 0)",
            )
        count = parse_int(values["arrivals"])
        if count is None or count < 0:
            raise TraceError(path, line, f"arrivals {values['arrivals']!r} must be an integer >= 0")
        counts.append(count)
    out = np.asarray(counts, dtype=np.int64)
    out.setflags(write=False)
    return out


def scaled_window(
    trace: np.ndarray, slots: int, mean: float, rng: np.random.Generator, start: int | None = None
) -> np.ndarray:
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
    window = trace[start : start + slots].astype(float)
    total = window.sum()
    if total == 0:
        raise ValueError(f"the arrival trace has no arrivals in slots {start}..{start + slots - 1}")
    scaled = window * (mean * slots / total)
    whole = np.floor(scaled)
    return (whole + (rng.random(slots) < scaled - whole)).astype(np.int64)
