"""What the sow reports share (reproduction/sow/__init__.py, theorem52.py, regimes.py): the paired
ratio of two per-replicate series, and the epsilon a mechanism's name carries."""

from __future__ import annotations

import math
import re

import pandas as pd

from sweep.statistics import RatioInterval, paired_ratio_interval


def series_ratio(numerator: pd.Series, denominator: pd.Series) -> RatioInterval:
    """mean(numerator) / mean(denominator) over the index values both have (a ratio of means,
    paired replicate by replicate), with its 95% half-width; NaN where they share none."""
    both = pd.concat([numerator.rename("x"), denominator.rename("y")], axis=1, join="inner").dropna()
    if both.empty:
        return RatioInterval(math.nan, math.nan, "no common replicates")
    return paired_ratio_interval(both["x"].to_numpy(), both["y"].to_numpy())


def epsilon_of(mechanism: str) -> float:
    """The `epsilon=` of a mechanism's name, NaN without one."""
    found = re.search(r"epsilon=([0-9.]+)", mechanism)
    return float(found.group(1)) if found else math.nan
