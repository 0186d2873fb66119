"""AHAP (paper 000, Sec. IV-A, Alg. 1) for a whole pool of
(omega, v, sigma) policies on one world, compiled: the fast path of
`family.simulate_replicate`.

The reference is `algorithms/spot/ahap.py` (`AHAP.plan` / `AHAP.decide`) run by
`simulation.simulate` (the accounting of Sec. III: eq. 2, 3, 5a, the termination
configuration of Sec. III-E2 and V(T) of eq. 4), one policy at a time, with the
window problem (10) memoised by a shared `WindowSolver`. `AHAPPool.run` does the
same for every policy of the pool in one compiled call (Numba, `_run_pool`):

- the policies advance slot by slot together; at slot t every policy that is
  behind (Alg. 1 line 12) needs problem (10) for its state (n_{t-1}, Z_{t-1}
  rounded to 1e-9 as `WindowSolver.solve` rounds it) and its window t..t+len-1;
  the window's forecasts (row t-1 of the forecast, the first slot observed) depend
  only on t and len, so within the slot a problem is identified by (len, n_{t-1},
  rounded Z_{t-1}) and solved once (`window_kernels.window_arrays` for the set-up,
  `window_kernels.solve` for the DP) -- the same sharing as the solver's memo;
- the shared search (`search="shared"`, the default; "reference" keeps the solver as it
  was): the problems of a slot share what their policies found. All problems of the slot
  are known before any is solved; those from the same (n_{t-1}, Z_{t-1}) whose windows
  differ only in where they end (omega; under `line` also sigma that force the same slots
  there) are solved by one label sweep (`_solve_group`, `shared_incumbents.solve_lengths`),
  each DP starts from a lower bound raised by the plans solved earlier in the slot and in
  the slot before (algorithms/spot/shared_incumbents.py), a label that cannot complete the
  job in its window is also bounded by a table of the terminal value
  (`shared_incumbents.terminal_table`, one per number of slots after the window), the
  windows' set-up is made once per slot (`_slot_arrays`), and under the `line` reading a
  plan whose problem differs only by forcing fewer slots is reused without a DP when the
  rule of `_reusable` shows it is the plan (problem (10) with more forced slots is the same
  problem with fewer plans). The plans are the reference's bit for bit
  (tests/spot/test_shared_incumbents.py, tests/spot/test_shared_lengths.py); `sweeps`
  counts the label DPs;
- the ahead plan (lines 6-11) and the commitment averaging and rounding (lines 14-16,
  22, see ahap.py) are `AHAP.decide` line by line; the accounting of each slot and the
  end of the job are `simulate`'s, in `pool_accounting` (shared with the AHANP pool).

Every float operation is the reference's, in the same order (no fast-math), so the
outcomes are the same bit for bit (tests/spot/test_spot_ahap_batch.py compares
them with `simulate` + `AHAP` on many worlds). Z_{t-1} is rounded to 9 decimals
exactly as Python's `round(x, 9)` (correctly rounded, halves to even; `round9`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from algorithms.spot.pool_accounting import SLOT_ERRORS, PoolResult, account_slot, finish, open_accounts
from algorithms.spot.shared_incumbents import TERMINAL_GRID, solve_lengths, terminal_step, terminal_table, total_index
from algorithms.spot.simulation import PolicyError
from algorithms.spot.window_kernels import solve, spot_floor, window_arrays
from algorithms.spot.window_problem import _job_tables
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket

_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitting constant
NO_PLAN = 1  # error[q] when problem (10) had no plan (simulate's ValueError); 2, 3: pool_accounting


@njit(cache=True)
def _two_product(a, b):
    """(p, e) with p = fl(a * b) and a * b = p + e exactly (Dekker, no FMA needed)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@njit(cache=True)
def round9(x):
    """Python's round(x, 9): the double nearest to x rounded to 9 decimals (the decimal
    rounding exact, halves to even). For |x| < 2**23 by x * 1e9 = p + e exactly, rint of
    p and a correction at halves; larger x (ulp > 1e-9) round to themselves."""
    if not abs(x) < 8388608.0:  # 2**23, also inf and nan
        return x
    p, e = _two_product(x, 1e9)
    r = np.rint(p)  # halves to even
    d = p - r  # exact
    if d == 0.5:
        if e > 0.0:
            r += 1.0
    elif d == -0.5:
        if e < 0.0:
            r -= 1.0
    return r / 1e9


