"""AHAP: Adaptive Hybrid Allocation with Prediction (paper 000,
Sec. IV-A, Alg. 1), committed horizon control with window omega, commitment v and
spot price threshold sigma.

In slot t (1-based) the policy reads the forecasts made at t for t..t+omega
(`MarketInfo.forecast` row t-1, Alg. 1 line 3; the window is cut at d) and the
expected progress Z^exp_{t+omega} = L / d * (t + omega) (eq. 6, line 4, not cut at
d, so near the deadline the job is never "ahead"). Then it makes a plan for the
window:
- ahead, Z_{t-1} >= Z^exp_{t+omega} (lines 6-11): in every window slot, all
  predicted spot up to N_max, min(n^avail_{tau|t}, N_max), when the predicted price
  is <= sigma p^o and the predicted availability is >= N_min, else none; no
  on-demand;
- behind (lines 12-13): the exact solution of problem (10)
  (algorithms/spot/window_problem.py, with its terminal value and tie rule).
  `sigma_reading` says where sigma acts: "ahead" (only in lines 6-11, as the
  pseudocode has it) or "line" (also here: all spot at or below sigma p^o is used and
  the terminal value stops at the uniform-progress line at the window's end; the
  reading and its lines of the paper are in window_problem.py, "Reading of sigma").

Every plan is stored. The executed decision (lines 14-16) averages the plans for
slot t made at slots t, t-1, ..., t-v+1 (the text says averaging, the formula a
sum; reading notes: average, as CHC does); plans made before slot 1 do not exist, so
the average runs over the plans that exist (min(v, t) of them). Rounding:
1. total = round-half-up(mean of the plans' totals),
   spot = min(round-half-up(mean of the plans' spot counts), total),
   on-demand = total - spot (exact integer arithmetic, no float ties);
2. line 16: spot = min(spot, real availability); spot that is not there is not
   replaced by on-demand (the pseudocode does not), except through step 3;
3. line 22, "limit n^o + n^s to [N_min, N_max]", only for a job that runs
   (reading notes: idle is a decision): a total of 0 stays 0; a positive total below
   N_min is raised to N_min with on-demand; a total above N_max (impossible after
   averaging plans within [0, N_max], kept for safety) loses on-demand first,
   then spot.
With v = 1 the executed decision is the current plan's first slot.
"""

from __future__ import annotations

import math
import numbers

from algorithms.spot.config import SIGMA_READINGS
from algorithms.spot.simulation import MarketInfo, SlotState, SpotPolicy
from algorithms.spot.window_problem import WindowSolver, window_length
from market.spot.finetune_job import FineTuneJob

MAX_LINE_WINDOW = 62


def _round_half_up(numerator: int, denominator: int) -> int:
    """round(numerator / denominator) with halves rounded up, exactly."""
    return (2 * numerator + denominator) // (2 * denominator)


class AHAP(SpotPolicy):
    """Alg. 1 with window omega = `window`, commitment v = `commitment` in [1, omega]
    (Sec. VI-A) and spot price threshold sigma = `threshold` > 0.

    `solver` memoises problem (10); policies that see the same world may share one
    (default: a private solver).
    """

    def __init__(
        self,
        window: int,
        commitment: int,
        threshold: float,
        solver: WindowSolver | None = None,
        sigma_reading: str = "ahead",
    ):
        for label, x in (("window", window), ("commitment", commitment)):
            if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 1:
                raise ValueError(f"AHAP {label} must be a positive integer, got {x!r}")
        if commitment > window:
            raise ValueError(
                f"AHAP commitment ({commitment}) must not exceed the window ({window}) (Sec. VI-A: v in [1, omega])"
            )
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, numbers.Real)
            or not math.isfinite(threshold)
            or threshold <= 0
        ):
            raise ValueError(f"AHAP threshold sigma must be a finite number > 0, got {threshold!r}")
        if sigma_reading not in SIGMA_READINGS:
            raise ValueError(f"AHAP sigma_reading must be one of {', '.join(SIGMA_READINGS)}, got {sigma_reading!r}")
        if sigma_reading == "line" and window > MAX_LINE_WINDOW:
            raise ValueError(
                f"AHAP window {window}: the 'line' reading of sigma supports windows up to "
                f"{MAX_LINE_WINDOW} slots (the compiled pool keeps a window's forced slots "
                f"in one 64-bit mask)"
            )
        self.sigma_reading = sigma_reading
        self.window = int(window)
        self.commitment = int(commitment)
        self.threshold = float(threshold)
        self.solver = solver if solver is not None else WindowSolver()
        self.name = f"AHAP(w={self.window},v={self.commitment},sigma={self.threshold:g})"

    def reset(self, job: FineTuneJob, market_info: MarketInfo) -> None:
        super().reset(job, market_info)
        forecast = market_info.forecast
        if forecast is None:
            raise ValueError(f"{self.name} needs forecasts: pass forecast= to simulate")
        need = min(self.window, job.deadline - 1)
        if forecast.max_horizon < need:
            raise ValueError(
                f"{self.name}: the forecast's max_horizon is {forecast.max_horizon}, the window needs {need}"
            )
        if forecast.rows < job.deadline:
            raise ValueError(
                f"{self.name}: the forecast has {forecast.rows} rows, the job's deadline needs {job.deadline}"
            )
        self._plans: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    def plan(self, t: int, state: SlotState) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Alg. 1 lines 3-13: (on-demand, spot) counts for slots t..t+len-1."""
        job = state.job
        p_o = state.on_demand_price
        length = window_length(job, t, self.window)
        prices, avails = self.solver.forecast_row(self.market_info.forecast, t, length)
        prices[0], avails[0] = state.price, state.availability  # observed p_{t|t}
        expected = job.workload / job.deadline * (t + self.window)
        if state.progress >= expected - job.tolerance():
            limit = self.threshold * p_o
            spot = tuple(min(a, job.n_max) if p <= limit and a >= job.n_min else 0 for p, a in zip(prices, avails))
            return (0,) * length, spot
        if self.sigma_reading == "line":
            end = t + length - 1
            cap = math.inf if end >= job.deadline else job.workload / job.deadline * end
            solution = self.solver.solve(
                job, t, state.progress, state.n_prev, prices, avails, p_o, self.threshold * p_o, cap
            )
        else:
            solution = self.solver.solve(job, t, state.progress, state.n_prev, prices, avails, p_o)
        return solution.on_demand, solution.spot

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        job = state.job
        plans = self._plans
        plans[t] = self.plan(t, state)
        # Lines 14-15: the plans for slot t made at t, t-1, ..., t-v+1 (those that exist).
        count = total_sum = spot_sum = 0
        for k in range(self.commitment):
            made = plans.get(t - k)
            if made is None:
                continue
            spot_k = made[1][k]
            total_sum += made[0][k] + spot_k
            spot_sum += spot_k
            count += 1
        total = _round_half_up(total_sum, count)
        spot = min(_round_half_up(spot_sum, count), total)
        on_demand = total - spot
        spot = min(spot, state.availability)
        n = on_demand + spot
        if n == 0:
            return 0, 0
        if n < job.n_min:
            on_demand += job.n_min - n
        elif n > job.n_max:
            cut = min(on_demand, n - job.n_max)
            on_demand -= cut
            spot -= n - job.n_max - cut
        return on_demand, spot
