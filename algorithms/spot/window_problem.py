"""Problem (10) of AHAP, solved exactly over one prediction window.

Paper 000_17f647b6e3bf630a.txt, Sec. IV-A, Alg. 1 line 13, problem (10): at slot
t choose n_tau^o, n_tau^s for the slots tau = t..t+omega of the window to maximise

    V~(Z_{t+omega}) - sum_tau (n_tau^o p^o + n_tau^s p_{tau|t}^s)

against the predicted spot prices p_{tau|t}^s and availabilities n_{tau|t}^avail,
subject to (5b)-(5e): n^s <= n^avail, and n = n^o + n^s in {0} U [N_min, N_max]
(0 is idle, SEED_NOTES `spot`). Progress follows eq. 2 / 5a, mu_tau relative to
the previous slot's total (the first relative to the real n_{t-1}). The window
is cut at the deadline d: slots after d are not decided here (Sec. III-E2 hands
them to the termination configuration).

Reduction to totals. For a total n the cheapest split is n^s = min(n^avail, n)
when the spot price is strictly below p^o, else all on-demand (`cheapest_split`);
progress depends only on the totals, so (10) is a problem over totals.

Terminal value. The paper writes V~(Z_{t+omega}) without saying what V~ means
for a window ending before d. SEED_NOTES asks for a documented choice under
which buying inside the window has value. This module uses the *on-demand
continuation value* (`continuation_value`): the best utility still obtainable
from the window's end e = t + omega by on-demand instances only, i.e. a constant
count m in [N_min, N_max] (chosen optimally; mu of eq. 2 for the switch from the
window's last total, 1 afterwards) in slots e+1..d, stopping when the job
completes (value v, Sec. III-C eq. 4, T <= d), followed, if still unfinished at
d, by the termination configuration of Sec. III-E2 (`FineTuneJob.tilde_value`,
eq. 9). When the window ends at d this is exactly V~ of eq. 9. If the job
completes inside the window, the accounting ends there: v - costs up to that
slot, the plan is 0 afterwards. The continuation value is non-decreasing in the
progress for a fixed last total (tested), so a state (progress, cost) with more
progress and less cost than another at the same (slot, previous total) is never
worse: the dynamic programme over (slot, previous total, progress) keeps only
non-dominated (progress, cost) labels and is exact.

Ties. Objectives within TIE_TOL * max(1, v) of the best count as equal. Among
them the winner has (1) the least window cost (cost up to the window's end, or up
to completion), i.e. purchases that the continuation can make just as well are
deferred; then (2) the most progress; then (3) the fewest instance-slots (sum of
the totals); then (4) the lexicographically smallest sequence of totals. To keep
this exact with pruning, a label is dropped only if another label at the same
(slot, previous total) has at least its progress and at most its cost, and
either more progress by a margin dz, less cost by a margin dc (both far above
float rounding, so the advantage survives any common suffix), or a smaller
(sum, sequence) key.

Pruning by bound: a label whose cost plus a lower bound on the cost of its
remaining work (a fractional relaxation, `_CostFloor`) already rules out the tie
set of a plan evaluated before (simple constant plans, or plans that finished)
is dropped. Tests compare the solver with brute-force enumeration.

Implementation (for speed, same results): a DP step expands every label by every
total at once into (total x label) arrays; the dominance test sorts each total's
candidates by (-progress, cost, tie key) and compares with running minima; the
chosen plan is rebuilt from parent pointers. Slot costs, cost floors and
continuation values are memoised per job (`_JobTables.memo`), since the AHAP
policies of one world solve many windows with the same slots and end states.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from market.finetune_job import FineTuneJob

TIE_TOL = 1e-9
_MEMO_LIMIT = 50_000  # entries of `_JobTables.memo` (slot costs, cost floors, continuation values)
_MEMO_BATCH = 32  # more final labels than this skip the memo (one numpy call)
_SCALAR_BATCH = 4  # up to this many continuation values in Python, more with numpy


def cheapest_split(n: int, price: float, availability: int, on_demand_price: float) -> tuple[int, int]:
    """(n_on_demand, n_spot) of least cost for a total of n instances in one slot.

    Spot is used only when strictly cheaper than on-demand (at equal prices the
    split is all on-demand), and then as much as is available: min(avail, n).
    """
    if price < on_demand_price:
        spot = min(int(availability), n)
        return n - spot, spot
    return n, 0


def slot_cost(n_on_demand: int, n_spot: int, price: float, on_demand_price: float) -> float:
    """One slot of eq. 3: n^o p^o + n^s p^s."""
    return n_on_demand * on_demand_price + n_spot * price


def window_length(job: FineTuneJob, t: int, window: int) -> int:
    """Slots t..min(t + window, d) decided at slot t (1-based): the window never passes d."""
    return min(window, job.deadline - t) + 1


def _tilde_values(job: FineTuneJob, progress: np.ndarray, n_last: np.ndarray,
                  on_demand_price: float) -> np.ndarray:
    """`FineTuneJob.tilde_value` (eq. 9) elementwise, with the same float operations."""
    tol = job.tolerance()
    h = job.throughput(job.n_max)
    remaining = job.workload - progress
    mu = np.where(job.n_max > n_last, job.mu1, np.where(job.n_max < n_last, job.mu2, 1.0))
    first = mu * h
    over = remaining > first + tol
    extra = np.ones(progress.shape, dtype=np.int64)
    steps = np.ceil((remaining[over] - first[over] - tol) / h)
    extra[over] += steps.astype(np.int64)
    cost = extra * job.n_max * on_demand_price
    d = job.deadline
    late = extra.astype(float)
    value = np.where(
        d + extra < job.gamma * d,
        job.value * (1.0 - late / ((job.gamma - 1.0) * d)),
        0.0,
    )
    complete = progress >= job.workload - tol
    return np.where(complete, job.value, value - cost)


def continuation_values(job: FineTuneJob, progress, n_last, slots_left: int,
                        on_demand_price: float) -> np.ndarray:
    """On-demand continuation value (the terminal value of (10)), elementwise.

    From progress Z after a slot with n_last instances and `slots_left` slots
    before d: max over m in [N_min, N_max] of running m on-demand instances per
    slot (mu of eq. 2 for the first switch from n_last, 1 afterwards) until the
    job completes (utility v - cost) or d is reached, then the termination
    configuration of Sec. III-E2 (V~ of eq. 9 minus the on-demand cost before d).
    With slots_left = 0 it is `FineTuneJob.tilde_value`. A complete job gets v.
    """
    z = np.asarray(progress, dtype=float)
    last = np.asarray(n_last, dtype=np.int64)
    z, last = np.broadcast_arrays(z, last)
    if slots_left <= 0:
        return _tilde_values(job, z, last, on_demand_price)
    tol = job.tolerance()
    m = np.arange(job.n_min, job.n_max + 1)
    h = np.array([job.throughput(int(n)) for n in m])
    zc, lastc = z[..., None], last[..., None]
    mu = np.where(m > lastc, job.mu1, np.where(m < lastc, job.mu2, 1.0))
    first = mu * h
    remaining = job.workload - zc
    over = np.broadcast_to(remaining, first.shape) > first + tol
    slots = np.ones(first.shape, dtype=np.int64)
    slots[over] += np.ceil(((remaining - first)[over] - tol) / np.broadcast_to(h, first.shape)[over]).astype(np.int64)
    finishes = slots <= slots_left
    value = job.value - slots * m * on_demand_price
    if not finishes.all():
        at_deadline = zc + first + (slots_left - 1) * h
        late = _tilde_values(job, at_deadline, np.broadcast_to(m, first.shape), on_demand_price)
        value = np.where(finishes, value, late - slots_left * m * on_demand_price)
    return np.where(z >= job.workload - tol, job.value, value.max(axis=-1))


def continuation_value(job: FineTuneJob, progress: float, n_last: int, slots_left: int,
                       on_demand_price: float) -> float:
    """Scalar `continuation_values`."""
    return float(continuation_values(job, [progress], [n_last], slots_left, on_demand_price)[0])


@dataclass(frozen=True)
class WindowPlan:
    """Solution of (10): per-slot counts for slots t..t+len-1 and the objective."""

    on_demand: tuple[int, ...]
    spot: tuple[int, ...]
    objective: float

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(o + s for o, s in zip(self.on_demand, self.spot))


@dataclass(frozen=True)
class _JobTables:
    """Per-job constants of the DP: totals {0} U [N_min, N_max], their H(n), work[p][i] =
    mu H(opts[i]) after p instances (eq. 2, 5a), and for the continuation the counts
    m in [N_min, N_max] with H(m) and the first slot's work after each n_last.
    `memo` keeps what solves of the same job share: per-slot costs and envelopes,
    cost floors and continuation values (cleared beyond _MEMO_LIMIT entries)."""

    opts: tuple[int, ...]
    throughput: tuple[float, ...]
    work: tuple[tuple[float, ...], ...]
    work_max: float
    counts: tuple[int, ...]
    count_throughput: tuple[float, ...]
    count_first: tuple[tuple[float, ...], ...]
    first_late: tuple[float, ...]
    tol: float
    h_max: float
    late_scale: float
    work_t: np.ndarray
    opts_np: np.ndarray
    memo: dict = field(default_factory=dict, compare=False, repr=False)


@functools.lru_cache(maxsize=8)
def _job_tables(job: FineTuneJob) -> _JobTables:
    opts = (0, *range(job.n_min, job.n_max + 1))
    work = tuple(tuple(job.slot_work(n, p) for n in opts) for p in range(job.n_max + 1))
    counts = tuple(range(job.n_min, job.n_max + 1))
    h = tuple(job.throughput(m) for m in counts)
    # the first continuation slot: mu of eq. 2 from n_last, times H(m), as continuation_values
    first = tuple(
        tuple((job.mu1 if m > last else job.mu2 if m < last else 1.0) * hm for m, hm in zip(counts, h))
        for last in range(job.n_max + 1)
    )
    h_max = job.throughput(job.n_max)
    # the termination's first slot after m instances at d (Sec. III-E2, as _tilde_values)
    first_late = tuple((job.mu1 if job.n_max > m else job.mu2 if job.n_max < m else 1.0) * h_max
                       for m in counts)
    return _JobTables(opts, tuple(job.throughput(n) for n in opts), work,
                      max(max(row) for row in work), counts, h, first, first_late,
                      job.tolerance(), h_max, (job.gamma - 1.0) * job.deadline,
                      np.array(work).T.copy(), np.array(opts))


def _tilde_value(job: FineTuneJob, progress: float, n_last: int, on_demand_price: float) -> float:
    """Scalar `_tilde_values`, with the same float operations (bit for bit)."""
    tol = job.tolerance()
    if progress >= job.workload - tol:
        return job.value
    h = job.throughput(job.n_max)
    remaining = job.workload - progress
    first = (job.mu1 if job.n_max > n_last else job.mu2 if job.n_max < n_last else 1.0) * h
    extra = 1
    if remaining > first + tol:
        extra += math.ceil((remaining - first - tol) / h)
    cost = extra * job.n_max * on_demand_price
    d = job.deadline
    if d + extra < job.gamma * d:
        value = job.value * (1.0 - float(extra) / ((job.gamma - 1.0) * d))
    else:
        value = 0.0
    return value - cost


def _continuation(job: FineTuneJob, tables: _JobTables, progress: float, n_last: int,
                  slots_left: int, on_demand_price: float) -> float:
    """Scalar `continuation_values`, with the same float operations (bit for bit):
    the loop over m and `_tilde_value` inlined."""
    workload, value, tol = job.workload, job.value, tables.tol
    if progress >= workload - tol:
        return value
    if slots_left <= 0:
        return _tilde_value(job, progress, n_last, on_demand_price)
    remaining = workload - progress
    n_max, h_max, deadline, late_scale = job.n_max, tables.h_max, job.deadline, tables.late_scale
    hard = job.gamma * deadline
    best = -math.inf
    for m, h, first, first_late in zip(tables.counts, tables.count_throughput,
                                       tables.count_first[n_last], tables.first_late):
        if remaining > first + tol:
            slots = 1 + math.ceil((remaining - first - tol) / h)
            if slots <= slots_left:
                v = value - slots * m * on_demand_price
            else:
                # not done by d: tilde value (eq. 9) of the progress at d after m from n_last
                at_deadline = progress + first + (slots_left - 1) * h
                if at_deadline >= workload - tol:
                    v = value - slots_left * m * on_demand_price
                else:
                    left = workload - at_deadline
                    extra = 1
                    if left > first_late + tol:
                        extra += math.ceil((left - first_late - tol) / h_max)
                    late = value * (1.0 - float(extra) / late_scale) if deadline + extra < hard else 0.0
                    v = late - extra * n_max * on_demand_price - slots_left * m * on_demand_price
        else:
            v = value - m * on_demand_price
        if v > best:
            best = v
    return best


def _envelope(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Segments (slope, length) of the lower convex hull of points from (0, 0), by work."""
    best: dict[float, float] = {}
    for x, y in points:
        if x > 0 and y < best.get(x, math.inf):
            best[x] = y
    hull = [(0.0, 0.0)]
    for x, y in sorted(best.items()):
        while len(hull) >= 2:
            (x0, y0), (x1, y1) = hull[-2], hull[-1]
            if (y1 - y0) * (x - x0) >= (y - y0) * (x1 - x0):
                hull.pop()
            else:
                break
        hull.append((x, y))
    return [((y1 - y0) / (x1 - x0), x1 - x0) for (x0, y0), (x1, y1) in zip(hull, hull[1:])]


