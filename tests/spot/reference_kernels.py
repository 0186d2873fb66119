"""Test-only reference kernels of the window DP of problem (10) (paper 000,
Sec. IV-A, Alg. 1 line 13), moved out of the production module
algorithms/spot/window_kernels.py, which does not use them.

`dp_steps_reference` is the label-setting DP as first compiled (commit 6f5e221), with
the cost floor as a function (`cost_floor`, NumPy's `interp` written out in `_interp`) and
the dominance pruning by a sort per total (`_undominated_row`, `_sort`, `_before`);
`solve_reference` is `window_kernels.solve` with it. The production `dp_steps` (labels in
sequence order, merged runs, the cost floor written out) must give the same plans and
objectives bit for bit (tests/spot/test_spot_window_dp.py), and these kernels are in turn
checked against plain definitions: the cost floor against np.interp, the pruning against
the dominance rule (tests/spot/test_spot_window_kernels.py).

Compiled with Numba as in window_kernels (`cache=True`, the same `inline='always'`, no
fast-math): the float operations are those of the NumPy formulation the DP replaced, in
the same order. The shared pieces (`_grow_f`, `_grow_i`, `_simple_bound`, `_pick`) come
from window_kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from algorithms.spot.window_kernels import _grow_f, _grow_i, _pick, _simple_bound


@njit(cache=True, inline="always")
def _interp(x, xp, fp, n):
    """np.interp(x, xp[:n], fp[:n]) for one x, with NumPy's operations (arr_interp in
    numpy/_core/src/multiarray/compiled_base.c): below/above the ends the end values,
    at a knot its value, else slope * (x - xp[j]) + fp[j]."""
    if n == 1:
        return fp[0]
    if x < xp[0]:
        return fp[0]
    if x > xp[n - 1]:
        return fp[n - 1]
    lo, hi = 0, n
    while lo < hi:  # j = the last knot <= x
        mid = lo + ((hi - lo) >> 1)
        if x >= xp[mid]:
            lo = mid + 1
        else:
            hi = mid
    j = lo - 1
    if j == n - 1:
        return fp[j]
    if xp[j] == x:
        return fp[j]
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    r = slope * (x - xp[j]) + fp[j]
    if np.isnan(r):
        r = slope * (x - xp[j + 1]) + fp[j + 1]
        if np.isnan(r) and fp[j] == fp[j + 1]:
            r = fp[j]
    return r


@njit(cache=True, inline="always")
def cost_floor(work, xp, fp, n, tail_rate):
    """`_CostFloor.__call__` for one amount of work (xp, fp its knots, n of them)."""
    if work < 0.0:  # np.maximum(work, 0.0); the sign of a zero does not matter below
        work = 0.0
    if work <= xp[n - 1]:
        return _interp(work, xp, fp, n)
    return fp[n - 1] + (work - xp[n - 1]) * tail_rate


@njit(cache=True, inline="always")
def _before(z, c, key, a, b):
    """Candidate a sorts before b: more progress, then less cost, then a smaller tie key."""
    if z[a] != z[b]:
        return z[a] > z[b]
    if c[a] != c[b]:
        return c[a] < c[b]
    return key[a] < key[b]


@njit(cache=True)
def _sort(idx, z, c, key):
    """Sort the candidate indices idx by (-z, c, key) (a total order: keys are distinct)."""
    m = idx.size
    buf = np.empty_like(idx)
    width = 1
    src, dst = idx, buf
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if _before(z, c, key, src[j], src[i]):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
    return src


@njit(cache=True)
def _undominated_row(cand, z, c, key, dz, dc, keep):
    """Dominance within one group (same new total) of candidates `cand` (indices into
    z, c, key; all valid): sets keep[i] for those kept. Candidate i is dropped when
    another one j has z_j >= z_i and c_j <= c_i and either z_j > z_i + dz,
    c_j < c_i - dc, or key_j < key_i. Sorted by (-z, c, key) only earlier candidates
    can dominate: with P the least cost before i, P < c_i - dc drops i, P > c_i keeps
    it, and in between q = the candidates with z_j > z_i + dz (a prefix) decide, then
    the earlier ones within dz of z_i by the tie key."""
    order = _sort(cand, z, c, key)
    m = order.size
    cs = np.empty(m)
    prefix = np.empty(m + 1)  # prefix[p] = least cost of order[:p]
    prefix[0] = np.inf
    for p in range(m):
        cs[p] = c[order[p]]
        prefix[p + 1] = min(prefix[p], cs[p])
    for p in range(m):
        i = order[p]
        cp = cs[p]
        before = prefix[p]
        drop = before < cp - dc
        if not drop and before <= cp and cp < np.inf:
            threshold = z[i] + dz
            lo, hi = 0, p  # q = how many of order[:p] have z > z_i + dz (a prefix)
            while lo < hi:
                mid = (lo + hi) >> 1
                if z[order[mid]] > threshold:
                    lo = mid + 1
                else:
                    hi = mid
            q = lo
            if prefix[q] <= cp:
                drop = True
            elif q < p:
                ki = key[i]
                if cs[p - 1] <= cp and key[order[p - 1]] < ki:
                    drop = True
                else:
                    for r in range(q, p):
                        if cs[r] <= cp and key[order[r]] < ki:
                            drop = True
                            break
        keep[i] = not drop


@njit(cache=True)
def dp_steps_reference(
    work_t, costs, opts, n_prev, progress, value, done_at, tie, best, dz, dc, floor_x, floor_y, floor_n, tails
):
    """The DP steps of `solve_window` over the slots k = 0..len(costs)-1, as first compiled
    (commit 6f5e221); `window_kernels.dp_steps` is the faster equivalent the solver uses,
    this one is its reference in the tests (`solve_reference`).

    Labels: previous total, progress z, cost c, sum of totals s, rank of the sequence.
    Returns (best, finished, fin_idx, links, offsets, complete, z, c, s, prev):
    `finished[:n]` rows are (objective, cost, progress, sum) of the plans that finished
    within the tie tolerance of the best so far, fin_idx rows (slot k, label, total
    index); label j after slot k came from label links[offsets[k] + j, 0] of the slot
    before with the total opts[links[offsets[k] + j, 1]]; `complete` says the DP reached
    the window's end, with its labels (z, c, s, prev).
    """
    length, n_opts = costs.shape
    prev = np.empty(1, dtype=np.int64)
    prev[0] = n_prev
    z = np.empty(1)
    z[0] = progress
    c = np.zeros(1)
    s = np.zeros(1, dtype=np.int64)
    rank = np.zeros(1, dtype=np.int64)
    finished = np.empty((16, 4))
    fin_idx = np.empty((16, 3), dtype=np.int64)
    n_fin = 0
    links = np.empty((64, 2), dtype=np.int64)
    offsets = np.zeros(length + 1, dtype=np.int64)
    steps = 0
    complete = True
    for k in range(length):
        labels = z.size
        z2 = np.empty((n_opts, labels))
        c2 = np.empty((n_opts, labels))
        s2 = np.empty((n_opts, labels), dtype=np.int64)
        done = np.empty((n_opts, labels), dtype=np.bool_)
        n_done = 0
        top = -np.inf
        for i in range(n_opts):
            for l in range(labels):
                zz = z[l] + work_t[i, prev[l]]
                cc = c[l] + costs[k, i]
                z2[i, l] = zz
                c2[i, l] = cc
                s2[i, l] = s[l] + opts[i]
                d = zz >= done_at
                done[i, l] = d
                if d:
                    n_done += 1
                    o = value - cc
                    if o > top:
                        top = o
        if n_done:
            if top > best:
                best = top
            # a plan below best - tie is never in the final tie set (the best only grows)
            limit = best - tie
            finished = _grow_f(finished, n_fin + n_done)
            fin_idx = _grow_i(fin_idx, n_fin + n_done)
            for i in range(n_opts):
                for l in range(labels):
                    if done[i, l]:
                        o = value - c2[i, l]
                        if o >= limit:
                            finished[n_fin, 0] = o
                            finished[n_fin, 1] = c2[i, l]
                            finished[n_fin, 2] = z2[i, l]
                            finished[n_fin, 3] = s2[i, l]
                            fin_idx[n_fin, 0] = k
                            fin_idx[n_fin, 1] = l
                            fin_idx[n_fin, 2] = i
                            n_fin += 1
        xp, fp, nk, tail = floor_x[k], floor_y[k], floor_n[k], tails[k]
        threshold = best - 2 * tie
        valid = np.zeros((n_opts, labels), dtype=np.bool_)
        any_valid = False
        for i in range(n_opts):
            for l in range(labels):
                if not done[i, l]:
                    bound = value - c2[i, l] - cost_floor(done_at - z2[i, l], xp, fp, nk, tail)
                    if bound >= threshold:
                        valid[i, l] = True
                        any_valid = True
        if not any_valid:
            complete = False
            break
        # tie key: fewer instance-slots, then the lexicographically smaller sequence
        keep = np.zeros((n_opts, labels), dtype=np.bool_)
        zrow = np.empty(labels)
        crow = np.empty(labels)
        krow = np.empty(labels, dtype=np.int64)
        cand = np.empty(labels, dtype=np.int64)
        scale = labels * n_opts
        n_keep = 0
        for i in range(n_opts):
            m = 0
            for l in range(labels):
                zrow[l] = z2[i, l]
                crow[l] = c2[i, l]
                krow[l] = s2[i, l] * scale + (rank[l] * n_opts + i)
                if valid[i, l]:
                    cand[m] = l
                    m += 1
            if m:
                _undominated_row(cand[:m].copy(), zrow, crow, krow, dz, dc, keep[i])
                for l in range(labels):
                    if keep[i, l]:
                        n_keep += 1
        start = offsets[k]
        links = _grow_i(links, start + n_keep)
        # the survivors' ranks: their sequences' order, rank * n_opts + total (distinct)
        position = np.full(scale, -1, dtype=np.int64)
        new_prev = np.empty(n_keep, dtype=np.int64)
        new_z = np.empty(n_keep)
        new_c = np.empty(n_keep)
        new_s = np.empty(n_keep, dtype=np.int64)
        r = 0
        for i in range(n_opts):
            for l in range(labels):
                if keep[i, l]:
                    links[start + r, 0] = l
                    links[start + r, 1] = i
                    position[rank[l] * n_opts + i] = r
                    new_prev[r] = opts[i]
                    new_z[r] = z2[i, l]
                    new_c[r] = c2[i, l]
                    new_s[r] = s2[i, l]
                    r += 1
        offsets[k + 1] = start + n_keep
        steps = k + 1
        rank = np.empty(n_keep, dtype=np.int64)
        r = 0
        for v in range(scale):
            if position[v] >= 0:
                rank[position[v]] = r
                r += 1
        prev, z, c, s = new_prev, new_z, new_c, new_s
    return (
        best,
        finished[:n_fin],
        fin_idx[:n_fin],
        links[: offsets[steps]],
        offsets[: steps + 1],
        complete,
        z,
        c,
        s,
        prev,
    )


@njit(cache=True)
def solve_reference(
    work_t,
    costs,
    opts,
    cheap,
    usable,
    n_prev,
    progress,
    value,
    done_at,
    tie,
    dz,
    dc,
    floor_x,
    floor_y,
    floor_n,
    tails,
    slots_after,
    p_o,
    jf,
    ji,
    counts,
    count_h,
    count_first,
    first_late,
    tilde_first,
    cap,
):
    """`window_kernels.solve` with `dp_steps_reference` (test_spot_window_dp.py: the two agree
    bit for bit)."""
    best = _simple_bound(
        work_t,
        costs,
        opts,
        cheap,
        usable,
        n_prev,
        progress,
        value,
        done_at,
        slots_after,
        p_o,
        jf,
        ji,
        counts,
        count_h,
        count_first,
        first_late,
        tilde_first,
        cap,
    )
    (best, finished_rows, fin_idx, links, offsets, complete, z, c, s, prev) = dp_steps_reference(
        work_t, costs, opts, n_prev, progress, value, done_at, tie, best, dz, dc, floor_x, floor_y, floor_n, tails
    )
    return _pick(
        costs.shape[0],
        opts,
        tie,
        finished_rows,
        fin_idx,
        links,
        offsets,
        complete,
        z,
        c,
        s,
        prev,
        slots_after,
        p_o,
        jf,
        ji,
        counts,
        count_h,
        count_first,
        first_late,
        tilde_first,
        cap,
    )
