"""UP-track: a Uniform Progress variant that buys only what the line needs, spot first.

A variant beside the reference UP (algorithms/spot/uniform_progress.py), for paper 000's
elastic job: in slot t it runs the fewest instances n in [N_min, N_max] whose progress after
the slot, mu_t H(n) on top of the progress so far (eq. 2, 5a), reaches the uniform line
ep = t L / d at the slot's end (eq. 6); none when the job is already there; N_max when no n
reaches it. Of those n, min(avail, n) are spot and the rest on-demand. The deadline safety net
shared with MSU then applies: if the job could no longer finish by d with N_max in every later
slot, it runs N_max now. Spot price is ignored.
"""

from __future__ import annotations

from algorithms.spot.simulation import SlotState, SpotPolicy, safe_or_n_max


class UniformProgressTrack(SpotPolicy):
    name = "UP-track"

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        job = state.job
        target = job.workload / job.deadline * t - job.tolerance()
        if state.progress >= target:
            return safe_or_n_max(state, 0, 0)
        n = job.n_max
        for m in range(job.n_min, job.n_max + 1):
            if state.progress + job.slot_work(m, state.n_prev) >= target:
                n = m
                break
        spot = min(state.availability, n)
        return safe_or_n_max(state, n - spot, spot)
