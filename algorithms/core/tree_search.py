"""Resource allocation of paper 002 (LARA), Sec. 3.2: Alg. 1 (adaptive binary tree search), the
cascade of shares of Lemma 1 (eq. 3.8) and the compute it delivers (eq. 3.9).

At time tau, d_0 = tau - 1 and every active thread k needs p_k = S_k / N_k units of compute
(one unit = the whole resource for one unit time) by its deadline d_k >= tau. Problem 3.7 asks
for the most threads served; all threads are released now, so a set C can be served iff, in
deadline order, sum_{i in C, d_i <= d_k} p_i <= d_k - d_0 for every k in C (EDF), and Alg. 1 is
the Moore-Hodgson rule (reading notes, `core`): line 5's test
p_k / (d_k - d_0 - sum_{i in C} p_i + p_k) > 1 is, as the denominator is >= p_k >= 0 whenever it
is reached, the same as sum_{i in C} p_i > d_k - d_0, and line 6 drops the largest p in C. It
serves the most threads (Theorem 1; the tests check it against all 2^K subsets).

Conventions (the paper is silent on them):
- ties in deadline are broken by the input index (stable sort); the tests cover ties;
- ties in line 6's argmax are broken towards the latest position in deadline order (latest
  deadline, then highest index): among equal needs the thread with the most time is dropped;
- p_k = inf (a thread that cannot finish) is never selected: Alg. 1 would add it and remove it
  at once (it is the argmax); it is skipped instead, which avoids inf - inf. The same holds for
  any p_k > d_k - d_0 (+ tol): every thread already in C has p_i <= d_i - d_0 (+ tol) <= d_k -
  d_0 (+ tol) < p_k, so line 6 removes k itself; the fast version skips these threads too (the
  reference only skips inf; the tests check both agree);
- p_k = 0 is always selected (it needs nothing) and gets eta_tilde_k = 0;
- line 5 tolerates `tol` (default 1e-9 units of compute): a set that is exactly tight stays
  feasible despite rounding (after a unit of the plan, the same set is exactly tight again);
  eta_tilde is clipped to [0, 1], so the cascade's shares are always valid;
- p_k must be >= 0 (nan is rejected: an unknown need is the caller's decision) and d_k > d_0.

Line 10 gives eta_tilde_k = p_k / (d_k - d_0 - sum_{i in C, i < k} p_i) for k in C (0 outside);
with them eq. 3.9 delivers D_k = p_k exactly: with L_k = sum_{j<k} prod_{i=j}^{k-1} (1 - eta_i)
Delta_j + Delta_k, L_k = (1 - eta_{k-1}) L_{k-1} + Delta_k = d_k - d_0 - sum_{j<k} D_j
(Appendix A.1; eq. A.4's "+1" is "+Delta_k" as in eq. 3.9), so D_k = eta_k L_k = p_k.

Speed (O(K log K)): prefix sums find the first position line 5 rejects on (none: C is every
thread that fits alone, no Python loop); from there the loop runs in Python on a heap of
integer ranks, over the threads that fit alone.
`adaptive_tree_search_reference` is the literal, readable version (the tests check both agree).
"""

from __future__ import annotations

import heapq

import numpy as np

TOL = 1e-9


def deadline_order(deadlines) -> np.ndarray:
    """Positions in increasing deadline, ties by index (Alg. 1 line 2)."""
    return np.argsort(np.asarray(deadlines), kind="stable")


def _all(mask: np.ndarray) -> bool:
    """mask.all() for a non-empty bool array (argmin is several times cheaper than all())."""
    return bool(mask[mask.argmin()])


def _prepare(need_units, deadlines, d0, order):
    p = np.asarray(need_units, dtype=float).reshape(-1)
    d = np.asarray(deadlines).reshape(-1)
    if p.size != d.size:
        raise ValueError(f"need one deadline per thread: {p.size} needs, {d.size} deadlines")
    order = deadline_order(d) if order is None else np.asarray(order, dtype=np.int64).reshape(-1)
    if order.size != p.size:
        raise ValueError(f"order must list every thread once, got {order.size} positions for {p.size}")
    slack = d[order] - float(d0)
    if p.size:
        if not _all(p >= 0.0):
            raise ValueError(f"needs p_k = S_k / N_k must be >= 0 (inf allowed, nan not), got {p.tolist()}")
        if slack[0] <= 0:
            raise ValueError(f"deadlines must be > d_0 = tau - 1 = {d0} (active threads), got {d.tolist()}")
        if p.size > 1 and not _all(slack[1:] >= slack[:-1]):
            raise ValueError("order must sort the deadlines in increasing order (deadline_order)")
    return p, order, slack


def _line10(ps: np.ndarray, keep: np.ndarray, slack: np.ndarray) -> np.ndarray:
    """eta_tilde in deadline order: p_k / (d_k - d_0 - sum_{i in C, i < k} p_i) on C, 0 elsewhere."""
    chosen = np.where(keep, ps, 0.0)
    room = slack - (chosen.cumsum() - chosen)
    positive = room > 0.0
    if positive[positive.argmin()]:  # the usual case: room > 0 everywhere
        eta = chosen / room
    else:  # room <= 0 only within tol: p_k = 0 gives 0, p_k > 0 gives 1
        eta = chosen / np.where(positive, room, 1.0)
        eta[~positive & (chosen > 0.0)] = 1.0
    return np.minimum(eta, 1.0, out=eta)


