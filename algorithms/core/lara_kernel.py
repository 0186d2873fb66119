"""LARA's per-unit update (paper 002, Alg. 2 after line 1) compiled with Numba: `CompiledLARA`
behaves as `algorithms.core.lara.LARA` (same constructor, `reset`, `allocate`, `exploration_end`,
`trace`, the UCB option of Remark 2) and runs every `allocate` in one compiled call, `lara_step`:

1. line 15 (of the previous unit): the weighted RLS update of every thread that reported a
   loss, eq. 3.5, with the exact start from two distinct points (weighted_rls.RLSBank);
2. line 4: the remaining data S_hat of eq. 3.6 for every thread with its degenerate cases
   (remaining_data.remaining_data), corrected by Remark 2's bonus when ucb_beta > 0
   (remaining_data.ucb_need);
3. lines 5-8: the exploration set (explore_then_exploit.ExploreThenExploit.allocate);
4. lines 9-12 (lara.LARA.exploit, lara.lara_unit_shares): the threads done by the fit
   (need 0) marked in `done_by_fit` and their need raised to `min_need` when it is > 0
   (explore_then_exploit.py's module docstring); Alg. 1 on p_k = S_hat_k / N_k of the active
   threads (tree_search.adaptive_tree_search: line 5's tolerance TOL, line 6's ties towards the
   latest position in deadline order, p_k = inf and p_k > d_k - d_0 + TOL never selected,
   p_k = 0 always selected with eta_tilde_k = 0, unknown needs as inf), the unit split by the
   cascade of eq. 3.8 (tree_search.cascade_shares) or, with `delivery="deadline"`, among the
   selected threads in deadline order (lara.deadline_shares), then line 12's rescaling, or
   `when_none_selected`.

The state of the RLS fits lives in arrays, one column per thread: rows of `state` are -b_hat,
ln a_hat, P00, P01, P11 (the three distinct entries of the symmetric P), then x0, W, R of the
exact start, then last_s, then DONE (1.0 once the thread was done by the fit at an exploiting
unit, `done_by_fit`; 0.0 before); `n` counts the points and `fitted` marks the threads with two
distinct ln s (weighted_rls.py's module docstring). The rows of `consts` are the threads'
N_k, d_k, b_k, ln eps_k and `min_need` (the same for every thread). The flag and `min_need`
ride in these arrays, and the two choices `when_none_selected` and `delivery` in one integer,
so that `lara_step` takes no more arguments than it needs (each argument costs Numba's
dispatcher time at every call).

Same numbers as the NumPy path: every float operation is the reference's, in its order (eq. 3.5
as RLSBank._recursive writes it, including the multiplication of P by 1 / gamma; the cumulative
sums and products of Alg. 1 and eq. 3.8 left to right as numpy's accumulate does them; line
12's total by numpy's pairwise summation, `pairwise_sum`, over the active threads in index
order), and every decision is the same comparison. No fast-math (LLVM does not contract
a * b + c without it); `error_model="numpy"` gives IEEE results (inf, nan) for a division by
zero, as the NumPy code does (e.g. eq. 3.6 with b_hat = 0, overwritten by inf afterwards).
ln and exp are libm's here; NumPy's float64 ln and exp agree with it bit for bit on this
machine's CPU (AVX2); on a CPU where NumPy dispatches its own AVX-512 ln / exp, they may differ
in the last bit and a rare ceil in eq. 3.6 could then differ by one data unit
(tests/core/test_lara_kernel.py compares the two allocators' outcomes).

Compiled on first use and cached on disk (`cache=True`, in __pycache__ next to this file).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from algorithms.core.explore_then_exploit import check_min_need
from algorithms.core.lara import WHEN_NONE_SELECTED, check_delivery
from algorithms.core.simulation import UnitView
from algorithms.core.tree_search import TOL
from algorithms.core.weighted_rls import _check_gamma, covariance_of, theta_of
from market.core.threads import ThreadArrays

# Rows of the RLS state (state[row, k]).
T0, T1, P00, P01, P11, X0, W, R, LAST_S, DONE = range(10)
ROWS = 10
# Rows of the threads' constants (consts[row, k]).
BUDGET, DEADLINE, BEGIN, LOG_EPS, MIN_NEED = range(5)
# lara_step's options (bits of `flags`).
IDLE, BY_DEADLINE = 1, 2

# lara_step's status.
EXPLORED, EXPLOITED = 0, 1
BAD_POINT, REPEATED, OUT_OF_RANGE = -1, -2, -3


@njit(cache=True, error_model="numpy")
def _block_sum(a, lo, n):
    """numpy's pairwise_sum on a block of n <= 128 elements a[lo:lo + n]."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, error_model="numpy")