class _CostFloor:
    """Lower bound on the cost of `work` more progress, for the bound pruning of the DP.

    Relaxation: in window slot j, doing x <= H(N_max) work costs at least the lower
    convex envelope of (H(n), cost_j(n)); after the window every unit costs at
    least min_n n p^o / H(n) (on-demand, termination included); mu <= 1 only
    lowers the work, lateness only lowers the value.
    """

    def __init__(self, segments: list[tuple[float, float]], tail_rate: float):
        cheap = sorted(seg for seg in segments if seg[0] < tail_rate)
        self.work = np.concatenate([[0.0], np.cumsum([length for _, length in cheap])])
        self.cost = np.concatenate([[0.0], np.cumsum([slope * length for slope, length in cheap])])
        self.tail_rate = tail_rate

    def __call__(self, work: np.ndarray) -> np.ndarray:
        work = np.maximum(work, 0.0)
        inside = np.interp(work, self.work, self.cost)
        beyond = self.cost[-1] + (work - self.work[-1]) * self.tail_rate
        return np.where(work <= self.work[-1], inside, beyond)


def _undominated(valid: np.ndarray, z: np.ndarray, c: np.ndarray, key: np.ndarray,
                 dz: float, dc: float) -> np.ndarray:
    """Candidates to keep, as a (total x label) mask like the inputs; a row is a group
    (same new total, hence the same previous total at the next slot).

    Candidate i is dropped when another valid candidate j of its row has z_j >= z_i and
    c_j <= c_i and either z_j > z_i + dz, c_j < c_i - dc, or key_j < key_i (the tie
    key: fewer instance-slots, then the lexicographically smaller sequence). The
    margins dz, dc are far above float rounding, so a strict advantage in progress or
    cost survives any common suffix; below them the tie key decides.

    Sorted by (-z, c, key) within a row, only earlier candidates can dominate a later
    one (a later one has less progress, or equal progress and more cost or equal cost
    and a larger key). With P_i the least cost before i: P_i < c_i - dc drops i,
    P_i > c_i keeps it, and the rare case in between is checked directly.
    """
    used = valid.any(axis=0)
    if not used.all():  # labels none of whose expansions is valid: leave them out
        used = np.flatnonzero(used)
        keep = np.zeros(valid.shape, dtype=bool)
        keep[:, used] = _undominated(valid[:, used], z[:, used], c[:, used], key[:, used], dz, dc)
        return keep
    zt = np.where(valid, z, -np.inf)
    ct = np.where(valid, c, np.inf)
    order = np.lexsort((key, ct, -zt))
    row_of = np.arange(order.shape[0])[:, None]
    zs = zt[row_of, order]
    cs = ct[row_of, order]
    before = np.empty_like(cs)
    before[:, 0] = np.inf
    np.minimum.accumulate(cs[:, :-1], axis=1, out=before[:, 1:])
    drop = before < cs - dc
    unsure = ~drop & (before <= cs) & (cs < np.inf)
    if unsure.any():
        # q_i = how many candidates of the row have z_j > z_i + dz (a prefix of the row):
        # one merged sort of the values -z_j and the queries -(z_i + dz) per row, the
        # queries first among equal values (searchsorted, side="left").
        width = zs.shape[1]
        values = np.concatenate([-(zs + dz), -zs], axis=1)
        is_data = np.zeros(values.shape, dtype=np.int8)
        is_data[:, width:] = 1
        merged = np.lexsort((is_data, values))
        q = np.empty(values.shape, dtype=np.int64)
        q[row_of, merged] = np.cumsum(is_data[row_of, merged], axis=1)
        q = q[:, :width]  # queries are not data: the count is of data strictly before
        strong_z = before[row_of, q] <= cs  # before[q] = min cost of the prefix
        drop |= unsure & strong_z
        # left: an earlier candidate within dz of z_i costs at most c_i; it dominates
        # only with a smaller tie key (the previous candidate first, then all of them)
        near = unsure & ~strong_z & (q < np.arange(width))
        if near.any():
            ks = key[row_of, order]
            prev_ok = np.zeros(near.shape, dtype=bool)
            prev_ok[:, 1:] = (cs[:, :-1] <= cs[:, 1:]) & (ks[:, :-1] < ks[:, 1:])
            drop |= near & prev_ok
            for row, pos in zip(*(a.tolist() for a in np.nonzero(near & ~prev_ok))):
                lo = int(q[row, pos])
                ci, ki = cs[row, pos], ks[row, pos]
                if np.any((cs[row, lo:pos] <= ci) & (ks[row, lo:pos] < ki)):
                    drop[row, pos] = True
    keep = np.empty(drop.shape, dtype=bool)
    keep[row_of, order] = ~drop
    return keep & valid


