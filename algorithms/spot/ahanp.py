"""AHANP: Adaptive Hybrid Allocation for Non-Predictive scenarios (paper
paper 000, Sec. IV-B and Appendix A-A, Alg. 3), with spot price
threshold sigma.

Indicators of slot t (1-based; Sec. IV-B, Alg. 3 line 3):
- z_hat = Z_{t-1} / Z^exp_{t-1} with Z^exp_{t-1} = L / d * (t - 1) (eq. 6). At t = 1
  Z^exp_0 = 0: the job is taken to be on schedule, z_hat = 1 (Z_0 = Z^exp_0 = 0).
  "z_hat >= 1" is tested as Z_{t-1} >= Z^exp_{t-1} - tol with the job's tolerance.
- p_hat = p_t^s / (sigma p^o).
- n_hat = n_t^avail / n_{t-1}^avail, infinite whenever n_{t-1}^avail = 0 (reading notes),
  0/0 included. At t = 1 there is no previous availability; like n_0 = 0 (line 1)
  it is taken as 0, so n_hat = infinity at t = 1.

Line 5, the seven cases of the table, in the paper's order:
  1. z_hat >= 1, n_hat = 0:                 0 (idle)
  2. z_hat >= 1, 0 < n_hat <= 0.5:          max(ceil(0.5 n_{t-1}), N_min)
  3. z_hat >= 1, 0.5 < n_hat <= 1:          n_{t-1}
  4. z_hat >= 1, n_hat > 1, p_hat > 1:      n_{t-1}
  5. z_hat >= 1, n_hat > 1, p_hat <= 1:     max(n_{t-1}, n_t^avail)
  6. z_hat < 1, n_hat = infinity:           N_min
  7. z_hat < 1, n_hat < infinity:           2 n_{t-1}
0.5 n_{t-1} is rounded up (the reduced count keeps at least half the instances).
Line 6, "limit n_t to [N_min, N_max]", applies to a job that runs (reading notes: idle
is a decision): a 0 from cases 1, 3, 4 or 5 stays 0 (the job is on schedule and
waits). Cases 6 and 7 are the behind-schedule cases, in which the job runs (Sec.
IV-B: "the instance count is doubled"): doubling an idle count (n_{t-1} = 0) gives
N_min, as the restart of case 6, instead of leaving a late job idle for good.
Lines 7-8: n^s = min(n_t^avail, n_t), n^o = n_t - n^s (spot first, whatever its price).
"""

from __future__ import annotations

import math
import numbers

from algorithms.spot.simulation import MarketInfo, SlotState, SpotPolicy
from market.spot.finetune_job import FineTuneJob


class AHANP(SpotPolicy):
    """Alg. 3 with spot price threshold sigma = `threshold` > 0."""

    def __init__(self, threshold: float):
        if (isinstance(threshold, bool) or not isinstance(threshold, numbers.Real)
                or not math.isfinite(threshold) or threshold <= 0):
            raise ValueError(f"AHANP threshold sigma must be a finite number > 0, got {threshold!r}")
        self.threshold = float(threshold)
        self.name = f"AHANP(sigma={self.threshold:g})"

    def reset(self, job: FineTuneJob, market_info: MarketInfo) -> None:
        super().reset(job, market_info)
        self._prev_availability = 0
        self.last_case = 0

    def indicators(self, t: int, state: SlotState) -> tuple[bool, float, float]:
        """(on schedule, i.e. z_hat >= 1; n_hat; p_hat) of Alg. 3 line 3."""
        job = state.job
        expected = job.workload / job.deadline * (t - 1)
        on_schedule = state.progress >= expected - job.tolerance()
        prev = self._prev_availability
        n_hat = math.inf if prev == 0 else state.availability / prev
        p_hat = state.price / (self.threshold * state.on_demand_price)
        return on_schedule, n_hat, p_hat

    def total(self, t: int, state: SlotState) -> tuple[int, int]:
        """(case number 1..7, n_t) of Alg. 3 lines 4-6."""
        job = state.job
        on_schedule, n_hat, p_hat = self.indicators(t, state)
        n_prev = state.n_prev
        if on_schedule and n_hat == 0:
            case, n = 1, 0
        elif on_schedule and n_hat <= 0.5:
            case, n = 2, max((n_prev + 1) // 2, job.n_min)
        elif on_schedule and n_hat <= 1:
            case, n = 3, n_prev
        elif on_schedule and p_hat > 1:
            case, n = 4, n_prev
        elif on_schedule:
            case, n = 5, max(n_prev, state.availability)
        elif n_hat == math.inf:
            case, n = 6, job.n_min
        else:
            case, n = 7, max(2 * n_prev, job.n_min)
        if n > 0:
            n = min(max(n, job.n_min), job.n_max)
        return case, n

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        self.last_case, n = self.total(t, state)
        self._prev_availability = state.availability
        spot = min(state.availability, n)
        return n - spot, spot
