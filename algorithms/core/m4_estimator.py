"""The M4 scaling-law estimator of Alabdulmohsin, Neyshabur and Zhai (2022, "Revisiting neural
scaling laws in language and vision", NeurIPS), one of the comparators of paper 002's Fig. 5.

The form (their eq. M4): the loss L(x) after x data is the implicit solution of

    (L(x) - L_inf) / (L_0 - L(x))^alpha = beta x^c,      beta > 0, c <= 0, alpha >= 0,

with L_inf the loss with infinite data and L_0 the loss with none (random guessing): the curve
falls from L_0 (x -> 0) to L_inf (x -> inf) and is a power law in x in between; alpha bends the
start (alpha = 0 is their M2, L(x) = L_inf + beta x^c).

The fit (their "recipe"): least squares in the transformed space, the residual of point i

    r_i = ln(L_i - L_inf) - alpha ln(L_0 - L_i) - ln beta - c ln x_i,

minimised over (L_inf, L_0, ln beta, c, alpha) under their constraints (their code's projection,
`base.M._project`, with their default margin 1e-3):

    0 <= L_inf <= min_i L_i - 1e-3,    L_0 >= max_i L_i + 1e-3,    c <= 0,    alpha >= 0,

from their default start: L_inf = min_i L_i - 1e-3 (`err_inf=None`), L_0 = 1 (`err_0=1.0`, raised
to max_i L_i + 1e-3 where the losses exceed 1), and (ln beta, c, alpha) the constrained linear
least squares at that (L_inf, L_0) (their first step). Their code alternates that linear step
with gradient steps on (L_inf, L_0) (learning rate 1e-8, 1000 epochs, 100 times) and then
Newton steps until beta moves less than 1e-10; here the same objective under the same
constraints from the same start is solved by SciPy's trust-region reflective least squares
(`scipy.optimize.least_squares`, analytic Jacobian), which reaches the constrained least-squares
point their alternation converges to in far fewer evaluations. Three details of their code are
not kept, each for a stated reason:
- their linear step is scikit-learn's non-negative regression on the columns (1, -ln x,
  ln(L_0 - L)), so it also forces ln beta >= 0, i.e. beta >= 1: a side effect of the sign trick
  for c and alpha that makes the fit depend on the unit of x (with x in examples, 10^6 and up,
  it never binds; with our data units it can); the paper's form has beta > 0 only;
- their alpha column ln(L_0 - L_i) is computed once with the starting L_0 and not updated as
  L_0 moves (and is nan where a loss exceeds the starting L_0 = 1, as ours do): here the
  residual uses the current L_0, as the paper's objective does;
- their prediction solves the implicit equation on a grid of 10,000 losses; the crossing needed
  here has a closed form (`M4Fit.data_to_reach`).

The crossing: L(x) = eps exactly where beta x^c = g(eps) = (eps - L_inf) / (L_0 - eps)^alpha, so
x* = (g(eps) / beta)^(1 / c): infinite when eps <= L_inf (the fit never gets there) or c = 0 and
g(eps) < beta, zero when eps >= L_0 (or c = 0 and g(eps) >= beta).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares, lsq_linear

ERR_MARGIN = 1e-3  # their `base.ERR_MARGIN`: L_inf <= min L - margin, L_0 >= max L + margin
START_ERR_0 = 1.0  # their default `err_0` (the random-guessing error of an error rate)
LOWER_BOUND = 0.0  # their default `lo_bound`: the loss is >= 0
MAX_EVALUATIONS = 2000  # the solver's budget (function evaluations); typical fits take 20-100


@dataclass(frozen=True)
class M4Fit:
    """A fitted M4 curve (L - L_inf) / (L_0 - L)^alpha = beta x^c."""

    ln_beta: float
    c: float
    alpha: float
    err_inf: float
    err_0: float

    @property
    def beta(self) -> float:
        return math.exp(self.ln_beta)

    def g(self, loss) -> np.ndarray:
        """The left-hand side (L - L_inf) / (L_0 - L)^alpha, for L_inf < L < L_0."""
        loss = np.asarray(loss, dtype=float)
        return (loss - self.err_inf) / (self.err_0 - loss) ** self.alpha

    def loss(self, x) -> np.ndarray:
        """L(x), the root of w - f (b - w)^alpha = 0 for w = L - L_inf in (0, b), b = L_0 - L_inf,
        f = beta x^c (the left side rises in w, so the root is unique; bisection to the last bit)."""
        x = np.asarray(x, dtype=float)
        f = np.exp(self.ln_beta + self.c * np.log(x))
        b = self.err_0 - self.err_inf
        lo, hi = np.zeros_like(f), np.full_like(f, b)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            above = mid - f * (b - mid) ** self.alpha > 0.0
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid)
            if np.all(hi - lo <= 4 * np.finfo(float).eps * np.maximum(hi, 1e-300)):
                break
        return self.err_inf + 0.5 * (lo + hi)

    def data_to_reach(self, eps: float) -> float:
        """The data x* > 0 at which the fitted curve reaches eps (module docstring)."""
        eps = float(eps)
        if eps <= self.err_inf:
            return math.inf
        if eps >= self.err_0:
            return 0.0
        ln_g = math.log(eps - self.err_inf) - self.alpha * math.log(self.err_0 - eps)
        ln_beta = self.ln_beta
        if self.c >= 0.0:  # a flat fit (the bound c <= 0 is active)
            return 0.0 if ln_g >= ln_beta else math.inf
        ln_x = (ln_g - ln_beta) / self.c
        if ln_x > 700.0:  # beyond floating point
            return math.inf
        return math.exp(ln_x)


def _residuals(p, ln_x, loss):
    err_inf, err_0, ln_beta, c, alpha = p
    return np.log(loss - err_inf) - alpha * np.log(err_0 - loss) - ln_beta - c * ln_x


def _jacobian(p, ln_x, loss):
    err_inf, err_0, ln_beta, c, alpha = p
    return np.column_stack(
        [-1.0 / (loss - err_inf), -alpha / (err_0 - loss), -np.ones_like(ln_x), -ln_x, -np.log(err_0 - loss)]
    )


def m4_fit(x, loss) -> M4Fit:
    """Fit M4 to the points (x_i, L_i), x_i > 0 (module docstring)."""
    x = np.asarray(x, dtype=float)
    loss = np.asarray(loss, dtype=float)
    if x.shape != loss.shape or x.ndim != 1:
        raise ValueError(f"x and loss must be 1-D arrays of one length, got shapes {x.shape} and {loss.shape}")
    if x.size < 5 or np.unique(x).size < 3:
        raise ValueError(f"M4 has five parameters: it needs at least five points at three distinct x, got {x.size}")
    if not (np.all(np.isfinite(x)) and np.all(x > 0) and np.all(np.isfinite(loss))):
        raise ValueError("x must be finite and > 0 and the losses finite")
    ln_x = np.log(x)
    top = float(loss.min()) - ERR_MARGIN  # L_inf's upper bound (their min_err)
    bottom = float(loss.max()) + ERR_MARGIN  # L_0's lower bound (their max_err)
    low = max(LOWER_BOUND, 0.0)
    err_inf = top  # their start
    err_0 = max(START_ERR_0, bottom)
    # their first step: (ln beta, c, alpha) by linear least squares at the starting (L_inf, L_0)
    a = np.column_stack([np.ones_like(ln_x), ln_x, np.log(err_0 - loss)])
    start = lsq_linear(a, np.log(loss - err_inf), bounds=([-np.inf, -np.inf, 0.0], [np.inf, 0.0, np.inf])).x
    p0 = np.array([err_inf, err_0, *start])
    if top <= low:
        # no room for L_inf (a loss within the margin of 0): their projection pins it at min L - margin
        fixed = top

        def res(q):
            return _residuals(np.concatenate([[fixed], q]), ln_x, loss)

        def jac(q):
            return _jacobian(np.concatenate([[fixed], q]), ln_x, loss)[:, 1:]

        lower, upper, q0 = [bottom, -np.inf, -np.inf, 0.0], [np.inf, np.inf, 0.0, np.inf], p0[1:]
    else:

        def res(q):
            return _residuals(q, ln_x, loss)

        def jac(q):
            return _jacobian(q, ln_x, loss)

        lower, upper, q0 = [low, bottom, -np.inf, -np.inf, 0.0], [top, np.inf, np.inf, 0.0, np.inf], p0
    q0 = np.clip(q0, lower, upper)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # trial steps near a bound: log of ~0
        q = least_squares(
            res,
            q0,
            jac=jac,
            bounds=(lower, upper),
            method="trf",
            x_scale="jac",
            max_nfev=MAX_EVALUATIONS,
            ftol=1e-12,
            xtol=1e-12,
            gtol=1e-12,
        ).x
    p = np.concatenate([[top], q]) if top <= low else q
    err_inf, err_0, ln_beta, c, alpha = (float(v) for v in p)
    return M4Fit(ln_beta=ln_beta, c=c, alpha=alpha, err_inf=err_inf, err_0=err_0)


def m4_need(fit: M4Fit, eps: float, s_n: float) -> float:
    """S_hat = ceil(x* - s_n) >= 0 with x* where the fit reaches eps; inf if it never does."""
    s_star = fit.data_to_reach(eps)
    if math.isinf(s_star):
        return math.inf
    return max(float(math.ceil(s_star - s_n)), 0.0)