@njit(cache=True, inline="always")
def _window_forecast(t, length, obs_price, obs_avail, f_price, f_avail, w_price, w_avail):
    """The window t..t+length-1 as AHAP reads it (Alg. 1 line 3): the forecast made at t
    (row t-1), the first slot observed, into w_price[:length], w_avail[:length]."""
    w_price[0] = obs_price
    w_avail[0] = obs_avail
    for k in range(1, length):
        w_price[k] = f_price[t - 1, k]
        w_avail[k] = f_avail[t - 1, k]


@njit(cache=True, inline="always")
def _ahead_plan(plan_od, plan_sp, length, w_price, w_avail, limit, n_min, n_max):
    """Alg. 1 lines 6-11 (Sec. IV-A), the job ahead of Z^exp_{t+omega}: in every window slot
    all predicted spot up to N_max when its price is <= limit = sigma p^o and its
    availability >= N_min, else none; no on-demand. Into plan_od[:length], plan_sp[:length]."""
    for k in range(length):
        p, a = w_price[k], w_avail[k]
        plan_od[k] = 0
        plan_sp[k] = min(a, n_max) if p <= limit and a >= n_min else 0


@njit(cache=True, inline="always")
def _forced_slots(length, w_price, w_avail, limit, n_min):
    """The `line` reading of sigma (window_problem.py, "Reading of sigma"; Sec. IV-A): the
    window slots whose spot problem (10) must use, as a bit mask (WindowSolver.solve's
    `forced`): price <= limit = sigma p^o and availability >= N_min."""
    mask = 0
    for k in range(length):
        if w_price[k] <= limit and w_avail[k] >= n_min:
            mask |= 1 << k
    return mask


@njit(cache=True, inline="always")
def _solved(n_sol, sol_len, sol_prev, sol_z, sol_mask, length, last, z, mask):
    """The index of problem (10) (Alg. 1 lines 12-13) for (window length, n_{t-1}, rounded
    Z_{t-1}, forced slots) among the n_sol solved in this slot, or -1 (the sharing of the
    WindowSolver's memo)."""
    for r in range(n_sol):
        if sol_len[r] == length and sol_prev[r] == last and sol_z[r] == z and sol_mask[r] == mask:
            return r
    return -1


@njit(cache=True, inline="always")
def _terminal_cap(line, end, d, workload):
    """The progress problem (10)'s terminal value counts, for a window ending at slot `end`:
    all of it (inf) under the `ahead` reading of sigma; under `line` (window_problem.py,
    "Reading of sigma", Sec. IV-A) the uniform-progress line Z^exp_end = L end / d (eq. 6),
    no cap when the window ends at d."""
    if line and end < d:
        return workload / d * end
    return np.inf


@njit(cache=True, inline="always")
def _split_plan(seq, length, mask, w_price, w_avail, p_o, sol_od, sol_sp):
    """The totals seq[:length] of a plan of problem (10) split as `WindowSolver.solve` splits
    them (`cheapest_split`, spot first in the slots `mask` forces) into sol_od[:length],
    sol_sp[:length]."""
    for k in range(length):
        n = seq[k]
        if w_price[k] < p_o or mask >> k & 1:
            s = min(w_avail[k], n)
            sol_od[k] = n - s
            sol_sp[k] = s
        else:
            sol_od[k] = n
            sol_sp[k] = 0


@njit(cache=True)
def _window_plan(
    length,
    last,
    z,
    mask,
    limit,
    slots_after,
    cap,
    w_price,
    w_avail,
    sol_od,
    sol_sp,
    p_o,
    workload,
    n_min,
    n_max,
    value,
    done_at,
    tie,
    tail_rate,
    work_max,
    opts,
    throughput,
    work_t,
    jf,
    ji,
    counts,
    count_h,
    count_first,
    first_late,
    tilde_first,
):
    """Alg. 1 lines 12-13 (Sec. IV-A), the job behind, on the reference path: problem (10)
    over the window from (n_{t-1} = last, Z_{t-1} = z), as `WindowSolver.solve`:
    `window_kernels.window_arrays`, `spot_floor` in the slots the `line` reading forces
    (mask; none under `ahead`), then `window_kernels.solve` with `slots_after` slots after
    the window and the terminal value of min(progress, cap) (`_terminal_cap`); its totals
    split cheapest first, spot first in the forced slots, into sol_od[:length],
    sol_sp[:length]. Returns False if problem (10) had no plan."""
    if z >= done_at:  # solve_window: a complete job plans nothing
        for k in range(length):
            sol_od[k] = 0
            sol_sp[k] = 0
        return True
    (costs, cheap, usable, dz, dc, floor_x, floor_y, floor_n, tails) = window_arrays(
        w_price[:length], w_avail[:length], p_o, opts, throughput, n_max, workload, work_max, tail_rate
    )
    if mask:  # spot_floor changes nothing in a slot outside the mask
        spot_floor(costs, cheap, w_price[:length], w_avail[:length], p_o, limit, n_min, n_max, opts)
    seq, _ = solve(
        work_t,
        costs,
        opts,
        cheap,
        usable,
        last,
        z,
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
    )
    if seq.size == 0:
        return False
    _split_plan(seq, length, mask, w_price, w_avail, p_o, sol_od, sol_sp)
    return True


