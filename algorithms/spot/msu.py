"""MSU baseline: Maximal Spot Utilization.

Paper 000, Sec. VI-A: "MSU prioritizes using all available spot instances in the early stages
of job execution and switches to on-demand instances near the deadline". Each slot before the
switch runs all usable spot, min(avail, N_max) (0 when fewer than N_min are available),
whatever its price. The sentence does not say when "near the deadline" is; two readings:

- ``switch=safety_net`` (``MSU``, the project's first reading): spot as long as the job can
  still finish by d afterwards with N_max instances in every remaining slot; otherwise N_max
  instances, all available spot first, on-demand for the rest. It reacts to the progress made.
- ``switch=time`` (``MSU(switch=time)``): a fixed switch slot, the last from which N_max
  on-demand instances alone finish the whole job by d (d - T_min + 1, T_min the fewest slots
  N_max instances need for L from a cold start); from it on, N_max on-demand instances and no
  spot. It meets d whatever the spot slots did, and ignores the progress they made.
"""

from __future__ import annotations

from algorithms.spot.registry import MSU_SWITCHES as SWITCHES
from algorithms.spot.simulation import SlotState, SpotPolicy, max_work, safe_or_n_max, usable_spot
from market.spot.finetune_job import FineTuneJob


def switch_slot(job: FineTuneJob) -> int:
    """The first on-demand slot of ``switch=time``: d - T_min + 1 (1 when N_max cannot finish
    L by d even from slot 1)."""
    fewest = 1
    while fewest < job.deadline and max_work(fewest, 0, job) + job.tolerance() < job.workload:
        fewest += 1
    return max(1, job.deadline - fewest + 1)


class MaximalSpotUtilization(SpotPolicy):
    name = "MSU"

    def __init__(self, switch: str = "safety_net"):
        if switch not in SWITCHES:
            raise ValueError(f"MSU: switch must be one of {', '.join(SWITCHES)}, got {switch!r}")
        self.switch = switch
        self.first_on_demand = 0

    def reset(self, job, market_info) -> None:
        super().reset(job, market_info)
        if self.switch == "time":
            self.first_on_demand = switch_slot(job)

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        spot = usable_spot(state.availability, state.job)
        if self.switch == "time":
            return (state.job.n_max, 0) if t >= self.first_on_demand else (0, spot)
        return safe_or_n_max(state, 0, spot)
