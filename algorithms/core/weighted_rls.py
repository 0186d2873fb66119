"""Resource prediction of paper 002 (LARA), Sec. 3.1: the weighted (discounted) recursive least
squares fit of a power-law loss curve, one per thread.

Model (eq. 3.1-3.2): loss l(s) = a s^(-b) + noise, fitted in logs, r = ln l(s) = X_s^T theta with
X_s = [ln s, 1] and theta = [-b, ln a]. After n points (s_i, l(s_i)) the estimate minimises
eq. 3.3, sum_i gamma^(n-i) (X_i^T theta - r_i)^2, whose closed form is eq. 3.4:
theta_n = V_n^(-1) sum_i gamma^(n-i) r_i X_i with V_n = sum_i gamma^(n-i) X_i X_i^T. gamma in
(0, 1] is the discount (the paper uses 0.9; gamma = 1 is ordinary least squares, "LS" of Fig. 5).
The online form eq. 3.5 (Haykin, Ch. 10.3) updates theta and P_n = V_n^(-1) without inverting
a matrix:

    P_n     = (P_{n-1} - P_{n-1} X X^T P_{n-1} / (gamma + X^T P_{n-1} X)) / gamma
    theta_n = theta_{n-1} + P_n X (r_n - X^T theta_{n-1})

Initialisation (eq. 3.5 needs P = V^(-1), which exists only once two distinct ln s have been
seen): exact, no regulariser. While every point seen has the same s (same ln s in floating
point), the fit is "unfitted": theta is nan and the thread keeps two numbers, the discounted
weight W = sum gamma^(n-i) and the discounted sum R = sum gamma^(n-i) r_i at that one x0 = ln s.
When a point at a different x1 arrives, eq. 3.4 is solved in closed form: the weighted line
through (x0, R/W) with weight gamma W and (x1, r1) with weight 1 interpolates both, so
theta = [(r1 - R/W) / (x1 - x0), r1 - slope x1], and V = [[w x0^2 + x1^2, w x0 + x1], [w x0 + x1,
w + 1]] (w = gamma W) has det V = w (x1 - x0)^2 (no cancellation), so P = V^(-1) is exact.
From then on eq. 3.5 runs as printed; it is algebraically identical to eq. 3.4 (the tests check
agreement with numpy.linalg.lstsq on sqrt-weighted rows to 1e-6 relative; 1e-9 or better is
typical). The usual alternative, P_0 = delta^(-1) I with delta small, biases theta by a ridge
term gamma^n delta |theta|^2 that is not small when the points are close together in ln s (the
regime LARA is in), so it is not used.

Conditioning: with gamma < 1 and points that barely move in ln s (a thread receiving tiny
shares), V_n is nearly singular and P grows like gamma^(-n) in the unexcited direction
(covariance wind-up). The fit is then ill-determined for eq. 3.4 as well, and the recursion
drifts from it by rounding (measured over 1000 points at gamma = 0.9: 1e-7 relative with steps
of 1e-4 in s, 3e-3 with steps of 1e-6). This is eq. 3.3's nature; no safeguard is added.

Losses must be finite and > 0 (ln l), data s finite and > 0: anything else raises ValueError.

`WeightedRLS` is the readable one-thread reference; `RLSBank` holds K threads in arrays and
updates any subset at once (Alg. 2 line 15 updates every thread that reported a loss), with the
same algebra written out on the three distinct entries of the symmetric P; the tests check
that both agree.
"""

from __future__ import annotations

import math

import numpy as np


def _check_gamma(gamma: float) -> float:
    gamma = float(gamma)
    if not (0.0 < gamma <= 1.0):
        raise ValueError(f"the discount gamma must be in (0, 1] (paper 002, eq. 3.3), got {gamma!r}")
    return gamma


def _check_point(s: float, loss: float) -> tuple[float, float]:
    s, loss = float(s), float(loss)
    if not (math.isfinite(s) and s > 0.0):
        raise ValueError(f"the data amount s must be finite and > 0 (X_s = [ln s, 1]), got {s!r}")
    if not (math.isfinite(loss) and loss > 0.0):
        raise ValueError(f"the loss must be finite and > 0 (r = ln loss, eq. 3.2), got {loss!r}")
    return s, loss


