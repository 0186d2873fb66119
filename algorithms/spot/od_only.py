"""OD-Only baseline: on-demand instances only, just enough to finish by d.

Paper paper 000, Sec. VI-A ("OD-Only executes fine-tuning jobs
using only on-demand instances"); reading notes `spot`: "enough to finish by d".

Each slot keeps the previous count when running it to d still completes the
job (no reconfiguration, mu = 1); otherwise it takes the smallest n in
[N_min, N_max] that completes the remaining work when run from now to d (mu of
eq. 2 for this slot's change, 1 afterwards), or N_max when none does. Keeping
the count matters: at the paper's defaults n = 9 from slot 1 finishes in slot 9
(8.1 + 8 * 9 = 80.1, cost 81), whereas re-choosing the smallest n every slot
would shrink to 5 in slot 9 (0.9 * 5 + 5 = 9.5 >= 8.9 remaining), pay mu2 and
finish in slot 10 for 82.
"""

from __future__ import annotations

from algorithms.spot.simulation import SlotState, SpotPolicy, work_running


class OnDemandOnly(SpotPolicy):
    name = "OD-Only"

    def decide(self, t: int, state: SlotState) -> tuple[int, int]:
        job = state.job
        remaining = state.remaining_work - job.tolerance()
        slots = state.slots_left
        if state.n_prev and work_running(state.n_prev, slots, state.n_prev, job) >= remaining:
            return state.n_prev, 0
        for n in range(job.n_min, job.n_max + 1):
            if work_running(n, slots, state.n_prev, job) >= remaining:
                return n, 0
        return job.n_max, 0
