"""Parametric loss curves (paper 002, eq. 3.1): l(s) = a s^(-b), observed with noise, plus two
mis-specified shapes that a power-law estimator (Sec. 3.1, eqs. 3.2-3.6) cannot fit exactly.

The noise-free curve, `PowerLaw` (docs/core/calibration.md):
- power: l(s) = a s^(-b);
- floor: l(s) = a s^(-b) + c, c > 0: the loss never goes below c;
- bend:  l(s) = a s^(-b1) up to s_bend, a s_bend^(-b1) (s / s_bend)^(-b2) after it (continuous
  at s_bend; b2 < b1 flattens, b2 > b1 steepens).

The observed curve, `ParametricCurve`: loss(s) = l(s) exp(sigma xi_j) with j = floor(s / cell),
one noise value per cell of data (cell = 1.0: one batch, the paper's data unit, Sec. 4.1).
Multiplicative log-normal noise keeps the loss > 0 and is the additive surrogate noise xi' of
eq. 3.2 in the log domain. xi_j is standard normal clipped to [-XI_MAX, XI_MAX], computed on
demand: block B = j // BLOCK of cells is `BLOCK` draws of `Generator(Philox(key, counter=B <<
192)).standard_normal`, `key` drawn once from the Generator given to the curve. So the noise is
fixed when the curve is built, loss(s) is the same number on every call whatever the order of
calls, and memory stays at a few cached blocks per curve however long the thread runs. The
clip (it moves a probability mass of 2e-9) bounds the noise, which lets `data_to_reach` skip the
cells where no noise value could bring the loss down to the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BLOCK = 4096  # noise cells per block
CACHED_BLOCKS = 4  # blocks of noise factors kept per curve
XI_MAX = 6.0  # |xi_j| <= XI_MAX
MAX_SCAN = 64 * BLOCK  # cells per vectorised step of data_to_reach
TINY = float(np.finfo(float).tiny)


def _positive(value, name: str, *, finite: bool = True) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or math.isnan(value) or value <= 0 or (finite and math.isinf(value)):
        raise ValueError(f"{name} must be a {'finite ' if finite else ''}number > 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class PowerLaw:
    """The noise-free loss l(s) (eq. 3.1 without xi): scale a, exponent b, optional floor c >= 0
    and bend at s_bend (math.inf: none) with exponent b2 after it (None: b)."""

    scale: float
    exponent: float
    floor: float = 0.0
    bend: float = math.inf
    exponent_after: float | None = None

    def __post_init__(self) -> None:
        _positive(self.scale, "scale (a)")
        _positive(self.exponent, "exponent (b)")
        if not (
            isinstance(self.floor, (int, float, np.integer, np.floating))
            and math.isfinite(self.floor)
            and self.floor >= 0
        ):
            raise ValueError(f"floor (c) must be a finite number >= 0, got {self.floor!r}")
        _positive(self.bend, "bend (s_bend)", finite=False)
        if self.exponent_after is not None:
            _positive(self.exponent_after, "exponent_after (b2)")

    @classmethod
    def through(
        cls,
        threshold: float,
        data: float,
        exponent: float,
        *,
        floor_share: float = 0.0,
        bend_share: float | None = None,
        bend_ratio: float = 1.0,
    ) -> PowerLaw:
        """The curve whose noise-free loss is `threshold` at `data` (calibration rule,
        docs/core/calibration.md): floor c = floor_share * threshold (floor_share in [0, 1)),
        bend at s_bend = bend_share * data with b2 = bend_ratio * b."""
        threshold = _positive(threshold, "threshold")
        data = _positive(data, "data")
        if not 0 <= floor_share < 1:
            raise ValueError(f"floor_share must be in [0, 1), got {floor_share!r}")
        floor = floor_share * threshold
        above = threshold - floor
        if bend_share is None:
            return cls(above * data**exponent, exponent, floor)
        bend = _positive(bend_share, "bend_share") * data
        after = _positive(bend_ratio, "bend_ratio") * exponent
        scale = above * bend**exponent * (data / bend) ** after if bend < data else above * data**exponent
        return cls(scale, exponent, floor, bend, after)

    @property
    def shape(self) -> str:
        """power, floor, bend or floor+bend."""
        parts = [name for name, on in (("floor", self.floor > 0), ("bend", math.isfinite(self.bend))) if on]
        return "+".join(parts) or "power"

    @property
    def _after(self) -> float:
        return self.exponent if self.exponent_after is None else self.exponent_after

    def value(self, s: float) -> float:
        """l(s) for one s > 0 (scalar, fast: the simulation calls it every unit time)."""
        if s <= self.bend:
            return self.scale * s**-self.exponent + self.floor
        return self.scale * self.bend**-self.exponent * (s / self.bend) ** -self._after + self.floor

    def values(self, s) -> np.ndarray:
        """l(s) elementwise for an array of s > 0."""
        s = np.asarray(s, dtype=float)
        with np.errstate(over="ignore", divide="ignore"):
            before = self.scale * s**-self.exponent
            if math.isfinite(self.bend):
                after = self.scale * self.bend**-self.exponent * (s / self.bend) ** -self._after
                before = np.where(s <= self.bend, before, after)
        return before + self.floor

    def inverse(self, y) -> np.ndarray:
        """The least s > 0 with l(s) <= y, elementwise (l is continuous and strictly decreasing);
        inf where y <= floor (never reached)."""
        z = np.asarray(y, dtype=float) - self.floor
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            s = (self.scale / z) ** (1.0 / self.exponent)
            if math.isfinite(self.bend):
                at_bend = self.scale * self.bend**-self.exponent
                s = np.where(z >= at_bend, s, self.bend * (at_bend / z) ** (1.0 / self._after))
        return np.where(z > 0, np.maximum(s, TINY), math.inf)

    def data_to_reach(self, threshold: float) -> float:
        """The least s with l(s) <= threshold (math.inf if never)."""
        return float(self.inverse(threshold))


class ParametricCurve:
    """A `LossCurve` (market/core/curves.py): a `PowerLaw` observed with log-normal noise of
    level sigma = `noise`, one value per `cell` data units (module docstring). `rng` draws the
    curve's noise key (needed when noise > 0)."""

    def __init__(self, law: PowerLaw, noise: float = 0.0, cell: float = 1.0, rng: np.random.Generator | None = None):
        if not isinstance(law, PowerLaw):
            raise TypeError(f"law must be a PowerLaw, got {type(law).__name__}")
        if (
            isinstance(noise, bool)
            or not isinstance(noise, (int, float, np.integer, np.floating))
            or not math.isfinite(noise)
            or noise < 0
        ):
            raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
        self.law = law
        self.noise = float(noise)
        self.cell = _positive(cell, "cell")
        self._key = None
        if self.noise > 0:
            if not isinstance(rng, np.random.Generator):
                raise ValueError(f"a noisy curve needs rng, a numpy Generator, got {rng!r}")
            self._key = rng.integers(0, 2**64, size=2, dtype=np.uint64)
        self._cache: dict[int, np.ndarray] = {}

    def __repr__(self) -> str:
        return f"ParametricCurve({self.law!r}, noise={self.noise!r}, cell={self.cell!r})"

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_cache": {}}  # the key is the noise; blocks are redrawn

    # --- noise -------------------------------------------------------------

    def _draw(self, block: int) -> np.ndarray:
        """exp(sigma xi_j) for the cells of one block."""
        bits = np.random.Philox(key=self._key, counter=block << 192)
        xi = np.random.Generator(bits).standard_normal(BLOCK)
        np.clip(xi, -XI_MAX, XI_MAX, out=xi)
        return np.exp(self.noise * xi)

    def _block(self, block: int) -> np.ndarray:
        factors = self._cache.get(block)
        if factors is None:
            factors = self._draw(block)
            if len(self._cache) >= CACHED_BLOCKS:
                del self._cache[next(iter(self._cache))]
            self._cache[block] = factors
        return factors

    def _factors(self, first: int, stop: int) -> np.ndarray:
        """exp(sigma xi_j) for cells first .. stop-1."""
        blocks = range(first // BLOCK, (stop - 1) // BLOCK + 1)
        drawn = [self._cache[b] if b in self._cache else self._draw(b) for b in blocks]
        offset = first - blocks[0] * BLOCK
        return np.concatenate(drawn)[offset : offset + stop - first]

    def noise_factor(self, data: float) -> float:
        """exp(sigma xi_j) at `data`: the observed loss over the noise-free loss."""
        s = self._checked(data)
        if self._key is None:
            return 1.0
        j = math.floor(s / self.cell)
        return float(self._block(j // BLOCK)[j % BLOCK])

    # --- LossCurve ---------------------------------------------------------

    @staticmethod
    def _checked(data) -> float:
        s = float(data)
        if not (s > 0 and math.isfinite(s)):
            raise ValueError(f"a loss needs data > 0 (finite), got {data!r}")
        return s

    def true_loss(self, data: float) -> float:
        return self.law.value(self._checked(data))

    def loss(self, data: float) -> float:
        s = self._checked(data)
        value = self.law.value(s)
        if self._key is None:
            return value
        j = math.floor(s / self.cell)
        return value * float(self._block(j // BLOCK)[j % BLOCK])

    def data_to_reach(self, threshold: float, limit: float) -> float:
        """The exact least s in (0, limit] with loss(s) <= threshold, or math.inf.

        Within noise cell j the factor f_j is constant and l decreasing, so the least s of the
        cell is max(j cell, l^-1(threshold / f_j)) when that is below (j + 1) cell. Cells are
        scanned in vectorised chunks from the first one where the lowest factor exp(-sigma XI_MAX)
        could reach the threshold; noise can reach it before the noise-free crossing and miss it
        after, so the scan goes on until a cell reaches it or `limit` ends it. limit = inf is
        allowed when the noise-free curve reaches the threshold (a later cell then certainly does)."""
        threshold = _positive(threshold, "threshold")
        if isinstance(limit, bool) or not isinstance(limit, (int, float, np.integer, np.floating)) or math.isnan(limit):
            raise ValueError(f"limit must be a number, got {limit!r}")
        if limit <= 0:
            return math.inf
        law = self.law
        if self._key is None:
            s = law.data_to_reach(threshold)
            return s if s <= limit else math.inf
        crossing = law.data_to_reach(threshold)
        if math.isinf(limit) and math.isinf(crossing):
            raise ValueError(
                f"data_to_reach needs a finite limit: the noise-free curve never reaches "
                f"{threshold!r} (floor {law.floor!r})"
            )
        earliest = law.data_to_reach(threshold * math.exp(self.noise * XI_MAX))
        if earliest > limit:
            return math.inf
        first = max(0, math.floor(earliest / self.cell) - 1)  # one cell early: rounding of the bound
        last = math.floor(limit / self.cell) if math.isfinite(limit) else None  # the cell of `limit`
        size = min(max(math.floor(min(crossing, limit) / self.cell) + BLOCK - first, BLOCK), MAX_SCAN)
        while last is None or first <= last:
            stop = first + size if last is None else min(first + size, last + 1)
            found = self._scan(threshold, limit, first, stop)
            if found is not None:
                return found
            first, size = stop, min(2 * size, MAX_SCAN)
        return math.inf

    def _scan(self, threshold: float, limit: float, first: int, stop: int) -> float | None:
        """The least s reaching the threshold in cells first .. stop-1, or None."""
        cells = np.arange(first, stop, dtype=float)
        low = cells * self.cell
        low[0] = max(low[0], TINY)
        candidate = np.maximum(low, self.law.inverse(threshold / self._factors(first, stop)))
        hits = np.flatnonzero((candidate < low + self.cell) & (candidate <= limit))
        for i in hits:
            s = self._settle(float(candidate[i]), threshold, float(low[i] + self.cell))
            if s is not None and s <= limit:
                return s
        return None

    def _settle(self, s: float, threshold: float, top: float) -> float | None:
        """`s`, or the next floats above it, until loss(s) <= threshold (rounding in l^-1)."""
        for _ in range(64):
            if s >= top:
                return None
            if self.loss(s) <= threshold:
                return s
            s = math.nextafter(s, math.inf)
        return None
