"""sweep/statistics.py: the paired ratio of means and its interval."""

import numpy as np
import pytest
from scipy import stats

from sweep.statistics import paired_ratio_interval


def test_ratio_of_means_not_mean_of_ratios():
    x, y = np.array([1.0, 3.0, 3.0, 1.0]), np.array([1.0, 2.0, 2.0, 1.0])
    assert paired_ratio_interval(x, y).ratio == pytest.approx(8.0 / 6.0)  # the mean of ratios is 1.25


def test_delta_method_half_width_by_hand():
    x, y = np.array([2.0, 4.0, 6.0, 9.0]), np.array([1.0, 2.0, 2.0, 4.0])
    r = x.mean() / y.mean()  # 21 / 9
    e = x - r * y
    want = stats.t.ppf(0.975, 3) * e.std(ddof=1) / np.sqrt(4) / y.mean()
    got = paired_ratio_interval(x, y)
    assert (got.ratio, got.half_width, got.undefined) == (pytest.approx(r), pytest.approx(want), "")


def test_proportional_worlds_have_a_zero_width_interval():
    y = np.array([4.0, 5.0, 6.0, 5.0])
    assert paired_ratio_interval(1.5 * y, y).half_width == pytest.approx(0.0, abs=1e-12)


def test_denominator_that_could_be_zero_is_undefined_with_the_reason():
    got = paired_ratio_interval(np.array([1.0, 2.0, 3.0]), np.array([-1.0, 1.0, 0.5]))
    assert np.isnan(got.ratio) and "within its own 95% half-width" in got.undefined


def test_shapes_checked():
    with pytest.raises(ValueError):
        paired_ratio_interval([1.0, 2.0], [1.0])
