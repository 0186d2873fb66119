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

This departs from the progress-free shared search the issue proposed (one label sweep
per (slot, n_{t-1}) for every Z_{t-1}): on the Fig. 9 worlds the pruning by `best` is
what keeps the DP small (without it the DP took about 3x as long under `ahead`, 5x
under `line`), a label set shared by several Z_{t-1} cannot use it, and the float
progress of the reference depends on Z_{t-1} from the first addition on; the incumbents
keep each DP the reference's, with a tighter bound.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from algorithms.spot.window_kernels import _pick_top, _simple_bound, continuation, dp_steps


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
    """(cap_value, reach_step) for `window_kernels.dp_steps`: with a finite `cap` (the
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
    step = 0.0
    for i in range(work_t.shape[0]):
        for p in range(work_t.shape[1]):
            if work_t[i, p] > step:
                step = work_t[i, p]
    return top, step * (1.0 + 1e-6) + 1e-9


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
    for r in range(n_inc):
        v = plan_value(
            work_t,
            costs,
            opts,
            index,
            incumbents[r],
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
        if v > best:
            best = v
    cap_value, reach_step = cap_bound(
        work_t, opts, slots_after, p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first, cap
    )
    (best, finished_rows, fin_idx, links, offsets, complete, z, c, s, prev) = dp_steps(
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
        cap_value,
        reach_step,
    )
    return _pick_top(
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
