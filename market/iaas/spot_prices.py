"""Spot prices of the `iaas` family (paper 003, Sec. III-A and V-A): config section `prices`.

One price per 5-minute slot, in dollars per instance-hour, slot 1 at index 0. Kinds
(docs/iaas/world.md):
- exponential: i.i.d. exponential prices of mean `mean` (Sec. V-A; the default mean is 0.11, the
  paper's 1.1 is `prices.mean=1.1`: see `surviving_fraction` and the doc);
- trace: a real series (`spot_price` relative to on-demand, data/README.md) times `on_demand`,
  each trace value held for `trace_slot_minutes / 5` slots, from trace slot `start` (drawn from
  the Generator when null), wrapping around to the trace's beginning when it runs out.

A spot instance runs while the price is at or below its bid and is lost in the first slot whose
price exceeds it (Sec. III-A).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from market.common.csv_trace import TraceError, check_slot, positive_number, read_rows
from market.common.fields import choice, integer, real
from market.common.sections import checked, key, parse
from market.iaas.jobs import LEN, SLOT_MINUTES

__all__ = [
    "KINDS",
    "PriceParams",
    "TraceError",
    "draw_prices",
    "load_price_trace",
    "surviving_fraction",
    "survival_table",
]

KINDS = ("exponential", "trace")
REQUIRED_COLUMNS = ("slot", "spot_price")


def _path(value, where: str) -> str:
    """`prices.path`: a non-empty string (or path-like)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where} must be a non-empty string, got {value!r}")
    return value


def _trace_slot_minutes(value, where: str) -> int:
    """`prices.trace_slot_minutes`: a positive multiple of the slot length."""
    minutes = integer(value, where, minimum=1)
    if minutes % SLOT_MINUTES:
        raise ValueError(f"{where} must be a multiple of the slot length {SLOT_MINUTES} minutes, got {minutes!r}")
    return minutes


@dataclass(frozen=True)
class PriceParams:
    """Config section `prices` (paper 003, Sec. V-A; docs/iaas/world.md). `from_config` reads a
    `trace` file once to check it, so a bad file fails before any simulation."""

    kind: str = key("exponential", checked(choice, KINDS), "exponential | trace")
    mean: float = key(
        0.11, checked(real, minimum=0.0, strict_min=True), "kind exponential: mean spot price per instance-hour"
    )
    on_demand: float = key(0.25, checked(real, minimum=0.0, strict_min=True), "on-demand price per instance-hour")
    path: str = key(
        "data/market_aws_us-west-2a_v100.csv",
        _path,
        "kind trace: the trace file; null: data/market_aws_us-west-2a_v100.csv",
        optional=True,
    )
    trace_slot_minutes: int = key(
        30, _trace_slot_minutes, "kind trace: minutes per trace slot, a multiple of 5; null: 30", optional=True
    )
    start: int | None = key(
        None,
        checked(integer, minimum=0, optional=True),
        "kind trace: the first trace slot; null: drawn for each replicate",
    )

    @classmethod
    def from_config(cls, section: Mapping | None) -> PriceParams:
        params = parse(cls, section, "prices")
        if params.kind == "trace":
            _check_start(params, len(load_price_trace(params.path)))
        return params


def _check_start(params: PriceParams, n: int) -> None:
    if params.start is not None and params.start >= n:
        raise ValueError(
            f"prices.start must be null or an integer in [0, {n - 1}] (the trace "
            f"{params.path} has {n} slots), got {params.start!r}"
        )


def load_price_trace(path) -> np.ndarray:
    """The `spot_price` column (spot price / on-demand price) of a trace, slot by slot.
    TraceError naming the file and line for slots that are not 0, 1, 2, ... and for prices that
    are not finite numbers > 0; other columns are ignored."""
    path = os.fspath(path)
    prices: list[float] = []
    for line, values in read_rows(path, REQUIRED_COLUMNS):
        check_slot(path, line, values["slot"], len(prices))
        price = positive_number(path, line, "spot_price", values["spot_price"])
        prices.append(price)
    return np.asarray(prices, dtype=np.float64)


def draw_prices(params: PriceParams, slots: int, rng: np.random.Generator) -> np.ndarray:
    """Spot prices of slots 1..`slots` (index 0 is slot 1), dollars per instance-hour.

    exponential: `rng.exponential(mean, slots)`. trace: ratio * on_demand, each trace value
    repeated trace_slot_minutes / 5 times (a step hold: a trace slot's mean has lost the
    volatility within it), from trace slot `start` or `rng.integers(n)` (one draw) when it is
    null, wrapping around after the last trace slot."""
    slots = integer(slots, "slots", minimum=1)
    if params.kind == "exponential":
        return rng.exponential(params.mean, slots)
    ratios = load_price_trace(params.path)
    n = len(ratios)
    _check_start(params, n)
    start = int(rng.integers(n)) if params.start is None else params.start
    hold = params.trace_slot_minutes // SLOT_MINUTES
    needed = -(-slots // hold)
    values = ratios[(start + np.arange(needed)) % n] * params.on_demand
    return np.repeat(values, hold)[:slots]


def surviving_fraction(bid: float, mean: float, slots_per_hour: int = LEN) -> float:
    """Expected fraction of an hour a spot instance bid at `bid` at the hour's start runs under
    i.i.d. exponential prices of mean `mean` (Sec. III-A: it runs while the price is at or below
    the bid, and stops at the first slot above it): with q = 1 - exp(-bid / mean),
    sum_{k=1..Len} q^k / Len. This is beta of Sec. III-C for a bid."""
    bid = real(bid, "bid", minimum=0.0)
    mean = real(mean, "mean", minimum=0.0, strict_min=True)
    slots_per_hour = integer(slots_per_hour, "slots_per_hour", minimum=1)
    q = -math.expm1(-bid / mean)
    return float(sum(q**k for k in range(1, slots_per_hour + 1)) / slots_per_hour)


def survival_table(
    means: Sequence[float] = (0.11, 1.1), bids: Sequence[float] = (0.10, 0.13, 0.16, 0.19, 0.22, 0.25, 0.28)
) -> list[tuple]:
    """Rows (mean, bid, surviving_fraction(bid, mean)) for each mean, then each bid (the table
    of docs/iaas/world.md; bids of Sec. V-A, b_i = 0.1 + 0.03 (i - 1))."""
    return [(float(m), float(b), surviving_fraction(b, m)) for m in means for b in bids]