def pairwise_sum(a):
    """sum(a) added as numpy's float64 add.reduce does it for a contiguous array of up to 8192
    elements (pairwise_sum in numpy's loops_utils: blocks of up to 128 with eight accumulators;
    above 128, the sum of the halves split at a multiple of 8). Written with an explicit stack:
    Numba's on-disk cache does not load recursive functions safely (numba issue #6061)."""
    n = a.size
    if n <= 128:
        return _block_sum(a, np.int64(0), n)
    # tasks: (lo, n) to sum, or n = -1: add the two values on top of the value stack
    task_lo = np.empty(192, dtype=np.int64)
    task_n = np.empty(192, dtype=np.int64)
    values = np.empty(64)
    tasks = 1
    top = 0
    task_lo[0], task_n[0] = 0, n
    while tasks > 0:
        tasks -= 1
        lo, size = task_lo[tasks], task_n[tasks]
        if size < 0:
            top -= 1
            values[top - 1] = values[top - 1] + values[top]
        elif size <= 128:
            values[top] = _block_sum(a, lo, size)
            top += 1
        else:
            half = size // 2
            half -= half % 8
            task_lo[tasks], task_n[tasks] = 0, -1  # then add the two halves
            task_lo[tasks + 1], task_n[tasks + 1] = lo + half, size - half
            task_lo[tasks + 2], task_n[tasks + 2] = lo, half  # the left half first
            tasks += 3
    return values[0]


@njit(cache=True, error_model="numpy")
def rls_update(state, n, fitted, new, s, loss, gamma):
    """One point (s[j], loss[j]) for thread new[j], every j: RLSBank.update's algebra (eq. 3.5
    once fitted, the exact start before). Returns 0, or BAD_POINT (an s or a loss not finite and
    > 0), REPEATED (an index twice) or OUT_OF_RANGE, before changing anything."""
    k = n.size
    m = new.size
    for j in range(m):
        if not (s[j] > 0.0 and s[j] < math.inf and loss[j] > 0.0 and loss[j] < math.inf):
            return BAD_POINT
        if new[j] < 0 or new[j] >= k:
            return OUT_OF_RANGE
    if m > 1:
        seen = np.zeros(k, dtype=np.bool_)
        for j in range(m):
            if seen[new[j]]:
                return REPEATED
            seen[new[j]] = True
    inv_g = 1.0 / gamma
    for j in range(m):
        i = new[j]
        x = np.log(s[j])
        r = np.log(loss[j])
        n[i] += 1
        state[LAST_S, i] = s[j]
        if fitted[i]:
            # RLSBank._recursive, operation by operation
            t0, t1 = state[T0, i], state[T1, i]
            p00, p01, p11 = state[P00, i], state[P01, i], state[P11, i]
            px0 = p00 * x + p01
            px1 = p01 * x + p11
            den = x * px0 + px1 + gamma
            k0 = px0 / den
            k1 = px1 / den
            err = (r - t0 * x) - t1
            state[T0, i] = t0 + k0 * err
            state[T1, i] = t1 + k1 * err
            state[P00, i] = (p00 - px0 * k0) * inv_g
            state[P01, i] = (p01 - px0 * k1) * inv_g
            state[P11, i] = (p11 - px1 * k1) * inv_g
            continue
        x0 = state[X0, i]
        if n[i] == 1 or x == x0:  # RLSBank._start, one ln s so far
            state[X0, i] = x
            state[W, i] = gamma * state[W, i] + 1.0
            state[R, i] = gamma * state[R, i] + r
            continue
        w0 = state[W, i]
        w = gamma * w0
        slope = (r - state[R, i] / w0) / (x - x0)
        dx = x - x0
        det = w * (dx * dx)
        state[T0, i] = slope
        state[T1, i] = r - slope * x
        state[P00, i] = (w + 1.0) / det
        state[P01, i] = -(w * x0 + x) / det
        state[P11, i] = (w * x0 * x0 + x * x) / det
        fitted[i] = True
    return 0


