"""Problem (10) of AHAP, solved exactly over one prediction window.

Paper paper 000, Sec. IV-A, Alg. 1 line 13, problem (10): at slot
t choose n_tau^o, n_tau^s for the slots tau = t..t+omega of the window to maximise

    V~(Z_{t+omega}) - sum_tau (n_tau^o p^o + n_tau^s p_{tau|t}^s)

against the predicted spot prices p_{tau|t}^s and availabilities n_{tau|t}^avail,
subject to (5b)-(5e): n^s <= n^avail, and n = n^o + n^s in {0} U [N_min, N_max]
(0 is idle, reading notes `spot`). Progress follows eq. 2 / 5a, mu_tau relative to
the previous slot's total (the first relative to the real n_{t-1}). The window
is cut at the deadline d: slots after d are not decided here (Sec. III-E2 hands
them to the termination configuration).

Reduction to totals. For a total n the cheapest split is n^s = min(n^avail, n)
when the spot price is strictly below p^o, else all on-demand (`cheapest_split`);
progress depends only on the totals, so (10) is a problem over totals.

Terminal value. The paper writes V~(Z_{t+omega}) without saying what V~ means
for a window ending before d. The reading notes ask for a documented choice under
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

Reading of sigma. Alg. 1 uses sigma only in the "ahead" branch (lines 6-11), and
with the terminal value above the window already buys every spot slot cheaper than
on-demand, so sigma changed nothing in the "behind" branch. Sec. IV-A says more: "as
long as the job has not reached its deadline, all spot instances priced below sigma
are utilized", and the behind branch "compensate[s] for the shortfall within the
prediction window". The `line` reading (AHAP's `sigma_reading="line"`) takes both
sentences literally: (a) in every window slot with predicted price <= sigma p^o and
availability >= N_min, all of that spot is used (the total is at least
min(avail, N_max), spot first: `window_kernels.spot_floor`); (b) the terminal value is
the continuation value of min(Z_{t+omega}, Z^exp) with Z^exp = L (t + omega) / d the
uniform-progress line at the window's end (eq. 6; no cap when the window ends at d,
where it is V~ of eq. 9): the window buys what catching up with the line needs at
least cost, and progress beyond the line comes only from spot under sigma p^o. Both
keep the DP exact (the capped terminal value is still non-decreasing in progress; a
forced slot's other totals cost inf, which the pruning drops), and the default
arguments give the earlier reading bit for bit.

Pruning by bound: a label whose cost plus a lower bound on the cost of its
remaining work (a fractional relaxation, `_CostFloor`) already rules out the tie
set of a plan evaluated before (simple constant plans, or plans that finished)
is dropped. Tests compare the solver with brute-force enumeration.

Implementation (for speed, same results): everything after the set-up runs as
compiled code (Numba, algorithms/spot/window_kernels.py, `solve`): the bound from
the simple plans, the DP steps, the continuation values at the window's end and
the tie rule. A DP step expands every label by every total into (total x label)
arrays; the dominance test sorts each total's candidates by (-progress, cost, tie
key) and compares with running minima; the chosen plan is rebuilt from parent
pointers. The float operations are those of the NumPy version it replaced (commit
029d32f), in the same order, so plans and objectives are the same bit for bit.
Slot costs, cost floors and the window's packed arrays are memoised per job
(`_JobTables.memo`), since the AHAP policies of one world solve many windows with
the same slots. `continuation_values` is the NumPy reference of the compiled
continuation value (tests check they agree bit for bit).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from algorithms.spot.window_kernels import continuation, solve, spot_floor
from market.spot.finetune_job import FineTuneJob

TIE_TOL = 1e-9
_MEMO_LIMIT = 50_000  # entries of `_JobTables.memo` (slot costs, cost floors, packed window arrays)


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


def _tilde_values(job: FineTuneJob, progress: np.ndarray, n_last: np.ndarray, on_demand_price: float) -> np.ndarray:
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


def continuation_values(job: FineTuneJob, progress, n_last, slots_left: int, on_demand_price: float) -> np.ndarray:
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


def continuation_value(
    job: FineTuneJob, progress: float, n_last: int, slots_left: int, on_demand_price: float
) -> float:
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
    cost floors and the packed window arrays (cleared beyond _MEMO_LIMIT entries)."""

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
    jf: np.ndarray  # for window_kernels.continuation: workload, value, tol, gamma, h_max, late_scale
    ji: np.ndarray  # n_max, deadline
    counts_np: np.ndarray
    count_h_np: np.ndarray
    count_first_np: np.ndarray
    first_late_np: np.ndarray
    tilde_first_np: np.ndarray  # the termination's first slot after n_last = 0..N_max
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
    first_late = tuple((job.mu1 if job.n_max > m else job.mu2 if job.n_max < m else 1.0) * h_max for m in counts)
    tilde_first = [
        (job.mu1 if job.n_max > last else job.mu2 if job.n_max < last else 1.0) * h_max for last in range(job.n_max + 1)
    ]
    late_scale = (job.gamma - 1.0) * job.deadline
    return _JobTables(
        opts,
        tuple(job.throughput(n) for n in opts),
        work,
        max(max(row) for row in work),
        counts,
        h,
        first,
        first_late,
        job.tolerance(),
        h_max,
        late_scale,
        np.array(work).T.copy(),
        np.array(opts, dtype=np.int64),
        np.array([job.workload, job.value, job.tolerance(), job.gamma, h_max, late_scale], dtype=float),
        np.array([job.n_max, job.deadline], dtype=np.int64),
        np.array(counts, dtype=np.int64),
        np.array(h, dtype=float),
        np.array(first, dtype=float),
        np.array(first_late, dtype=float),
        np.array(tilde_first, dtype=float),
    )


