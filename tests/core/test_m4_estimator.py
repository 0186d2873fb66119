"""The M4 scaling-law estimator (algorithms/core/m4_estimator.py): exact recovery of a noise-free
curve of the M4 form and of its crossing, the implicit loss, the crossing's edge cases and the
input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.core.m4_estimator import ERR_MARGIN, M4Fit, m4_fit, m4_need

TRUE = M4Fit(ln_beta=math.log(3.0), c=-0.6, alpha=0.7, err_inf=0.2, err_0=12.0)


def test_loss_solves_the_implicit_equation():
    x = np.geomspace(1.0, 1e6, 40)
    loss = TRUE.loss(x)
    assert np.all(np.diff(loss) < 0) and np.all((loss > TRUE.err_inf) & (loss < TRUE.err_0))
    np.testing.assert_allclose(TRUE.g(loss), TRUE.beta * x**TRUE.c, rtol=1e-12)


@pytest.mark.parametrize("n", [60, 200])
def test_recovers_a_noise_free_m4_curve_exactly(n):
    x = np.arange(1, n + 1) * 20.0
    fit = m4_fit(x, TRUE.loss(x))
    assert fit.ln_beta == pytest.approx(TRUE.ln_beta, rel=1e-7)
    assert fit.c == pytest.approx(TRUE.c, rel=1e-7)
    assert fit.alpha == pytest.approx(TRUE.alpha, rel=1e-7)
    assert fit.err_inf == pytest.approx(TRUE.err_inf, rel=1e-7)
    assert fit.err_0 == pytest.approx(TRUE.err_0, rel=1e-7)
    eps = 0.3
    crossing = TRUE.data_to_reach(eps)
    assert TRUE.loss(np.array([crossing]))[0] == pytest.approx(eps, rel=1e-12)
    assert fit.data_to_reach(eps) == pytest.approx(crossing, rel=1e-6)
    s_n = float(x[-1])
    assert m4_need(fit, eps, s_n) == math.ceil(crossing - s_n)


def test_recovers_a_pure_power_law():
    """A power law a x^-b is M4 with L_inf = 0 and alpha = 0 (their M2 with no floor)."""
    x = np.arange(1, 101) * 7.0
    fit = m4_fit(x, 5.0 * x**-0.45)
    assert fit.c == pytest.approx(-0.45, rel=1e-6)
    assert fit.alpha == pytest.approx(0.0, abs=1e-8)
    assert fit.err_inf == pytest.approx(0.0, abs=1e-8)
    truth = (0.05 / 5.0) ** (-1 / 0.45)
    assert fit.data_to_reach(0.05) == pytest.approx(truth, rel=1e-6)


def test_fit_respects_the_reference_constraints():
    rng = np.random.default_rng(4)
    x = np.arange(1, 121) * 15.0
    loss = TRUE.loss(x) * np.exp(rng.normal(0.0, 0.02, x.size))
    fit = m4_fit(x, loss)
    assert 0.0 <= fit.err_inf <= loss.min() - ERR_MARGIN + 1e-12
    assert fit.err_0 >= loss.max() + ERR_MARGIN - 1e-12
    assert fit.c <= 0.0 and fit.alpha >= 0.0
    assert fit.data_to_reach(0.3) == pytest.approx(TRUE.data_to_reach(0.3), rel=0.5)


def test_crossing_edge_cases():
    assert TRUE.data_to_reach(0.2) == math.inf  # eps <= L_inf: never
    assert TRUE.data_to_reach(0.1) == math.inf
    assert m4_need(TRUE, 0.15, 100.0) == math.inf
    assert TRUE.data_to_reach(12.0) == 0.0  # eps >= L_0: from the start
    assert m4_need(TRUE, 13.0, 100.0) == 0.0
    s_star = TRUE.data_to_reach(0.3)
    assert m4_need(TRUE, 0.3, s_star + 10.0) == 0.0  # already past the crossing: clipped
    flat = M4Fit(ln_beta=0.0, c=0.0, alpha=0.0, err_inf=0.1, err_0=2.0)  # L = 0.1 + 1 = 1.1 everywhere
    assert flat.data_to_reach(1.0) == math.inf
    assert flat.data_to_reach(1.2) == 0.0
    slow = M4Fit(ln_beta=0.0, c=-1e-4, alpha=0.0, err_inf=0.0, err_0=2.0)
    assert slow.data_to_reach(0.5) == math.inf  # beyond floating point


def test_input_checks():
    with pytest.raises(ValueError, match="five parameters"):
        m4_fit([1.0, 2.0, 3.0, 4.0], [1.0, 0.9, 0.8, 0.7])
    with pytest.raises(ValueError, match="one length"):
        m4_fit([1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 0.9])
    with pytest.raises(ValueError, match="> 0"):
        m4_fit([0.0, 2.0, 3.0, 4.0, 5.0], [1.0, 0.9, 0.8, 0.7, 0.6])