@njit(cache=True, error_model="numpy")
def remaining_need(state, fitted, log_eps, data, need):
    """S_hat of eq. 3.6 into need (remaining_data.remaining_data: nan unfitted, inf for
    b_hat <= 0, 0 for "done by the fit")."""
    for i in range(need.size):
        if not fitted[i]:
            need[i] = np.nan
            continue
        b = -state[T0, i]
        if b <= 0.0:
            need[i] = np.inf
            continue
        v = np.ceil(np.exp((state[T1, i] - log_eps[i]) / b) - data[i])
        need[i] = v if (v >= 0.0 or v != v) else 0.0


@njit(cache=True, error_model="numpy")
def ucb_correct(need, beta, t, begin, received):
    """Remark 2's S_tilde in place (remaining_data.ucb_need with ucb_bonus)."""
    for i in range(need.size):
        span = t - begin[i]
        if span <= 1.0:
            bonus = 0.0
        elif received[i] > 0.0:
            bonus = beta * np.sqrt(np.log(max(span, 1.0)) / received[i])
        else:
            bonus = np.inf if beta > 0.0 else 0.0
        v = need[i]
        if v != v:
            continue
        if np.isinf(bonus) and np.isinf(v):
            need[i] = 0.0
            continue
        d = v - bonus
        need[i] = d if (d >= 0.0 or d != d) else 0.0


@njit(cache=True, inline="always")
def _above(ps, a, b):
    """Position a comes before b in line 6's order: larger p, then the later position."""
    return ps[a] > ps[b] or (ps[a] == ps[b] and a > b)


@njit(cache=True)
def _sift_down(heap, size, at, ps):
    while True:
        top = at
        left = 2 * at + 1
        if left < size and _above(ps, heap[left], heap[top]):
            top = left
        if left + 1 < size and _above(ps, heap[left + 1], heap[top]):
            top = left + 1
        if top == at:
            return
        heap[at], heap[top] = heap[top], heap[at]
        at = top


@njit(cache=True)
def _sift_up(heap, at, ps):
    while at > 0:
        parent = (at - 1) // 2
        if not _above(ps, heap[at], heap[parent]):
            return
        heap[at], heap[parent] = heap[parent], heap[at]
        at = parent


