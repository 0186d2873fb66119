"""CSV spot-market traces: loader and random windows.

Replays real per-slot spot price and availability in place of the paper's
Vast.ai series (paper 000, Sec. II-B and VI-A; reading notes,
`spot`). Format (data/README.md): a header row with at least the
columns `slot` (0, 1, 2, ... consecutive), `spot_price` (spot price divided by
the on-demand price, > 0) and `availability` (integer in [0, capacity]);
`timestamp` and any other column are allowed and ignored.
"""

from __future__ import annotations

import os

import numpy as np

from market.common.csv_trace import TraceError, check_slot, parse_int, positive_number, read_rows
from market.common.fields import integer, real
from market.spot.spot_market import SpotMarket

__all__ = ["TraceError", "load_spot_trace", "sample_window", "spot_trace_values"]

REQUIRED_COLUMNS = ("slot", "spot_price", "availability")


def load_spot_trace(path, capacity: int = 16, on_demand_price: float = 1.0) -> SpotMarket:
    """Read a market trace; prices are multiplied by on_demand_price (see SpotMarket)."""
    path = os.fspath(path)
    capacity = integer(capacity, "capacity", 0, allow_float=False)
    on_demand_price = real(on_demand_price, "on_demand_price", 0, strict_min=True)
    values = _parse(path, capacity)
    return SpotMarket(
        values["spot_price"] * on_demand_price,
        values["availability"],
        on_demand_price=on_demand_price,
        capacity=capacity,
    )


def spot_trace_values(path) -> dict[str, np.ndarray]:
    """The values a world is built from: `spot_price` (relative to on-demand) and
    `availability`, slot by slot. What the seeds hash (the family's INPUT_FILES): the same
    values give the same numbers whatever the file's bytes (line endings, a BOM, number
    formatting, other columns)."""
    return _parse(os.fspath(path), None)


def _parse(path: str, capacity: int | None) -> dict[str, np.ndarray]:
    prices: list[float] = []
    avails: list[int] = []
    for line, values in read_rows(path, REQUIRED_COLUMNS):
        check_slot(path, line, values["slot"], len(prices))
        price = positive_number(path, line, "spot_price", values["spot_price"])
        avail = parse_int(values["availability"])
        if avail is None or avail < 0 or (capacity is not None and avail > capacity):
            bound = "" if capacity is None else f"in [0, {capacity}]"
            raise TraceError(
                path,
                line,
                f"availability {values['availability']!r} must be an integer " + (bound or ">= 0"),
            )
        prices.append(price)
        avails.append(avail)
    return {"spot_price": np.asarray(prices, dtype=np.float64), "availability": np.asarray(avails, dtype=np.int64)}


def sample_window(trace: SpotMarket, rng: np.random.Generator, length: int, start: int | None = None) -> SpotMarket:
    """A window of `length` slots at `start`, or at a uniform random start that fits.

    Draws one integer from rng when start is None, nothing otherwise.
    """
    n = len(trace)
    if length > n:
        raise ValueError(f"trace has {n} slots, shorter than the window length {length}")
    if start is None:
        start = int(rng.integers(n - length + 1))
    elif not 0 <= start <= n - length:
        raise ValueError(
            f"window start {start} with length {length} does not fit a trace of {n} slots "
            f"(start must be in [0, {n - length}])"
        )
    return trace.window(start, length)
