"""Weighted RLS of paper 002, Sec. 3.1 (algorithms/core/weighted_rls.py): the recursion of eq. 3.5
against the closed form of eq. 3.4, gamma = 1 as ordinary least squares, exact recovery of
noise-free power laws, the array bank against the scalar reference, and input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from algorithms.core.weighted_rls import RLSBank, WeightedRLS


def closed_form(s, loss, gamma):
    """Eq. 3.4 via numpy.linalg.lstsq on rows scaled by sqrt(gamma^(n-i)) (eq. 3.3)."""
    s, loss = np.asarray(s, float), np.asarray(loss, float)
    n = s.size
    w = np.sqrt(gamma ** (n - 1 - np.arange(n)))
    X = np.column_stack([np.log(s), np.ones(n)])
    theta, *_ = np.linalg.lstsq(X * w[:, None], np.log(loss) * w, rcond=None)
    V = (X * (w**2)[:, None]).T @ X
    return theta, V


@st.composite
def series(draw, max_points=30):
    """Increasing data amounts (optionally the first one repeated) and noisy power-law losses."""
    n = draw(st.integers(2, max_points))
    repeats = draw(st.integers(1, 3))
    s0 = draw(st.floats(1.0, 1e4))
    steps = draw(st.lists(st.floats(0.01, 1.0), min_size=n - 1, max_size=n - 1))
    s = [s0] * repeats + list(s0 * np.cumprod(1.0 + np.array(steps)))
    a = draw(st.floats(0.5, 20.0))
    b = draw(st.floats(0.05, 1.5))
    seed = draw(st.integers(0, 2**16))
    noise = np.random.default_rng(seed).normal(0.0, draw(st.sampled_from([0.0, 0.01, 0.1])), len(s))
    loss = a * np.asarray(s) ** -b * np.exp(noise)
    return np.asarray(s), loss


@settings(max_examples=150, deadline=None)
@given(series(), st.floats(0.5, 1.0))
def test_recursion_matches_closed_form(data, gamma):
    s, loss = data
    rls = WeightedRLS(gamma)
    for i, (si, li) in enumerate(zip(s, loss)):
        rls.update(si, li)
        if not rls.fitted:
            assert np.isnan(rls.theta).all()
            continue
        theta, V = closed_form(s[: i + 1], loss[: i + 1], gamma)
        assert np.allclose(rls.theta, theta, rtol=1e-6, atol=1e-6 * np.abs(theta).max())
        P = np.linalg.inv(V)
        assert np.allclose(rls.P, P, rtol=1e-6, atol=1e-6 * np.abs(P).max())
    assert rls.fitted and rls.n == s.size and rls.last_s == s[-1]


@settings(max_examples=60, deadline=None)
@given(series())
def test_gamma_one_is_ordinary_least_squares(data):
    s, loss = data
    rls = WeightedRLS(1.0)
    for si, li in zip(s, loss):
        rls.update(si, li)
    slope, intercept = np.polyfit(np.log(s), np.log(loss), 1)
    assert np.allclose(rls.theta, [slope, intercept], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("gamma", [0.5, 0.9, 1.0])
@pytest.mark.parametrize("a, b", [(3.0, 0.4), (0.7, 1.2), (12.0, 0.08)])
def test_exact_recovery_of_a_noise_free_power_law(gamma, a, b):
    rls = WeightedRLS(gamma)
    for s in np.linspace(50.0, 5000.0, 40):
        rls.update(s, a * s**-b)
        if rls.n >= 2:
            assert rls.b == pytest.approx(b, rel=1e-9)
            assert rls.a == pytest.approx(a, rel=1e-9)
    assert rls.predict(1e6) == pytest.approx(a * 1e6**-b, rel=1e-8)


def test_unfitted_until_two_distinct_data_amounts():
    rls = WeightedRLS(0.9)
    assert not rls.fitted and rls.n == 0 and np.isnan(rls.theta).all()
    for loss in (2.0, 1.9, 1.8):  # the same s three times: the slope is not identified
        rls.update(10.0, loss)
        assert not rls.fitted and np.isnan(rls.theta).all() and np.isnan(rls.P).all()
    rls.update(20.0, 1.0)
    assert rls.fitted and rls.n == 4
    theta, _ = closed_form([10.0, 10.0, 10.0, 20.0], [2.0, 1.9, 1.8, 1.0], 0.9)
    assert np.allclose(rls.theta, theta, rtol=1e-12)


def test_two_points_give_the_line_through_them():
    rls = WeightedRLS(0.9)
    rls.update(100.0, 2.0)
    rls.update(400.0, 1.0)
    assert rls.b == pytest.approx(0.5, rel=1e-12)  # 2 = a 100^-b, 1 = a 400^-b
    assert rls.a == pytest.approx(20.0, rel=1e-12)


@pytest.mark.parametrize("loss", [0.0, -1.0, math.nan, math.inf])
def test_rejects_bad_losses(loss):
    rls = WeightedRLS(0.9)
    with pytest.raises(ValueError, match="loss"):
        rls.update(10.0, loss)
    bank = RLSBank(3, 0.9)
    with pytest.raises(ValueError, match="losses"):
        bank.update([0, 2], [10.0, 20.0], [1.0, loss])
    assert bank.n.sum() == 0  # nothing applied


@pytest.mark.parametrize("s", [0.0, -5.0, math.nan, math.inf])
def test_rejects_bad_data_amounts(s):
    with pytest.raises(ValueError, match="data amount"):
        WeightedRLS(0.9).update(s, 1.0)
    with pytest.raises(ValueError, match="data amounts"):
        RLSBank(2, 0.9).update([1], [s], [1.0])


@pytest.mark.parametrize("gamma", [0.0, -0.1, 1.01, math.nan])
def test_rejects_bad_discounts(gamma):
    with pytest.raises(ValueError, match="gamma"):
        WeightedRLS(gamma)
    with pytest.raises(ValueError, match="gamma"):
        RLSBank(2, gamma)


def test_bank_rejects_bad_indices():
    bank = RLSBank(3, 0.9)
    with pytest.raises(ValueError, match="distinct"):
        bank.update([1, 0, 1], [1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        bank.update([3], [1.0], [1.0])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        bank.update([-1], [1.0], [1.0])
    with pytest.raises(ValueError, match="one s and one loss"):
        bank.update([0, 1], [1.0], [1.0, 2.0])
    bank.update([], [], [])  # nothing to do
    assert bank.n.sum() == 0


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.floats(0.5, 1.0), st.integers(0, 2**16))
def test_bank_equals_the_scalar_class(k, gamma, seed):
    rng = np.random.default_rng(seed)
    bank = RLSBank(k, gamma)
    ref = [WeightedRLS(gamma) for _ in range(k)]
    s = rng.uniform(1.0, 100.0, k)
    a, b = rng.uniform(0.5, 10.0, k), rng.uniform(0.1, 1.0, k)
    for _ in range(25):
        idx = rng.permutation(k)[: rng.integers(0, k + 1)]  # any subset, any order
        grow = rng.random(idx.size) < 0.8  # sometimes the same s again
        s[idx] = np.where(grow, s[idx] * (1.0 + rng.uniform(0.01, 0.5, idx.size)), s[idx])
        loss = a[idx] * s[idx] ** -b[idx] * np.exp(rng.normal(0.0, 0.05, idx.size))
        bank.update(idx, s[idx], loss)
        for j, sj, lj in zip(idx, s[idx], loss):
            ref[j].update(sj, lj)
        # the two write eq. 3.5 with different operation orders: rounding differences, amplified
        # by the conditioning of V_n (up to ~1e8 here with gamma = 0.5), stay below 1e-7
        for j in range(k):
            assert bank.n[j] == ref[j].n and bank.fitted[j] == ref[j].fitted
            assert np.allclose(bank.theta[j], ref[j].theta, rtol=1e-7, atol=1e-12, equal_nan=True)
            assert np.allclose(bank.P[j], ref[j].P, rtol=1e-7, atol=1e-12, equal_nan=True)
            assert np.array_equal(bank.last_s[j], ref[j].last_s, equal_nan=True)


def test_bank_matches_closed_form_for_many_threads():
    rng = np.random.default_rng(1)
    k, gamma = 200, 0.9
    bank = RLSBank(k, gamma)
    a, b = rng.uniform(1, 5, k), rng.uniform(0.2, 0.8, k)
    history = []
    s = rng.uniform(10, 50, k)
    for _ in range(30):
        s = s * (1 + rng.uniform(0.01, 0.1, k))
        loss = a * s**-b * np.exp(rng.normal(0, 0.02, k))
        history.append((s.copy(), loss))
        bank.update(np.arange(k), s, loss)
    S = np.array([h[0] for h in history])
    L = np.array([h[1] for h in history])
    for j in range(0, k, 17):
        theta, _ = closed_form(S[:, j], L[:, j], gamma)
        assert np.allclose(bank.theta[j], theta, rtol=1e-6)
    assert bank.theta.shape == (k, 2) and bank.P.shape == (k, 2, 2)


def test_theta_is_a_copy():
    bank = RLSBank(2, 0.9)
    bank.update([0, 1], [1.0, 1.0], [1.0, 2.0])
    bank.update([0, 1], [2.0, 3.0], [0.5, 1.0])
    theta = bank.theta
    theta[:] = 0.0
    assert not np.array_equal(bank.theta, theta)
