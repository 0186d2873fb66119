"""The fast paths of the window solver (algorithms/spot/window_problem.py) give the
same numbers as the reference ones: the scalar continuation value equals
`continuation_values` bit for bit, and the per-job memo does not change a plan."""

import numpy as np
from hypothesis import given

from algorithms.spot import window_problem as wp
from market.spot.finetune_job import FineTuneJob
from tests.spot.test_spot_window_problem import PROPS, continuation_cases


@PROPS
@given(continuation_cases())
def test_scalar_continuation_is_bit_identical(case):
    job, z, n_last, slots_left, p_o = case
    tables = wp._job_tables(job)
    vector = wp.continuation_values(job, z, [n_last] * len(z), slots_left, p_o).tolist()
    scalar = [wp._continuation(job, tables, zi, n_last, slots_left, p_o) for zi in z]
    assert [repr(v) for v in scalar] == [repr(v) for v in vector]


def test_memo_does_not_change_plans():
    # The same windows solved with cold tables, then again with the memo filled by
    # other windows of the same job (different slots, progress and previous totals).
    job = FineTuneJob(workload=96.0, n_min=2, n_max=14)
    rng = np.random.default_rng(7)
    cases = []
    for _ in range(40):
        t = int(rng.integers(1, job.deadline + 1))
        omega = int(rng.integers(0, 5))
        cases.append(
            (
                job,
                t,
                float(rng.uniform(0, 0.8)) * job.workload,
                int(rng.choice([0, *range(2, 15)])),
                rng.choice([0.3, 0.45, 0.6, 0.9, 1.2], omega + 1).tolist(),
                rng.integers(0, 17, omega + 1).tolist(),
                1.0,
            )
        )
    cold = []
    for case in cases:
        wp._job_tables.cache_clear()
        cold.append(wp.solve_window(*case))
    wp._job_tables.cache_clear()
    warm = [wp.solve_window(*case) for case in reversed(cases)][::-1]
    assert len(wp._job_tables(job).memo) > 0
    assert [(p.on_demand, p.spot, repr(p.objective)) for p in warm] == [
        (p.on_demand, p.spot, repr(p.objective)) for p in cold
    ]