def _unsort(order: np.ndarray, eta_sorted: np.ndarray, keep: np.ndarray):
    eta = np.empty_like(eta_sorted)
    eta[order] = eta_sorted
    selected = np.empty_like(keep)
    selected[order] = keep
    return eta, selected


def adaptive_tree_search(need_units, deadlines, d0, *, order=None, tol: float = TOL):
    """Alg. 1: (eta_tilde, selected), both (K,) in the input order.

    need_units: p_k = S_k / N_k >= 0 (inf: never selectable); deadlines: d_k > d0; d0 = tau - 1;
    order: the deadline order if already computed (`deadline_order`); tol: line 5's tolerance.
    `selected` is the final set C (threads with p_k = 0 included, with eta_tilde_k = 0).
    """
    p, order, slack = _prepare(need_units, deadlines, d0, order)
    if p.size == 0:
        return np.zeros(0), np.zeros(0, dtype=bool)
    ps = p[order]
    limit = slack + tol
    eligible = ps <= limit  # p_k > d_k - d_0 (+ tol), inf included: never in C (docstring)
    cs = np.where(eligible, ps, 0.0).cumsum()
    over = (cs > limit) & eligible
    first = int(over.argmax())
    keep = eligible
    if over[first]:
        keep = eligible.copy()
        _lines_3_to_8(ps, limit, eligible, keep, first, float(cs[first - 1]) if first else 0.0)
    return _unsort(order, _line10(ps, keep, slack), keep)


def _lines_3_to_8(ps, limit, eligible, keep, first, total) -> None:
    """Alg. 1's loop over the eligible positions from the first one line 5 rejects on
    (everything before it stays in C; `total` is their sum). C is a heap of ranks: rank 0 is the
    largest p (ties: the latest position), so the heap's minimum is line 6's argmax."""
    k = ps.size
    by_rank = (k - 1) - np.argsort(-ps[::-1], kind="stable")  # position of each rank
    rank = np.empty(k, dtype=np.int64)
    rank[by_rank] = np.arange(k)
    heap = rank[:first][eligible[:first]].tolist()
    heapq.heapify(heap)
    p_of_rank = ps[by_rank].tolist()
    push, pop = heapq.heappush, heapq.heappop
    dropped = []
    at = first + np.flatnonzero(eligible[first:])
    for r, pk, lim in zip(rank[at].tolist(), ps[at].tolist(), limit[at].tolist()):
        push(heap, r)  # line 4
        total += pk
        if total > lim:  # line 5: sum_{i in C} p_i > d_k - d_0 (+ tol)
            q = pop(heap)  # line 6
            total -= p_of_rank[q]
            dropped.append(q)
    keep[by_rank[dropped]] = False


def adaptive_tree_search_reference(need_units, deadlines, d0, *, tol: float = TOL):
    """Alg. 1 line by line (the readable reference of `adaptive_tree_search`, same conventions)."""
    p, order, slack = _prepare(need_units, deadlines, d0, None)
    ps = p[order]
    C: list[int] = []  # positions in deadline order
    for k in range(p.size):  # line 3
        if ps[k] == np.inf:  # added and removed at once (docstring)
            continue
        C.append(k)  # line 4
        if sum(ps[i] for i in C) > slack[k] + tol:  # line 5
            worst = max(C, key=lambda i: (ps[i], i))  # line 6 (ties: the latest position)
            C.remove(worst)
    keep = np.zeros(p.size, dtype=bool)
    keep[C] = True
    eta = np.zeros(p.size)
    for k in C:  # lines 9-11
        if ps[k] > 0.0:
            room = slack[k] - sum(ps[i] for i in C if i < k)
            eta[k] = min(ps[k] / room, 1.0) if room > 0.0 else 1.0
    return _unsort(order, eta, keep)


def cascade_shares(eta_tilde, order) -> np.ndarray:
    """Eq. 3.8 on the current interval (j = 1; Alg. 2 line 11): in deadline order `order`,
    eta_1 = eta_tilde_1 and eta_k = prod_{i<k} (1 - eta_tilde_i) eta_tilde_k; returned in the
    input order. The shares sum to 1 - prod_k (1 - eta_tilde_k) <= 1."""
    order = np.asarray(order, dtype=np.int64)
    e = np.asarray(eta_tilde, dtype=float)[order]
    left = np.cumprod(1.0 - e)
    shares = e.copy()
    shares[1:] *= left[:-1]
    out = np.empty_like(shares)
    out[order] = shares
    return out


def delivered_units(eta_tilde, deadlines, d0) -> np.ndarray:
    """D_k of eq. 3.9 (input order): the compute thread k receives in units d0+1..d_k when every
    interval [d_{j-1}, d_j] (deadline order, ties by index, Delta_j = d_j - d_{j-1}) holds the
    cascade of eq. 3.8 from thread j on. D_k = eta_tilde_k L_k with L_1 = Delta_1 and
    L_k = (1 - eta_tilde_{k-1}) L_{k-1} + Delta_k."""
    eta = np.asarray(eta_tilde, dtype=float).reshape(-1)
    d = np.asarray(deadlines).reshape(-1)
    order = deadline_order(d)
    e = eta[order].tolist()
    ds = (d[order] - float(d0)).tolist()
    out = np.empty(eta.size)
    room, prev_e, prev_d = 0.0, 0.0, 0.0
    for pos, k in enumerate(order.tolist()):
        room = (1.0 - prev_e) * room + (ds[pos] - prev_d)
        out[k] = e[pos] * room
        prev_e, prev_d = e[pos], ds[pos]
    return out
