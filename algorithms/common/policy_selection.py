"""Online policy selection by exponentiated gradient, shared by every family.

Paper paper 000, Sec. V (Alg. 2 "Online Policy Selection
Algorithm", Theorem 2, eq. 13) and Sec. VI-B ("Convergence under Prediction
Noise", "Policy Evolution and Adaptation", Figs. 9-10); reading notes `spot`.

The module knows nothing about jobs, markets or mechanisms. A family evaluates
each of its M candidate policies on each of K jobs (Alg. 2 line 8: the utility
"assuming we apply allocation policy m") and passes the (K, M) utility matrix in
its own units together with a bound [lower, upper] it guarantees; everything
comes back as arrays. Delayed feedback (the IaaS family's OptiLearning,
paper 003 Sec. IV-D, Alg. 3) is a per-job delay counted in jobs.
docs/spot/policy-selection.md states the contracts.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def _real(x: Any, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
        raise ValueError(f"{name} must be a finite real number, got {x!r}")
    return float(x)


def _count(x: Any, name: str, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    return int(x)


def _bounds(lower: Any, upper: Any) -> tuple[float, float]:
    lo = _real(lower, "lower")
    hi = _real(upper, "upper")
    if not lo < hi:
        raise ValueError(f"lower ({lo!r}) must be < upper ({hi!r})")
    if not math.isfinite(hi - lo):
        raise ValueError(f"upper - lower overflows ({lo!r}, {hi!r})")
    return lo, hi


def _job_bounds(lower: Any, upper: Any, n_jobs: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-job bounds as (K, 1) columns: scalars apply to every job, (K,) arrays job by job."""
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:
        lo, hi = _bounds(lower, upper)
        return np.full((n_jobs, 1), lo), np.full((n_jobs, 1), hi)
    lo = np.broadcast_to(np.asarray(lower, dtype=float), (n_jobs,)).reshape(n_jobs, 1)
    hi = np.broadcast_to(np.asarray(upper, dtype=float), (n_jobs,)).reshape(n_jobs, 1)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(np.isfinite(hi - lo))):
        raise ValueError("per-job lower and upper bounds must be finite")
    if np.any(lo >= hi):
        j = int(np.argmax(lo >= hi))
        raise ValueError(f"lower ({lo[j, 0]!r}) must be < upper ({hi[j, 0]!r}) for every job; not for job {j}")
    return lo, hi


def normalise(utilities: np.ndarray, lower: float | np.ndarray, upper: float | np.ndarray) -> np.ndarray:
    """Map utilities from [lower, upper] affinely onto [0, 1]: one bound for every job
    (scalars), or one per job (rows of a (K, M) matrix; (K,) arrays).

    Theorem 2 of paper 000 (Sec. V-C) assumes normalised
    utilities; its proof holds for any map of each job's utilities into [0, 1]. The family
    guarantees the bound (docs/spot/policy-selection.md gives the spot family's); a value
    outside it is a broken contract, so it raises ValueError naming the bound violated,
    with the worst offender and its index, instead of clipping. NaN raises too.
    """
    u = np.asarray(utilities, dtype=float)
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:
        lo, hi = _bounds(lower, upper)
    else:
        if u.ndim != 2:
            raise ValueError(f"per-job bounds need a (K, M) utility matrix, got shape {u.shape}")
        lo, hi = _job_bounds(lower, upper, u.shape[0])
    nan = np.isnan(u)
    if nan.any():
        where = tuple(int(i) for i in np.argwhere(nan)[0])
        raise ValueError(f"utilities contain NaN (first at index {where})")
    below = u < lo
    if below.any():
        i = np.unravel_index(np.argmin(np.where(below, u - lo, np.inf)), u.shape)
        bound = lo if np.ndim(lo) == 0 else lo[i[0], 0]
        raise ValueError(
            f"{int(below.sum())} utilities are below the lower bound {bound!r}; the lowest "
            f"is {u[i]!r} at index {tuple(int(j) for j in i)}"
        )
    above = u > hi
    if above.any():
        i = np.unravel_index(np.argmax(np.where(above, u - hi, -np.inf)), u.shape)
        bound = hi if np.ndim(hi) == 0 else hi[i[0], 0]
        raise ValueError(
            f"{int(above.sum())} utilities are above the upper bound {bound!r}; the highest "
            f"is {u[i]!r} at index {tuple(int(j) for j in i)}"
        )
    return (u - lo) / (hi - lo)


NORMALISATIONS = ("worst_case", "job_minmax", "job_opt")


