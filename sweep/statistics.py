"""The Student-t interval of a mean: summary.csv, MLflow and the paper reproductions' tables."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np


class Interval(NamedTuple):
    mean: float
    std: float
    low: float
    high: float
    half_width: float


def t_half_width(std, n, confidence: float = 0.95):
    """Half the width of the two-sided Student-t interval of a mean, from the sample standard
    deviation and the count (arrays or numbers; 0 where n < 2)."""
    std, n = np.asarray(std, dtype=float), np.asarray(n)
    if not n.ndim:  # one interval (summary.csv asks for thousands): the quantile is cached per n
        half = _t_quantile((1 + confidence) / 2, max(int(n) - 1, 1)) * std / np.sqrt(n)
        return float(half) if n > 1 else 0.0
    half = _stdtrit()(np.maximum(n - 1, 1), (1 + confidence) / 2) * std / np.sqrt(n)
    return np.where(n > 1, half, 0.0) if half.ndim else (float(half) if n > 1 else 0.0)


def t_quantile(n: int, confidence: float = 0.95) -> float:
    """The Student-t quantile ``t_half_width`` multiplies by std / sqrt(n) for ``n`` values."""
    return _t_quantile((1 + confidence) / 2, max(int(n) - 1, 1))


@functools.lru_cache(maxsize=4096)
def _t_quantile(q: float, df: int) -> float:
    return float(_stdtrit()(df, q))


def _stdtrit():
    """The Student t quantile function ``stdtrit(df, q)`` of ``scipy.special``, imported on first
    use. It is what ``scipy.stats.t.ppf`` computes (the same doubles: tested), without
    importing ``scipy.stats``, which takes about 0.85 s (``python -X importtime``) against
    0.25 s for ``scipy.special``, in the driver of every sweep while its workers simulate."""
    from scipy import special

    return special.stdtrit


def student_t_interval(values, confidence: float = 0.95) -> Interval:
    """Mean, sample standard deviation and the two-sided Student-t interval of the mean of
    ``values`` (one value: std 0 and an interval of width 0)."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    mean = float(np.mean(values))
    std = float(np.std(values, ddof=1)) if n > 1 else 0.0
    half = t_half_width(std, n, confidence)
    return Interval(mean, std, mean - half, mean + half, half)


class RatioInterval(NamedTuple):
    ratio: float  # mean(numerator) / mean(denominator); NaN when undefined
    half_width: float
    undefined: str  # "" or why the ratio is not reported


def paired_ratio_interval(numerator, denominator, confidence: float = 0.95) -> RatioInterval:
    """The ratio of two paired means, mean(x) / mean(y) over the same worlds, with the two-sided
    delta-method interval: the Student-t half-width of the mean of x - R y, divided by |mean(y)|.
    Undefined (NaN, with the reason) where the denominator's own interval holds 0: the ratio
    of a mean that could be 0 means nothing."""
    x, y = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) == 0:
        raise ValueError("paired_ratio_interval needs two 1-D arrays of one non-zero length")
    below = student_t_interval(y, confidence)
    if below.mean == 0 or abs(below.mean) <= below.half_width:
        return RatioInterval(
            float("nan"),
            float("nan"),
            f"denominator mean {below.mean:.4g} within its own 95% half-width {below.half_width:.4g}",
        )
    ratio = float(np.mean(x) / below.mean)
    residual = student_t_interval(x - ratio * y, confidence)
    return RatioInterval(ratio, residual.half_width / abs(below.mean), "")