def _slot_data(tables: _JobTables, memo: dict, price: float, availability: int,
               on_demand_price: float) -> tuple[list[float], list[tuple[float, float]]]:
    """`slot_cost` of `cheapest_split` for every total (the float operations of
    `_slot_costs`) and the lower convex envelope of (H(n), cost(n)), memoised per job."""
    key = ("slot", price, availability, on_demand_price)
    got = memo.get(key)
    if got is None:
        cheap_spot = price < on_demand_price
        costs = []
        for n in tables.opts:
            spot = min(n, availability) if cheap_spot else 0
            costs.append((n - spot) * on_demand_price + spot * price)
        got = memo[key] = (costs, _envelope(list(zip(tables.throughput, costs))))
    return got


def _cost_floor(tables: _JobTables, memo: dict, job: FineTuneJob, later: list, later_key: tuple,
                on_demand_price: float) -> "_CostFloor":
    """The `_CostFloor` of the window slots `later` (their `_slot_data`), memoised per job."""
    key = ("floor", later_key, on_demand_price)
    got = memo.get(key)
    if got is None:
        tail_rate = min(n * on_demand_price / job.throughput(n) for n in range(job.n_min, job.n_max + 1))
        got = memo[key] = _CostFloor([seg for _, segments in later for seg in segments], tail_rate)
    return got


