"""Hypothesis strategies the spot tests share."""

from __future__ import annotations

from hypothesis import strategies as st

from market.spot.finetune_job import FineTuneJob


@st.composite
def jobs(draw):
    """A valid FineTuneJob: N_min 1-4, N_max up to 16, H(N_min) > 0, d 1-12 slots."""
    n_min = draw(st.integers(1, 4))
    n_max = draw(st.integers(n_min, 16))
    alpha = draw(st.floats(0.25, 2.0))
    beta = draw(st.floats(-0.2, 1.0))
    if alpha * n_min + beta <= 0:
        beta = 0.0
    return FineTuneJob(
        workload=draw(st.floats(1.0, 200.0)),
        deadline=draw(st.integers(1, 12)),
        n_min=n_min,
        n_max=n_max,
        alpha=alpha,
        beta=beta,
        mu1=draw(st.floats(0.3, 1.0)),
        mu2=draw(st.floats(0.3, 1.0)),
        value=draw(st.floats(1.0, 500.0)),
        gamma=draw(st.floats(1.1, 4.0)),
    )
