"""The fast paths of the window solver (algorithms/spot/window_problem.py) give the
same numbers as the reference ones: the scalar continuation value equals
`continuation_values` bit for bit, and the per-job memo does not change a plan."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from algorithms.spot import window_problem as wp
from market.finetune_job import FineTuneJob

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def states(draw):
    n_min = draw(st.integers(1, 4))
    n_max = draw(st.integers(n_min, 16))
    alpha = draw(st.floats(0.25, 2.0))
    beta = draw(st.floats(-0.2, 1.0))
    if alpha * n_min + beta <= 0:
        beta = 0.0
    job = FineTuneJob(workload=draw(st.floats(1.0, 200.0)), deadline=draw(st.integers(1, 12)),
                      n_min=n_min, n_max=n_max, alpha=alpha, beta=beta,
                      mu1=draw(st.floats(0.3, 1.0)), mu2=draw(st.floats(0.3, 1.0)),
                      value=draw(st.floats(1.0, 500.0)), gamma=draw(st.floats(1.1, 4.0)))
    z = draw(st.lists(st.floats(0.0, 1.2), min_size=1, max_size=20))
    n_last = draw(st.sampled_from([0, *range(n_min, n_max + 1)]))
    return job, [x * job.workload for x in z], n_last, draw(st.integers(0, job.deadline)), \
        draw(st.sampled_from([1.0, 0.5, 2.0]))


@PROPS
@given(states())
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
        cases.append((job, t, float(rng.uniform(0, 0.8)) * job.workload, int(rng.choice([0, *range(2, 15)])),
                      rng.choice([0.3, 0.45, 0.6, 0.9, 1.2], omega + 1).tolist(),
                      rng.integers(0, 17, omega + 1).tolist(), 1.0))
    cold = []
    for case in cases:
        wp._job_tables.cache_clear()
        cold.append(wp.solve_window(*case))
    wp._job_tables.cache_clear()
    warm = [wp.solve_window(*case) for case in reversed(cases)][::-1]
    assert len(wp._job_tables(job).memo) > 0
    assert [(p.on_demand, p.spot, repr(p.objective)) for p in warm] == \
        [(p.on_demand, p.spot, repr(p.objective)) for p in cold]
