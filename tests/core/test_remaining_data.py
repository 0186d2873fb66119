"""Eq. 3.6 of paper 002 (remaining data to reach eps from the fitted power law) and the UCB
correction of Remark 2 (algorithms/core/remaining_data.py): hand-computed values, every
degenerate case, vectorisation, and the fit-to-need chain on a noise-free curve."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from algorithms.core.remaining_data import remaining_data, ucb_bonus, ucb_need
from algorithms.core.weighted_rls import RLSBank, WeightedRLS


def theta_of(a, b):
    return [-b, math.log(a)]


def test_hand_computed_values():
    # a = 2, b = 0.5, eps = 0.1: s* = (a / eps)^(1 / b) = 20^2 = 400; s_n = 150.3 -> ceil(249.7) = 250
    assert remaining_data(theta_of(2.0, 0.5), 0.1, 150.3) == 250.0
    # a = 5, b = 1, eps = 0.01: s* = 500; s_n = 0.5 -> 500
    assert remaining_data(theta_of(5.0, 1.0), 0.01, 0.5) == 500.0
    # a = 3, b = 0.25, eps = 1: s* = 3^4 = 81; s_n = 80.2 -> ceil(0.8) = 1
    assert remaining_data(theta_of(3.0, 0.25), 1.0, 80.2) == 1.0


def test_vectorised_over_threads():
    theta = np.array([theta_of(2.0, 0.5), theta_of(5.0, 1.0), theta_of(3.0, 0.25)])
    need = remaining_data(theta, np.array([0.1, 0.01, 1.0]), np.array([150.3, 0.5, 80.2]))
    assert need.tolist() == [250.0, 500.0, 1.0]
    # a scalar threshold and a scalar s_n broadcast
    assert remaining_data(theta[:2], 0.1, 10.5).tolist() == [390.0, 40.0]


def test_degenerate_cases():
    theta = np.array(
        [
            theta_of(2.0, 0.0),  # flat fit: never comes down -> inf
            theta_of(2.0, -0.3),  # increasing fit -> inf
            theta_of(2.0, 0.5),  # s* = 400 <= s_n = 500: done by the fit -> 0
            theta_of(0.05, 0.5),  # a < eps: s* = 0.25 < 1 -> 0
            [math.nan, math.nan],  # no fit yet -> nan
            theta_of(10.0, 1e-5),  # s* = exp(ln(100) / 1e-5): overflow -> inf
            theta_of(2.0, 0.5),  # exactly at s*: ceil(0) = 0
        ]
    )
    s_n = np.array([5.0, 5.0, 500.0, 5.0, 5.0, 5.0, 400.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning leaks out
        need = remaining_data(theta, 0.1, s_n)
    assert need[0] == math.inf and need[1] == math.inf
    assert need[2] == 0.0 and need[3] == 0.0
    assert math.isnan(need[4])
    assert need[5] == math.inf
    assert need[6] in (0.0, 1.0)  # s* = 400 up to rounding of exp(ln 20 / 0.5)


def test_fitted_mask_gives_nan():
    theta = np.array([theta_of(2.0, 0.5), theta_of(2.0, 0.5)])
    need = remaining_data(theta, 0.1, 150.3, fitted=np.array([True, False]))
    assert need[0] == 250.0 and math.isnan(need[1])


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan])
def test_rejects_bad_thresholds(eps):
    with pytest.raises(ValueError, match="eps"):
        remaining_data(theta_of(2.0, 0.5), eps, 1.0)


def test_from_a_fit_of_a_noise_free_curve():
    a, b = 3.0, 0.4
    eps = a * 1234.5**-b  # s* = 1234.5
    rls = WeightedRLS(0.9)
    for s in (100.0, 150.0, 200.0):
        rls.update(s, a * s**-b)
    assert remaining_data(rls.theta, eps, rls.last_s) == 1035.0  # ceil(1234.5 - 200)
    bank = RLSBank(2, 0.9)
    bank.update([0], [100.0], [a * 100.0**-b])
    assert np.isnan(remaining_data(bank.theta, eps, bank.last_s, bank.fitted)).all()
    bank.update([0, 1], [200.0, 100.0], [a * 200.0**-b, 1.0])
    need = remaining_data(bank.theta, eps, bank.last_s, bank.fitted)
    assert need[0] == 1035.0 and math.isnan(need[1])


def test_ucb_hand_computed():
    # beta = 2, tau = 11, b_k = 1, 4 units of compute received: bonus = 2 sqrt(ln 10 / 4)
    bonus = 2.0 * math.sqrt(math.log(10.0) / 4.0)
    assert ucb_bonus(2.0, 11, [1], [4.0])[0] == pytest.approx(bonus, rel=1e-15)
    assert ucb_need([100.0], 2.0, 11, [1], [4.0])[0] == pytest.approx(100.0 - bonus, rel=1e-15)
    assert bonus == pytest.approx(1.5174271293851465)


def test_ucb_undefined_cases():
    need = np.array([100.0, 100.0, 100.0, 1.0, math.nan, math.inf, math.inf, 50.0])
    begin = np.array([9, 10, 0, 0, 0, 0, 0, 0])
    received = np.array([0.0, 3.0, 0.0, 4.0, 4.0, 4.0, 0.0, 2.0])
    tau = 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ucb_need(need, 2.0, tau, begin, received)
    assert out[0] == 100.0  # tau - b_k = 1: ln 1 = 0, no bonus (nothing received)
    assert out[1] == 100.0  # tau - b_k = 0: not begun, no bonus
    assert out[2] == 0.0  # nothing received: infinite bonus
    assert out[3] == 0.0  # 1 - 2 sqrt(ln 10 / 4) < 0: clipped at 0
    assert math.isnan(out[4])  # unknown stays unknown
    assert out[5] == math.inf  # cannot finish, finite bonus
    assert out[6] == 0.0  # inf - inf: full optimism
    assert out[7] == pytest.approx(50.0 - 2.0 * math.sqrt(math.log(10.0) / 2.0))
    # beta = 0 changes nothing (even with nothing received)
    same = ucb_need(need, 0.0, tau, begin, received)
    assert np.array_equal(same, need, equal_nan=True)


@pytest.mark.parametrize("beta", [-1.0, math.nan, math.inf])
def test_ucb_rejects_bad_beta(beta):
    with pytest.raises(ValueError, match="beta"):
        ucb_need([1.0], beta, 5, [0], [1.0])


def test_ucb_rejects_negative_received():
    with pytest.raises(ValueError, match="received"):
        ucb_need([1.0], 1.0, 5, [0], [-1.0])