class WeightedRLS:
    """Weighted RLS of eq. 3.3-3.5 for one thread (the reference implementation).

    `theta` = [-b_hat, ln a_hat] (nan until `fitted`), `n` = points seen, `fitted` = at least two
    distinct ln s seen, `P` = V_n^(-1) (nan until fitted), `last_s` = the latest s (s_n of eq. 3.6).
    """

    def __init__(self, gamma: float = 0.9):
        self.gamma = _check_gamma(gamma)
        self.n = 0
        self.last_s = math.nan
        self._theta = np.full(2, np.nan)
        self._P = np.full((2, 2), np.nan)
        self._fitted = False
        self._x0 = math.nan  # the one ln s seen while unfitted
        self._w = 0.0  # sum gamma^(n-i) over those points
        self._r = 0.0  # sum gamma^(n-i) r_i over those points

    @property
    def fitted(self) -> bool:
        return self._fitted

    @property
    def theta(self) -> np.ndarray:
        """[-b_hat, ln a_hat] (a copy); [nan, nan] until fitted."""
        return self._theta.copy()

    @property
    def P(self) -> np.ndarray:
        """V_n^(-1) (a copy); nan until fitted."""
        return self._P.copy()

    @property
    def b(self) -> float:
        return -float(self._theta[0])

    @property
    def a(self) -> float:
        return math.exp(float(self._theta[1]))

    def predict(self, s: float) -> float:
        """The fitted loss a_hat s^(-b_hat) (nan until fitted)."""
        return math.exp(float(self._theta[0]) * math.log(s) + float(self._theta[1]))

    def update(self, s: float, loss: float) -> None:
        """Add the point (s, loss): eq. 3.5 once fitted, the exact start described above before."""
        s, loss = _check_point(s, loss)
        x, r = math.log(s), math.log(loss)
        g = self.gamma
        self.n += 1
        self.last_s = s
        if not self._fitted:
            if self.n == 1 or x == self._x0:
                self._x0 = x
                self._w = g * self._w + 1.0
                self._r = g * self._r + r
                return
            x0, w = self._x0, g * self._w
            slope = (r - self._r / self._w) / (x - x0)
            self._theta = np.array([slope, r - slope * x])
            det = w * (x - x0) ** 2
            off = -(w * x0 + x)
            self._P = np.array([[w + 1.0, off], [off, w * x0 * x0 + x * x]]) / det
            self._fitted = True
            return
        X = np.array([x, 1.0])
        Px = self._P @ X
        self._P = (self._P - np.outer(Px, Px) / (g + X @ Px)) / g  # eq. 3.5, second line
        self._theta = self._theta + self._P @ X * (r - X @ self._theta)  # eq. 3.5, first line


def theta_of(state: np.ndarray) -> np.ndarray:
    """(K, 2) [-b_hat, ln a_hat] from a bank's state (rows 0-1: theta; 2-4: P00, P01, P11), a copy."""
    return state[:2].T.copy()


def covariance_of(state: np.ndarray) -> np.ndarray:
    """(K, 2, 2) V_n^(-1) from a bank's state (rows 2-4: the distinct entries of the symmetric P)."""
    out = np.empty((state.shape[1], 2, 2))
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1] = state[2], state[3], state[3], state[4]
    return out