def job_bounds(
    utilities: np.ndarray, scheme: str, lower: float, upper: float, optimum: np.ndarray | None = None
) -> tuple[float | np.ndarray, float | np.ndarray]:
    """The bounds `exponentiated_gradient` normalises with, by `scheme`:

    - worst_case: the family's guaranteed [lower, upper] for every job (the first reading);
    - job_minmax: job k's [min_m u_k^m, max_m u_k^m] over the pool;
    - job_opt: job k's [min_m u_k^m, optimum_k] (the offline optimum beats every policy).

    A job on which the pool's bounds coincide (every policy earns the same) carries no
    information; its bounds become [u - 1, u], which maps every policy to 1 (a constant
    added to every log-weight changes no weight).
    """
    if scheme == "worst_case":
        return lower, upper
    u = np.asarray(utilities, dtype=float)
    if scheme == "job_minmax":
        lo, hi = u.min(axis=1), u.max(axis=1)
    elif scheme == "job_opt":
        if optimum is None:
            raise ValueError("selection.normalisation 'job_opt' needs the offline optimum among the cell's mechanisms")
        lo, hi = u.min(axis=1), np.maximum(np.asarray(optimum, dtype=float), u.max(axis=1))
    else:
        raise ValueError(f"selection.normalisation must be one of {', '.join(NORMALISATIONS)}, got {scheme!r}")
    flat = ~(hi > lo)
    return np.where(flat, hi - 1.0, lo), hi


def learning_rate(n_policies: int, horizon: int) -> float:
    """eta = sqrt(2 ln M / K), Alg. 2 line 3 of paper 000.

    With this eta Theorem 2 (eq. 13) bounds the regret on the normalised scale
    by sqrt(2 K ln M). M = 1 gives eta = 0 (nothing to learn).
    """
    m = _count(n_policies, "n_policies", 1)
    k = _count(horizon, "horizon", 1)
    return math.sqrt(2.0 * math.log(m) / k)


def regret_bound(n_policies: int, horizon: int) -> float:
    """sqrt(2 K ln M): the right side of eq. 13 (Theorem 2, paper 000).

    On the normalised [0, 1] scale; multiply by (upper - lower) for original
    units. Holds for eta = learning_rate(M, K) and no delay, for every prefix
    k <= K of the K jobs (the proof in App. A-C bounds the regret after k jobs by
    ln M / eta + eta k / 2).
    """
    m = _count(n_policies, "n_policies", 1)
    k = _count(horizon, "horizon", 1)
    return math.sqrt(2.0 * k * math.log(m))


@dataclass(frozen=True, eq=False)
class SelectionRun:
    """Result of `exponentiated_gradient` on K jobs and M policies (arrays read-only).

    weights:           (K + 1, M); row k is the distribution used to select job k
                       (0-based; Alg. 2's w_{k+1}), row K the one a next job would
                       get. Row k has seen the utilities of jobs {j : release[j] <= k}.
    expected_utility:  (K,) E_{w_k}[u_k] in the family's original units.
    best_fixed:        best fixed policy in hindsight over all K jobs: argmax of the
                       column sums (ties -> lowest index).
    leader:            (K,) best fixed policy over jobs 0..k (ties -> lowest index);
                       leader[-1] == best_fixed.
    regret:            (K,) eq. 13's left side after jobs 0..k, original units:
                       max_m sum_{j<=k} u_j^m - sum_{j<=k} E_{w_j}[u_j].
    regret_vs_optimum: (K,) sum_{j<=k} (optimum_j - E_{w_j}[u_j]), or None.
    eta:               the learning rate, a float or a (K,) array (eta[j] scales
                       job j's feedback).
    lower, upper:      the normalisation bound the utilities were checked against:
                       floats, or (K,) arrays for a per-job normalisation.
    release:           (K,) first weight row that includes job j's feedback:
                       j + 1 + delay_j; a value > K means never within the run.
    regret_normalised: (K,) eq. 13's left side on the normalised utilities z.
    """

    weights: np.ndarray
    expected_utility: np.ndarray
    best_fixed: int
    leader: np.ndarray
    regret: np.ndarray
    regret_vs_optimum: np.ndarray | None
    eta: float | np.ndarray
    lower: float | np.ndarray
    upper: float | np.ndarray
    release: np.ndarray
    regret_normalised: np.ndarray

    @property
    def n_jobs(self) -> int:
        return int(self.expected_utility.shape[0])

    @property
    def n_policies(self) -> int:
        return int(self.weights.shape[1])

    @property
    def final_weights(self) -> np.ndarray:
        """Row K of `weights`: the distribution after the last job's update."""
        return self.weights[-1]

    def average_regret(self) -> np.ndarray:
        """(K,) regret after k + 1 jobs divided by k + 1 (Sec. V-C: decays with K)."""
        return self.regret / np.arange(1, self.n_jobs + 1)

    def normalised_regret(self) -> np.ndarray:
        """(K,) the regret on the [0, 1] scale of Theorem 2, comparable to `regret_bound`
        (with one bound for all jobs, `regret` / (upper - lower))."""
        return self.regret_normalised

    def top_policies(self, n: int = 5, row: int = -1) -> np.ndarray:
        """Indices of the n largest weights of one row (default: the final weights),
        largest first, ties -> lowest index."""
        n = _count(n, "n", 1)
        w = self.weights[row]
        return np.argsort(-w, kind="stable")[:n]

    def seen(self, row: int) -> np.ndarray:
        """Indices of the jobs whose utilities weight row `row` has incorporated."""
        row = _count(row, "row", 0)
        if row > self.n_jobs:
            raise ValueError(f"row must be in [0, {self.n_jobs}], got {row}")
        return np.flatnonzero(self.release <= row)


