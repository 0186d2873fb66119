"""UP baseline: Uniform Progress (Wu et al., "Can't Be Late", NSDI'24).

Paper paper 000, Sec. VI-A: "UP compares the accumulated progress
against the expected progress, which incorporates reconfiguration overhead. It
prioritizes spot usage when available, and resorts to on-demand instances only
when progress falls behind and spot instances are unavailable." The expected
progress is the uniform line Z_t^exp = L / d * t of eq. 6.

Multi-instance adaptation (CBL decides one instance: spot, on-demand or idle).
In slot t, a = min(avail, N_max):
1. Spot only: run a spot instances (idle if a < N_min) when the progress after
   this slot, mu_t H(n_t) with mu_t of eq. 2, reaches Z_t^exp.
2. Otherwise top up: the smallest total n in [max(a, N_min), N_max] whose
   progress after this slot reaches Z_t^exp, with min(avail, n) spot and the rest
   on-demand (fewest on-demand instances); N_max when no n reaches the line.
3. The deadline safety net shared with MSU: if the job could then no longer
   finish by d with N_max in every later slot, run N_max now.
Spot price is ignored, as in CBL.
"""

from __future__ import annotations

from algorithms.spot.simulation import SlotState, SpotPolicy, safe_or_n_max, usable_spot


class UniformProgress(SpotPolicy):
    name = "UP"

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        job = state.job
        target = job.workload / job.deadline * t - job.tolerance()
        spot_only = usable_spot(state.availability, job)
        if state.progress + job.slot_work(spot_only, state.n_prev) >= target:
            return safe_or_n_max(state, 0, spot_only)
        spot = min(state.availability, job.n_max)
        n = job.n_max
        for m in range(max(spot, job.n_min), job.n_max + 1):
            if state.progress + job.slot_work(m, state.n_prev) >= target:
                n = m
                break
        spot = min(spot, n)
        return safe_or_n_max(state, n - spot, spot)
