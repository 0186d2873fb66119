"""Hypothesis strategies the spot tests share."""

from __future__ import annotations

from hypothesis import strategies as st

from market.spot.finetune_job import FineTuneJob


@st.composite
def jobs(
    draw,
    n_min_high: int = 4,
    n_max_high: int = 16,
    alpha_low: float = 0.25,
    workload_high: float = 200.0,
    deadline_high: int = 12,
    value_high: float = 500.0,
):
    """A valid FineTuneJob: N_min 1-4, N_max up to 16, H(N_min) > 0, d 1-12 slots (by default)."""
    n_min = draw(st.integers(1, n_min_high))
    n_max = draw(st.integers(n_min, n_max_high))
    alpha = draw(st.floats(alpha_low, 2.0))
    beta = draw(st.floats(-0.2, 1.0))
    if alpha * n_min + beta <= 0:
        beta = 0.0
    return FineTuneJob(
        workload=draw(st.floats(1.0, workload_high)),
        deadline=draw(st.integers(1, deadline_high)),
        n_min=n_min,
        n_max=n_max,
        alpha=alpha,
        beta=beta,
        mu1=draw(st.floats(0.3, 1.0)),
        mu2=draw(st.floats(0.3, 1.0)),
        value=draw(st.floats(1.0, value_high)),
        gamma=draw(st.floats(1.1, 4.0)),
    )
