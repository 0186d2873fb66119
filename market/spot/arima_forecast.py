"""ARIMA forecasts of spot prices and availability (paper 000, Sec. II-C).

Sec. II-C fits an ARIMA model (Box-Jenkins) to the 30-minute series of spot
availability and price and forecasts them ahead (Fig. 3); Alg. 1 line 3 reads
the forecasts p_{t+tau|t}, n^avail_{t+tau|t}. Here, with statsmodels
`statsmodels.tsa.arima.model.ARIMA`:

* Series: log(price) (so forecasts exp(.) stay positive; the exp of the log
  forecast is the median, not the mean, forecast) and availability as is,
  rounded to an integer and clipped to [0, capacity]. Trend: a constant when
  d = 0, none otherwise. Estimation: exact Gaussian MLE of the state-space form
  with the scale concentrated out, no parameter covariance (not needed; it
  halves the fit time).
* Information: the forecast made at job slot t (0-based row t, the market's
  slot start + t) uses every observation up to and including that slot, the
  history before the job included, and nothing later. Column 0 is the
  observed value itself.
* Refit schedule: one fit on the history (slots before `start`); then at
  rows refit_every, 2 refit_every, ... a refit on every slot before that row
  (warm-started from the last parameters). Default refit_every = 24 slots
  (12 hours): a refit after 5 slots of a 10-slot job adds 2.6% to a 192-slot
  history, moves the forecasts little and costs as much as the first fit. Between refits the last fit is
  extended with the new observations without refitting (`results.extend`):
  the Kalman filter runs over the new observations once per block, and the
  forecasts of every row of the block come from its predicted states
  (y_{s+h|s} = Z T^(h-1) a_{s+1|s} + intercepts), the same numbers as
  `results.extend(obs up to s).forecast(h)` (tested) at a fraction of the cost.
* Degenerate series: a series constant over the fit window, or a first fit or
  an extension that raises, falls back to persistence (the last observed
  value) until the next successful fit; a refit that raises keeps the previous
  fit; a row whose forecasts are not finite gets persistence.
* Warnings: statsmodels' ConvergenceWarning and its UserWarnings about starting
  parameters are silenced inside `warnings.catch_warnings`, never globally.

Caching: `arima_forecast` is meant to be called once per world by the caller,
which hands the same (read-only) SpotForecast to every policy of the pool;
`cached_arima_forecast` memoises it on the market object's identity for
callers that cannot thread the forecast through.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

import numpy as np
from statsmodels.tools.sm_exceptions import ConvergenceWarning
from statsmodels.tsa.arima.model import ARIMA

from market.common.fields import integer, is_integral
from market.spot.forecast import SpotForecast
from market.spot.spot_market import SpotMarket

DEFAULT_ORDER = (2, 0, 1)
DEFAULT_REFIT_EVERY = 24


def _arima(y: np.ndarray, order: tuple[int, int, int]) -> ARIMA:
    return ARIMA(y, order=order, trend="c" if order[1] == 0 else "n", concentrate_scale=True)


class ArimaSeries:
    """One series' rolling ARIMA: fit, extend, and multi-step forecasts from every new observation.

    `fits` counts successful ARIMA fits (tests check the refit schedule with it).
    """

    def __init__(self, order: tuple[int, int, int] = DEFAULT_ORDER) -> None:
        self.order = tuple(int(x) for x in order)
        self.results = None
        self.fits = 0

    def fit(self, y: np.ndarray) -> None:
        """(Re)fit on y, warm-started from the current fit's parameters.

        A constant y leaves no fit (persistence); a failed refit keeps the
        current fit, which the caller has extended up to the end of y.
        """
        y = np.asarray(y, dtype=float)
        if y.size < 2 or np.ptp(y) == 0:
            self.results = None
            return
        start = self.results.params if self.results is not None else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.filterwarnings("ignore", category=UserWarning, module=r"statsmodels\.")
            try:
                self.results = _arima(y, self.order).fit(start_params=start, cov_type="none")
            except (ValueError, np.linalg.LinAlgError):
                return
        self.fits += 1

    def forecast_block(self, new_obs: np.ndarray, horizon: int) -> np.ndarray:
        """F[j, h-1]: forecast for h = 1..horizon steps after new_obs[j], given everything up to it.

        The current fit is extended with new_obs (no refit) and kept extended.
        """
        new_obs = np.asarray(new_obs, dtype=float)
        persistence = np.repeat(new_obs[:, None], horizon, axis=1)
        if self.results is None or horizon == 0:
            return persistence
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.filterwarnings("ignore", category=UserWarning, module=r"statsmodels\.")
            try:
                self.results = self.results.extend(new_obs)
            except (ValueError, np.linalg.LinAlgError):
                self.results = None
                return persistence
        ssm = self.results.model.ssm
        design = _matrix(ssm["design"])
        transition = _matrix(ssm["transition"])
        obs_intercept = _vector(ssm["obs_intercept"])
        state_intercept = _vector(ssm["state_intercept"])
        state = self.results.predicted_state[:, 1:].copy()  # a_{j+1|j} for every j of the block
        out = np.empty((new_obs.size, horizon))
        for h in range(horizon):
            out[:, h] = (design @ state)[0] + obs_intercept[0]
            state = transition @ state + state_intercept[:, None]
        bad = ~np.isfinite(out).all(axis=1)
        out[bad] = persistence[bad]
        return out


def _matrix(x: np.ndarray) -> np.ndarray:
    """A time-invariant state-space matrix (the last time point of a time-varying one)."""
    return x[:, :, -1] if x.ndim == 3 else x


def _vector(x: np.ndarray) -> np.ndarray:
    """A time-invariant state-space vector (the last time point of a time-varying one)."""
    return x[:, -1] if x.ndim == 2 else x


def rolling_forecasts(
    y: np.ndarray,
    start: int,
    rows: int,
    horizon: int,
    order: tuple[int, int, int] = DEFAULT_ORDER,
    refit_every: int | None = DEFAULT_REFIT_EVERY,
    on_fit: Callable[[int], None] | None = None,
) -> np.ndarray:
    """F[t, h-1]: forecast of y[start + t + h] made after observing y[: start + t + 1], t < rows.

    Fits on y[:start], refits on y[:start + t] at t = refit_every, 2 refit_every, ...
    (never when refit_every is None); `on_fit(n_obs)` is called before each fit.
    Reads only y[: start + rows].
    """
    series = ArimaSeries(order)
    out = np.empty((rows, horizon))
    step = rows if refit_every is None else refit_every
    for block in range(0, rows, max(step, 1)):
        if block == 0 or refit_every is not None:
            if on_fit is not None:
                on_fit(start + block)
            series.fit(y[: start + block])
        end = min(block + step, rows)
        out[block:end] = series.forecast_block(y[start + block : start + end], horizon)
    return out


def _check(market: SpotMarket, start, rows, max_horizon, order, refit_every, capacity) -> int:
    for name, x in (("start", start), ("rows", rows), ("max_horizon", max_horizon)):
        integer(x, name, minimum=0, allow_float=False)
    if (
        not isinstance(order, tuple)
        or len(order) != 3
        or not all(is_integral(x, allow_float=False) and x >= 0 for x in order)
    ):
        raise ValueError(f"order must be a tuple (p, d, q) of integers >= 0, got {order!r}")
    integer(refit_every, "refit_every", minimum=1, allow_float=False, optional=True)
    if len(market) < start + rows:
        raise ValueError(
            f"an ARIMA forecast of {rows} rows from slot {start} needs {start + rows} slots, "
            f"the market has {len(market)}"
        )
    cap = market.capacity if capacity is None else capacity
    return integer(cap, "capacity", minimum=0, allow_float=False)


def _named(on_fit, name: str):
    return None if on_fit is None else functools.partial(on_fit, name)


def arima_forecast(
    market: SpotMarket,
    start: int,
    rows: int,
    max_horizon: int,
    order: tuple[int, int, int] = DEFAULT_ORDER,
    refit_every: int | None = DEFAULT_REFIT_EVERY,
    capacity: int | None = None,
    on_fit: Callable[[str, int], None] | None = None,
) -> SpotForecast:
    """ARIMA SpotForecast for the job whose slot 1 is `market` slot `start`.

    `market` slots 0..start-1 are the history before the job; row t forecasts
    slots start + t + 1 .. start + t + max_horizon from slots 0..start + t.
    Slots from start + rows on are never read (the market may be longer, e.g.
    to also build an oracle forecast from it). With start = 0 (no history) the
    forecasts are persistence until the first refit. `capacity` defaults to the
    market's; `on_fit(series, n_obs)` with series "price" or "availability" is
    called before each fit.
    """
    cap = _check(market, start, rows, max_horizon, order, refit_every, capacity)
    end = start + rows
    price = np.empty((rows, max_horizon + 1))
    avail = np.empty((rows, max_horizon + 1), dtype=np.int64)
    price[:, 0] = market.price[start:end]
    avail[:, 0] = market.availability[start:end]
    if rows and max_horizon:
        log_price = rolling_forecasts(
            np.log(market.price[:end]), start, rows, max_horizon, order, refit_every, _named(on_fit, "price")
        )
        price[:, 1:] = np.exp(log_price)
        level = rolling_forecasts(
            market.availability[:end].astype(float),
            start,
            rows,
            max_horizon,
            order,
            refit_every,
            _named(on_fit, "availability"),
        )
        avail[:, 1:] = np.clip(np.rint(level), 0, cap)
    price.setflags(write=False)
    avail.setflags(write=False)
    return SpotForecast(price=price, availability=avail)


@functools.lru_cache(maxsize=64)
def cached_arima_forecast(
    market: SpotMarket,
    start: int,
    rows: int,
    max_horizon: int,
    order: tuple[int, int, int] = DEFAULT_ORDER,
    refit_every: int | None = DEFAULT_REFIT_EVERY,
    capacity: int | None = None,
) -> SpotForecast:
    """`arima_forecast` memoised on (market identity, arguments); holds the last 64 worlds."""
    return arima_forecast(market, start, rows, max_horizon, order, refit_every, capacity)