def _continuation(
    job: FineTuneJob, tables: _JobTables, progress: float, n_last: int, slots_left: int, on_demand_price: float
) -> float:
    """Scalar `continuation_values`, with the same float operations (bit for bit):
    `window_kernels.continuation`, the one the solver uses."""
    return float(
        continuation(
            float(progress),
            int(n_last),
            int(slots_left),
            float(on_demand_price),
            tables.jf,
            tables.ji,
            tables.counts_np,
            tables.count_h_np,
            tables.count_first_np,
            tables.first_late_np,
            tables.tilde_first_np,
        )
    )


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
        # Running sums from 0, added in order as np.cumsum does.
        self.work = np.array(list(itertools.accumulate((length for _, length in cheap), initial=0.0)))
        self.cost = np.array(list(itertools.accumulate((slope * length for slope, length in cheap), initial=0.0)))
        self.tail_rate = tail_rate


def _slot_data(
    tables: _JobTables, memo: dict, price: float, availability: int, on_demand_price: float
) -> tuple[list[float], list[tuple[float, float]]]:
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


def _cost_floor(
    tables: _JobTables, memo: dict, job: FineTuneJob, later: list, later_key: tuple, on_demand_price: float
) -> _CostFloor:
    """The `_CostFloor` of the window slots `later` (their `_slot_data`), memoised per job."""
    key = ("floor", later_key, on_demand_price)
    got = memo.get(key)
    if got is None:
        tail_key = ("tail", on_demand_price)
        tail_rate = memo.get(tail_key)
        if tail_rate is None:
            tail_rate = memo[tail_key] = min(
                n * on_demand_price / job.throughput(n) for n in range(job.n_min, job.n_max + 1)
            )
        got = memo[key] = _CostFloor([seg for _, segments in later for seg in segments], tail_rate)
    return got


