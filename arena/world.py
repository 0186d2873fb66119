"""The arena's world: one job stream and one spot market on one time base (docs/arena.md,
"Time base" and "Markets").

Time base: paper 003's slots of 5 minutes, Len = 12 slots an hour (paper 003, Sec. III-A);
slot 1 is index 0 of every array. Money: the on-demand price of an instance-hour is 1, every
spot price is relative to it (paper 000, Sec. VI-A normalises the same way).

Jobs (section `jobs`): paper 003's stream (market/iaas/jobs.py, Sec. III-B, V-A), unchanged.

Market (section `market`), one of
- `synthetic`: paper 000's synthetic spot market (market/spot/spot_market.py, its keys under
  `market.synthetic`), 30-minute slots each held for 6 arena slots;
- `trace`: the bundled real trace (market/spot/spot_trace.py, `market.trace.path`), 30-minute
  slots held for 6 arena slots, from `market.trace.start` or a random start, wrapping around;
- `exponential`: paper 003's i.i.d. exponential prices (market/iaas/spot_prices.py) of mean
  `market.exponential.mean` (relative to on-demand), each held for `market.exponential.hold`
  slots (1: a new price every 5 minutes, as paper 003; 12: one an hour).
Every spot price is multiplied by `market.price_scale` (the price level of a grid).

Availability. Spot is obtainable in a slot when the market's availability there is above 0
("up"); then as many instances as a job's parallelism allows, at the slot's price (paper 003's
unlimited spot at the price, Sec. III-A); when it is 0 ("down") none, and running spot
instances are ended by the cloud. Paper 000's partial availability (n_avail between 0 and the
job's N_max) is not modelled: paper 003's kernel has no place for it (docs/arena.md).

Draws, in this order, from the replicate's Generator: the jobs (market/iaas/jobs.py's order),
then the market (synthetic: its `sample`; trace: one integer when the start is null;
exponential: one exponential per held value).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from market.common.fields import as_section, choice, integer, real, reject_unknown_keys
from market.iaas.jobs import LEN, JobParams, JobStream, draw_jobs
from market.iaas.spot_prices import PriceParams, draw_prices
from market.spot.spot_market import SyntheticMarketParams
from market.spot.spot_trace import spot_trace_values

__all__ = ["LEN", "ON_DEMAND", "SPOT_MARKET_HOLD", "KINDS", "MarketConfig", "World", "WorldParams", "draw_world"]

ON_DEMAND = 1.0  # the currency: one on-demand instance-hour
SPOT_MARKET_HOLD = 6  # arena slots per 30-minute slot of paper 000's markets (Sec. VI-A)
KINDS = ("synthetic", "trace", "exponential")
MARKET_KEYS = ("kind", "price_scale", "synthetic", "trace", "exponential")
TRACE_KEYS = ("path", "start")
EXPONENTIAL_KEYS = ("mean", "hold")
DEFAULT_TRACE = "data/market_aws_us-west-2a_v100.csv"
PRICE_FLOOR = 1e-9  # an exponential draw of exactly 0 would break paper 000's SpotMarket (prices > 0)


def _synthetic(section) -> SyntheticMarketParams:
    """`market.synthetic`: SyntheticMarketParams, its errors re-keyed under `market.synthetic`."""
    d = as_section(section, "market.synthetic")
    try:
        return SyntheticMarketParams.from_dict(d)
    except ValueError as err:
        raise ValueError(re.sub(r"\bmarket([.:])", r"market.synthetic\1", str(err))) from None


@dataclass(frozen=True)
class MarketConfig:
    """Section `market` (module docstring)."""

    kind: str = "synthetic"
    price_scale: float = 1.0
    synthetic: SyntheticMarketParams = SyntheticMarketParams()
    trace_path: str = DEFAULT_TRACE
    trace_start: int | None = None
    exponential_mean: float = 0.44
    exponential_hold: int = 1
    trace: tuple | None = None  # (spot_price, availability) arrays of the trace, when kind is trace

    @classmethod
    def from_config(cls, section) -> MarketConfig:
        d = as_section(section, "market")
        reject_unknown_keys(MARKET_KEYS, d, "market")
        kind = choice(d.get("kind", cls.kind), "market.kind", KINDS)
        scale = real(d.get("price_scale", cls.price_scale), "market.price_scale", minimum=0.0, strict_min=True)
        synthetic = _synthetic(d.get("synthetic"))
        trace = as_section(d.get("trace"), "market.trace")
        reject_unknown_keys(TRACE_KEYS, trace, "market.trace")
        path = trace.get("path", DEFAULT_TRACE)
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str) or not path:
            raise ValueError(f"market.trace.path must be a non-empty string, got {path!r}")
        start = integer(trace.get("start"), "market.trace.start", minimum=0, optional=True)
        exponential = as_section(d.get("exponential"), "market.exponential")
        reject_unknown_keys(EXPONENTIAL_KEYS, exponential, "market.exponential")
        mean = real(
            exponential.get("mean", cls.exponential_mean), "market.exponential.mean", minimum=0.0, strict_min=True
        )
        hold = integer(exponential.get("hold", cls.exponential_hold), "market.exponential.hold", minimum=1)
        values = None
        if kind == "trace":
            if not os.path.isfile(path):
                raise ValueError(f"market.trace.path: {os.path.abspath(path)}: file not found")
            loaded = spot_trace_values(path)
            values = (loaded["spot_price"], loaded["availability"])
            if start is not None and start >= len(values[0]):
                raise ValueError(
                    f"market.trace.start must be null or an integer in [0, {len(values[0]) - 1}] "
                    f"(the trace {path} has {len(values[0])} slots), got {start!r}"
                )
        return cls(kind, scale, synthetic, path, start, mean, hold, values)

    def draw(self, slots: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(price relative to on-demand, up) for arena slots 1..`slots` (module docstring)."""
        if self.kind == "exponential":
            held = -(-slots // self.exponential_hold)
            draws = draw_prices(
                PriceParams(kind="exponential", mean=self.exponential_mean, on_demand=ON_DEMAND), held, rng
            )
            price = np.repeat(draws, self.exponential_hold)[:slots]
            up = np.ones(slots, dtype=bool)
        else:
            coarse = -(-slots // SPOT_MARKET_HOLD)
            if self.kind == "synthetic":
                market = self.synthetic.sample(rng, coarse)
                coarse_price = market.price / market.on_demand_price
                coarse_avail = market.availability
            else:
                ratios, avail = self.trace
                n = len(ratios)
                start = int(rng.integers(n)) if self.trace_start is None else self.trace_start
                index = (start + np.arange(coarse)) % n
                coarse_price, coarse_avail = ratios[index], avail[index]
            price = np.repeat(coarse_price, SPOT_MARKET_HOLD)[:slots]
            up = np.repeat(coarse_avail > 0, SPOT_MARKET_HOLD)[:slots]
        return np.maximum(price * self.price_scale, PRICE_FLOOR), up


@dataclass(frozen=True)
class WorldParams:
    """Sections `jobs` and `market`."""

    jobs: JobParams
    market: MarketConfig


@dataclass(frozen=True, eq=False)
class World:
    """One replicate's jobs and market: `price[t - 1]` and `up[t - 1]` are slot t's."""

    jobs: JobStream
    price: np.ndarray
    up: np.ndarray

    def __post_init__(self):
        for name in ("price", "up"):
            getattr(self, name).setflags(write=False)

    def cloud_price(self) -> np.ndarray:
        """The price path paper 003's kernel bids against: +inf where the market is down, so
        that every spot instance running there is ended by the cloud."""
        return np.where(self.up, self.price, math.inf)


def world_slots(jobs: JobStream) -> int:
    """Slots of market a stream needs: up to its last deadline. It depends on the jobs only,
    never on the mechanisms, so every mechanism meets the same prices (common random numbers)."""
    return max(jobs.horizon(), 1)


def draw_world(params: WorldParams, rng: np.random.Generator) -> World:
    jobs = draw_jobs(params.jobs, rng)
    price, up = params.market.draw(world_slots(jobs), rng)
    return World(jobs, price, up)
