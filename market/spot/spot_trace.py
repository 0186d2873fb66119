"""CSV spot-market traces: loader and random windows.

Replays real per-slot spot price and availability in place of the paper's
Vast.ai series (paper 000_17f647b6e3bf630a.txt, Sec. II-B and VI-A; SEED_NOTES,
`spot`). Format (data/README.md): a header row with at least the
columns `slot` (0, 1, 2, ... consecutive), `spot_price` (spot price divided by
the on-demand price, > 0) and `availability` (integer in [0, capacity]);
`timestamp` and any other column are allowed and ignored.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from market.common.csv_trace import TraceError, parse_int, read_rows
from market.spot.spot_market import SpotMarket

__all__ = ["TraceError", "load_spot_trace", "sample_window"]

REQUIRED_COLUMNS = ("slot", "spot_price", "availability")


def load_spot_trace(path, capacity: int = 16, on_demand_price: float = 1.0) -> SpotMarket:
    """Read a market trace; prices are multiplied by on_demand_price (see SpotMarket)."""
    path = os.fspath(path)
    if isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 0:
        raise ValueError(f"capacity must be an integer >= 0, got {capacity!r}")
    capacity = int(capacity)
    if not (isinstance(on_demand_price, numbers.Real) and on_demand_price > 0):
        raise ValueError(f"on_demand_price must be > 0, got {on_demand_price!r}")
    prices: list[float] = []
    avails: list[int] = []
    for line, values in read_rows(path, REQUIRED_COLUMNS):
        slot = parse_int(values["slot"])
        if slot != len(prices):
            raise TraceError(
                path, line,
                f"slot {values['slot']!r}, expected {len(prices)} "
                f"(slots must be consecutive integers from 0)",
            )
        try:
            price = float(values["spot_price"])
        except ValueError:
            raise TraceError(path, line, f"spot_price {values['spot_price']!r} is not a number") from None
        if not (math.isfinite(price) and price > 0):
            raise TraceError(path, line, f"spot_price {values['spot_price']!r} must be > 0")
        avail = parse_int(values["availability"])
        if avail is None or not 0 <= avail <= capacity:
            raise TraceError(
                path, line,
                f"availability {values['availability']!r} must be an integer "
                f"in [0, {capacity}]",
            )
        prices.append(price)
        avails.append(avail)
    return SpotMarket(
        np.asarray(prices) * on_demand_price,
        np.asarray(avails, dtype=np.int64),
        on_demand_price=on_demand_price,
        capacity=capacity,
    )


def sample_window(
    trace: SpotMarket, rng: np.random.Generator, length: int, start: int | None = None
) -> SpotMarket:
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
