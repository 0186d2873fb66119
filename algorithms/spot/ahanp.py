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
  it is taken as 0, so n_hat = infinity at t = 1. (The `cold` reading, below, keeps
  n_hat = infinity for t = 1 only.)

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

Readings of the start (`start`, registry.AHANP_STARTS; names `AHANP(sigma=S,start=fresh|cold)`).
With no outages the literal reading above meets d only when slot 1 is cheap: in a dear slot 1
(p_1^s > sigma p^o) case 4 "reuses" n_0 = 0 and the job idles, then is behind from t = 2 and
doubles from N_min (1, 2, 4, 8, 12, 12, ...: Z_d = 72.3 < L = 80 at the paper's defaults with
steady availability; tests/spot/test_spot_ahanp.py). Two other
readings of what Alg. 3 says about t = 1 and about an outage, each differing from `literal`
in one place only:

- ``literal`` (default; the name stays `AHANP(sigma=S)`): as above.
- ``fresh``: slot 1 has no prior allocation. Alg. 3 line 1, "Initialize Z_0 = 0, n_0 = 0",
  initialises the recursion; it is no allocation the job made. Line 5, case 4, "n_{t-1} if
  z_hat >= 1, n_hat > 1, p_hat > 1" (and cases 2-3, 5 alike) keeps or scales n_{t-1}; at
  t = 1 there is no n_{t-1} to keep, so the 0 it gives is no decision to idle, and line 6,
  "Limit n_t in range of [N_min, N_max]", lifts it to N_min. At t = 1 z_hat = 1 and n_hat =
  infinity, so only cases 4 (n_0 = 0) and 5 (max{n_0, n_1^avail}, 0 when n_1^avail = 0)
  occur; either's 0 is n_0's and becomes N_min (spot first, line 7). At t >= 2 everything is
  as literal, a 0 of cases 1, 3, 4 or 5 included (idle is a decision).
- ``cold``: the cold-start reading of case 6, "N_min if z_hat < 1, n_hat = infinity" (case 7:
  "2 x n_{t-1} if z_hat < 1, n_hat < infinity"): n_hat = infinity only at t = 1, where there
  is no previous availability. At t >= 2 with n_{t-1}^avail = 0: n_hat = 0 if n_t^avail = 0
  (case 1's prose, Sec. IV-B: "If progress is ahead of schedule and no spot instances are
  available, the job remains idle (case 1)"), else n_hat = COLD_RISE, a finite value > 1
  (availability rose; the cases compare n_hat only with 0, 0.5, 1 and infinity, so which
  finite value > 1 does not matter). A job behind schedule after an outage then doubles
  (case 7) instead of restarting at N_min (case 6), as Sec. IV-B says: "When the progress is
  behind schedule, the instance count is doubled (case 6&7)". With n_{t-1}^avail > 0 and at
  t = 1, everything is as literal; so `cold` differs only in a slot t >= 2 after one with no
  spot: on schedule with none now it idles (case 1; literal: case 4 or 5 keeps n_{t-1}),
  behind it doubles n_{t-1} (case 7, N_min if n_{t-1} = 0; literal: case 6, N_min).
"""

from __future__ import annotations

import math
import numbers
import sys

from algorithms.spot.registry import AHANP_STARTS as STARTS, ahanp_name
from algorithms.spot.simulation import MarketInfo, SlotState, SpotPolicy
from market.spot.finetune_job import FineTuneJob

# n_hat of the `cold` reading after an outage when spot is back (n_{t-1}^avail = 0 < n_t^avail):
# finite and > 1 (module docstring); the largest finite float.
COLD_RISE = sys.float_info.max


class AHANP(SpotPolicy):
    """Alg. 3 with spot price threshold sigma = `threshold` > 0 and the reading `start` of its
    start (module docstring: literal, fresh or cold)."""

    def __init__(self, threshold: float, start: str = "literal"):
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, numbers.Real)
            or not math.isfinite(threshold)
            or threshold <= 0
        ):
            raise ValueError(f"AHANP threshold sigma must be a finite number > 0, got {threshold!r}")
        if not isinstance(start, str) or start not in STARTS:
            raise ValueError(f"AHANP start must be one of {', '.join(STARTS)}, got {start!r}")
        self.threshold = float(threshold)
        self.start = start
        self.name = ahanp_name(self.threshold, start)

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
        if prev != 0:
            n_hat = state.availability / prev
        elif self.start == "cold" and t >= 2:  # after an outage: 0 (none now) or a rise
            n_hat = 0.0 if state.availability == 0 else COLD_RISE
        else:
            n_hat = math.inf
        p_hat = state.price / (self.threshold * state.on_demand_price)
        return on_schedule, n_hat, p_hat

    def total(self, t: int, state: SlotState) -> tuple[int, int]:
        """(case number 1..7, n_t) of Alg. 3 lines 4-6 (line 6 also lifts a 0 at t = 1 under
        `fresh`)."""
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
        if n > 0 or (t == 1 and self.start == "fresh"):  # fresh: no n_0 to keep at t = 1
            n = min(max(n, job.n_min), job.n_max)
        return case, n

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        self.last_case, n = self.total(t, state)
        self._prev_availability = state.availability
        spot = min(state.availability, n)
        return n - spot, spot