@njit(cache=True)
def _slot_arrays(w_price, w_avail, longest, p_o, opts, throughput, n_max, workload, work_max, tail_rate):
    """The set-up of every window of 1..longest slots from this slot
    (`window_kernels.window_arrays` of each): the slots' costs, cheap, usable and tails
    (the same rows for every window, taken from the longest), each window's dz, dc
    (dzs[l - 1], dcs[l - 1]) and cost floors (floor_x[l - 1, :l], floor_y, floor_n; the
    longest window's floors are the widest)."""
    (costs, cheap, usable, dz_top, dc_top, fx_top, fy_top, fn_top, tails) = window_arrays(
        w_price[:longest], w_avail[:longest], p_o, opts, throughput, n_max, workload, work_max, tail_rate
    )
    width = fx_top.shape[1]
    floor_x = np.zeros((longest, longest, width))
    floor_y = np.zeros((longest, longest, width))
    floor_n = np.ones((longest, longest), dtype=np.int64)
    dzs = np.empty(longest)
    dcs = np.empty(longest)
    for l in range(1, longest + 1):
        dz, dc, fx, fy, fn = dz_top, dc_top, fx_top, fy_top, fn_top
        if l < longest:
            (_, _, _, dz, dc, fx, fy, fn, _) = window_arrays(
                w_price[:l], w_avail[:l], p_o, opts, throughput, n_max, workload, work_max, tail_rate
            )
        floor_x[l - 1, :l, : fx.shape[1]] = fx
        floor_y[l - 1, :l, : fy.shape[1]] = fy
        floor_n[l - 1, :l] = fn
        dzs[l - 1] = dz
        dcs[l - 1] = dc
    return costs, cheap, usable, tails, dzs, dcs, floor_x, floor_y, floor_n


@njit(cache=True)
def _reusable(
    n_sol,
    sol_ok,
    sol_top,
    sol_len,
    sol_prev,
    sol_z,
    sol_mask,
    sol_od,
    sol_sp,
    length,
    last,
    z,
    mask,
    w_price,
    w_avail,
    p_o,
    n_max,
):
    """A plan of problem (10) solved in this slot that is also the plan of the problem
    (length, n_{t-1} = last, Z_{t-1} = z) with the forced slots `mask` (the `line` reading,
    `_forced_slots`), or -1. Plan r qualifies when its problem had the same window, n_{t-1}
    and Z_{t-1} and forced slots mask_r within `mask`, its objective was its problem's best
    (sol_top), and in every slot forced by `mask` and not by mask_r the spot price is below
    p^o (so that `spot_floor` leaves the costs of the totals it allows as they were and
    the split is the same) and the plan's total is at least min(availability, N_max).
    Then the problem with `mask` is problem r with fewer plans, all priced as before, and
    plan r is among them: its best objective is plan r's, its tie set (the plans within
    tie of the best) is problem r's tie set without the plans `mask` rules out, and the
    tie rule, which chose plan r from the larger set, chooses it again."""
    for r in range(n_sol):
        if not (sol_ok[r] and sol_top[r]):
            continue
        if sol_len[r] != length or sol_prev[r] != last or sol_z[r] != z:
            continue
        mr = sol_mask[r]
        if mr & ~mask:
            continue
        extra = mask & ~mr
        fits = True
        for k in range(length):
            if extra >> k & 1:
                if not w_price[k] < p_o or sol_od[r, k] + sol_sp[r, k] < min(w_avail[k], n_max):
                    fits = False
                    break
        if fits:
            return r
    return -1


