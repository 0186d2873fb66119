"""Forecasts of spot prices and availability, as the policies of paper 000 see them.

Paper paper 000, Alg. 1 line 3: at slot t the policy predicts the
spot price p_{t+tau|t} and availability n^avail_{t+tau|t} for tau = 0..omega.
`SpotForecast` holds every prediction a job can ask for, made before the job runs
from one world, so that every policy in a pool reads the same forecasts (common
random numbers) and no forecast is fitted twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from market.spot.spot_market import SpotMarket


@dataclass(frozen=True, eq=False)
class SpotForecast:
    """``price[t, k]`` / ``availability[t, k]``: the forecast made at slot t (0-based, the
    paper's slot t+1) for slot t+k, k = 0..max_horizon. Column 0 is the slot being decided,
    whose price and availability are observed: it always equals the true value."""

    price: np.ndarray
    availability: np.ndarray

    @property
    def rows(self) -> int:
        return int(self.price.shape[0])

    @property
    def max_horizon(self) -> int:
        return int(self.price.shape[1]) - 1

    def window(self, t: int, horizon: int) -> tuple[np.ndarray, np.ndarray]:
        """Forecasts made at slot t for slots t..t+horizon."""
        if horizon > self.max_horizon:
            raise ValueError(f"horizon {horizon} exceeds the forecast's {self.max_horizon}")
        return self.price[t, : horizon + 1], self.availability[t, : horizon + 1]


def oracle_forecast(market: SpotMarket, rows: int, max_horizon: int) -> SpotForecast:
    """Perfect foresight: every forecast is the true value (the market must cover rows + max_horizon slots)."""
    need = rows + max_horizon
    if len(market) < need:
        raise ValueError(
            f"an oracle forecast of {rows} rows and horizon {max_horizon} needs {need} slots, the market has {len(market)}"
        )
    index = np.arange(rows)[:, None] + np.arange(max_horizon + 1)[None, :]
    return SpotForecast(price=market.price[index], availability=market.availability[index])