class RLSBank:
    """Weighted RLS (eq. 3.5) for K threads at once, in arrays.

    `update(idx, s, loss)` adds one point to each thread in `idx` (distinct indices). State:
    `theta` (K, 2) = [-b_hat, ln a_hat] per thread (nan rows until fitted), `P` (K, 2, 2) =
    V^(-1) per thread, `n` (K,) points seen, `fitted` (K,), `last_s` (K,). Same initialisation
    as `WeightedRLS`. Internally theta and the three distinct entries of the symmetric P are the
    rows of one (5, K) array, so that a subset is gathered and scattered in one step each.
    """

    def __init__(self, k: int, gamma: float = 0.9):
        k = int(k)
        if k < 0:
            raise ValueError(f"the number of threads must be >= 0, got {k}")
        self.gamma = _check_gamma(gamma)
        self.k = k
        self._state = np.full((5, k), np.nan)  # rows: -b, ln a, P00, P01, P11
        self.n = np.zeros(k, dtype=np.int64)
        self.fitted = np.zeros(k, dtype=bool)
        self.last_s = np.full(k, np.nan)
        self._x0 = np.full(k, np.nan)
        self._w = np.zeros(k)
        self._r = np.zeros(k)

    def __len__(self) -> int:
        return self.k

    @property
    def theta(self) -> np.ndarray:
        """(K, 2): [-b_hat, ln a_hat] per thread, nan rows until fitted (a copy)."""
        return theta_of(self._state)

    @property
    def P(self) -> np.ndarray:
        """(K, 2, 2): V_n^(-1) per thread (nan until fitted), a new array."""
        return covariance_of(self._state)

    def update(self, idx, s, loss) -> None:
        """One point (s[j], loss[j]) for thread idx[j], every j; idx must not repeat."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        m = idx.size
        if m == 0:
            return
        s = np.asarray(s, dtype=float).reshape(-1)
        loss = np.asarray(loss, dtype=float).reshape(-1)
        if s.size != m or loss.size != m:
            raise ValueError(f"update needs one s and one loss per index: {m} indices, {s.size} s, {loss.size} losses")
        low, high = np.minimum(s, loss), np.maximum(s, loss)
        if not (low[low.argmin()] > 0.0 and high[high.argmax()] < math.inf):  # nan fails both
            raise ValueError(
                f"data amounts s and losses must be finite and > 0 (X_s = [ln s, 1], "
                f"r = ln loss, eq. 3.2), got s = {s.tolist()}, loss = {loss.tolist()}"
            )
        ordered = True
        if m > 1:
            rising = idx[1:] > idx[:-1]
            ordered = bool(rising[rising.argmin()])
            if not ordered and np.unique(idx).size != m:
                raise ValueError(f"update needs distinct thread indices, got {idx.tolist()}")
        if (idx[0] if ordered else idx.min()) < 0 or (idx[-1] if ordered else idx.max()) >= self.k:
            raise ValueError(f"thread indices must be in [0, {self.k}), got {idx.tolist()}")
        x = np.log(s)
        r = np.log(loss)
        if ordered and m == self.k:  # every thread, in order (idx = 0..K-1): no gathering
            self.n += 1
            self.last_s[:] = s
            fit = self.fitted
            if fit[fit.argmin()]:
                self._recursive(None, x, r)
                return
        else:
            self.n[idx] += 1
            self.last_s[idx] = s
            fit = self.fitted[idx]
            if fit[fit.argmin()]:  # all fitted (the usual case)
                self._recursive(idx, x, r)
                return
        fit = fit.copy()
        if fit[fit.argmax()]:  # some fitted
            self._recursive(idx[fit], x[fit], r[fit])
        new = ~fit
        self._start(idx[new], x[new], r[new])

    def _recursive(self, idx: np.ndarray | None, x: np.ndarray, r: np.ndarray) -> None:
        """Eq. 3.5 on the fitted threads idx (None: all, in order), with P = [[p00, p01], [p01,
        p11]] and X = [x, 1]. Written on 1-D rows with in-place operations: this is the hot path
        of Alg. 2 line 15."""
        whole = idx is None
        st = self._state if whole else self._state[:, idx]
        t0, t1, p00, p01, p11 = st
        px0 = p00 * x
        px0 += p01  # P_{n-1} X = [p00 x + p01, p01 x + p11]
        px1 = p01 * x
        px1 += p11
        den = x * px0
        den += px1
        den += self.gamma  # gamma + X^T P_{n-1} X
        k0 = px0 / den  # P_n X = P_{n-1} X / (gamma + X^T P_{n-1} X)
        k1 = px1 / den
        err = t0 * x
        np.subtract(r, err, out=err)
        err -= t1  # r_n - X^T theta_{n-1}
        t0 += k0 * err  # eq. 3.5, first line
        t1 += k1 * err
        p00 -= px0 * k0  # P_{n-1} - P_{n-1} X X^T P_{n-1} / (...)
        p01 -= px0 * k1
        p11 -= px1 * k1
        st[2:] *= 1.0 / self.gamma  # eq. 3.5, second line
        if not whole:
            self._state[:, idx] = st

    def _start(self, idx: np.ndarray, x: np.ndarray, r: np.ndarray) -> None:
        """The exact start of unfitted threads (module docstring)."""
        g = self.gamma
        x0 = self._x0[idx]
        same = (self.n[idx] == 1) | (x == x0)
        if same.any():
            j = idx[same]
            self._x0[j] = x[same]
            self._w[j] = g * self._w[j] + 1.0
            self._r[j] = g * self._r[j] + r[same]
        other = ~same
        if other.any():
            j, x1, r1, x0 = idx[other], x[other], r[other], x0[other]
            w0 = self._w[j]
            w = g * w0
            slope = (r1 - self._r[j] / w0) / (x1 - x0)
            det = w * (x1 - x0) ** 2
            self._state[:, j] = [
                slope,
                r1 - slope * x1,
                (w + 1.0) / det,
                -(w * x0 + x1) / det,
                (w * x0 * x0 + x1 * x1) / det,
            ]
            self.fitted[j] = True