def solve_window(job: FineTuneJob, t: int, progress: float, n_prev: int,
                 prices: Sequence[float], availabilities: Sequence[int],
                 on_demand_price: float) -> WindowPlan:
    """Solve problem (10) exactly at slot t (1-based) by dynamic programming.

    `prices[k]`, `availabilities[k]` are the predictions for slot t + k; entries
    for slots after d are ignored. `progress` is Z_{t-1}, `n_prev` is n_{t-1}.
    Returns the plan chosen by the module's tie rule and its objective.
    """
    d = job.deadline
    if not 1 <= t <= d:
        raise ValueError(f"slot t = {t} is outside 1..{d}")
    if not 0 <= n_prev <= job.n_max:
        raise ValueError(f"n_prev = {n_prev} is outside 0..{job.n_max}")
    length = min(len(prices), d - t + 1)
    if length < 1 or len(availabilities) < length:
        raise ValueError(
            f"window needs prices and availabilities for at least 1 slot, got "
            f"{len(prices)} and {len(availabilities)}"
        )
    price = [float(p) for p in prices[:length]]
    avail = [int(a) for a in availabilities[:length]]
    if job.is_complete(progress):
        return WindowPlan((0,) * length, (0,) * length, job.value)

    progress = float(progress)
    n_prev = int(n_prev)
    p_o = float(on_demand_price)
    value = job.value
    tie = TIE_TOL * max(1.0, value)
    done_at = job.workload - job.tolerance()
    slots_after = d - (t + length - 1)
    tables = _job_tables(job)
    opts, work = tables.opts, tables.work
    n_opts = len(opts)
    memo = tables.memo
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    slots = [_slot_data(tables, memo, price[k], avail[k], p_o) for k in range(length)]
    costs = [costs_k for costs_k, _ in slots]
    dz = 1e-12 * (job.workload + tables.work_max * length + 1.0)
    dc = 1e-12 * (max(max(row) for row in costs) * length + 1.0)
    floors = [_cost_floor(tables, memo, job, slots[k + 1:], tuple(zip(price[k + 1:], avail[k + 1:])), p_o)
              for k in range(length)]

    def terminal(states: list[tuple[float, int]]) -> list[float]:
        """Continuation values of (progress, last total) states, memoised per job."""
        missing = list({key for key in states if (key[0], key[1], slots_after, p_o) not in memo})
        if len(missing) > _SCALAR_BATCH:
            values = continuation_values(job, [z for z, _ in missing], [n for _, n in missing],
                                         slots_after, p_o).tolist()
        else:
            values = [_continuation(job, tables, z, n, slots_after, p_o) for z, n in missing]
        for (z, n), v in zip(missing, values):
            memo[z, n, slots_after, p_o] = v
        return [memo[z, n, slots_after, p_o] for z, n in states]

    # Lower bound on the optimum from simple plans, evaluated with the DP's arithmetic:
    # a constant total i, and the same with all usable spot where spot is cheaper.
    usable = [bisect.bisect_right(opts, min(a, job.n_max)) - 1 for a in avail]
    heuristic = {(i,) * length for i in range(n_opts)}
    heuristic.update(
        tuple(max(i, usable[k]) if price[k] < p_o else i for k in range(length))
        for i in range(1, n_opts)
    )
    best = -math.inf
    open_rows = []
    for row in heuristic:
        z, c, last = progress, 0.0, n_prev
        for k, i in enumerate(row):
            z = z + work[last][i]
            c = c + costs[k][i]
            last = opts[i]
            if z >= done_at:
                best = max(best, value - c)
                break
        else:
            open_rows.append((z, last, c))
    if open_rows:
        ends = terminal([(z, last) for z, last, _ in open_rows])
        best = max(best, max(v - c for v, (_, _, c) in zip(ends, open_rows)))

    # Labels of the DP as arrays: previous total, progress, cost, sum of totals, and the
    # rank of the sequence of totals among the labels (lexicographic order). A step
    # expands every label by every total at once into (total x label) matrices.
    # parents[k][j], choices[k][j]: label j after slot k came from label parents[k][j]
    # of the slot before with the total opts[choices[k][j]].
    work_t, costs_np, opts_np = tables.work_t, np.array(costs), tables.opts_np
    prev = np.array([n_prev])
    z = np.array([progress])
    c = np.array([0.0])
    s = np.zeros(1, dtype=np.int64)
    rank = np.zeros(1, dtype=np.int64)
    choice = np.arange(n_opts, dtype=np.int64)[:, None]
    parents: list[np.ndarray] = []
    choices: list[np.ndarray] = []
    out: list[tuple] = []  # (objective, cost, progress, sum, slot k, index, total index) arrays
    for k in range(length):
        z2 = z + work_t[:, prev]
        c2 = c + costs_np[k][:, None]
        s2 = s + opts_np[:, None]
        done = z2 >= done_at
        if done.any():
            obj = value - c2[done]
            best = max(best, float(obj.max()))
            # a plan below best - tie is never in the final tie set (the best only grows)
            near = obj >= best - tie
            cols, rows = np.nonzero(done)
            out.append((obj[near], c2[done][near], z2[done][near], s2[done][near], k, rows[near], cols[near]))
        bound = value - c2 - floors[k](done_at - z2)
        valid = (bound >= best - 2 * tie) & ~done
        if not valid.any():
            break
        # tie key: fewer instance-slots, then the lexicographically smaller sequence
        order2 = rank * n_opts + choice
        key = s2 * (rank.size * n_opts) + order2
        keep = _undominated(valid, z2, c2, key, dz, dc)
        cols, rows = np.nonzero(keep)
        parents.append(rows)
        choices.append(cols)
        prev, z, c, s = opts_np[cols], z2[cols, rows], c2[cols, rows], s2[cols, rows]
        survivors = order2[cols, rows]
        rank = np.empty_like(survivors)
        rank[np.argsort(survivors)] = np.arange(survivors.size)
    else:
        if z.size > _MEMO_BATCH:
            obj = continuation_values(job, z, prev, slots_after, p_o) - c
        else:
            obj = np.array(terminal(list(zip(z.tolist(), prev.tolist())))) - c
        out.append((obj, c, z, s, length - 1, np.arange(z.size), None))

    def totals(k: int, index: int, total: int | None) -> tuple[int, ...]:
        """The padded sequence of totals of label `index` after slot k (with `total`
        chosen in slot k when the label finished there)."""
        seq = [0] * length
        if total is not None:
            seq[k] = opts[total]
            k -= 1
        for j in range(k, -1, -1):
            seq[j] = opts[int(choices[j][index])]
            index = int(parents[j][index])
        return tuple(seq)

    top = max(float(part[0].max()) for part in out if part[0].size)
    tied = []
    for obj, cost, prog, total, k, index, col in out:
        for i in np.flatnonzero(obj >= top - tie).tolist():
            tied.append((float(cost[i]), -float(prog[i]), int(total[i]),
                         totals(k, int(index[i]), None if col is None else int(col[i])), float(obj[i])))
    pick = min(tied)
    on_demand, spot = [], []
    for k, n in enumerate(pick[3]):
        o, sp = cheapest_split(n, price[k], avail[k], p_o)
        on_demand.append(o)
        spot.append(sp)
    return WindowPlan(tuple(on_demand), tuple(spot), pick[4])


