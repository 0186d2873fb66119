"""Problem (10) of AHAP (paper 000, Sec. IV-A, Alg. 1 line 13) solved with incumbents shared
by the policies of one pool: the plans found for the other states of the slot (and of the
slot before) bound the optimum from below before the DP starts.

`window_kernels.solve` first takes the best objective of a few simple plans
(`_simple_bound`: constant totals, and the same with all usable spot where spot is
cheaper) as a lower bound `best` on the optimum, and the DP (`dp_steps`) drops a label
whose objective, by the cost floor, cannot come within 2 tie of `best`. A higher lower
bound drops more labels. Any plan of the window (a sequence of totals, each a total of
{0} U [N_min, N_max]) is feasible for problem (10) (a total that a forced slot of the
`line` reading rules out costs inf, `spot_floor`, and its plan's objective is -inf), and
`plan_value` evaluates it with the float operations the DP uses for the same plan
(progress z = z + work, cost c = c + cost per slot from (Z_{t-1}, n_{t-1}); v - c when
z reaches L - tol, else the terminal value of min(z, cap) minus c), as `_simple_bound`
does for its plans. So the best of these objectives is the objective of a plan the DP
sees (or one that dominates it), and `solve` gives the same plan with it: the labels it
drops cannot reach the tie set (objectives within tie of the best), which the tie rule
chooses from. The incumbents `AHAPPool` passes (ahap_batch.py): the plans of problem (10)
solved earlier in the same slot, for every (window length, n_{t-1}, Z_{t-1}, forced
slots), and those of the slot before, shifted by one slot; a plan shorter than the
window repeats its last total.

Under the `line` reading the terminal value counts progress up to the uniform-progress
line only (`cap`), so a label that cannot complete the job in the window is worth at
most the capped terminal value minus its cost (`cap_bound`), a second bound of the same
kind. `solve_with_incumbents` also reports the best objective of the candidates, which
`ahap_batch._reusable` needs to reuse a plan across forced slots.

Two more bounds of the same kind, for the labels that cannot complete the job in their
window (their progress plus the most work the window's remaining slots allow stays below
L - tol): their objective is the terminal value at the window's end minus their cost, and
the terminal value (the continuation value of window_problem.py, eq. 9 after d) is
non-decreasing in progress and at most `terminal_table`'s entry at the first grid point
past that progress (tabulated once per number of slots after the window, with the first
slot after the window doing the most work any last total allows); the work still to do
in the window costs at least the cost floor of it (`window_kernels.dp_layers`, by pieces
of that work). On the Fig. 9 worlds
the cost floor's bound (which assumes the job's full value v) was loose by a large part of v
for such labels, and this table is what keeps most of them out of the DP.

`solve_lengths` solves the windows of several policies that start from the same state and
end at different slots by one label sweep (`window_kernels.dp_layers`): each window keeps
its own bounds and picks its own plan, the same as alone. This departs from the
progress-free shared search the issue proposed (one label sweep per (slot, n_{t-1}) for
every Z_{t-1}): the pruning by `best` and by the bounds above is what keeps the DP small,
they depend on Z_{t-1}, and the float progress of the reference depends on Z_{t-1} from
the first addition on.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from algorithms.spot.window_kernels import _pick_top, _simple_bound, continuation, dp_layers, one_member_floors


@njit(cache=True)
def plan_value(
    work_t,
    costs,
    opts,
    index,
    seq,
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
    """The objective of problem (10) (Sec. IV-A) of the plan with totals seq[:len(costs)]
    from (Z_{t-1} = progress, n_{t-1} = n_prev), with the DP's float operations (as
    `window_kernels._simple_bound`): the accounting ends when the job completes (v - cost,
    eq. 4 with T <= d), else the terminal value of min(progress, cap) minus the cost.
    index[n] is the index in opts of the total n (-1: not a total): -inf for such a plan."""
    length = costs.shape[0]
    z, c, last = progress, 0.0, n_prev
    for k in range(length):
        n = seq[k]
        if n < 0 or n >= index.size or index[n] < 0:
            return -np.inf
        j = index[n]
        z = z + work_t[j, last]
        c = c + costs[k, j]
        last = opts[j]
        if z >= done_at:
            return value - c
    return (
        continuation(min(z, cap), last, slots_after, p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first)
        - c
    )


@njit(cache=True)
def total_index(opts, n_max):
    """index[n]: the index in opts of the total n = 0..n_max, -1 if n is not a total."""
    index = np.full(n_max + 1, -1, dtype=np.int64)
    for i in range(opts.size):
        if 0 <= opts[i] <= n_max:
            index[opts[i]] = i
    return index


@njit(cache=True)
def cap_bound(work_t, opts, slots_after, p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first, cap):
    """(cap_value, reach_step) for `window_kernels.dp_layers`: with a finite `cap` (the
    `line` reading's uniform-progress line, `ahap_batch._terminal_cap`) the terminal value
    continuation(min(Z, cap), n) is at most continuation(cap, n) (it is non-decreasing in
    progress), so at most cap_value = the largest of these over the totals n; a plan that
    does not complete the job in the window has objective <= cap_value - its cost. No slot
    of the window does more work than reach_step (the largest work of a total, with a
    margin far above rounding). With cap = inf: (inf, 0), no bound."""
    if not cap < np.inf:
        return np.inf, 0.0
    top = -np.inf
    for i in range(opts.size):
        v = continuation(cap, opts[i], slots_after, p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first)
        if v > top:
            top = v
    return top, reach_step(work_t)


@njit(cache=True)
def reach_step(work_t):
    """The most work a slot can do (eq. 2 / 5a: the largest work of a total after any
    previous total), with a margin far above rounding: a bound on the progress a plan makes
    per slot, whatever the float sums."""
    step = 0.0
    for i in range(work_t.shape[0]):
        for p in range(work_t.shape[1]):
            if work_t[i, p] > step:
                step = work_t[i, p]
    return step * (1.0 + 1e-6) + 1e-9


TERMINAL_GRID = 256  # steps of progress from 0 to L in `terminal_table`


@njit(cache=True)
def terminal_table(slots_after, p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first):
    """An upper bound on the terminal value of problem (10) (Sec. IV-A; the continuation
    value of window_problem.py, eq. 9 after the deadline) for a window with `slots_after`
    slots after it, whatever the window's last total, tabulated against progress: entry i
    is the continuation value at progress i * L / TERMINAL_GRID with the first slot after
    the window doing the most work any last total allows (count_first's largest entry per
    count m, tilde_first's largest), i = 0..TERMINAL_GRID + 2. The continuation value is
    non-decreasing in progress and in that first slot's work, so the entry at the first
    grid point at or past a progress bounds the terminal value there (`dp_layers`, with
    1 / step = TERMINAL_GRID / L: `terminal_step`)."""
    first = np.empty((1, count_first.shape[1]))
    for j in range(count_first.shape[1]):
        first[0, j] = count_first[0, j]
        for n in range(1, count_first.shape[0]):
            first[0, j] = max(first[0, j], count_first[n, j])
    tilde = np.full(1, tilde_first.max())
    step = jf[0] / TERMINAL_GRID
    table = np.empty(TERMINAL_GRID + 3)
    for i in range(table.size):
        # np.int64(0), not 0: a literal has Numba compile `continuation` once more, for Literal[int]
        table[i] = continuation(
            i * step, np.int64(0), slots_after, p_o, jf, ji, counts, count_h, first, first_late, tilde
        )
    return table


@njit(cache=True)
def terminal_step(workload):
    """1 / the progress step of `terminal_table`'s entries."""
    return TERMINAL_GRID / workload


@njit(cache=True)
def solve_with_incumbents(
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
    index,
    incumbents,
    n_inc,
):
    """`window_kernels.solve` (the same arguments, then `index` of `total_index` and the
    plans incumbents[:n_inc], rows of totals at least len(costs) long) with the lower bound
    `best` raised to the best objective of the incumbents (`plan_value`): the same
    (totals, objective) as `solve` (module docstring), with fewer labels, and the best
    objective of the candidates the tie rule chose from (window_kernels._pick_top). With a finite
    `cap` the DP also drops the labels that cannot complete the job in the window and whose
    cost rules them out against the capped terminal value (`cap_bound`)."""
    length = costs.shape[0]
    fx, fy, fn = one_member_floors(floor_x, floor_y, floor_n)
    seqs, objs, tops = solve_lengths(
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
        fx,
        fy,
        fn,
        tails,
        np.full(1, length),
        np.full(1, slots_after),
        p_o,
        jf,
        ji,
        counts,
        count_h,
        count_first,
        first_late,
        tilde_first,
        np.full(1, cap),
        index,
        incumbents,
        n_inc,
        np.empty((1, 0)),
        0.0,
    )
    if np.isnan(objs[0]):
        return np.empty(0, dtype=np.int64), np.nan, np.nan
    return seqs[0].copy(), objs[0], tops[0]


@njit(cache=True)
def _in_bound(z, c, value, done_at, threshold, cap_value, floor_0, tail):
    """Which labels at the end of a window pass the bound `window_kernels._candidates`
    applies in the window's last slot (where the cost floor is floor_0 + work * tail, no slot
    of the window being left): v - cost - floor >= threshold and, with a cap, cap_value -
    cost >= threshold (at the window's end no label completes the job later in it)."""
    alive = np.empty(z.size, dtype=np.bool_)
    for l in range(z.size):
        work = done_at - z[l]
        if work < 0.0:
            work = 0.0
        floor = floor_0 + (work - 0.0) * tail
        alive[l] = value - c[l] - floor >= threshold and (z[l] >= done_at or cap_value - c[l] >= threshold)
    return alive


@njit(cache=True)
def solve_lengths(
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
    ends,
    slots_after,
    p_o,
    jf,
    ji,
    counts,
    count_h,
    count_first,
    first_late,
    tilde_first,
    caps,
    index,
    incumbents,
    n_inc,
    terminal,
    inv_delta,
):
    """`solve_with_incumbents` for a group of windows that start at the same slot from the
    same (n_{t-1}, Z_{t-1}) and differ only in where they end (AHAP policies with different
    omega at one state, Alg. 1 line 13): member g is the window of the first ends[g] slots
    of `costs` (ends increasing, the last = len(costs); cheap, usable likewise), with
    slots_after[g] slots after it, its terminal cap caps[g] and its cost floor floor_x[g],
    floor_y[g], floor_n[g] (`window_kernels.window_arrays` of that window); dz, dc are those
    of the longest window. One label sweep (`window_kernels.dp_layers`) serves every
    member: each keeps its own lower bound (its simple plans and the incumbents), its own
    bound by the capped terminal value, and picks from the labels at its own window's end
    and the plans that finished before it by the tie rule (`_pick_top`).

    Returns (seqs, objs, tops): member g's plan is seqs[g, :ends[g]] (its totals), with
    objective objs[g] and the best objective of its candidates tops[g], the same as
    `solve_with_incumbents` gives for that window alone; objs[g] is nan if it had no plan."""
    members = ends.size
    length = costs.shape[0]
    bests = np.empty(members)
    cap_values = np.empty(members)
    for g in range(members):
        end = ends[g]
        best = _simple_bound(
            work_t,
            costs[:end],
            opts,
            cheap[:end],
            usable[:end],
            n_prev,
            progress,
            value,
            done_at,
            slots_after[g],
            p_o,
            jf,
            ji,
            counts,
            count_h,
            count_first,
            first_late,
            tilde_first,
            caps[g],
        )
        for r in range(n_inc):
            v = plan_value(
                work_t,
                costs[:end],
                opts,
                index,
                incumbents[r],
                n_prev,
                progress,
                value,
                done_at,
                slots_after[g],
                p_o,
                jf,
                ji,
                counts,
                count_h,
                count_first,
                first_late,
                tilde_first,
                caps[g],
            )
            if v > best:
                best = v
        bests[g] = best
        cap_values[g], _ = cap_bound(
            work_t, opts, slots_after[g], p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first, caps[g]
        )
    (
        bests,
        finished,
        fin_idx,
        fin_after,
        links,
        offsets,
        steps,
        snap_at,
        snap_z,
        snap_c,
        snap_s,
        snap_prev,
        z,
        c,
        s,
        prev,
    ) = dp_layers(
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
        reach_step(work_t),
        ends,
        caps,
        terminal,
        inv_delta,
    )
    seqs = np.zeros((members, length), dtype=np.int64)
    objs = np.full(members, np.nan)
    tops = np.full(members, np.nan)
    for g in range(members):
        end = ends[g]
        n_fin = fin_after[end - 1]
        if g < members - 1:
            a, b = snap_at[g], snap_at[g + 1]
            lz, lc, ls, lp = snap_z[a:b], snap_c[a:b], snap_s[a:b], snap_prev[a:b]
            alive = _in_bound(
                lz, lc, value, done_at, bests[g] - 2 * tie, cap_values[g], floor_x[g, end - 1, 0], tails[end - 1]
            )
        else:
            lz, lc, ls, lp = z, c, s, prev
            alive = np.empty(0, dtype=np.bool_)
        seq, obj, top = _pick_top(
            end,
            opts,
            tie,
            finished[:n_fin],
            fin_idx[:n_fin],
            links,
            offsets,
            steps >= end,
            lz,
            lc,
            ls,
            lp,
            slots_after[g],
            p_o,
            jf,
            ji,
            counts,
            count_h,
            count_first,
            first_late,
            tilde_first,
            caps[g],
            alive,
        )
        if seq.size:
            seqs[g, :end] = seq
            objs[g] = obj
            tops[g] = top
    return seqs, objs, tops
