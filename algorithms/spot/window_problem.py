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
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from market.finetune_job import FineTuneJob

TIE_TOL = 1e-9


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


@functools.lru_cache(maxsize=256)
def _job_tables(job: FineTuneJob) -> tuple[np.ndarray, list[float], np.ndarray]:
    """Totals {0} U [N_min, N_max], their H(n), and work[p, i] = mu H(n_i) after p (eq. 2, 5a)."""
    opts = np.array([0, *range(job.n_min, job.n_max + 1)], dtype=np.int64)
    work = np.array([[job.slot_work(int(n), p) for n in opts] for p in range(job.n_max + 1)])
    opts.setflags(write=False)
    work.setflags(write=False)
    return opts, [job.throughput(int(n)) for n in opts], work


def _slot_costs(opts: np.ndarray, price: float, availability: int, on_demand_price: float) -> np.ndarray:
    """`slot_cost` of `cheapest_split` for every total in opts, same float operations."""
    spot = np.minimum(opts, availability) if price < on_demand_price else np.zeros_like(opts)
    return (opts - spot) * on_demand_price + spot * price


def _segmented_prefix_min(values: np.ndarray, segment: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Running minimum of `values` within consecutive segments (inclusive of the element)."""
    table = np.full((int(segment[-1]) + 1, int(position.max()) + 1), np.inf)
    table[segment, position] = values
    return np.minimum.accumulate(table, axis=1)[segment, position]


def _undominated(group: np.ndarray, z: np.ndarray, c: np.ndarray, rank: np.ndarray,
                 dz: float, dc: float) -> np.ndarray:
    """Labels to keep: i is dropped when a label j of the same group (previous total) has
    z_j >= z_i and c_j <= c_i and either z_j > z_i + dz, c_j < c_i - dc, or rank_j < rank_i.

    The margins dz, dc are far above float rounding, so a strict advantage in progress
    or cost survives any common suffix; below them the tie key `rank` decides.
    The relation is transitive, so checking against all labels equals checking
    against the survivors.
    """
    n = z.size
    order = np.lexsort((rank, c, -z, group))
    g, zs, cs, rs = group[order], z[order], c[order], rank[order].astype(float)
    first = np.r_[True, g[1:] != g[:-1]]
    seg = np.cumsum(first) - 1
    seg_start = np.flatnonzero(first)[seg]
    idx = np.arange(n)
    pm = _segmented_prefix_min(cs, seg, idx - seg_start)

    run_first = first | np.r_[True, zs[1:] != zs[:-1]]
    run = np.cumsum(run_first) - 1
    run_starts = np.flatnonzero(run_first)
    run_start = run_starts[run]
    run_end = np.r_[run_starts[1:], n][run] - 1
    strong_c = pm[run_end] < cs - dc

    span = float(zs.max() - zs.min()) + 4.0 * dz + 1.0
    key = seg * span - zs
    q = np.searchsorted(key, key - dz, side="left") - 1
    has_q = q >= seg_start
    strong_z = has_q & (pm[np.maximum(q, 0)] <= cs)

    # Equal progress: sorted by cost then rank, so an earlier label of the run with a
    # smaller rank dominates. Running minimum per run: offsets decreasing by run keep
    # earlier runs out of it (ranks are integers below n, so this is exact).
    shifted = rs - run * float(n + 1)
    rank_before = np.minimum.accumulate(shifted) + run * float(n + 1)
    rank_before = np.r_[np.inf, rank_before[:-1]]
    rank_before[run_first] = np.inf
    drop = strong_c | strong_z | (rank_before < rs)

    # Progress larger by less than dz (float noise): compare directly.
    lo = np.maximum(q + 1, seg_start)
    for i in np.flatnonzero(~drop & (lo < run_start)):
        j = slice(lo[i], run_start[i])
        if np.any((cs[j] <= cs[i]) & (rs[j] < rs[i])):
            drop[i] = True
    keep = np.empty(n, dtype=bool)
    keep[order] = ~drop
    return keep


def _envelope(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Segments (slope, length) of the lower convex hull of points from (0, 0), by work."""
    best: dict[float, float] = {}
    for x, y in points:
        if x > 0 and y < best.get(x, np.inf):
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


def _select(obj: np.ndarray, cost: np.ndarray, progress: np.ndarray, total: np.ndarray,
            plans: np.ndarray, tie: float) -> int:
    """Index of the winner: objective within `tie` of the best, then the least cost,
    then the most progress, then the fewest instance-slots, then the
    lexicographically smallest sequence of totals."""
    tied = np.flatnonzero(obj >= obj.max() - tie)
    cols = tuple(plans[tied, j] for j in range(plans.shape[1] - 1, -1, -1))
    return int(tied[np.lexsort(cols + (total[tied], -progress[tied], cost[tied]))[0]])


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

    p_o = float(on_demand_price)
    value = job.value
    tie = TIE_TOL * max(1.0, value)
    done_at = job.workload - job.tolerance()
    slots_after = d - (t + length - 1)
    opts, throughput, work = _job_tables(job)
    n_opts = opts.size
    costs = np.array([_slot_costs(opts, price[k], avail[k], p_o) for k in range(length)])
    dz = 1e-12 * (job.workload + float(work.max()) * length + 1.0)
    dc = 1e-12 * (float(costs.max()) * length + 1.0)

    tail_rate = min(n * p_o / job.throughput(n) for n in range(job.n_min, job.n_max + 1))
    slot_segments = [_envelope(list(zip(throughput, costs[k].tolist()))) for k in range(length)]
    floors = [_CostFloor([seg for j in range(k + 1, length) for seg in slot_segments[j]], tail_rate)
              for k in range(length)]

    # Lower bound on the optimum from simple plans, evaluated with the DP's arithmetic:
    # a constant total i, and the same with all usable spot where spot is cheaper.
    usable = np.searchsorted(opts, np.minimum(avail, job.n_max), side="right") - 1
    cheaper = np.array(price) < p_o
    constant = np.arange(n_opts)[:, None]
    heuristic = np.concatenate([
        np.broadcast_to(constant, (n_opts, length)),
        np.where(cheaper, np.maximum(constant, usable), constant)[1:],
    ])
    best = float(_evaluate(job, work, costs, opts, heuristic, progress, n_prev,
                           slots_after, p_o).max())

    prev = np.array([n_prev], dtype=np.int64)
    z = np.array([float(progress)])
    c = np.array([0.0])
    s = np.zeros(1, dtype=np.int64)
    lex = np.zeros(1, dtype=np.int64)
    plans = np.zeros((1, 0), dtype=np.int64)
    out: list[tuple] = []

    for k in range(length):
        src = np.repeat(np.arange(prev.size), n_opts)
        choice = np.tile(np.arange(n_opts), prev.size)
        n2 = opts[choice]
        z2 = z[src] + work[prev[src], choice]
        c2 = c[src] + costs[k, choice]
        s2 = s[src] + n2
        lex2 = lex[src] * n_opts + choice
        plans2 = np.concatenate([plans[src], n2[:, None]], axis=1)

        done = z2 >= done_at
        if done.any():
            obj = value - c2[done]
            best = max(best, float(obj.max()))
            padded = np.zeros((int(done.sum()), length), dtype=np.int64)
            padded[:, : k + 1] = plans2[done]
            out.append((obj, c2[done], z2[done], s2[done], padded))
        live = ~done
        live[live] = value - c2[live] - floors[k](done_at - z2[live]) >= best - 2 * tie
        n2, z2, c2, s2, lex2, plans2 = n2[live], z2[live], c2[live], s2[live], lex2[live], plans2[live]
        if n2.size == 0:
            z = z2
            break
        order = np.argsort(lex2, kind="stable")
        lex2 = np.empty_like(lex2)
        lex2[order] = np.arange(order.size)
        key_order = np.lexsort((lex2, s2))
        rank = np.empty_like(lex2)
        rank[key_order] = np.arange(key_order.size)
        keep = _undominated(n2, z2, c2, rank, dz, dc)
        prev, z, c, s, plans = n2[keep], z2[keep], c2[keep], s2[keep], plans2[keep]
        lex = np.argsort(np.argsort(lex2[keep], kind="stable"), kind="stable")

    if z.size and plans.shape[1] == length:
        obj = continuation_values(job, z, prev, slots_after, p_o) - c
        out.append((obj, c, z, s, plans))
    obj, cost, prog, total, rows = (np.concatenate(part) for part in zip(*out))
    pick = _select(obj, cost, prog, total, rows, tie)
    on_demand, spot = [], []
    for k, n in enumerate(rows[pick].tolist()):
        o, sp = cheapest_split(n, price[k], avail[k], p_o)
        on_demand.append(o)
        spot.append(sp)
    return WindowPlan(tuple(on_demand), tuple(spot), float(obj[pick]))


def _evaluate(job: FineTuneJob, work: np.ndarray, costs: np.ndarray, opts: np.ndarray,
              choices: np.ndarray, progress: float, n_prev: int, slots_after: int,
              p_o: float) -> np.ndarray:
    """Objectives of plans given as rows of indices into `opts`, with the DP's arithmetic."""
    rows = choices.shape[0]
    z = np.full(rows, float(progress))
    c = np.zeros(rows)
    prev = np.full(rows, n_prev, dtype=np.int64)
    obj = np.full(rows, np.nan)
    running = np.ones(rows, dtype=bool)
    done_at = job.workload - job.tolerance()
    for k in range(choices.shape[1]):
        ch = choices[:, k]
        z = np.where(running, z + work[prev, ch], z)
        c = np.where(running, c + costs[k, ch], c)
        prev = np.where(running, opts[ch], prev)
        finished = running & (z >= done_at)
        obj[finished] = job.value - c[finished]
        running &= ~finished
    if running.any():
        obj[running] = continuation_values(job, z[running], prev[running], slots_after, p_o) - c[running]
    return obj


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