def _eta(eta: Any, n_policies: int, n_jobs: int) -> tuple[float | np.ndarray, np.ndarray]:
    if eta is None:
        value = learning_rate(n_policies, n_jobs)
        return value, np.full(n_jobs, value)
    if np.ndim(eta) == 0:
        value = _real(eta, "eta")
        if value < 0:
            raise ValueError(f"eta must be >= 0, got {value!r}")
        return value, np.full(n_jobs, value)
    arr = np.array(eta, dtype=float)
    if arr.shape != (n_jobs,):
        raise ValueError(f"eta as an array must have shape ({n_jobs},), got {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("eta must be finite and >= 0 for every job")
    arr.setflags(write=False)
    return arr, arr


def _release(delay: Any, n_jobs: int) -> np.ndarray:
    if np.ndim(delay) == 0:
        d = np.full(n_jobs, _count(delay, "delay", 0), dtype=np.int64)
    else:
        arr = np.asarray(delay)
        if arr.shape != (n_jobs,):
            raise ValueError(f"delay as an array must have shape ({n_jobs},), got {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 0):
            raise ValueError("delay must hold integers >= 0, one per job")
        d = arr.astype(np.int64)
    release = np.arange(1, n_jobs + 1, dtype=np.int64) + d
    release.setflags(write=False)
    return release


class OnlineWeights:
    """Alg. 2's weights learnt one job at a time (paper 000, Sec. V-B, line 11), for a family
    whose later utilities depend on the policies already drawn (paper 003's self-owned
    instances): `exponentiated_gradient` runs the same update over a whole matrix.

    Log-weights start at 0 (w_1 uniform, line 2); `learn(z, eta)` adds eta z (z normalised to
    [0, 1]) and subtracts the maximum, so no eta or horizon overflows."""

    def __init__(self, n_policies: int) -> None:
        self.log_weights = np.zeros(_count(n_policies, "n_policies", 1))

    def learn(self, z: np.ndarray, eta: float) -> None:
        # Once a policy trails the leader by more than ~1.8e308 its log-weight is -inf (weight
        # exactly 0, as exp() already gives below -745); -inf never turns into NaN here.
        with np.errstate(over="ignore"):
            self.log_weights = self.log_weights + eta * z
            self.log_weights -= self.log_weights.max()

    @property
    def weights(self) -> np.ndarray:
        w = np.exp(self.log_weights)
        return w / w.sum()


def _log_weight_rows(z: np.ndarray, eta: np.ndarray, release: np.ndarray) -> np.ndarray:
    """Log-weights of rows 0..K (`OnlineWeights`), each shifted so that its maximum is 0."""
    n_jobs, n_policies = z.shape
    order = np.argsort(release, kind="stable")
    rows = np.empty((n_jobs + 1, n_policies))
    online = OnlineWeights(n_policies)
    rows[0] = online.log_weights
    pos = 0
    for row in range(1, n_jobs + 1):
        while pos < n_jobs and release[order[pos]] <= row:
            j = order[pos]
            online.learn(z[j], eta[j])
            pos += 1
        rows[row] = online.log_weights
    return rows


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def exponentiated_gradient(
    utilities: np.ndarray,
    lower: float,
    upper: float,
    eta: float | np.ndarray | None = None,
    optimum: np.ndarray | None = None,
    delay: int | np.ndarray = 0,
) -> SelectionRun:
    """Run Alg. 2 of paper 000 (Sec. V-B) over K jobs and M policies.

    utilities: (K, M), u_k^m of Alg. 2 line 8 in the family's original units,
        all within [lower, upper] (checked by `normalise`, never clipped); lower and
        upper are floats, or (K,) arrays for a per-job normalisation (`job_bounds`).
    eta: None -> learning_rate(M, K) (Alg. 2 line 3, Theorem 2); a float; or a
        (K,) array whose entry j scales job j's feedback (a decaying schedule such
        as OptiLearning's eta_t, paper 003 Alg. 3 line 9).
    optimum: (K,) per-job utility of the offline optimum in original units; adds
        `regret_vs_optimum`. Not checked against the policies' utilities.
    delay: int or (K,) integer array. Job j's feedback reaches the weights after
        delay_j further jobs have been selected: row k of `weights` has seen exactly
        the jobs j with j + 1 + delay_j <= k. delay = 0 is Alg. 2 (row k has seen
        jobs 0..k-1); a constant D leaves rows 0..D uniform and row k (k > D) has seen
        jobs 0..k-1-D. Feedback released at the same row is applied in job order.

    Update (Alg. 2 line 11, on the normalised z = (u - lower) / (upper - lower)):
    w_{k+1}^m ∝ w_k^m exp(eta z_k^m), from w_1 uniform (line 2), computed in log
    space with the maximum subtracted after each job, so no K or eta overflows or
    yields NaN. With one bound for all jobs the map is affine, and the regret in
    original units is (upper - lower) times the normalised regret of eq. 13; with
    per-job bounds, `normalised_regret` is computed on z itself (eq. 13 holds for it).
    """
    scalar = np.ndim(lower) == 0 and np.ndim(upper) == 0
    lo, hi = _bounds(lower, upper) if scalar else (lower, upper)
    u = np.array(utilities, dtype=float)
    if u.ndim != 2 or u.shape[0] < 1 or u.shape[1] < 1:
        raise ValueError(f"utilities must be a (K jobs, M policies) array with K, M >= 1, got shape {u.shape}")
    n_jobs, n_policies = u.shape
    z = normalise(u, lo, hi)
    if not scalar:
        column_lo, column_hi = _job_bounds(lo, hi, n_jobs)
        lo, hi = _frozen(column_lo[:, 0].copy()), _frozen(column_hi[:, 0].copy())
    eta_value, eta_per_job = _eta(eta, n_policies, n_jobs)
    release = _release(delay, n_jobs)

    log_w = _log_weight_rows(z, eta_per_job, release)
    weights = np.exp(log_w)
    weights /= weights.sum(axis=1, keepdims=True)

    expected = np.einsum("km,km->k", weights[:-1], u)
    cumulative = np.cumsum(u, axis=0)
    leader = np.argmax(cumulative, axis=1)
    regret = cumulative[np.arange(n_jobs), leader] - np.cumsum(expected)
    cumulative_z = np.cumsum(z, axis=0)
    regret_z = cumulative_z.max(axis=1) - np.cumsum(np.einsum("km,km->k", weights[:-1], z))

    vs_optimum = None
    if optimum is not None:
        opt = np.array(optimum, dtype=float)
        if opt.shape != (n_jobs,):
            raise ValueError(f"optimum must have shape ({n_jobs},), got {opt.shape}")
        if not np.all(np.isfinite(opt)):
            raise ValueError("optimum must be finite")
        vs_optimum = _frozen(np.cumsum(opt - expected))

    return SelectionRun(
        weights=_frozen(weights),
        expected_utility=_frozen(expected),
        best_fixed=int(leader[-1]),
        leader=_frozen(leader),
        regret=_frozen(regret),
        regret_vs_optimum=vs_optimum,
        eta=eta_value,
        lower=lo,
        upper=hi,
        release=release,
        regret_normalised=_frozen(regret_z),
    )


def delays_from_arrivals(arrival_slots: np.ndarray, lag: int) -> np.ndarray:
    """Per-job delays (in jobs) for feedback that arrives `lag` slots after arrival.

    OptiLearning (paper 003 Sec. IV-D, Alg. 3 lines 3-15): in slot t
    the jobs arriving at t are assigned policies first, then the weights learn
    from the jobs that arrived at t - d. With jobs indexed in arrival order
    (arrival_slots non-decreasing integers), job j's feedback therefore enters
    the weights after every job arriving by slot a_j + lag has been selected:
    delay_j = #{i : a_i <= a_j + lag} - (j + 1), ready for
    `exponentiated_gradient(..., delay=...)`.
    """
    a = np.asarray(arrival_slots)
    if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
        raise ValueError("arrival_slots must be a 1-D array of integers")
    if np.any(np.diff(a) < 0):
        raise ValueError("arrival_slots must be non-decreasing (jobs in arrival order)")
    lag = _count(lag, "lag", 0)
    released_at = np.searchsorted(a, a + lag, side="right")
    return released_at - np.arange(1, a.shape[0] + 1)


def draw_policies(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one policy index per row of `weights` (Alg. 2 line 6: select the
    policy for job k according to w_k). Pass `run.weights[:-1]` for the K jobs.

    Never returns a policy of weight 0; rows need not sum exactly to 1.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape[1] < 1:
        raise ValueError(f"weights must be a (rows, M) array, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w.sum(axis=1) <= 0):
        raise ValueError("weights must be finite, >= 0, with a positive sum per row")
    return policies_at(w, rng.random(w.shape[0]))


def policies_at(weights: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """`draw_policies` with its U[0, 1) draws given, one per row: a family that draws job by
    job (`OnlineWeights`) draws the same policies as one that draws all rows at once."""
    cdf = np.cumsum(weights, axis=1)
    x = np.asarray(uniforms, dtype=float)[:, None] * cdf[:, -1:]
    return np.sum(cdf <= x, axis=1)


def phase_schedule(boundaries: Sequence[int], settings: Sequence[Any], n_jobs: int) -> list[Any]:
    """The setting in force for each of n_jobs jobs, phase i covering jobs
    boundaries[i] .. boundaries[i+1] - 1 (the last phase runs to n_jobs - 1).

    Fig. 10 of paper 000 (Sec. VI-B, "Policy Evolution and
    Adaptation"): boundaries [0, 800, 1600, 2400], four noise settings, 3600 jobs.
    Boundaries must be integers, start at 0, increase strictly and stay below
    n_jobs, one per setting.
    """
    n_jobs = _count(n_jobs, "n_jobs", 1)
    bounds = list(boundaries)
    settings = list(settings)
    if not bounds:
        raise ValueError("boundaries must not be empty")
    if len(bounds) != len(settings):
        raise ValueError(f"one setting per phase: {len(bounds)} boundaries but {len(settings)} settings")
    for i, b in enumerate(bounds):
        if isinstance(b, bool) or not isinstance(b, numbers.Integral):
            raise ValueError(f"boundaries[{i}] must be an integer, got {b!r}")
    if bounds[0] != 0:
        raise ValueError(f"boundaries must start at 0, got {bounds[0]}")
    for i in range(1, len(bounds)):
        if bounds[i] <= bounds[i - 1]:
            raise ValueError(
                f"boundaries must increase strictly: boundaries[{i}] = {bounds[i]} "
                f"<= boundaries[{i - 1}] = {bounds[i - 1]}"
            )
    if bounds[-1] >= n_jobs:
        raise ValueError(
            f"boundaries[-1] = {bounds[-1]} must be < n_jobs = {n_jobs} (every phase needs at least one job)"
        )
    ends = bounds[1:] + [n_jobs]
    schedule: list[Any] = []
    for start, end, setting in zip(bounds, ends, settings):
        schedule.extend([setting] * (end - start))
    return schedule


def weights_frame(run: SelectionRun, policy_names: Sequence[str]) -> pd.DataFrame:
    """Wide table of `run.weights` for a Parquet artifact (the data of Fig. 10's
    heatmap, paper 000 Sec. VI-B): column "job" = k = 0..K (row k
    selects job k; row K is the final weight vector), then one column per policy
    in policy order. Imports pandas on call.
    """
    import pandas as pd

    names = list(policy_names)
    if len(names) != run.n_policies:
        raise ValueError(f"{len(names)} policy names for {run.n_policies} policies")
    if not all(isinstance(n, str) for n in names):
        raise ValueError("policy names must be strings (Parquet column names)")
    if len(set(names)) != len(names):
        raise ValueError("policy names must be unique")
    if "job" in names:
        raise ValueError('"job" is reserved for the job column')
    frame = pd.DataFrame(np.asarray(run.weights), columns=names)
    frame.insert(0, "job", np.arange(run.n_jobs + 1, dtype=np.int64))
    return frame
