"""Prediction noise on spot forecasts (paper 000, Sec. VI-A).

Sec. VI-A ("Prediction Noise") defines four settings: the error is either
magnitude-dependent (Mag-Dep.) or fixed-magnitude (Fixed-Mag.), and uniform or
heavy-tailed; Fig. 10 uses error levels e of 10%, 30%, 50% and 200%. The paper
gives no formulas; this module's reading (reading notes `spot`), for a true value x
and a standardised error eps:

  mag_dep_*:  x_hat = x * (1 + e * eps)          (error proportional to x)
  fixed_*:    x_hat = x + e * scale * eps        (scale: the series mean over the world)

  *_uniform:  eps ~ U[-1, 1]                     (median |eps| = 0.5)
  *_heavy:    eps = HEAVY_SCALE * t_3            (Student-t, 3 degrees of freedom,
              scaled so that median |eps| = 0.5 as for the uniform; finite
              variance, P99 |eps| = 3.8 against 0.99 for the uniform)

and `none` leaves the forecast alone. Every future column (k >= 1) of every
row gets its own independent eps; column 0, the observed slot, is never
touched. The error grows with the look-ahead k as `growth` says (Def. 1 and
Sec. IV-A let the error bound grow with the window): `flat` uses eps as drawn
for every k (the first reading), `sqrt` multiplies it by sqrt(k), so that e is
the error level one slot ahead and a k-slot forecast errs like the sum of k
independent one-slot errors. Both draw the same eps, so they differ only by
that factor. Availability forecasts are rounded to integers and clipped to
[0, capacity]; prices are clipped below at PRICE_FLOOR_FRACTION of the price
scale so that they stay positive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from market.common.fields import choice, integer, real, reject_unknown_keys
from market.spot.forecast import SpotForecast
from market.spot.spot_market import SpotMarket

NOISE_KINDS = ("none", "mag_dep_uniform", "fixed_uniform", "mag_dep_heavy", "fixed_heavy")
GROWTH_LAWS = ("flat", "sqrt")
HEAVY_DF = 3
# Median of |t_3| = scipy.stats.t.ppf(0.75, 3); checked in tests/spot/test_spot_forecasts.py.
T3_MEDIAN_ABS = 0.7648923284043444
HEAVY_SCALE = 0.5 / T3_MEDIAN_ABS
PRICE_FLOOR_FRACTION = 0.01


def _check_kind_level(kind, level) -> None:
    choice(kind, "noise.kind", NOISE_KINDS)
    real(level, "noise.level", minimum=0)


@dataclass(frozen=True)
class NoiseSpec:
    """A noise setting as a config section: `noise: {kind: fixed_heavy, level: 0.5}`."""

    kind: str = "none"
    level: float = 0.0

    def __post_init__(self) -> None:
        _check_kind_level(self.kind, self.level)

    @classmethod
    def from_dict(cls, d) -> NoiseSpec:
        """Build from a mapping; unknown keys are an error naming `noise`."""
        reject_unknown_keys(cls, d, "noise")
        return cls(**dict(d))


def noise_scales(market: SpotMarket) -> tuple[float, float]:
    """(availability_scale, price_scale) for the fixed-magnitude noise: the series means over `market`."""
    return float(np.mean(market.availability)), float(np.mean(market.price))


def standard_errors(kind: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standardised errors eps of the module docstring (median |eps| = 0.5)."""
    _check_kind_level(kind, 0.0)
    if kind == "none":
        return np.zeros(shape)
    if kind.endswith("_uniform"):
        return rng.uniform(-1.0, 1.0, shape)
    return HEAVY_SCALE * rng.standard_t(HEAVY_DF, shape)


def horizon_factors(growth: str, columns: int) -> np.ndarray:
    """The factor on eps for look-ahead k = 1..columns: 1 (`flat`) or sqrt(k) (`sqrt`)."""
    choice(growth, "noise.growth", GROWTH_LAWS)
    k = np.arange(1, columns + 1, dtype=float)
    return np.sqrt(k) if growth == "sqrt" else np.ones(columns)


def perturb(true: np.ndarray, eps: np.ndarray, kind: str, level: float, scale: float) -> np.ndarray:
    """x_hat of the module docstring before rounding and clipping."""
    if kind.startswith("mag_dep"):
        return true * (1.0 + level * eps)
    return true + level * scale * eps


def apply_noise(
    forecast: SpotForecast,
    kind: str,
    level: float,
    rng: np.random.Generator,
    capacity: int,
    availability_scale: float,
    price_scale: float,
    growth: str = "flat",
) -> SpotForecast:
    """Perturb every future column (k >= 1) of `forecast` independently, the error of
    column k scaled by `horizon_factors(growth, ...)`.

    `availability_scale` and `price_scale` are the fixed magnitudes of the
    fixed_* kinds (`noise_scales` of the world); `price_scale` also sets the price
    floor. rng use: none for `none`; otherwise one array of eps for the prices,
    then one for the availability, each of shape (rows, max_horizon), drawn
    whatever the level (so the same rng state gives the same eps at every
    level). Level 0 returns the input unchanged.
    """
    _check_kind_level(kind, level)
    choice(growth, "noise.growth", GROWTH_LAWS)
    integer(capacity, "capacity", minimum=0, allow_float=False)
    if not (math.isfinite(price_scale) and price_scale > 0):
        raise ValueError(f"price_scale must be a finite number > 0, got {price_scale!r}")
    if not (math.isfinite(availability_scale) and availability_scale >= 0):
        raise ValueError(f"availability_scale must be a finite number >= 0, got {availability_scale!r}")
    price = np.asarray(forecast.price, dtype=float)
    avail = np.asarray(forecast.availability)
    if price.ndim != 2 or avail.shape != price.shape:
        raise ValueError(
            f"forecast price and availability must be 2-D of equal shape, got {price.shape} and {avail.shape}"
        )
    if kind == "none":
        return forecast
    shape = (price.shape[0], price.shape[1] - 1)
    eps_price = standard_errors(kind, rng, shape)
    eps_avail = standard_errors(kind, rng, shape)
    if level == 0:
        return forecast
    if growth != "flat":
        factors = horizon_factors(growth, shape[1])
        eps_price, eps_avail = eps_price * factors, eps_avail * factors

    noisy_price = price.copy()
    noisy_price[:, 1:] = np.maximum(
        perturb(price[:, 1:], eps_price, kind, level, price_scale),
        PRICE_FLOOR_FRACTION * price_scale,
    )
    noisy_avail = avail.astype(np.int64)
    raw = perturb(avail[:, 1:].astype(float), eps_avail, kind, level, availability_scale)
    noisy_avail[:, 1:] = np.clip(np.rint(raw), 0, capacity).astype(np.int64)
    return SpotForecast(price=noisy_price, availability=noisy_avail)
