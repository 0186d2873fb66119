"""The label-setting DP of problem (10), compiled with Numba (algorithms/spot/window_problem.py).

`dp_steps` runs the DP steps of `window_problem.solve_window` over the window's
slots: expansion of every label by every total, the jobs that finish, the
cost-floor bound, the dominance pruning and the ranks of the survivors. The
float operations are those of the NumPy formulation it replaced, in the same
order (sums, differences, NumPy's `interp` for the cost floor), and every
decision is the same comparison, so plans and objectives are bit for bit the
same (tests/spot/test_spot_window_dp.py against the DP it replaced, kept as a
test-only reference in tests/spot/reference_kernels.py, and the brute-force tests of
the solver). No fast-math: LLVM does not contract a * b + c without it.

Compiled on first use and cached on disk (`cache=True`, in __pycache__ next to
this file; Numba falls back to a user cache directory if that is not writable).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _grow_f(buf, need):
    """buf with room for `need` rows (doubling), contents kept."""
    if need <= buf.shape[0]:
        return buf
    out = np.empty((max(need, 2 * buf.shape[0]), buf.shape[1]))
    out[: buf.shape[0]] = buf
    return out


@njit(cache=True)
def _grow_i(buf, need):
    """buf with room for `need` rows (doubling), contents kept."""
    if need <= buf.shape[0]:
        return buf
    out = np.empty((max(need, 2 * buf.shape[0]), buf.shape[1]), dtype=np.int64)
    out[: buf.shape[0]] = buf
    return out


@njit(cache=True, inline="always")
def _first(za, zb, ca, cb, sa, sb, la, lb):
    """(za, ca, sa, la) before (zb, cb, sb, lb): more progress, then less cost, then fewer
    instance-slots, then the smaller rank (the tie key's order). Scalars only (no array
    reference counting in the sorting loops)."""
    if za != zb:
        return za > zb
    if ca != cb:
        return ca < cb
    if sa != sb:
        return sa < sb
    return la < lb


@njit(cache=True)
def _merge(src, lo, mid, hi, dst, z, c, s, lab):
    """Merge the sorted runs src[lo:mid] and src[mid:hi] into dst[lo:hi] by _first
    (entries x of z, c, s; lab[x] the label's rank)."""
    i, j, o = lo, mid, lo
    while i < mid and j < hi:
        a, b = src[i], src[j]
        if _first(z[b], z[a], c[b], c[a], s[b], s[a], lab[b], lab[a]):
            dst[o] = b
            j += 1
        else:
            dst[o] = a
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


@njit(cache=True)
def _insertion(a, m, z, c, s, lab):
    """Insertion sort of a[:m] by _first: linear on nearly sorted input."""
    for p in range(1, m):
        v = a[p]
        q = p - 1
        while q >= 0:
            w = a[q]
            if not _first(z[v], z[w], c[v], c[w], s[v], s[w], lab[v], lab[w]):
                break
            a[q + 1] = a[q]
            q -= 1
        a[q + 1] = v


@njit(cache=True)
def _merge_runs(a, bounds, n_runs, buf, z, c, s, lab):
    """Sort a[:bounds[n_runs]] made of the sorted runs a[bounds[r]:bounds[r + 1]] by merging
    them pairwise; returns the array holding the result (a or buf)."""
    src, dst = a, buf
    runs = n_runs
    b = bounds.copy()
    while runs > 1:
        out = 0
        r = 0
        while r < runs:
            if r + 1 < runs:
                _merge(src, b[r], b[r + 1], b[r + 2], dst, z, c, s, lab)
                b[out] = b[r]
                r += 2
            else:
                for x in range(b[r], b[r + 1]):
                    dst[x] = src[x]
                b[out] = b[r]
                r += 1
            out += 1
        b[out] = b[runs]
        runs = out
        src, dst = dst, src
    return src


@njit(cache=True)
def _grow1f(buf, need):
    """buf with room for `need` entries, contents kept."""
    if need <= buf.size:
        return buf
    out = np.empty(max(need, 2 * buf.size))
    out[: buf.size] = buf
    return out


@njit(cache=True)
def _grow1i(buf, need):
    """buf with room for `need` entries, contents kept."""
    if need <= buf.size:
        return buf
    out = np.empty(max(need, 2 * buf.size), dtype=np.int64)
    out[: buf.size] = buf
    return out


@njit(cache=True, inline="always")
def _floor_slopes(ends, floor_x, floor_y, floor_n):
    """The slopes of every slot's cost floor (the lower bound on the cost of the work left
    that prunes the labels of problem (10), Sec. IV-A), computed once per window of each
    member g (ends[g] slots): floor_s[g, k, j] between the points j and j + 1 of slot k's
    floor."""
    floor_s = np.zeros(floor_x.shape)
    for g in range(ends.size):
        for k in range(ends[g]):
            for j in range(floor_n[g, k] - 1):
                floor_s[g, k, j] = (floor_y[g, k, j + 1] - floor_y[g, k, j]) / (floor_x[g, k, j + 1] - floor_x[g, k, j])
    return floor_s


@njit(cache=True, inline="always")
def _candidate_buffers(size):
    """Room for `size` candidates of one total (vz, vc, vs, vl: progress, cost, sum of
    totals, label; ia, ib, ic: the three runs; prefix: the least costs before each)."""
    return (
        np.empty(size),
        np.empty(size),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty(size + 1),
    )


@njit(cache=True, inline="always")
def _finished_plans(
    k, n_lab, z, c, s, prev, costs, work_t, opts, value, done_at, tie, bests, g0, finished, fin_idx, n_fin
):
    """The plans of problem (10) (Sec. IV-A) that complete the job in window slot k: label l
    followed by total opts[i] reaches L - tol, objective v - cost (the accounting ends at
    completion, eq. 4 with T <= d). Raises the best objective bests[g] of every member g >=
    g0 (the windows still open at slot k) to the best of them and appends those within `tie`
    of the least of these to (finished, fin_idx) as (objective, cost, progress, sum of
    totals) and (k, l, i). Returns (finished, fin_idx, n_fin)."""
    n_opts = costs.shape[1]
    n_done = 0
    top = -np.inf
    for i in range(n_opts):
        cost_i = costs[k, i]
        for l in range(n_lab):
            if z[l] + work_t[i, prev[l]] >= done_at:
                n_done += 1
                o = value - (c[l] + cost_i)
                if o > top:
                    top = o
    if n_done:
        least = np.inf
        for g in range(g0, bests.size):
            if top > bests[g]:
                bests[g] = top
            least = min(least, bests[g])
        # a plan below best - tie is never in the final tie set (the best only grows)
        limit = least - tie
        finished = _grow_f(finished, n_fin + n_done)
        fin_idx = _grow_i(fin_idx, n_fin + n_done)
        for i in range(n_opts):
            cost_i = costs[k, i]
            for l in range(n_lab):
                zz = z[l] + work_t[i, prev[l]]
                if zz >= done_at:
                    cc = c[l] + cost_i
                    o = value - cc
                    if o >= limit:
                        finished[n_fin, 0] = o
                        finished[n_fin, 1] = cc
                        finished[n_fin, 2] = zz
                        finished[n_fin, 3] = s[l] + opts[i]
                        fin_idx[n_fin, 0] = k
                        fin_idx[n_fin, 1] = l
                        fin_idx[n_fin, 2] = i
                        n_fin += 1
    return finished, fin_idx, n_fin


PIECES = 4  # pieces of the work left in a window, for the bound by the terminal value


@njit(cache=True)
def _floor_at(fx, fy, fs, fn, g, k, work, tail):
    """The cost floor of window slot k of member g at `work` (window_problem._cost_floor:
    np.interp of the floor's points fx[g, k], fy[g, k] with slopes fs[g, k], extended past
    the last point with slope `tail`), with its float operations."""
    nk = fn[g, k]
    xlast = fx[g, k, nk - 1]
    if work > xlast:
        return fy[g, k, nk - 1] + (work - xlast) * tail
    if nk == 1 or work < fx[g, k, 0]:
        return fy[g, k, 0]
    j = 0
    while j + 1 < nk and fx[g, k, j + 1] <= work:
        j += 1
    if j == nk - 1 or fx[g, k, j] == work:
        return fy[g, k, j]
    slope = fs[g, k, j]
    floor = slope * (work - fx[g, k, j]) + fy[g, k, j]
    if np.isnan(floor):
        floor = slope * (work - fx[g, k, j + 1]) + fy[g, k, j + 1]
        if np.isnan(floor) and fy[g, k, j] == fy[g, k, j + 1]:
            floor = fy[g, k, j]
    return floor


@njit(cache=True, inline="always")
def _candidates(
    n_lab,
    zorder,
    prev,
    z,
    c,
    s,
    w_i,
    cost_i,
    opt_i,
    value,
    done_at,
    k,
    g0,
    bound,
    terminal,
    inv_delta,
    fx,
    fy,
    fs,
    fn,
    tail,
    vz,
    vc,
    vs,
    vl,
    ia,
    ib,
    ic,
):
    """The labels of problem (10) (Sec. IV-A) extended in window slot k by the total opt_i
    (work w_i[previous total], eq. 2 / 5a; cost cost_i, eq. 3) that do not complete the job
    and whose objective can still come within 2 tie of the best for some member g >= g0 (a
    window still open, `dp_layers`): v - cost - the member's cost floor of the work left >=
    the threshold bound[0, g], and, if their progress stays below bound[1, g] (they cannot
    complete the job in the member's window), whose objective bounds bound[2, g] - cost and
    (with a `terminal` table, `dp_layers`) terminal[g] at min(progress + bound[3, g],
    bound[4, g]) - cost are >= the threshold.
    Taken in zorder into vz, vc, vs, vl (progress, cost, sum of totals, label),
    as three runs by the previous total (below, equal to, above opt_i: one work increment
    per run) in ia, ib, ic. Returns the runs' lengths (m0, m1, m2).

    The cost floor (window_problem._cost_floor: np.interp of the floor's points
    fx[g, k], fy[g, k] with slopes fs[g, k], extended past the last point with slope
    `tail`) is written out here: a function with array arguments would count references
    per candidate."""
    m0 = m1 = m2 = np.int64(0)  # not 0: a literal has Numba compile the callees once more, for Literal[int]
    m = 0
    for p in range(n_lab):
        l = zorder[p]
        pl = prev[l]
        zz = z[l] + w_i[pl]
        if zz >= done_at:
            continue
        cc = c[l] + cost_i
        work = done_at - zz
        if work < 0.0:
            work = 0.0
        keep = False
        for g in range(g0, bound.shape[1]):
            nk = fn[g, k]
            xlast = fx[g, k, nk - 1]
            if work > xlast:
                floor = fy[g, k, nk - 1] + (work - xlast) * tail
            elif nk == 1 or work < fx[g, k, 0]:
                floor = fy[g, k, 0]
            else:
                j = 0
                while j + 1 < nk and fx[g, k, j + 1] <= work:
                    j += 1
                if j == nk - 1 or fx[g, k, j] == work:
                    floor = fy[g, k, j]
                else:
                    slope = fs[g, k, j]
                    floor = slope * (work - fx[g, k, j]) + fy[g, k, j]
                    if np.isnan(floor):
                        floor = slope * (work - fx[g, k, j + 1]) + fy[g, k, j + 1]
                        if np.isnan(floor) and fy[g, k, j] == fy[g, k, j + 1]:
                            floor = fy[g, k, j]
            if value - cc - floor >= bound[0, g]:
                if zz >= bound[1, g]:
                    keep = True
                    break
                if bound[2, g] - cc >= bound[0, g]:
                    if terminal.shape[1] == 0:
                        keep = True
                        break
                    # the terminal value's bound: over the pieces [x_j, x_j+1] of the work the
                    # window's slots left can still do, the terminal value at progress + x_j+1
                    # (capped) minus the least cost of x_j more work
                    for j in range(PIECES):
                        x = zz + bound[5 + j, g]
                        if x > bound[4, g]:
                            x = bound[4, g]
                        at = int(x * inv_delta) + 2
                        if at >= terminal.shape[1]:
                            at = terminal.shape[1] - 1
                        if terminal[g, at] - bound[5 + PIECES + j, g] - cc >= bound[0, g]:
                            keep = True
                            break
                    if keep:
                        break
        if keep:
            vz[m] = zz
            vc[m] = cc
            vs[m] = s[l] + opt_i
            vl[m] = l
            if pl < opt_i:
                ia[m0] = m
                m0 += 1
            elif pl == opt_i:
                ib[m1] = m
                m1 += 1
            else:
                ic[m2] = m
                m2 += 1
            m += 1
    return m0, m1, m2


@njit(cache=True, inline="always")
def _next_labels(n_lab, n_keep, kz, kc, ks, kl, ki, opts, links, start):
    """The labels of problem (10)'s DP after a slot (Sec. IV-A) from the kept candidates, in
    the order of their sequences of totals: by (old rank, total), a counting sort by the old
    label (the kept entries come by increasing total). Writes the back links (old label,
    total's index) at links[start:]. Returns (links, prev, z, c, s, runs): runs[e] is kept
    entry e's new rank."""
    count = np.zeros(n_lab + 1, dtype=np.int64)
    for e in range(n_keep):
        count[kl[e] + 1] += 1
    for l in range(n_lab):
        count[l + 1] += count[l]
    links = _grow_i(links, start + n_keep)
    new_prev = np.empty(n_keep, dtype=np.int64)
    new_z = np.empty(n_keep)
    new_c = np.empty(n_keep)
    new_s = np.empty(n_keep, dtype=np.int64)
    runs = np.empty(n_keep, dtype=np.int64)
    for e in range(n_keep):
        l = kl[e]
        r = count[l]
        count[l] = r + 1
        links[start + r, 0] = l
        links[start + r, 1] = ki[e]
        new_prev[r] = opts[ki[e]]
        new_z[r] = kz[e]
        new_c[r] = kc[e]
        new_s[r] = ks[e]
        runs[e] = r
    return links, new_prev, new_z, new_c, new_s, runs


@njit(cache=True)
def dp_layers(
    work_t,
    costs,
    opts,
    n_prev,
    progress,
    value,
    done_at,
    tie,
    bests,
    dz,
    dc,
    floor_x,
    floor_y,
    floor_n,
    tails,
    cap_values,
    reach_step,
    ends,
    caps,
    terminal,
    inv_delta,
):
    """The DP steps of `solve_window` over the slots k = 0..len(costs)-1 (problem (10),
    Sec. IV-A; window_problem.py) for the members g of a group of windows that start at the
    same slot from the same (n_{t-1}, Z_{t-1}) and differ only in where they end: member g
    is the window of the first ends[g] slots (ends increasing, the last = len(costs)), with
    its lower bound bests[g] on the optimum, its cost floor floor_x[g], floor_y[g],
    floor_n[g] and its bound cap_values[g] (inf: none). The slots the members share are the
    same slots (costs, work), so one label sweep serves them all; a label is kept while it
    can still matter to some member whose window is open (`_candidates`), the dominance
    test is the same for all of them (with the margins dz, dc of the longest window, at
    least those of the shorter ones, since they grow with the window), and the finished
    plans are collected for all (`_finished_plans`). With one member these are the DP steps
    `dp_steps` returns, label for label.

    Labels: previous total, progress z, cost c, sum of totals s; they are stored in the
    order of their sequences of totals (label index = rank, the tie key's second part),
    and `zorder` lists them sorted by (-z, c, s, rank). Each slot: the plans that finish
    (`_finished_plans`), then per total the candidates that the cost floor keeps
    (`_candidates`), taken in zorder as three runs by the previous total, each sorted
    except where a float addition makes two values equal; merging the runs and an
    insertion sort give the dominance test its order in about linear time instead of a
    sort per total; then the survivors become the next labels (`_next_labels`, and their
    zorder by merging the totals' sorted runs). Candidates are computed once more rather
    than stored for every (total, label), and buffers are reused across steps.

    `cap_values[g]`: an upper bound on member g's terminal value at its window's end
    (shared_incumbents.cap_bound); a label whose progress plus `reach_step` per slot left
    in that window stays below L - tol cannot complete the job in it, its objective is at
    most cap_values[g] - its cost, and it is dropped for g when that is below bests[g] - 2 tie,
    as the cost floor's bound drops labels. `terminal` (rows per member, or no columns: no
    such bound) sharpens this: terminal[g, i] bounds the terminal value of member g's
    window (the continuation value of eq. 9's accounting, of progress up to caps[g]) for
    progress up to i / inv_delta, non-decreasing in i (shared_incumbents.terminal_table).
    The work w such a label can still do in the window is at most `reach_step` per slot
    left, W; cut [0, W] into PIECES pieces [x_j, x_j+1]: with w in piece j its objective is
    at most terminal[g] at its progress + x_j+1 (capped at caps[g]), minus its cost, minus
    the cost floor of x_j (the least cost of that much work, non-decreasing in the work), so
    it is dropped when this is below the threshold for every piece.

    Returns (bests, finished rows, fin_idx, fin_after, links, offsets, steps, snap_at,
    snap_z, snap_c, snap_s, snap_prev, z, c, s, prev): the finished plans of slots 0..k are
    the first fin_after[k] rows; `steps` slots were completed (the labels after slot k exist
    for k < steps); the labels after the last completed slot are z, c, s, prev, and those
    after slot ends[g] - 1 of a shorter member g are snap_*[snap_at[g]:snap_at[g + 1]].

    The sorting and the dominance test stay written out here: as inlined helpers, called
    once per total, their array arguments (the run that holds the order, the kept
    buffers that grow in the loop) were reference-counted per call, about 5% slower.
    """
    length, n_opts = costs.shape
    members = ends.size
    floor_s = _floor_slopes(ends, floor_x, floor_y, floor_n)
    prev = np.empty(1, dtype=np.int64)
    z = np.empty(1)
    c = np.empty(1)
    s = np.empty(1, dtype=np.int64)
    zorder = np.zeros(1, dtype=np.int64)
    prev[0] = n_prev
    z[0] = progress
    c[0] = 0.0
    s[0] = 0
    n_lab = 1
    # the valid candidates of one total (compact), and the kept ones of all totals
    vz, vc, vs, vl, ia, ib, ic, prefix = _candidate_buffers(64)
    kz = np.empty(64)
    kc = np.empty(64)
    ks = np.empty(64, dtype=np.int64)
    kl = np.empty(64, dtype=np.int64)
    ki = np.empty(64, dtype=np.int64)
    bounds = np.zeros(n_opts + 1, dtype=np.int64)
    finished = np.empty((16, 4))
    fin_idx = np.empty((16, 3), dtype=np.int64)
    fin_after = np.zeros(length, dtype=np.int64)
    n_fin = 0
    links = np.empty((64, 2), dtype=np.int64)
    offsets = np.zeros(length + 1, dtype=np.int64)
    # per member: threshold, cut, cap value, reach left, cap, then the ends x_1..x_P of the
    # pieces of the work left and the floor's cost of x_0..x_P-1 (`_candidates`)
    bound = np.empty((5 + 2 * PIECES, members))
    snap_at = np.zeros(members + 1, dtype=np.int64)
    snap_z = np.empty(0)
    snap_c = np.empty(0)
    snap_s = np.empty(0, dtype=np.int64)
    snap_prev = np.empty(0, dtype=np.int64)
    g0 = 0  # the first member whose window is still open
    steps = 0
    for k in range(length):
        while ends[g0] <= k:
            g0 += 1
        L = n_lab
        finished, fin_idx, n_fin = _finished_plans(
            k, L, z, c, s, prev, costs, work_t, opts, value, done_at, tie, bests, g0, finished, fin_idx, n_fin
        )
        fin_after[k] = n_fin
        for g in range(g0, members):
            bound[0, g] = bests[g] - 2 * tie
            bound[3, g] = reach_step * (ends[g] - 1 - k)
            bound[1, g] = -np.inf
            if cap_values[g] < np.inf or terminal.shape[1]:
                bound[1, g] = done_at - bound[3, g]
            bound[2, g] = cap_values[g]
            bound[4, g] = caps[g]
            if terminal.shape[1]:
                for j in range(PIECES):
                    bound[5 + j, g] = bound[3, g] * (j + 1) / PIECES
                    bound[5 + PIECES + j, g] = (
                        0.0
                        if j == 0
                        else _floor_at(floor_x, floor_y, floor_s, floor_n, g, k, bound[4 + j, g], tails[k])
                    )
        if L > vz.size:
            vz, vc, vs, vl, ia, ib, ic, prefix = _candidate_buffers(max(L, 2 * vz.size))
        n_keep = 0
        n_valid = 0
        for i in range(n_opts):
            bounds[i] = n_keep
            m0, m1, m2 = _candidates(
                L,
                zorder,
                prev,
                z,
                c,
                s,
                work_t[i],
                costs[k, i],
                opts[i],
                value,
                done_at,
                k,
                g0,
                bound,
                terminal,
                inv_delta,
                floor_x,
                floor_y,
                floor_s,
                floor_n,
                tails[k],
                vz,
                vc,
                vs,
                vl,
                ia,
                ib,
                ic,
            )
            m = m0 + m1 + m2
            if m == 0:
                continue
            n_valid += m
            # merge the three runs (each sorted but where a float addition made two values
            # equal), then an insertion sort makes the order exact: (-z, c, s, rank)
            for p in range(m1):
                ia[m0 + p] = ib[p]
            for p in range(m2):
                ia[m0 + m1 + p] = ic[p]
            order = ia
            if m0 and m1:
                _merge(ia, 0, m0, m0 + m1, ib, vz, vc, vs, vl)
                for p in range(m0 + m1, m):
                    ib[p] = ia[p]
                order = ib
            if m2 and (m0 + m1):
                # the third run was copied into ia, so ic is free
                _merge(order, 0, m0 + m1, m, ic, vz, vc, vs, vl)
                order = ic
            _insertion(order, m, vz, vc, vs, vl)
            # dominance (as _undominated_row): P = the least cost before, q = how many
            # have z > z_i + dz, then the tie key among the earlier ones within dz
            prefix[0] = np.inf
            for p in range(m):
                prefix[p + 1] = min(prefix[p], vc[order[p]])
            if n_keep + m > kz.size:
                size = max(n_keep + m, 2 * kz.size)
                kz = _grow1f(kz, size)
                kc = _grow1f(kc, size)
                ks = _grow1i(ks, size)
                kl = _grow1i(kl, size)
                ki = _grow1i(ki, size)
            for p in range(m):
                e = order[p]
                cp = vc[e]
                before = prefix[p]
                drop = before < cp - dc
                if not drop and before <= cp and cp < np.inf:
                    thr = vz[e] + dz
                    lo, hi = 0, p
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if vz[order[mid]] > thr:
                            lo = mid + 1
                        else:
                            hi = mid
                    q = lo
                    if prefix[q] <= cp:
                        drop = True
                    elif q < p:
                        se = vs[e]
                        le = vl[e]
                        for r in range(q, p):
                            f = order[r]
                            if vc[f] <= cp:
                                sf = vs[f]
                                if sf < se or (sf == se and vl[f] < le):
                                    drop = True
                                    break
                if not drop:
                    kz[n_keep] = vz[e]
                    kc[n_keep] = cp
                    ks[n_keep] = vs[e]
                    kl[n_keep] = vl[e]
                    ki[n_keep] = i
                    n_keep += 1
        bounds[n_opts] = n_keep
        if n_valid == 0:
            break
        start = offsets[k]
        links, prev, z, c, s, runs = _next_labels(L, n_keep, kz, kc, ks, kl, ki, opts, links, start)
        # the new zorder: the totals' sorted survivors merged (within a total the new rank
        # grows with the old one, so each run is sorted by (-z, c, s, new rank) too)
        zorder = _merge_runs(runs, bounds, n_opts, np.empty(n_keep, dtype=np.int64), z, c, s, np.arange(n_keep))
        offsets[k + 1] = start + n_keep
        steps = k + 1
        n_lab = n_keep
        if g0 < members - 1 and ends[g0] == steps:  # a shorter member's window ends here
            at = snap_at[g0]
            snap_z = _grow1f(snap_z, at + n_lab)
            snap_c = _grow1f(snap_c, at + n_lab)
            snap_s = _grow1i(snap_s, at + n_lab)
            snap_prev = _grow1i(snap_prev, at + n_lab)
            snap_z[at : at + n_lab] = z
            snap_c[at : at + n_lab] = c
            snap_s[at : at + n_lab] = s
            snap_prev[at : at + n_lab] = prev
            snap_at[g0 + 1] = at + n_lab
    fin_after[steps:] = n_fin  # the slot the DP stopped at, and those it never reached
    return (
        bests,
        finished[:n_fin],
        fin_idx[:n_fin],
        fin_after,
        links[: offsets[steps]],
        offsets[: steps + 1],
        steps,
        snap_at,
        snap_z,
        snap_c,
        snap_s,
        snap_prev,
        z[:n_lab],
        c[:n_lab],
        s[:n_lab],
        prev[:n_lab],
    )


@njit(cache=True)
def one_member_floors(floor_x, floor_y, floor_n):
    """One window's cost floors (`window_arrays`) as the floors of a group of one member
    (`dp_layers`' floor_x[g], floor_y[g], floor_n[g])."""
    fx = np.empty((1,) + floor_x.shape)
    fy = np.empty((1,) + floor_y.shape)
    fn = np.empty((1, floor_n.size), dtype=np.int64)
    fx[0] = floor_x
    fy[0] = floor_y
    fn[0] = floor_n
    return fx, fy, fn


@njit(cache=True)
def dp_steps(
    work_t,
    costs,
    opts,
    n_prev,
    progress,
    value,
    done_at,
    tie,
    best,
    dz,
    dc,
    floor_x,
    floor_y,
    floor_n,
    tails,
    cap_value=np.inf,
    reach_step=0.0,
):
    """`dp_layers` for one window (a group of one member): the labels, finished plans and
    floats of the DP it replaced (`dp_steps_reference` with `cost_floor` and
    `_undominated_row`, now in tests/spot/reference_kernels.py), faster. Returns (best,
    finished rows, fin_idx, links, offsets, complete, z, c, s, prev) as
    `dp_steps_reference` does, label j after slot k being the j-th in sequence order;
    `cap_value` (inf: no effect, as `solve` runs it) and `reach_step` as in `dp_layers`."""
    length = costs.shape[0]
    bests = np.full(1, best)
    fx, fy, fn = one_member_floors(floor_x, floor_y, floor_n)
    (bests, finished, fin_idx, _, links, offsets, steps, _, _, _, _, _, z, c, s, prev) = dp_layers(
        work_t,
        costs,
        opts,
        n_prev,
        progress,
        value,
        done_at,
        tie,
        bests,
        dz,
        dc,
        fx,
        fy,
        fn,
        tails,
        np.full(1, float(cap_value)),
        float(reach_step),
        np.full(1, length),
        np.full(1, np.inf),
        np.empty((1, 0)),
        0.0,
    )
    return (bests[0], finished, fin_idx, links, offsets, steps == length, z, c, s, prev)


@njit(cache=True)
def continuation(progress, n_last, slots_left, p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first):
    """`window_problem.continuation_values` for one state, with its float operations.

    jf = (workload, value, tol, gamma, h_max, late_scale), ji = (n_max, deadline);
    counts, count_h: m in [N_min, N_max] and H(m); count_first[n_last][j], first_late[j]:
    the first continuation slot's work after n_last and the termination's after
    counts[j]; tilde_first[n_last]: the termination's first slot after n_last (eq. 9).
    """
    workload, value, tol, gamma, h_max, late_scale = jf[0], jf[1], jf[2], jf[3], jf[4], jf[5]
    n_max, deadline = ji[0], ji[1]
    if progress >= workload - tol:
        return value
    hard = gamma * deadline
    if slots_left <= 0:  # FineTuneJob.tilde_value (eq. 9), as window_problem._tilde_value
        remaining = workload - progress
        first = tilde_first[n_last]
        extra = 1
        if remaining > first + tol:
            extra += math.ceil((remaining - first - tol) / h_max)
        cost = extra * n_max * p_o
        if deadline + extra < hard:
            late = value * (1.0 - float(extra) / ((gamma - 1.0) * deadline))
        else:
            late = 0.0
        return late - cost
    remaining = workload - progress
    best = -np.inf
    for j in range(counts.size):
        m, h, first, flate = counts[j], count_h[j], count_first[n_last, j], first_late[j]
        if remaining > first + tol:
            slots = 1 + math.ceil((remaining - first - tol) / h)
            if slots <= slots_left:
                v = value - slots * m * p_o
            else:
                # not done by d: tilde value (eq. 9) of the progress at d after m from n_last
                at_deadline = progress + first + (slots_left - 1) * h
                if at_deadline >= workload - tol:
                    v = value - slots_left * m * p_o
                else:
                    left = workload - at_deadline
                    extra = 1
                    if left > flate + tol:
                        extra += math.ceil((left - flate - tol) / h_max)
                    late = value * (1.0 - float(extra) / late_scale) if deadline + extra < hard else 0.0
                    v = late - extra * n_max * p_o - slots_left * m * p_o
        else:
            v = value - m * p_o
        if v > best:
            best = v
    return best


@njit(cache=True)
def _plan_before(cost, prog, total, seq, obj, a, b):
    """Candidate a wins the tie over b: less cost, more progress, fewer instance-slots,
    the lexicographically smaller sequence of totals, then the smaller objective
    (Python's order of the tuples (cost, -progress, sum, totals, objective))."""
    if cost[a] != cost[b]:
        return cost[a] < cost[b]
    if prog[a] != prog[b]:
        return prog[a] > prog[b]
    if total[a] != total[b]:
        return total[a] < total[b]
    for k in range(seq.shape[1]):
        if seq[a, k] != seq[b, k]:
            return seq[a, k] < seq[b, k]
    return obj[a] < obj[b]


@njit(cache=True)
def _simple_bound(
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
):
    """A lower bound on the optimum of (10) from simple plans: a constant total i, and the
    same with all usable spot (usable[k], an index of opts) where spot is cheaper (cheap[k]).
    The terminal value counts progress up to `cap` (inf: all of it)."""
    length, n_opts = costs.shape
    best = -np.inf
    for variant in range(2):
        for i in range(variant, n_opts):
            z, c, last = progress, 0.0, n_prev
            finished = False
            for k in range(length):
                j = i
                if variant == 1 and cheap[k]:
                    j = max(i, usable[k])
                z = z + work_t[j, last]
                c = c + costs[k, j]
                last = opts[j]
                if z >= done_at:
                    v = value - c
                    if v > best:
                        best = v
                    finished = True
                    break
            if not finished:
                v = (
                    continuation(
                        min(z, cap),
                        last,
                        slots_after,
                        p_o,
                        jf,
                        ji,
                        counts,
                        count_h,
                        count_first,
                        first_late,
                        tilde_first,
                    )
                    - c
                )
                if v > best:
                    best = v
    return best


@njit(cache=True)
def _pick_top(
    length,
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
    alive,
):
    """The continuation values of the DP's labels at the window's end (of their progress up
    to `cap`) and the tie rule among the plans within `tie` of the best: (totals, objective,
    the best objective), or an empty sequence. A label l with alive[l] False (when `alive`
    is not empty) is one the DP's bound ruled out (`shared_incumbents.solve_lengths`): it is
    not a candidate."""
    n_fin = finished_rows.shape[0]
    n_end = z.size if complete else 0
    n = n_fin + n_end
    obj = np.empty(n)
    cost = np.empty(n)
    prog = np.empty(n)
    total = np.empty(n, dtype=np.int64)
    for r in range(n_fin):
        obj[r] = finished_rows[r, 0]
        cost[r] = finished_rows[r, 1]
        prog[r] = finished_rows[r, 2]
        total[r] = np.int64(finished_rows[r, 3])
    for l in range(n_end):
        if alive.size and not alive[l]:
            obj[n_fin + l] = -np.inf
        else:
            obj[n_fin + l] = (
                continuation(
                    min(z[l], cap),
                    prev[l],
                    slots_after,
                    p_o,
                    jf,
                    ji,
                    counts,
                    count_h,
                    count_first,
                    first_late,
                    tilde_first,
                )
                - c[l]
            )
        cost[n_fin + l] = c[l]
        prog[n_fin + l] = z[l]
        total[n_fin + l] = s[l]
    if n == 0:
        return np.empty(0, dtype=np.int64), np.nan, np.nan
    top = -np.inf
    for r in range(n):
        if obj[r] > top:
            top = obj[r]
    limit = top - tie
    seq = np.zeros((n, length), dtype=np.int64)
    pick = np.int64(-1)
    for r in range(n):
        if not obj[r] >= limit:
            continue
        # the padded sequence of totals: label `index` after slot k (with the total
        # opts[col] in slot k when it finished there)
        if r < n_fin:
            k, index = fin_idx[r, 0], fin_idx[r, 1]
            seq[r, k] = opts[fin_idx[r, 2]]
            k -= 1
        else:
            k, index = length - 1, r - n_fin
        for j in range(k, -1, -1):
            at = offsets[j] + index
            seq[r, j] = opts[links[at, 1]]
            index = links[at, 0]
        # a strict order on distinct sequences: which plan is met first does not matter
        if pick < 0 or _plan_before(cost, prog, total, seq, obj, r, pick):
            pick = r
    return seq[pick].copy(), obj[pick], top


@njit(cache=True)
def _pick(
    length,
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
):
    """`_pick_top` without the best objective: (totals, objective), or an empty sequence."""
    seq, obj, _ = _pick_top(
        length,
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
        np.empty(0, dtype=np.bool_),
    )
    return seq, obj


@njit(cache=True)
def solve(
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
    """`window_problem.solve_window` after its set-up: returns (totals, objective) of the
    plan chosen by the tie rule, or an empty sequence if there is no candidate.

    `cap`: the terminal value is the continuation value of min(progress, cap) (inf for
    today's reading; the uniform-progress line for the `line` reading of sigma). A total
    whose cost is inf (`spot_floor`) is never part of a plan.

    First a lower bound on the optimum from simple plans (`_simple_bound`), then the DP
    (`dp_steps`), the continuation values of the labels at the window's end, and the tie
    rule among the plans within `tie` of the best (`_pick`).
    """
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
    (best, finished_rows, fin_idx, links, offsets, complete, z, c, s, prev) = dp_steps(
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


@njit(cache=True)
def spot_floor(costs, cheap, price, avail, p_o, limit, n_min, n_max, opts):
    """The `line` reading of sigma in problem (10): in every window slot whose (predicted)
    spot price is <= limit = sigma p^o with availability >= N_min (Alg. 1 line 8's test),
    all of that spot is used: totals below min(avail, N_max) get cost inf, and the slot's
    split is spot first (`slot_costs` with spot counted cheap, which differs from the
    cheapest split only when sigma >= 1). Changes costs and cheap in place (copies of
    `window_arrays`' output); `usable`, the largest total with all usable spot, is already
    min(avail, N_max)'s index."""
    for k in range(price.size):
        if price[k] <= limit and avail[k] >= n_min:
            least = min(avail[k], n_max)
            for i in range(opts.size):
                n = opts[i]
                if n < least:
                    costs[k, i] = np.inf
                else:
                    spot = min(n, avail[k])
                    costs[k, i] = (n - spot) * p_o + spot * price[k]
            cheap[k] = True


# --- the window's set-up (window_problem._window_arrays), compiled for the AHAP pool ------


@njit(cache=True)
def slot_costs(opts, price, availability, p_o, out):
    """window_problem._slot_data's costs: `slot_cost` of `cheapest_split` for every total
    opts[i] in one slot, into out[i] (the same float operations)."""
    cheap = price < p_o
    for i in range(opts.size):
        n = opts[i]
        spot = min(n, availability) if cheap else 0
        out[i] = (n - spot) * p_o + spot * price


@njit(cache=True)
def envelope(xs, ys, slope, length):
    """window_problem._envelope of the points (xs[i], ys[i]): the segments (slope, length) of
    the lower convex hull from (0, 0), by work, into slope[:m], length[:m]; returns m.
    Points with x <= 0 are ignored; of equal x the least y counts (the first if equal)."""
    n = xs.size
    bx = np.empty(n)
    by = np.empty(n)
    m = 0
    for i in range(n):
        x, y = xs[i], ys[i]
        if x > 0:
            j = 0
            while j < m and bx[j] != x:
                j += 1
            if j == m:
                bx[m] = x
                by[m] = y
                m += 1
            elif y < by[j]:
                by[j] = y
    for i in range(1, m):  # sorted by x (distinct)
        x, y = bx[i], by[i]
        j = i - 1
        while j >= 0 and bx[j] > x:
            bx[j + 1] = bx[j]
            by[j + 1] = by[j]
            j -= 1
        bx[j + 1] = x
        by[j + 1] = y
    hx = np.empty(m + 1)
    hy = np.empty(m + 1)
    hx[0] = 0.0
    hy[0] = 0.0
    h = 1
    for i in range(m):
        x, y = bx[i], by[i]
        while h >= 2:
            x0, y0, x1, y1 = hx[h - 2], hy[h - 2], hx[h - 1], hy[h - 1]
            if (y1 - y0) * (x - x0) >= (y - y0) * (x1 - x0):
                h -= 1
            else:
                break
        hx[h] = x
        hy[h] = y
        h += 1
    for i in range(h - 1):
        slope[i] = (hy[i + 1] - hy[i]) / (hx[i + 1] - hx[i])
        length[i] = hx[i + 1] - hx[i]
    return h - 1


@njit(cache=True)
def window_arrays(price, avail, p_o, opts, throughput, n_max, workload, work_max, tail_rate):
    """window_problem._window_arrays for one window (price[k], avail[k] of its slots, the
    first one observed): (costs, cheap, usable, dz, dc, floor_x, floor_y, floor_n, tails),
    the same arrays bit for bit. tail_rate is _cost_floor's min_n n p^o / H(n)."""
    length = price.size
    n_opts = opts.size
    costs = np.empty((length, n_opts))
    seg_s = np.empty((length, n_opts))
    seg_l = np.empty((length, n_opts))
    seg_n = np.empty(length, dtype=np.int64)
    for k in range(length):
        slot_costs(opts, price[k], avail[k], p_o, costs[k])
        seg_n[k] = envelope(throughput, costs[k], seg_s[k], seg_l[k])
    dz = 1e-12 * (workload + work_max * length + 1.0)
    top = -np.inf
    for k in range(length):
        row = -np.inf
        for i in range(n_opts):
            if costs[k, i] > row:
                row = costs[k, i]
        if row > top:
            top = row
    dc = 1e-12 * (top * length + 1.0)
    # the cost floor of window slot k: the cheap segments of slots k+1.., sorted, summed
    width = 1
    cs = np.empty(length * n_opts)
    cl = np.empty(length * n_opts)
    floor_n = np.empty(length, dtype=np.int64)
    fx = np.zeros((length, length * n_opts + 1))
    fy = np.zeros((length, length * n_opts + 1))
    for k in range(length):
        m = 0
        for j in range(k + 1, length):
            for g in range(seg_n[j]):
                if seg_s[j, g] < tail_rate:
                    s, l = seg_s[j, g], seg_l[j, g]
                    q = m  # insertion by (slope, length), as sorted() orders the tuples
                    while q > 0 and (cs[q - 1] > s or (cs[q - 1] == s and cl[q - 1] > l)):
                        cs[q] = cs[q - 1]
                        cl[q] = cl[q - 1]
                        q -= 1
                    cs[q] = s
                    cl[q] = l
                    m += 1
        w = 0.0
        c = 0.0
        for q in range(m):
            w = w + cl[q]
            c = c + cs[q] * cl[q]
            fx[k, q + 1] = w
            fy[k, q + 1] = c
        floor_n[k] = m + 1
        if m + 1 > width:
            width = m + 1
    cheap = np.empty(length, dtype=np.bool_)
    usable = np.empty(length, dtype=np.int64)
    tails = np.empty(length)
    for k in range(length):
        cheap[k] = price[k] < p_o
        a = min(avail[k], n_max)
        u = 0  # bisect_right(opts, a) - 1: the last total <= a
        for i in range(n_opts):
            if opts[i] <= a:
                u = i
        usable[k] = u
        tails[k] = tail_rate
    return (costs, cheap, usable, dz, dc, fx[:, :width].copy(), fy[:, :width].copy(), floor_n, tails)
