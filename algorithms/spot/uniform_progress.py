"""UP baseline: Uniform Progress as its authors built it (Wu et al., "Can't Be Late", NSDI'24).

Paper 000, Sec. VI-A: "UP compares the accumulated progress against the expected progress,
which incorporates reconfiguration overhead. It prioritizes spot usage when available, and
resorts to on-demand instances only when progress falls behind and spot instances are
unavailable." The rules are Can't Be Late's (Sec. 5.2.2, with the Safety Net of Sec. 3):

1. Uniform Progress: behind the line (cp(t) < ep(t)) and no spot: on-demand.
2. Taking Risks: spot whenever it is available, behind the line or not; on or above the line
   with no spot: idle.
3. Hysteresis: once on on-demand, stay on it until spot is available and cp(t) >= ep(t + 2d).
4. Safety Net: idle or on on-demand with R(t) <= C(t) + 2d: on-demand; with R(t) <= C(t) + d:
   on-demand unless the job is on spot and spot is still there (it rides spot out: here only a
   full cluster of N_max spot instances, which progresses as fast as on-demand, as CBL's spot
   instance does; a smaller spot cluster would lose the deadline).

Our units (docs/spot/model.md, "UP"): one slot is one time unit; ep(t) = (t - 1) L / d is the
line at the start of slot t (eq. 6); the changeover delay d is the slot fraction a
reconfiguration loses, 1 - mu1 (eq. 2); R(t) = d - t + 1 slots are left and C(t) = the remaining
work over H(N_max), the time it needs on the on-demand cluster; times are rounded up to whole
slots as the reference rounds to ticks. Several instances (CBL Sec. 5.5, homogeneous clusters):
on-demand means N_max on-demand instances; spot is available when at least N_min can run and
then runs every usable spot instance, min(avail, N_max), the elastic job of paper 000 in place of
CBL's fixed N. Spot price is ignored, as in CBL.
"""

from __future__ import annotations

import math

from algorithms.spot.simulation import MarketInfo, SlotState, SpotPolicy, usable_spot
from market.spot.finetune_job import FineTuneJob

IDLE, SPOT, ON_DEMAND = "idle", "spot", "on-demand"


class UniformProgress(SpotPolicy):
    name = "UP"

    def reset(self, job: FineTuneJob, market_info: MarketInfo) -> None:
        super().reset(job, market_info)
        self.mode = IDLE  # what the previous slot ran

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        job = state.job
        spot = usable_spot(state.availability, job)
        has_spot = spot > 0
        rate = job.workload / job.deadline
        overhead = 1.0 - job.mu1
        elapsed = t - 1
        progress = state.progress + job.tolerance()

        mode = SPOT if has_spot else IDLE
        if progress < rate * elapsed:
            mode = SPOT if has_spot else ON_DEMAND
        if self.mode == ON_DEMAND and (not has_spot or progress < rate * (elapsed + 2 * overhead)):
            mode = ON_DEMAND

        slots_left = state.slots_left
        compute = state.remaining_work / job.throughput(job.n_max)
        if self.mode in (IDLE, ON_DEMAND) and _slots(compute + 2 * overhead) >= slots_left:
            mode = ON_DEMAND
        elif _slots(compute + overhead) >= slots_left and not (self.mode == SPOT and spot == job.n_max):
            mode = ON_DEMAND

        self.mode = mode
        if mode == ON_DEMAND:
            return job.n_max, 0
        if mode == SPOT:
            return 0, spot
        return 0, 0


def _slots(time: float) -> int:
    return math.ceil(time - 1e-9)