def _window_arrays(
    job: FineTuneJob, tables: _JobTables, memo: dict, price: list[float], avail: list[int], p_o: float
) -> tuple:
    """What `window_kernels.solve` needs of the window's slots, memoised per job: the slot
    costs (slot x total, `_slot_data`), whether spot is cheaper, the largest usable spot
    total (an index of opts), the dominance margins dz, dc, and the cost floors of the
    remaining slots (`_cost_floor`) as knots (slot x knot, padded), their number and tail
    rates."""
    key = ("arrays", tuple(price), tuple(avail), p_o)
    got = memo.get(key)
    if got is None:
        length = len(price)
        slots = [_slot_data(tables, memo, price[k], avail[k], p_o) for k in range(length)]
        costs = [costs_k for costs_k, _ in slots]
        dz = 1e-12 * (job.workload + tables.work_max * length + 1.0)
        dc = 1e-12 * (max(max(row) for row in costs) * length + 1.0)
        floors = [
            _cost_floor(tables, memo, job, slots[k + 1 :], tuple(zip(price[k + 1 :], avail[k + 1 :])), p_o)
            for k in range(length)
        ]
        width = max(floor.work.size for floor in floors)
        floor_x = np.zeros((length, width))
        floor_y = np.zeros((length, width))
        for k, floor in enumerate(floors):
            floor_x[k, : floor.work.size] = floor.work
            floor_y[k, : floor.cost.size] = floor.cost
        usable = [bisect.bisect_right(tables.opts, min(a, job.n_max)) - 1 for a in avail]
        got = memo[key] = (
            np.array(costs, dtype=float),
            np.array([x < p_o for x in price], dtype=bool),
            np.array(usable, dtype=np.int64),
            dz,
            dc,
            floor_x,
            floor_y,
            np.array([floor.work.size for floor in floors], dtype=np.int64),
            np.array([floor.tail_rate for floor in floors], dtype=float),
        )
    return got


