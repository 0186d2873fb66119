"""The remaining-data prediction of paper 002 (LARA), eq. 3.6, and the UCB correction of Remark 2.

Eq. 3.6: with the fit theta = [-b_hat, ln a_hat] (weighted_rls.py), the fitted curve a_hat s^(-b_hat)
reaches eps at s* = exp((1/b_hat) ln(a_hat / eps)); the thread, having learned s_n, still needs

    S_hat = ceil(s* - s_n)    (data units, the unit of N_k times unit times).

Eq. 3.6 is not defined everywhere; the values used here (reading notes, `core`):
- no fit yet (fewer than two distinct points, theta nan, or `fitted` False): nan, "unknown";
- b_hat <= 0 (a non-decreasing fit never comes down to eps): inf, "cannot finish";
- s* - s_n <= 0 (the fit is already at or below eps at s_n): 0, "done by the fit" (success is
  judged on the observed loss, so the thread is still active and the allocator decides);
- s* beyond floating point (exp overflows, b_hat tiny): inf.
The computation is in logs, ln s* = (ln a_hat - ln eps) / b_hat, and is vectorised over threads.

Remark 2 (UCB): S_tilde = S_hat - beta sqrt(ln(tau - b_k) / sum_t eta_{k,t}), beta > 0, with
sum_t eta_{k,t} the shares the thread has received so far (units before tau; the remark writes
t = b_k..tau, the share of unit tau is not decided yet when S_tilde is needed). Where the remark
is undefined (`ucb_need`):
- tau - b_k <= 1: ln(tau - b_k) <= 0, no bonus (the thread has had at most one unit);
- nothing received yet (sum = 0) with tau - b_k > 1: an infinite bonus, S_tilde = 0 (the most
  optimistic prediction; in LARA such a thread has no fit anyway, and nan stays nan);
- the result is clipped at 0 (a negative data need means "done");
- S_hat = nan stays nan; S_hat = inf stays inf under a finite bonus, and becomes 0 under an
  infinite one (no data at all: full optimism wins).
S_tilde is not rounded up again (the bonus is a real number).
"""

from __future__ import annotations

import math

import numpy as np


def remaining_data(theta, eps, s_n, fitted=None) -> np.ndarray:
    """S_hat of eq. 3.6 for every thread: (K,) floats (whole numbers, 0, inf or nan).

    theta: (K, 2) rows [-b_hat, ln a_hat] (or one row (2,)); eps: thresholds eps_k > 0 (K,) or a
    scalar; s_n: the data learned so far (K,) or a scalar; fitted: optional (K,) bools, False
    rows give nan whatever theta holds.
    """
    theta = np.asarray(theta, dtype=float)
    one = theta.ndim == 1
    theta = theta.reshape(-1, 2)
    eps = np.asarray(eps, dtype=float)
    positive = eps > 0.0  # (nan fails)
    if not positive.flat[positive.argmin()]:
        raise ValueError(f"the loss thresholds eps_k must be > 0 (eq. 3.6 takes ln eps), got {eps.tolist()}")
    b = -theta[:, 0]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        s_star = np.exp((theta[:, 1] - np.log(eps)) / b)
        need = np.ceil(s_star - s_n)
    need = np.maximum(need, 0.0)  # nan stays nan, -inf (s* = 0) becomes 0
    need[b <= 0.0] = math.inf  # a non-decreasing fit (nan b compares False)
    if fitted is not None:
        need[~np.asarray(fitted, dtype=bool).reshape(-1)] = math.nan
    return need[0] if one else need


def ucb_bonus(beta: float, tau: int, begin, received) -> np.ndarray:
    """Remark 2's bonus beta sqrt(ln(tau - b_k) / sum_t eta_{k,t}) (K,): 0 where tau - b_k <= 1,
    inf where nothing was received (and tau - b_k > 1)."""
    beta = float(beta)
    if not (beta >= 0.0 and math.isfinite(beta)):
        raise ValueError(f"the UCB constant beta must be finite and >= 0 (Remark 2), got {beta!r}")
    span = tau - np.asarray(begin, dtype=float)
    received = np.asarray(received, dtype=float)
    if (received < 0.0).any():
        raise ValueError(f"received shares must be >= 0, got {received.tolist()}")
    with np.errstate(divide="ignore", invalid="ignore"):
        bonus = beta * np.sqrt(np.log(np.maximum(span, 1.0)) / received)
    return np.where(span <= 1.0, 0.0, np.where(received > 0.0, bonus, math.inf if beta > 0 else 0.0))


def ucb_need(need, beta: float, tau: int, begin, received) -> np.ndarray:
    """S_tilde = max(S_hat - bonus, 0) of Remark 2 (module docstring for the undefined cases)."""
    need = np.asarray(need, dtype=float)
    bonus = ucb_bonus(beta, tau, begin, received)
    with np.errstate(invalid="ignore"):
        out = np.maximum(need - bonus, 0.0)
    out = np.where(np.isinf(bonus) & np.isinf(need), 0.0, out)  # inf - inf: full optimism
    return np.where(np.isnan(need), math.nan, out)
