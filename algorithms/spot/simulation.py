"""Shared slot-by-slot accounting for every spot policy.

Paper paper 000, Sec. III: in each slot t = 1..d a policy buys
n_t^o on-demand and n_t^s spot instances; constraints (5b)-(5e) bound them;
progress grows by mu_t H(n_t) (eq. 1, 2, 5a) and cost by n_t^o p^o + n_t^s p_t^s
(eq. 3). A job unfinished at d runs the termination configuration of Sec. III-E2,
and the utility is V(T) - C (eq. 5), i.e. V~(Z_ddl) - C_ddl (eq. 7-9). Idle
(n_t = 0) is a decision: delta_t = 0 in (5c)-(5d) (reading notes, `spot`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket

if TYPE_CHECKING:
    from market.spot.forecast import SpotForecast


class PolicyError(RuntimeError):
    """A policy returned a decision that breaks constraints (5b)-(5e)."""


@dataclass(frozen=True)
class MarketInfo:
    """What a policy may know before slot 1: no observed prices or availability.

    `forecast` holds the predictions of Alg. 1 line 3 for predictive policies
    (AHAP); row t-1 is what is predicted at slot t, so reading it at slot t does
    not reveal the future beyond the forecast. None when the run has no forecasts.
    """

    on_demand_price: float
    capacity: int
    horizon: int
    forecast: SpotForecast | None = None


@dataclass(slots=True)
class SlotState:
    """What a policy sees when deciding slot t (1-based): the past and the present only.

    `price_history` and `availability_history` hold slots 1..t (the last entry is
    the current slot) as read-only arrays.
    """

    t: int
    progress: float
    n_prev: int
    price: float
    availability: int
    job: FineTuneJob
    on_demand_price: float
    price_history: np.ndarray
    availability_history: np.ndarray

    @property
    def slots_left(self) -> int:
        """Slots t..d, the current one included."""
        return self.job.deadline - self.t + 1

    @property
    def remaining_work(self) -> float:
        return self.job.workload - self.progress


class SpotPolicy:
    """Base of the online policies: `decide` returns (n_on_demand, n_spot) for slot t."""

    name: str = "policy"

    def reset(self, job: FineTuneJob, market_info: MarketInfo) -> None:
        self.job = job
        self.market_info = market_info

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class SpotOutcome:
    """Result of one job under one policy; money in the market's currency, times in slots.

    `progress_at_deadline` is Z_ddl of eq. 7: the progress after the last slot run
    within d (at least L when the job finished by d).
    `n_on_demand` / `n_spot` have one entry per slot 1..d (zero after completion);
    the termination configuration's slots are in `termination_slots` and
    `on_demand_cost`. `reconfigurations` counts slots with n_t != n_{t-1}
    (n_0 = 0, so starting counts), the termination's switch to N_max included.
    """

    utility: float
    cost: float
    spot_cost: float
    on_demand_cost: float
    completion_time: int
    progress_at_deadline: float
    met_deadline: bool
    reconfigurations: int
    termination_slots: int
    n_on_demand: np.ndarray
    n_spot: np.ndarray

    def record(self, mechanism: str) -> dict:
        """The per-mechanism row the sweep engine stores."""
        return {
            "mechanism": mechanism,
            "utility": self.utility,
            "cost": self.cost,
            "completion_time": self.completion_time,
            "spot_cost": self.spot_cost,
            "on_demand_cost": self.on_demand_cost,
            "progress_at_deadline": self.progress_at_deadline,
            "met_deadline": self.met_deadline,
            "reconfigurations": self.reconfigurations,
        }


def _as_count(x, what: str, policy: SpotPolicy, t: int) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise PolicyError(f"{policy.name}: slot {t}: {what} must be an integer, got {x!r}")
    x = int(x)
    if x < 0:
        raise PolicyError(f"{policy.name}: slot {t}: {what} must be >= 0, got {x}")
    return x


def simulate(
    job: FineTuneJob,
    market: SpotMarket,
    policy: SpotPolicy,
    forecast: SpotForecast | None = None,
) -> SpotOutcome:
    """Run `policy` on the first d slots of `market` with the accounting of Sec. III.

    `forecast` is handed to the policy in `MarketInfo.forecast` (predictive policies).
    """
    d = job.deadline
    if len(market) < d:
        raise ValueError(f"market has {len(market)} slots, the job's deadline needs {d}")
    p_o = market.on_demand_price
    prices = market.price[:d]
    avails = market.availability[:d]
    price_list = prices.tolist()
    avail_list = avails.tolist()
    policy.reset(job, MarketInfo(p_o, market.capacity, d, forecast))

    n_od = np.zeros(d, dtype=np.int64)
    n_sp = np.zeros(d, dtype=np.int64)
    progress = 0.0
    n_prev = 0
    spot_cost = 0.0
    od_cost = 0.0
    reconfigurations = 0
    completion = 0
    done_at = job.workload - job.tolerance()  # job.is_complete(progress): progress >= done_at
    for t in range(1, d + 1):
        price = price_list[t - 1]
        avail = avail_list[t - 1]
        state = SlotState(t, progress, n_prev, price, avail, job, p_o, prices[:t], avails[:t])
        decision = policy.decide(t, state)
        try:
            raw_o, raw_s = decision
        except (TypeError, ValueError):
            raise PolicyError(
                f"{policy.name}: slot {t}: decide must return (n_on_demand, n_spot), got {decision!r}"
            ) from None
        # Plain non-negative ints (what the policies return) skip the checks' slow path.
        n_o = raw_o if type(raw_o) is int and raw_o >= 0 else _as_count(raw_o, "n_on_demand", policy, t)
        n_s = raw_s if type(raw_s) is int and raw_s >= 0 else _as_count(raw_s, "n_spot", policy, t)
        if n_s > avail:
            raise PolicyError(f"{policy.name}: slot {t}: n_spot {n_s} exceeds availability {avail} (5b)")
        n = n_o + n_s
        if n and not job.n_min <= n <= job.n_max:
            raise PolicyError(
                f"{policy.name}: slot {t}: {n} instances, must be 0 or in [{job.n_min}, {job.n_max}] (5c-5d)"
            )
        if n != n_prev:
            reconfigurations += 1
        progress += job.slot_work(n, n_prev)
        od_cost += n_o * p_o
        spot_cost += n_s * price
        n_od[t - 1] = n_o
        n_sp[t - 1] = n_s
        n_prev = n
        if progress >= done_at:
            completion = t
            break

    progress_at_deadline = progress
    extra_slots = 0
    if not completion:
        extra_slots, extra_cost, completion = job.termination(progress, n_prev, p_o)
        od_cost += extra_cost
        if n_prev != job.n_max:
            reconfigurations += 1
    cost = od_cost + spot_cost
    n_od.setflags(write=False)
    n_sp.setflags(write=False)
    return SpotOutcome(
        utility=job.value_at(completion) - cost,
        cost=cost,
        spot_cost=spot_cost,
        on_demand_cost=od_cost,
        completion_time=int(completion),
        progress_at_deadline=progress_at_deadline,
        met_deadline=completion <= d,
        reconfigurations=reconfigurations,
        termination_slots=extra_slots,
        n_on_demand=n_od,
        n_spot=n_sp,
    )


# --- helpers shared by the baselines -------------------------------------------


def max_work(slots: int, n_prev: int, job: FineTuneJob) -> float:
    """Most work `slots` slots can do from a previous count n_prev: N_max in each,
    paying mu of eq. 2 for the first switch only."""
    if slots <= 0:
        return 0.0
    h = job.throughput(job.n_max)
    return job.effective_fraction(job.n_max, n_prev) * h + (slots - 1) * h


def work_running(n: int, slots: int, n_prev: int, job: FineTuneJob) -> float:
    """Work done by running n instances for `slots` slots after n_prev (eq. 2, 5a)."""
    if slots <= 0 or n == 0:
        return 0.0
    h = job.throughput(n)
    return job.effective_fraction(n, n_prev) * h + (slots - 1) * h


def can_finish(remaining_work: float, slots_left: int, n_prev: int, job: FineTuneJob) -> bool:
    """Whether remaining_work fits in slots_left slots with N_max in every one of them."""
    return remaining_work <= max_work(slots_left, n_prev, job) + job.tolerance()


def usable_spot(availability: int, job: FineTuneJob) -> int:
    """All spot a spot-only slot can use: min(avail, N_max), or 0 below N_min (5c-5d)."""
    n = min(availability, job.n_max)
    return n if n >= job.n_min else 0


def safe_or_n_max(state: SlotState, n_on_demand: int, n_spot: int) -> tuple[int, int]:
    """Deadline safety net of MSU and UP: keep (n_on_demand, n_spot) if the job can
    still finish by d with N_max in every later slot, otherwise run N_max now,
    all available spot first (Sec. VI-A, "on-demand as the deadline requires")."""
    job = state.job
    n = n_on_demand + n_spot
    after = state.progress + job.slot_work(n, state.n_prev)
    if can_finish(job.workload - after, state.slots_left - 1, n, job):
        return n_on_demand, n_spot
    spot = min(state.availability, job.n_max)
    return job.n_max - spot, spot