def solve_window(
    job: FineTuneJob,
    t: int,
    progress: float,
    n_prev: int,
    prices: Sequence[float],
    availabilities: Sequence[int],
    on_demand_price: float,
    spot_limit: float | None = None,
    progress_cap: float = math.inf,
) -> WindowPlan:
    """Solve problem (10) exactly at slot t (1-based) by dynamic programming.

    `prices[k]`, `availabilities[k]` are the predictions for slot t + k; entries
    for slots after d are ignored. `progress` is Z_{t-1}, `n_prev` is n_{t-1}.
    Returns the plan chosen by the module's tie rule and its objective.

    The `line` reading of sigma (module docstring, "Reading of sigma") passes
    `spot_limit` = sigma p^o (every slot whose spot price is at or below it, with
    availability >= N_min, uses all of that spot, min(avail, N_max)) and
    `progress_cap` (the terminal value counts progress up to the uniform-progress line
    at the window's end). The defaults are the paper's problem as read before.
    """
    d = job.deadline
    if not 1 <= t <= d:
        raise ValueError(f"slot t = {t} is outside 1..{d}")
    if not 0 <= n_prev <= job.n_max:
        raise ValueError(f"n_prev = {n_prev} is outside 0..{job.n_max}")
    length = min(len(prices), d - t + 1)
    if length < 1 or len(availabilities) < length:
        raise ValueError(
            f"window needs prices and availabilities for at least 1 slot, got {len(prices)} and {len(availabilities)}"
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
    memo = tables.memo
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    costs, cheap, usable, dz, dc, floor_x, floor_y, floor_n, tails = _window_arrays(
        job, tables, memo, price, avail, p_o
    )
    forced = [False] * length
    if spot_limit is not None:
        costs, cheap = costs.copy(), cheap.copy()  # the memo's stay as they are
        spot_floor(
            costs,
            cheap,
            np.array(price),
            np.array(avail, dtype=np.int64),
            p_o,
            float(spot_limit),
            job.n_min,
            job.n_max,
            tables.opts_np,
        )
        forced = [p <= spot_limit and a >= job.n_min for p, a in zip(price, avail)]
    # Compiled (window_kernels.solve): the bound from simple plans, the DP steps, the
    # continuation values at the window's end and the tie rule.
    seq, objective = solve(
        tables.work_t,
        costs,
        tables.opts_np,
        cheap,
        usable,
        n_prev,
        progress,
        float(value),
        float(done_at),
        tie,
        dz,
        dc,
        floor_x,
        floor_y,
        floor_n,
        tails,
        slots_after,
        p_o,
        tables.jf,
        tables.ji,
        tables.counts_np,
        tables.count_h_np,
        tables.count_first_np,
        tables.first_late_np,
        tables.tilde_first_np,
        float(progress_cap),
    )
    if seq.size == 0:
        raise ValueError("no plan: the DP found no candidate")
    on_demand, spot = [], []
    for k, n in enumerate(seq.tolist()):
        if forced[k]:  # spot first: all of it (min(avail, N_max) <= n)
            sp = min(avail[k], n)
            o = n - sp
        else:
            o, sp = cheapest_split(n, price[k], avail[k], p_o)
        on_demand.append(o)
        spot.append(sp)
    return WindowPlan(tuple(on_demand), tuple(spot), float(objective))


class WindowSolver:
    """`solve_window` with a memo, shared by AHAP policies that see one world.

    The key is (job, t, n_prev, progress rounded to 1e-9, the window's prices and
    availabilities up to d, p^o); the problem is solved at the rounded progress so
    that a cached answer does not depend on which policy asked first. When the
    memo holds `maxsize` entries the least recently used one is dropped. Jobs enter
    the key as a small integer token (equal jobs share one), so that the job's
    dataclass hash is not recomputed for every look-up.
    """

    def __init__(self, maxsize: int = 100_000):
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize!r}")
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._memo: OrderedDict = OrderedDict()
        self._job_tokens: dict = {}
        self._last_job = self._last_token = None
        self._forecast = self._forecast_rows = None

    def __len__(self) -> int:
        return len(self._memo)

    def forecast_row(self, forecast, t: int, length: int) -> tuple[list[float], list[int]]:
        """The first `length` entries of the forecast made at slot t (row t-1, Alg. 1
        line 3) as new lists: prices as floats, availabilities as ints >= 0.

        A forecast whose arrays are both read-only (as `family.simulate_replicate`
        makes them) is converted to lists once and shared by the policies of one
        world (the last such forecast is kept); a writable one is read anew each time.
        """
        price, availability = forecast.price, forecast.availability
        if price.flags.writeable or availability.flags.writeable:
            return ([float(p) for p in price[t - 1, :length]], [max(0, int(a)) for a in availability[t - 1, :length]])
        if forecast is not self._forecast:
            self._forecast_rows = (
                [[float(p) for p in row] for row in price],
                [[max(0, int(a)) for a in row] for row in availability],
            )
            self._forecast = forecast
        prices, avails = self._forecast_rows
        return prices[t - 1][:length], avails[t - 1][:length]

    def _job_token(self, job: FineTuneJob) -> int:
        if job is not self._last_job:
            self._last_token = self._job_tokens.setdefault(job, len(self._job_tokens))
            self._last_job = job
        return self._last_token

    def solve(
        self,
        job: FineTuneJob,
        t: int,
        progress: float,
        n_prev: int,
        prices: Sequence[float],
        availabilities: Sequence[int],
        on_demand_price: float,
        spot_limit: float | None = None,
        progress_cap: float = math.inf,
    ) -> WindowPlan:
        length = min(len(prices), job.deadline - t + 1)
        z = round(float(progress), 9)
        forced = None
        if spot_limit is not None:  # policies whose sigma forces the same slots share a plan
            forced = tuple(p <= spot_limit and a >= job.n_min for p, a in zip(prices[:length], availabilities[:length]))
        key = (
            self._job_token(job),
            t,
            int(n_prev),
            z,
            tuple(map(float, prices[:length])),
            tuple(map(int, availabilities[:length])),
            float(on_demand_price),
            forced,
            float(progress_cap),
        )
        plan = self._memo.get(key)
        if plan is not None:
            self.hits += 1
            self._memo.move_to_end(key)
            return plan
        self.misses += 1
        plan = solve_window(job, t, z, n_prev, prices, availabilities, on_demand_price, spot_limit, progress_cap)
        self._memo[key] = plan
        if len(self._memo) > self.maxsize:
            self._memo.popitem(last=False)
        return plan