@njit(cache=True)
def _gather_incumbents(length, n_sol, sol_ok, sol_len, sol_od, sol_sp, n_old, old_len, old_tot, incumbents):
    """The incumbents of problem (10) over a window of `length` slots (shared_incumbents.py),
    into incumbents[:n] as distinct rows of totals: the n_sol plans solved earlier in this slot
    (totals sol_od + sol_sp, those with sol_ok), then the n_old plans of the slot before
    shifted by one slot; a plan shorter than the window repeats its last total. A row met
    before is left out (many policies share a plan; the bound is the best row's). Returns n."""
    size = 1
    while size < 2 * incumbents.shape[0]:
        size *= 2
    seen = np.full(size, -1, dtype=np.int64)  # open addressing: row indices by hash
    n = 0
    for r in range(n_sol + n_old):
        if r < n_sol:
            if not sol_ok[r]:
                continue
            last = sol_len[r] - 1
            for k in range(length):
                kk = min(k, last)
                incumbents[n, k] = sol_od[r, kk] + sol_sp[r, kk]
        else:
            last = old_len[r - n_sol] - 1
            for k in range(length):
                incumbents[n, k] = old_tot[r - n_sol, min(k + 1, last)]
        h = 0
        for k in range(length):
            h = h * 1000003 + incumbents[n, k] + 1
        at = (h ^ (h >> 17)) & (size - 1)
        new = True
        while seen[at] >= 0:
            other = seen[at]
            same = True
            for k in range(length):
                if incumbents[other, k] != incumbents[n, k]:
                    same = False
                    break
            if same:
                new = False
                break
            at = (at + 1) & (size - 1)
        if new:
            seen[at] = n
            n += 1
    return n


@njit(cache=True)
def _solve_group(
    r,
    n_sol,
    sol_done,
    sol_ok,
    sol_top,
    sol_len,
    sol_prev,
    sol_z,
    sol_mask,
    sol_limit,
    sol_od,
    sol_sp,
    slot,
    t,
    d,
    line,
    w_price,
    w_avail,
    p_o,
    n_min,
    n_max,
    workload,
    value,
    done_at,
    tie,
    opts,
    work_t,
    jf,
    ji,
    counts,
    count_h,
    count_first,
    first_late,
    tilde_first,
    index,
    incumbents,
    n_old,
    old_len,
    old_tot,
    terminal,
    terminal_known,
):
    """Problem (10) (Alg. 1 lines 12-13, Sec. IV-A) for the unsolved problem r of this slot
    and every unsolved problem that shares its window up to where the shorter one ends: the
    same (n_{t-1}, rounded Z_{t-1}) and forced slots that agree (the `line` reading; none
    under `ahead`), AHAP policies with different omega (and, under `line`, sigma that force
    the same slots there). A member whose plan a plan solved before gives (`_reusable`)
    takes it; the rest are solved by one label sweep (`shared_incumbents.solve_lengths`,
    with the incumbents of `_gather_incumbents`), each the plan `_window_plan` would give it
    alone. `slot` is `_slot_arrays`' output for this slot; terminal[s] is
    `shared_incumbents.terminal_table` for windows with s slots after them, made on first
    use (terminal_known[s]). Marks the members solved
    (sol_done, sol_ok, sol_top, their plans in sol_od, sol_sp); returns the label sweeps
    run (0 or 1)."""
    costs_all, cheap_all, usable_all, tails_all, dzs, dcs, fx_all, fy_all, fn_all = slot
    last, z, mask = sol_prev[r], sol_z[r], sol_mask[r]
    head = r
    for q in range(r + 1, n_sol):
        if (
            not sol_done[q]
            and sol_prev[q] == last
            and sol_z[q] == z
            and sol_len[q] > sol_len[head]
            and sol_mask[q] & ((1 << sol_len[r]) - 1) == mask
        ):
            head = q
    top_len, top_mask = sol_len[head], sol_mask[head]
    member_of = np.full(top_len, -1, dtype=np.int64)  # the problem whose window has l slots
    for q in range(r, n_sol):
        if not sol_done[q] and sol_prev[q] == last and sol_z[q] == z:
            length = sol_len[q]
            if length <= top_len and sol_mask[q] == top_mask & ((1 << length) - 1):
                member_of[length - 1] = q
    members = 0
    for length in range(1, top_len + 1):
        q = member_of[length - 1]
        if q < 0:
            continue
        reuse = -1
        if sol_mask[q]:
            reuse = _reusable(
                n_sol,
                sol_ok,
                sol_top,
                sol_len,
                sol_prev,
                sol_z,
                sol_mask,
                sol_od,
                sol_sp,
                length,
                last,
                z,
                sol_mask[q],
                w_price,
                w_avail,
                p_o,
                n_max,
            )
        if reuse >= 0:
            for k in range(length):
                sol_od[q, k] = sol_od[reuse, k]
                sol_sp[q, k] = sol_sp[reuse, k]
            sol_ok[q] = True
            sol_top[q] = True
            sol_done[q] = True
            member_of[length - 1] = -1
        else:
            members += 1
    if members == 0:
        return 0
    ends = np.empty(members, dtype=np.int64)
    slots_after = np.empty(members, dtype=np.int64)
    caps = np.empty(members)
    g = 0
    for length in range(1, top_len + 1):
        if member_of[length - 1] >= 0:
            ends[g] = length
            slots_after[g] = d - (t + length - 1)
            caps[g] = _terminal_cap(line, t + length - 1, d, workload)
            if not terminal_known[slots_after[g]]:
                terminal[slots_after[g]] = terminal_table(
                    slots_after[g], p_o, jf, ji, counts, count_h, count_first, first_late, tilde_first
                )
                terminal_known[slots_after[g]] = True
            g += 1
    longest = ends[members - 1]
    widest = member_of[longest - 1]
    costs = costs_all[:longest]
    cheap = cheap_all[:longest]
    if sol_mask[widest]:  # the forced slots of every member (spot_floor changes no other slot)
        costs = costs.copy()
        cheap = cheap.copy()
        spot_floor(costs, cheap, w_price[:longest], w_avail[:longest], p_o, sol_limit[widest], n_min, n_max, opts)
    n_inc = _gather_incumbents(longest, n_sol, sol_ok, sol_len, sol_od, sol_sp, n_old, old_len, old_tot, incumbents)
    rows = ends - 1
    seqs, objs, tops = solve_lengths(
        work_t,
        costs,
        opts,
        cheap,
        usable_all[:longest],
        last,
        z,
        value,
        done_at,
        tie,
        dzs[longest - 1],
        dcs[longest - 1],
        fx_all[rows],
        fy_all[rows],
        fn_all[rows],
        tails_all[:longest],
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
        terminal[slots_after],
        terminal_step(workload),
    )
    for g in range(members):
        q = member_of[ends[g] - 1]
        sol_done[q] = True
        if np.isnan(objs[g]):
            sol_ok[q] = False
            continue
        _split_plan(seqs[g], ends[g], sol_mask[q], w_price, w_avail, p_o, sol_od[q], sol_sp[q])
        sol_ok[q] = True
        sol_top[q] = objs[g] == tops[g]
    return 1