@njit(cache=True, error_model="numpy")
def tree_search_sorted(ps, slack, tol, eta, keep):
    """Alg. 1 on needs ps and slacks d_k - d_0 already in deadline order (ties by index):
    eta_tilde (line 10, clipped to [0, 1]) into eta and the set C into keep, as
    tree_search.adaptive_tree_search computes them (prefix sums up to the first position line 5
    rejects on, then lines 3-8 with a heap whose top is line 6's argmax)."""
    m = ps.size
    total = 0.0
    first = -1
    before = 0.0
    for i in range(m):
        lim = slack[i] + tol
        keep[i] = ps[i] <= lim  # eligible: inf and p_k > d_k - d_0 + tol never in C
        if keep[i]:
            total = total + ps[i]
        else:
            total = total + 0.0
        if keep[i] and total > lim:
            first = i
            break
        before = total
    if first < 0:
        pass
    else:
        for i in range(first + 1, m):
            keep[i] = ps[i] <= slack[i] + tol
        heap = np.empty(m, dtype=np.int64)
        size = np.int64(0)  # not 0: a literal has Numba compile the callees once more, for Literal[int]
        for i in range(first):
            if keep[i]:
                heap[size] = i
                size += 1
        for i in range(size // 2 - 1, -1, -1):
            _sift_down(heap, size, i, ps)
        total = before if first > 0 else 0.0
        for i in range(first, m):
            if not keep[i]:
                continue
            heap[size] = i  # line 4
            size += 1
            _sift_up(heap, size - 1, ps)
            total += ps[i]
            if total > slack[i] + tol:  # line 5
                q = heap[0]  # line 6
                size -= 1
                heap[0] = heap[size]
                _sift_down(heap, size, np.int64(0), ps)
                total -= ps[q]
                keep[q] = False
    # line 10 (tree_search._line10)
    cs = 0.0
    for i in range(m):
        chosen = ps[i] if keep[i] else 0.0
        cs = cs + chosen if i > 0 else chosen
        room = slack[i] - (cs - chosen)
        if room > 0.0:
            e = chosen / room
        elif chosen > 0.0:
            e = 1.0
        else:
            e = chosen / 1.0
        eta[i] = e if (e <= 1.0 or e != e) else 1.0


@njit(cache=True, error_model="numpy")
def lara_step(
    state,
    n,
    fitted,
    new,
    new_loss,
    active,
    data,
    consts,
    order,
    received,
    need,
    t,
    exploration,
    explore,
    gamma,
    ucb_beta,
    flags,
):
    """One `allocate` of LARA: returns (shares (K,), status). status is EXPLORED (E_t was not
    empty), EXPLOITED (lines 9-12 ran), or a negative code from `rls_update` (nothing changed).

    state, n, fitted: the RLS fits (module docstring), updated in place; new, new_loss: the
    threads that reported a loss at the end of unit t - 1 and those losses (at data[new]);
    active, data: A_t and the data learned; consts: rows BUDGET, DEADLINE, BEGIN (as floats),
    LOG_EPS (numpy's ln eps_k), MIN_NEED (the need given to an active thread whose need is 0 at
    an exploiting unit; 0: none); order: every thread by deadline, ties by index; received:
    sum_t eta_{k,t}, updated; need: filled with the (UCB-corrected) S_hat; exploration: H_k;
    explore: False skips exploration; ucb_beta: 0 for the paper's LARA; flags: IDLE for
    when_none_selected = "idle", plus BY_DEADLINE for delivery = "deadline". state[DONE] marks
    the active threads with need 0 at an exploiting unit (done by the fit)."""
    k = active.size
    m_new = new.size
    s = np.empty(m_new)
    for j in range(m_new):
        s[j] = data[new[j]] if 0 <= new[j] < k else 1.0
    status = rls_update(state, n, fitted, new, s, new_loss, gamma)
    shares = np.zeros(k)
    if status < 0:
        return shares, status
    remaining_need(state, fitted, consts[LOG_EPS], data, need)
    if ucb_beta > 0.0:
        ucb_correct(need, ucb_beta, float(t), consts[BEGIN], received)
    count = 0
    for i in range(k):
        if active[i] and (not fitted[i] or (explore and data[i] <= exploration)):
            count += 1
    if count > 0:  # lines 5-8
        share = 1.0 / float(count)
        for i in range(k):
            if active[i] and (not fitted[i] or (explore and data[i] <= exploration)):
                shares[i] = share
                received[i] += share
        return shares, EXPLORED
    m = 0
    for i in range(k):
        if active[i]:
            m += 1
    by_deadline = np.empty(m, dtype=np.int64)
    ps = np.empty(m)
    slack = np.empty(m)
    d0 = float(t - 1)
    j = 0
    for pos in range(k):
        i = order[pos]
        if active[i]:
            by_deadline[j] = i
            v = need[i]
            if v == 0.0:  # done by the fit
                state[DONE, i] = 1.0
                if consts[MIN_NEED, i] > 0.0:
                    v = consts[MIN_NEED, i]
            p = v / consts[BUDGET, i]
            ps[j] = np.inf if p != p else p
            slack[j] = consts[DEADLINE, i] - d0
            j += 1
    eta = np.empty(m)
    keep = np.empty(m, dtype=np.bool_)
    tree_search_sorted(ps, slack, TOL, eta, keep)
    if flags & BY_DEADLINE:  # lara.deadline_shares
        left = 1.0
        for j in range(m):
            if keep[j]:
                p = ps[j]
                give = p if p < left else left
                shares[by_deadline[j]] = give
                left -= give
    else:
        left = 1.0  # eq. 3.8 (cascade_shares)
        for j in range(m):
            e = eta[j]
            shares[by_deadline[j]] = e if j == 0 else e * left
            left = 1.0 - e if j == 0 else left * (1.0 - e)
    part = np.empty(m)  # line 12, in index order
    j = 0
    for i in range(k):
        if active[i]:
            part[j] = shares[i]
            j += 1
    total = pairwise_sum(part)
    if total > 0.0:
        for i in range(k):
            if active[i]:
                shares[i] = shares[i] / total
    else:
        share = 0.0 if flags & IDLE else 1.0 / float(m)
        for i in range(k):
            shares[i] = share if active[i] else 0.0
    for i in range(k):
        received[i] += shares[i]
    return shares, EXPLOITED


_LOADED = False


def load_kernel() -> None:
    """Load (or compile) `lara_step` once per process with a one-thread probe, so that no timed
    `allocate` call (the rows' `decision_ms`, Fig. 6(b)) pays for it."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    probe = CompiledLARA(exploration=0.0)
    probe.reset(ThreadArrays(np.array([0]), np.array([2]), np.array([1.0]), np.array([0.5]), ("probe",)))
    probe.allocate(
        UnitView(1, np.array([True]), np.zeros(1), np.empty(0, dtype=np.int64), np.empty(0), np.zeros(1, dtype=bool))
    )
    probe.allocate(UnitView(2, np.array([True]), np.ones(1), np.array([0]), np.array([0.9]), np.zeros(1, dtype=bool)))


class CompiledLARA:
    """`algorithms.core.lara.LARA` with its per-unit update in one compiled call (`lara_step`);
    same arguments, same shares (module docstring)."""

    name = "LARA"

    def __init__(
        self,
        exploration: float = 8000.0,
        gamma: float = 0.9,
        explore: bool = True,
        ucb_beta: float = 0.0,
        when_none_selected: str = "uniform",
        log_predictions: bool = False,
        delivery: str = "cascade",
        min_need: float = 0.0,
    ):
        self.exploration = float(exploration)
        self.gamma = float(gamma)
        self.explore = bool(explore)
        self.ucb_beta = float(ucb_beta)
        self.log_predictions = bool(log_predictions)
        if when_none_selected not in WHEN_NONE_SELECTED:
            raise ValueError(
                f"lara.when_none_selected must be one of {', '.join(WHEN_NONE_SELECTED)}, got {when_none_selected!r}"
            )
        self.when_none_selected = when_none_selected
        self.delivery = check_delivery(delivery)
        self.min_need = check_min_need(min_need)

    def reset(self, threads: ThreadArrays) -> None:
        load_kernel()
        gamma = _check_gamma(self.gamma)
        if self.ucb_beta > 0.0 and not math.isfinite(self.ucb_beta):
            raise ValueError(f"the UCB constant beta must be finite and >= 0 (Remark 2), got {self.ucb_beta!r}")
        eps = np.asarray(threads.threshold, dtype=float)
        if eps.size and not bool((eps > 0.0).all()):
            raise ValueError(f"the loss thresholds eps_k must be > 0 (eq. 3.6 takes ln eps), got {eps.tolist()}")
        k = len(threads)
        self.threads = threads
        self._gamma = gamma
        self._state = np.full((ROWS, k), np.nan)
        self._state[W] = 0.0
        self._state[R] = 0.0
        self._state[DONE] = 0.0
        self._n = np.zeros(k, dtype=np.int64)
        self._fitted = np.zeros(k, dtype=np.bool_)
        self._consts = np.ascontiguousarray(
            np.vstack(
                [
                    np.asarray(threads.budget, dtype=float),
                    np.asarray(threads.deadline, dtype=float),
                    np.asarray(threads.begin, dtype=float),
                    np.log(eps),
                    np.full(k, self.min_need),
                ]
            )
        )
        self._order = np.argsort(np.asarray(threads.deadline), kind="stable").astype(np.int64)
        self._need = np.full(k, np.nan)
        self._flags = (IDLE if self.when_none_selected == "idle" else 0) | (
            BY_DEADLINE if self.delivery == "deadline" else 0
        )
        self.received = np.zeros(k)  # sum_t eta_{k,t}
        self.trace: list[tuple[int, int, float, float]] = []
        self.exploration_end: int | None = None  # the last unit of exploration (0: none)

    # RLSBank's view of the fits (for inspection and tests)
    @property
    def theta(self) -> np.ndarray:
        """(K, 2): [-b_hat, ln a_hat] per thread, nan rows until fitted (a copy)."""
        return theta_of(self._state)

    @property
    def P(self) -> np.ndarray:
        """(K, 2, 2): V^(-1) per thread (nan until fitted), a new array."""
        return covariance_of(self._state)

    @property
    def n(self) -> np.ndarray:
        return self._n.copy()

    @property
    def fitted(self) -> np.ndarray:
        return self._fitted.copy()

    @property
    def last_s(self) -> np.ndarray:
        return self._state[LAST_S].copy()

    @property
    def done_by_fit(self) -> np.ndarray:
        """(K,) bools: the threads done by the fit at some exploiting unit (explore_then_exploit.py's
        module docstring), a new array."""
        return self._state[DONE] == 1.0

    @property
    def need(self) -> np.ndarray:
        """(K,): the needs of the last `allocate` (S_hat of eq. 3.6, or Remark 2's S_tilde; before
        `min_need`), a copy."""
        return self._need.copy()

    def allocate(self, view: UnitView) -> np.ndarray:
        shares, status = lara_step(
            self._state,
            self._n,
            self._fitted,
            np.asarray(view.new, dtype=np.int64),
            np.asarray(view.new_loss, dtype=float),
            np.asarray(view.active, dtype=np.bool_),
            np.asarray(view.data, dtype=float),
            self._consts,
            self._order,
            self.received,
            self._need,
            int(view.t),
            self.exploration,
            self.explore,
            self._gamma,
            self.ucb_beta,
            self._flags,
        )
        if status < 0:
            self._raise(status, view)
        if self.log_predictions:
            need = self._need
            for k in np.flatnonzero(view.active & self._fitted):
                self.trace.append((view.t, int(k), float(view.data[k]), float(need[k])))
        if status == EXPLOITED and self.exploration_end is None:
            self.exploration_end = view.t - 1
        return shares

    def _raise(self, status: int, view: UnitView) -> None:
        idx = np.asarray(view.new)
        if status == REPEATED:
            raise ValueError(f"update needs distinct thread indices, got {idx.tolist()}")
        if status == OUT_OF_RANGE:
            raise ValueError(f"thread indices must be in [0, {view.active.size}), got {idx.tolist()}")
        raise ValueError(
            f"data amounts s and losses must be finite and > 0 (X_s = [ln s, 1], "
            f"r = ln loss, eq. 3.2), got s = {view.data[idx].tolist()}, "
            f"loss = {np.asarray(view.new_loss).tolist()}"
        )
