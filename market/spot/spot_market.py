"""Spot market paths and the synthetic spot market generator.

Paper paper 000, Sec. III-B: in slot t spot instances cost p_t^s
and n_t^avail of them are available, both constant within the slot; on-demand
instances are always available at p^o. Sec. VI-A: 30-minute slots, p^o = 1, spot
prices normalised to it, availability capped to [0, 16].

The Vast.ai series of Sec. II-B is not available here, so `SyntheticMarketParams`
generates one with the properties the paper reports (reading notes, `spot`): a daily
cycle of 48 slots with more availability (and lower prices) by day (Sec. II-C),
autocorrelated noise, and a spot price median about 60% of its P90 (Sec. II-B).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, fields

import numpy as np

from market.common.fields import in_range, integer, real, reject_unknown_keys


@dataclass(frozen=True, eq=False)
class SpotMarket:
    """Per-slot spot prices and availability; index 0 is the paper's slot 1.

    `price` is in the same currency unit as `on_demand_price` (with the default
    p^o = 1 it is the spot price divided by the on-demand price). Arrays are
    stored read-only.
    """

    price: np.ndarray
    availability: np.ndarray
    on_demand_price: float = 1.0
    capacity: int = 16

    def __post_init__(self) -> None:
        price = np.array(self.price, dtype=float)
        avail = np.asarray(self.availability)
        if avail.dtype.kind == "f":
            if not np.all(np.isfinite(avail)) or not np.all(avail == np.round(avail)):
                raise ValueError("SpotMarket.availability must hold integers")
        elif avail.dtype.kind not in "iu":
            raise ValueError(f"SpotMarket.availability must hold integers, got {avail.dtype}")
        avail = avail.astype(np.int64)
        if price.ndim != 1 or avail.shape != price.shape:
            raise ValueError(
                f"SpotMarket.price and .availability must be 1-D of equal length, "
                f"got shapes {price.shape} and {avail.shape}"
            )
        if not np.all(np.isfinite(price)) or not np.all(price > 0):
            raise ValueError("SpotMarket.price must be finite and > 0")
        if not isinstance(self.capacity, numbers.Integral) or self.capacity < 0:
            raise ValueError(f"SpotMarket.capacity must be an integer >= 0, got {self.capacity!r}")
        if avail.size and (avail.min() < 0 or avail.max() > self.capacity):
            raise ValueError(f"SpotMarket.availability must be in [0, {self.capacity}]")
        if not (self.on_demand_price > 0 and math.isfinite(self.on_demand_price)):
            raise ValueError(f"SpotMarket.on_demand_price must be > 0, got {self.on_demand_price!r}")
        price.setflags(write=False)
        avail.setflags(write=False)
        object.__setattr__(self, "price", price)
        object.__setattr__(self, "availability", avail)
        object.__setattr__(self, "on_demand_price", float(self.on_demand_price))
        object.__setattr__(self, "capacity", int(self.capacity))

    def __len__(self) -> int:
        return int(self.price.shape[0])

    def window(self, start: int, length: int) -> SpotMarket:
        """Slots start .. start + length - 1 as a new market."""
        if start < 0 or length < 0 or start + length > len(self):
            raise ValueError(f"window [{start}, {start + length}) does not fit a market of {len(self)} slots")
        return SpotMarket(
            self.price[start : start + length],
            self.availability[start : start + length],
            self.on_demand_price,
            self.capacity,
        )


@functools.lru_cache(maxsize=64)
def _ar_kernel(ar: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """K[k, j] = ar^(k-j) for j <= k, and ar^(k+1): one block of an AR(1) recursion."""
    k = np.arange(size)
    lag = k[:, None] - k[None, :]
    kernel = np.where(lag >= 0, float(ar) ** np.maximum(lag, 0), 0.0)
    carry = float(ar) ** (k + 1.0)
    kernel.setflags(write=False)
    carry.setflags(write=False)
    return kernel, carry


_BLOCK = 64


def ar1_paths(rng: np.random.Generator, n_series: int, n_slots: int, ar: float, sigma: np.ndarray) -> np.ndarray:
    """Stationary AR(1) paths x_k = ar x_{k-1} + sqrt(1 - ar^2) sigma e_k, x ~ N(0, sigma^2).

    Consumes exactly n_series * (n_slots + 1) standard normals from rng.
    """
    z = rng.standard_normal((n_series, n_slots + 1))
    sigma = np.asarray(sigma, dtype=float).reshape(n_series, 1)
    state = z[:, 0] * sigma[:, 0]
    innov = z[:, 1:] * (math.sqrt(1.0 - ar * ar) * sigma)
    out = np.empty((n_series, n_slots))
    kernel, carry = _ar_kernel(float(ar), _BLOCK)
    for lo in range(0, n_slots, _BLOCK):
        m = min(_BLOCK, n_slots - lo)
        out[:, lo : lo + m] = innov[:, lo : lo + m] @ kernel[:m, :m].T + np.outer(state, carry[:m])
        state = out[:, lo + m - 1]
    return out


@dataclass(frozen=True)
class SyntheticMarketParams:
    """Daily-cycle spot market with AR(1) multiplicative noise (reading notes `spot`).

    For slot k with time of day s = (start + k) mod slots_per_day, the day
    indicator c_k = -cos(2 pi s / slots_per_day) is -1 at midnight, +1 at noon:

      availability_k = round(mean_availability (1 + availability_amplitude c_k)
                             exp(a_k - availability_noise^2 / 2)), clipped to [0, capacity]
      price_k = on_demand_price * clip(mean_price (1 - price_amplitude c_k)
                             exp(b_k - price_noise^2 / 2), PRICE_FLOOR, PRICE_CAP)

    with a, b independent stationary AR(1) processes (coefficient ar_coef,
    standard deviations availability_noise and price_noise). The exp(-s^2/2)
    factor keeps the noise's mean at 1, so mean_availability and mean_price are
    the long-run means before rounding and clipping. The defaults give a price
    median about 0.6 of its P90 (Sec. II-B); docs/spot/model.md has the measured
    statistics.

    Intermittent availability (Sec. I, II-B: "intermittent availability due to
    preemption and provider churn"): with outage_fraction > 0, a two-state Markov
    chain switches the market off (availability 0) for spells of geometric length
    with mean outage_slots, a fraction outage_fraction of the slots in the long run
    (first slot drawn from that stationary law). With outage_fraction = 0 (the
    default) no outage is drawn and the rng is used exactly as before.
    """

    capacity: int = 16
    mean_availability: float = 8.0
    availability_amplitude: float = 0.5
    mean_price: float = 0.5
    price_amplitude: float = 0.3
    ar_coef: float = 0.8
    availability_noise: float = 0.25
    price_noise: float = 0.33
    slots_per_day: int = 48
    on_demand_price: float = 1.0
    outage_fraction: float = 0.0
    outage_slots: float = 4.0

    PRICE_FLOOR = 0.05
    PRICE_CAP = 3.0

    @classmethod
    def from_dict(cls, d) -> SyntheticMarketParams:
        """Build from a mapping of field names; unknown keys are an error."""
        reject_unknown_keys(cls, d, "market", context=" for kind 'synthetic'", also_known=("kind",))
        params = cls(**dict(d))
        params.check()
        return params

    def check(self) -> None:
        """Raise ValueError naming the first invalid field as `market.<field>`."""
        for name in ("capacity", "slots_per_day"):
            integer(getattr(self, name), f"market.{name}", minimum=1, allow_float=False)
        for f in fields(self):
            real(getattr(self, f.name), f"market.{f.name}")
        if not 0 <= self.mean_availability <= self.capacity:
            raise ValueError(
                f"market.mean_availability must be in [0, market.capacity = {self.capacity}], "
                f"got {self.mean_availability!r}"
            )
        in_range(self.availability_amplitude, "market.availability_amplitude", minimum=0, maximum=1)
        in_range(self.mean_price, "market.mean_price", minimum=0, strict_min=True)
        in_range(self.price_amplitude, "market.price_amplitude", minimum=0, maximum=1, strict_max=True)
        in_range(self.ar_coef, "market.ar_coef", minimum=-1, maximum=1, strict_min=True, strict_max=True)
        for name in ("availability_noise", "price_noise"):
            in_range(getattr(self, name), f"market.{name}", minimum=0, maximum=2)
        in_range(self.on_demand_price, "market.on_demand_price", minimum=0, strict_min=True)
        in_range(self.outage_fraction, "market.outage_fraction", minimum=0, maximum=1, strict_max=True)
        in_range(self.outage_slots, "market.outage_slots", minimum=1)
        if self.outage_fraction > 0 and self._outage_start_rate() > 1:
            raise ValueError(
                f"market.outage_fraction ({self.outage_fraction}) is too large for spells of "
                f"market.outage_slots = {self.outage_slots} slots: the working spells would last "
                "less than one slot"
            )

    def _outage_start_rate(self) -> float:
        """P(an outage starts | the market is up): f / ((1 - f) * outage_slots)."""
        return self.outage_fraction / ((1.0 - self.outage_fraction) * self.outage_slots)

    def outages(self, rng: np.random.Generator, n_slots: int) -> np.ndarray:
        """Which of n_slots consecutive slots are in an outage (boolean); n_slots uniforms.

        Up -> down with probability f / ((1 - f) L), down -> up with probability 1 / L
        (L = outage_slots), so spells last L slots on average and cover f of the slots.
        """
        u = rng.random(n_slots)
        down = np.empty(n_slots, dtype=bool)
        start, end = self._outage_start_rate(), 1.0 / self.outage_slots
        state = bool(u[0] < self.outage_fraction) if n_slots else False
        for k in range(n_slots):
            if k:
                state = (u[k] >= end) if state else (u[k] < start)
            down[k] = state
        return down

    def sample(self, rng: np.random.Generator, n_slots: int, start: int | None = None) -> SpotMarket:
        """Draw n_slots consecutive slots; the first slot's time of day is `start`
        (mod slots_per_day) or uniform over the day when None.

        rng use per call: one integer when start is None, then 2 * (n_slots + 1)
        standard normals, then n_slots uniforms when outage_fraction > 0; the same
        call on the same rng state gives the same market.
        """
        if start is None:
            start = int(rng.integers(self.slots_per_day))
        steps = (start + np.arange(n_slots)) % self.slots_per_day
        day = -np.cos((2.0 * np.pi / self.slots_per_day) * steps)
        noise = ar1_paths(
            rng,
            2,
            n_slots,
            self.ar_coef,
            np.array([self.availability_noise, self.price_noise]),
        )
        noise[0] -= 0.5 * self.availability_noise**2
        noise[1] -= 0.5 * self.price_noise**2
        np.exp(noise, out=noise)
        avail = self.mean_availability * (1.0 + self.availability_amplitude * day) * noise[0]
        avail = np.clip(np.rint(avail), 0, self.capacity).astype(np.int64)
        if self.outage_fraction > 0:
            avail[self.outages(rng, n_slots)] = 0
        price = self.mean_price * (1.0 - self.price_amplitude * day) * noise[1]
        price = np.clip(price, self.PRICE_FLOOR, self.PRICE_CAP) * self.on_demand_price
        return SpotMarket(price, avail, float(self.on_demand_price), int(self.capacity))