@njit(cache=True, inline="always")
def _executed_decision(plan_od, plan_sp, t, commitment, avail, n_min, n_max):
    """AHAP.decide, Alg. 1 lines 14-16 and 22 (Sec. IV-A): the plans for slot t made at
    t, ..., t-v+1 (plan_od[t - k, k], those that exist) averaged and rounded half up, spot
    cut to the availability, the total limited to 0 or [N_min, N_max] (ahap.py's reading).
    Returns (on-demand, spot)."""
    count = 0
    total_sum = 0
    spot_sum = 0
    for k in range(commitment):
        if t - k < 1:
            break
        spot_k = plan_sp[t - k, k]
        total_sum += plan_od[t - k, k] + spot_k
        spot_sum += spot_k
        count += 1
    total = (2 * total_sum + count) // (2 * count)
    spot = min((2 * spot_sum + count) // (2 * count), total)
    on_demand = total - spot
    spot = min(spot, avail)
    n = on_demand + spot
    if n == 0:
        on_demand = 0
        spot = 0
    elif n < n_min:
        on_demand += n_min - n
    elif n > n_max:
        cut = min(on_demand, n - n_max)
        on_demand -= cut
        spot -= n - n_max - cut
    return on_demand, spot


@njit(cache=True)
def _run_pool(
    windows,
    commitments,
    thresholds,
    line,
    price,
    avail,
    f_price,
    f_avail,
    p_o,
    workload,
    deadline,
    n_min,
    n_max,
    alpha,
    beta,
    mu1,
    mu2,
    value,
    gamma,
    tail_rate,
    work_max,
    opts,
    throughput,
    work_t,
    jf,
    ji,
    counts,
    count_h,
    count_first,
    first_late,
    tilde_first,
    shared,
):
    """Every policy of the pool on one world (see the module docstring): per slot t and
    running policy q, Alg. 1's plan (`_ahead_plan`, or problem (10), solved once per (len,
    n_{t-1}, rounded Z_{t-1}, forced slots) in the slot) and the executed decision (`_executed_decision`), then the slot's accounting (Sec. III,
    `pool_accounting`). Returns (n_od, n_sp, utility, cost, spot_cost, od_cost, completion,
    progress_at_deadline, reconfigurations, termination_slots, error, sweeps): error[q] is 0,
    or NO_PLAN if problem (10) had no plan, pool_accounting.AVAILABILITY_ERROR /
    BOUNDS_ERROR if a decision broke (5b) / (5c-5d) (never, kept as simulate's checks);
    sweeps: how many times the label DP ran (`window_kernels.dp_layers`, one run serving a
    group of windows).

    `shared`: the problems are solved by groups (`_solve_group`: one label sweep per group,
    the incumbents of `shared_incumbents` -- the plans solved earlier in the slot, and those
    of the slot before shifted by one slot -- and its terminal table), else one by one by
    `_window_plan` (`window_kernels.solve` alone, the reference path); the plans are the
    same."""
    n_pol = windows.size
    d = deadline
    tol = 1e-9 * max(1.0, workload)
    done_at = workload - tol
    tie = 1e-9 * max(1.0, value)  # window_problem.TIE_TOL * max(1, v)
    widest = 1
    for q in range(n_pol):
        widest = max(widest, windows[q] + 1)
    (progress, n_prev, running, spot_cost, od_cost, reconf, completion, error, n_od, n_sp) = open_accounts(n_pol, d)
    od_t = np.zeros(n_pol, dtype=np.int64)  # the decisions of slot t
    sp_t = np.zeros(n_pol, dtype=np.int64)
    # plans[q, t, k]: the plan policy q made at slot t (1-based) for slot t + k
    plan_od = np.zeros((n_pol, d + 1, widest), dtype=np.int64)
    plan_sp = np.zeros((n_pol, d + 1, widest), dtype=np.int64)
    # problems (10) solved in the current slot: (len, n_{t-1}, rounded Z_{t-1}, the slots sigma
    # forces under the `line` reading) -> plan
    sol_len = np.empty(n_pol, dtype=np.int64)
    sol_mask = np.empty(n_pol, dtype=np.int64)
    sol_prev = np.empty(n_pol, dtype=np.int64)
    sol_z = np.empty(n_pol)
    sol_od = np.empty((n_pol, widest), dtype=np.int64)
    sol_sp = np.empty((n_pol, widest), dtype=np.int64)
    w_price = np.empty(widest)
    w_avail = np.empty(widest, dtype=np.int64)
    # the incumbents (shared_incumbents): this slot's plans (sol_od + sol_sp, sol_ok) and the
    # slot before's (old_tot, old_len, n_old)
    index = total_index(opts, n_max)
    sol_ok = np.zeros(n_pol, dtype=np.bool_)
    sol_top = np.zeros(n_pol, dtype=np.bool_)  # the plan's objective is its problem's best
    old_tot = np.zeros((n_pol, widest), dtype=np.int64)
    old_len = np.zeros(n_pol, dtype=np.int64)
    n_old = np.int64(0)  # not 0: a literal has Numba compile the callees once more, for Literal[int]
    incumbents = np.zeros((2 * n_pol, widest), dtype=np.int64)
    sweeps = 0
    sol_limit = np.empty(n_pol)  # sigma p^o of the problem's policy (its forced slots)
    sol_done = np.zeros(n_pol, dtype=np.bool_)
    problem = np.full(n_pol, -1, dtype=np.int64)  # the problem (10) policy q needs in this slot
    # bounds on the terminal values of windows with s slots after them (`_solve_group`)
    terminal = np.empty((d, TERMINAL_GRID + 3))
    terminal_known = np.zeros(d, dtype=np.bool_)
    # the slot's windows set up (`_slot_arrays`; a placeholder until the first)
    slot = _slot_arrays(price[:1], avail[:1], np.int64(1), p_o, opts, throughput, n_max, workload, work_max, tail_rate)
    for t in range(1, d + 1):
        obs_price = price[t - 1]
        obs_avail = avail[t - 1]
        n_sol = np.int64(0)
        # the widest window's slots (run() checked that the forecast covers them)
        _window_forecast(t, min(widest - 1, d - t) + 1, obs_price, obs_avail, f_price, f_avail, w_price, w_avail)
        # the ahead plans, and the problems (10) of the policies that are behind
        longest = np.int64(0)
        for q in range(n_pol):
            problem[q] = -1
            if not running[q]:
                continue
            length = min(windows[q], d - t) + 1  # window_length
            limit = thresholds[q] * p_o
            expected = workload / d * (t + windows[q])  # Z^exp_{t+omega} (eq. 6, Alg. 1 line 4)
            if progress[q] >= expected - tol:
                _ahead_plan(plan_od[q, t], plan_sp[q, t], length, w_price, w_avail, limit, n_min, n_max)
                od_t[q], sp_t[q] = _executed_decision(
                    plan_od[q], plan_sp[q], t, commitments[q], obs_avail, n_min, n_max
                )
                continue
            last = n_prev[q]
            z = round9(progress[q])
            mask = _forced_slots(length, w_price, w_avail, limit, n_min) if line else 0
            found = _solved(n_sol, sol_len, sol_prev, sol_z, sol_mask, length, last, z, mask)
            if found < 0:
                found = n_sol
                n_sol += 1
                sol_len[found] = length
                sol_prev[found] = last
                sol_z[found] = z
                sol_mask[found] = mask
                sol_limit[found] = limit
                sol_ok[found] = False
                sol_top[found] = False
                sol_done[found] = False
                longest = max(longest, length)
            problem[q] = found
        # solve them: with `shared`, a group of windows by one label sweep, else one by one
        slot_ready = False
        for r in range(n_sol):
            if sol_done[r]:
                continue
            length = sol_len[r]
            if sol_z[r] >= done_at or not shared:
                if sol_z[r] < done_at:
                    sweeps += 1
                sol_ok[r] = _window_plan(
                    length,
                    sol_prev[r],
                    sol_z[r],
                    sol_mask[r],
                    sol_limit[r],
                    d - (t + length - 1),
                    _terminal_cap(line, t + length - 1, d, workload),
                    w_price,
                    w_avail,
                    sol_od[r],
                    sol_sp[r],
                    p_o,
                    workload,
                    n_min,
                    n_max,
                    value,
                    done_at,
                    tie,
                    tail_rate,
                    work_max,
                    opts,
                    throughput,
                    work_t,
                    jf,
                    ji,
                    counts,
                    count_h,
                    count_first,
                    first_late,
                    tilde_first,
                )
                sol_done[r] = True
                continue
            if not slot_ready:  # the windows' set-up, once per slot
                slot = _slot_arrays(
                    w_price, w_avail, longest, p_o, opts, throughput, n_max, workload, work_max, tail_rate
                )
                slot_ready = True
            sweeps += _solve_group(
                r,
                n_sol,
                sol_done,
                sol_ok,
                sol_top,
                sol_len,
                sol_prev,
                sol_z,
                sol_mask,
                sol_limit,
                sol_od,
                sol_sp,
                slot,
                t,
                d,
                line,
                w_price,
                w_avail,
                p_o,
                n_min,
                n_max,
                workload,
                value,
                done_at,
                tie,
                opts,
                work_t,
                jf,
                ji,
                counts,
                count_h,
                count_first,
                first_late,
                tilde_first,
                index,
                incumbents,
                n_old,
                old_len,
                old_tot,
                terminal,
                terminal_known,
            )
        # the plans and decisions of the policies that are behind
        for q in range(n_pol):
            found = problem[q]
            if found < 0:
                continue
            if not sol_ok[found]:
                error[q] = NO_PLAN
                running[q] = False
                continue
            length = min(windows[q], d - t) + 1
            for k in range(length):
                plan_od[q, t, k] = sol_od[found, k]
                plan_sp[q, t, k] = sol_sp[found, k]
            od_t[q], sp_t[q] = _executed_decision(plan_od[q], plan_sp[q], t, commitments[q], obs_avail, n_min, n_max)
        # this slot's plans become the slot before's
        n_old = np.int64(0)
        for r in range(n_sol):
            if sol_ok[r]:
                old_len[n_old] = sol_len[r]
                for k in range(sol_len[r]):
                    old_tot[n_old, k] = sol_od[r, k] + sol_sp[r, k]
                n_old += 1
        # simulate: checks (5b)-(5e) and the accounting of the slot, for every running policy
        account_slot(
            t,
            od_t,
            sp_t,
            obs_price,
            obs_avail,
            n_min,
            n_max,
            alpha,
            beta,
            mu1,
            mu2,
            p_o,
            done_at,
            progress,
            n_prev,
            running,
            spot_cost,
            od_cost,
            reconf,
            completion,
            error,
            n_od,
            n_sp,
        )
    utility, cost, extra_slots = finish(
        progress,
        n_prev,
        completion,
        od_cost,
        spot_cost,
        reconf,
        error,
        d,
        workload,
        tol,
        n_max,
        alpha,
        beta,
        mu1,
        mu2,
        p_o,
        value,
        gamma,
    )
    return (n_od, n_sp, utility, cost, spot_cost, od_cost, completion, progress, reconf, extra_slots, error, sweeps)


SEARCHES = ("shared", "reference")


class AHAPPool:
    """AHAP(omega, v, sigma) for each of `params` ((window, commitment, threshold)
    triples, validated as `AHAP` does), run together on one world by `run`, all with
    one `sigma_reading` (ahap.py).

    `search`: how problem (10) is solved, the same plans either way: "shared" (the
    default) by groups of windows, with the incumbents the policies' plans provide and the
    terminal table (shared_incumbents.py), "reference" by `window_kernels.solve` alone.
    `sweeps` counts the label DPs (`window_kernels.dp_layers`, one serving a group of
    windows) the pool's runs made, `worlds` the runs."""

    def __init__(self, params: Sequence[tuple[int, int, float]], sigma_reading: str = "ahead", search: str = "shared"):
        from algorithms.spot.ahap import AHAP  # the reference's validation and names

        if search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
        policies = [AHAP(w, v, s, sigma_reading=sigma_reading) for w, v, s in params]
        self.sigma_reading = sigma_reading
        self.search = search
        self.sweeps = 0
        self.worlds = 0
        self.names = [p.name for p in policies]
        self.windows = np.array([p.window for p in policies], dtype=np.int64)
        self.commitments = np.array([p.commitment for p in policies], dtype=np.int64)
        self.thresholds = np.array([p.threshold for p in policies], dtype=float)

    def __len__(self) -> int:
        return self.windows.size

    def run(self, job: FineTuneJob, market: SpotMarket, forecast) -> PoolResult:
        """What `simulate(job, market, AHAP(...), forecast)` returns for every policy, with
        the same checks (ValueError) and the same results bit for bit."""
        d = job.deadline
        if len(market) < d:
            raise ValueError(f"market has {len(market)} slots, the job's deadline needs {d}")
        if len(self) == 0:
            return PoolResult.empty(d)
        # AHAP.reset's checks, in the order the policies would meet them one by one
        if forecast is None:
            raise ValueError(f"{self.names[0]} needs forecasts: pass forecast= to simulate")
        horizon, rows = forecast.max_horizon, forecast.rows
        need = np.minimum(self.windows, d - 1)
        short = np.flatnonzero(horizon < need)
        if short.size and (rows >= d or short[0] == 0):
            q = int(short[0])
            raise ValueError(f"{self.names[q]}: the forecast's max_horizon is {horizon}, the window needs {need[q]}")
        if rows < d:
            raise ValueError(f"{self.names[0]}: the forecast has {rows} rows, the job's deadline needs {d}")
        # the forecast as WindowSolver.forecast_row reads it: floats, ints clipped at 0. All
        # arrays go to the compiled code as writable copies: Numba's code for read-only
        # arrays (the market's, the forecast's) ran this function about 1.5x slower.
        f_price = np.array(forecast.price, dtype=np.float64)
        f_avail = np.maximum(np.asarray(forecast.availability).astype(np.int64), 0)
        tables = _job_tables(job)
        p_o = float(market.on_demand_price)
        tail_rate = min(n * p_o / job.throughput(n) for n in range(job.n_min, job.n_max + 1))
        *accounts, error, sweeps = _run_pool(
            self.windows,
            self.commitments,
            self.thresholds,
            self.sigma_reading == "line",
            np.array(market.price[:d], dtype=np.float64),
            np.array(market.availability[:d], dtype=np.int64),
            f_price,
            f_avail,
            p_o,
            float(job.workload),
            int(d),
            int(job.n_min),
            int(job.n_max),
            float(job.alpha),
            float(job.beta),
            float(job.mu1),
            float(job.mu2),
            float(job.value),
            float(job.gamma),
            float(tail_rate),
            float(tables.work_max),
            tables.opts_np,
            np.array(tables.throughput, dtype=float),
            tables.work_t,
            tables.jf,
            tables.ji,
            tables.counts_np,
            tables.count_h_np,
            tables.count_first_np,
            tables.first_late_np,
            tables.tilde_first_np,
            self.search == "shared",
        )
        self.sweeps += int(sweeps)
        self.worlds += 1
        bad = np.flatnonzero(error)
        if bad.size:
            q = int(bad[0])
            if error[q] == NO_PLAN:
                raise ValueError("no plan: the DP found no candidate")
            raise PolicyError(f"{self.names[q]}: {SLOT_ERRORS[int(error[q])]}")
        return PoolResult.of(d, *accounts)
