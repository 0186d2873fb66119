"""MSU baseline: Maximal Spot Utilization.

Paper paper 000, Sec. VI-A: "MSU prioritizes using all available
spot instances in the early stages of job execution and switches to on-demand
instances near the deadline". Each slot runs all usable spot, min(avail, N_max)
(0 when fewer than N_min are available), whatever its price, as long as the job
can still finish by d afterwards with N_max instances in every remaining slot.
Otherwise ("near the deadline") it runs N_max instances: all available spot,
on-demand for the rest.
"""

from __future__ import annotations

from algorithms.spot.simulation import SlotState, SpotPolicy, safe_or_n_max, usable_spot


class MaximalSpotUtilization(SpotPolicy):
    name = "MSU"

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        return safe_or_n_max(state, 0, usable_spot(state.availability, state.job))