class WindowSolver:
    """`solve_window` with a memo, shared by AHAP policies that see one world.

    The key is (job, t, n_prev, progress rounded to 1e-9, the window's prices and
    availabilities up to d, p^o); the problem is solved at the rounded progress so
    that a cached answer does not depend on which policy asked first. When the
    memo holds `maxsize` entries the least recently used one is dropped.
    """

    def __init__(self, maxsize: int = 100_000):
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize!r}")
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._memo: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self._memo)

    def solve(self, job: FineTuneJob, t: int, progress: float, n_prev: int,
              prices: Sequence[float], availabilities: Sequence[int],
              on_demand_price: float) -> WindowPlan:
        length = min(len(prices), job.deadline - t + 1)
        z = round(float(progress), 9)
        key = (job, t, int(n_prev), z,
               tuple(float(p) for p in prices[:length]),
               tuple(int(a) for a in availabilities[:length]),
               float(on_demand_price))
        plan = self._memo.get(key)
        if plan is not None:
            self.hits += 1
            self._memo.move_to_end(key)
            return plan
        self.misses += 1
        plan = solve_window(job, t, z, n_prev, prices, availabilities, on_demand_price)
        self._memo[key] = plan
        if len(self._memo) > self.maxsize:
            self._memo.popitem(last=False)
        return plan
