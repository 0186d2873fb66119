"""The window DP of problem (10) (paper 000, Sec. IV-A, Alg. 1 line 13) as the solver runs
it (`window_kernels.dp_steps`: labels in sequence order, candidates merged from sorted
runs, the cost floor written out) against the DP it replaced (`dp_steps_reference`, a
test-only kernel in tests/spot/reference_kernels.py): `solve` and `solve_reference` must
return the same plan and the same objective bit for bit, on small windows (also with
exact float ties) and on windows of the paper's size."""

import math

import numpy as np
from hypothesis import given, strategies as st

from algorithms.spot import window_kernels as wk, window_problem as wp
from market.spot.finetune_job import FineTuneJob
from tests.spot.reference_kernels import solve_reference
from tests.spot.test_spot_window_problem import PROPS, window_cases


def kernel_args(job, t, z, n_prev, prices, avails, p_o, sigma=None):
    """The arguments `solve_window` passes to `window_kernels.solve` (with `sigma`: those of
    AHAP's `line` reading, the slots under sigma p^o forced and the terminal value capped)."""
    length = min(len(prices), job.deadline - t + 1)
    price = [float(p) for p in prices[:length]]
    avail = [int(a) for a in avails[:length]]
    tables = wp._job_tables(job)
    costs, cheap, usable, dz, dc, floor_x, floor_y, floor_n, tails = wp._window_arrays(
        job, tables, tables.memo, price, avail, p_o
    )
    cap = math.inf
    if sigma is not None:
        costs, cheap = costs.copy(), cheap.copy()
        wk.spot_floor(
            costs,
            cheap,
            np.array(price),
            np.array(avail, dtype=np.int64),
            p_o,
            sigma * p_o,
            job.n_min,
            job.n_max,
            tables.opts_np,
        )
        end = t + length - 1
        cap = math.inf if end >= job.deadline else job.workload / job.deadline * end
    tie = wp.TIE_TOL * max(1.0, job.value)
    return (
        tables.work_t,
        costs,
        tables.opts_np,
        cheap,
        usable,
        n_prev,
        float(z),
        float(job.value),
        float(job.workload - job.tolerance()),
        tie,
        dz,
        dc,
        floor_x,
        floor_y,
        floor_n,
        tails,
        job.deadline - (t + length - 1),
        p_o,
        tables.jf,
        tables.ji,
        tables.counts_np,
        tables.count_h_np,
        tables.count_first_np,
        tables.first_late_np,
        tables.tilde_first_np,
        cap,
    )


def assert_same(args):
    seq, obj = wk.solve(*args)
    ref_seq, ref_obj = solve_reference(*args)
    assert seq.tolist() == ref_seq.tolist()
    assert repr(float(obj)) == repr(float(ref_obj))


@PROPS
@given(window_cases())
def test_small_windows(case):
    job, t, z, n_prev, prices, avails = case
    if not job.is_complete(z):
        assert_same(kernel_args(job, t, z, n_prev, prices, avails, 1.0))


@PROPS
@given(window_cases(), st.sampled_from([0.3, 0.6, 0.9, 1.2]))
def test_small_windows_line_reading(case, sigma):
    job, t, z, n_prev, prices, avails = case
    if not job.is_complete(z):
        assert_same(kernel_args(job, t, z, n_prev, prices, avails, 1.0, sigma))


@PROPS
@given(window_cases(dyadic=True))
def test_small_windows_with_exact_ties(case):
    job, t, z, n_prev, prices, avails = case
    if not job.is_complete(z):
        assert_same(kernel_args(job, t, z, n_prev, prices, avails, 1.0))


def paper_size_case(seed, mu, dyadic, length=None):
    """A window of the paper's size (deadline 10, N_max 8-16, up to 6 slots) drawn from `seed`:
    (job, t, z, n_prev, prices, avails, rng), with `length` slots if given (else 1-6 at
    random), `dyadic` making float sums exact; rng goes on drawing from where this stopped."""
    rng = np.random.default_rng(seed)
    n_min = int(rng.integers(1, 5))
    n_max = int(rng.integers(max(n_min, 8), 17))
    job = FineTuneJob(
        workload=float(rng.uniform(70, 120)) if not dyadic else 96.0,
        deadline=10,
        n_min=n_min,
        n_max=n_max,
        mu1=mu[0],
        mu2=mu[1],
    )
    t = int(rng.integers(1, 11))
    drawn = int(rng.integers(1, 7))
    length = drawn if length is None else length
    if dyadic:
        prices = rng.choice([0.25, 0.5, 0.75, 1.0, 1.25], length).tolist()
        z = float(rng.integers(0, 8)) * 8.0
    else:
        prices = rng.uniform(0.1, 1.3, length).tolist()
        z = float(rng.uniform(0, 0.8)) * job.workload
    avails = rng.integers(0, 17, length).tolist()
    n_prev = int(rng.choice([0, *range(n_min, n_max + 1)]))
    return job, t, z, n_prev, prices, avails, rng


@PROPS
@given(st.integers(0, 2**32 - 1), st.sampled_from([(0.9, 0.9), (0.7, 0.9), (1.0, 0.6), (0.5, 0.5)]), st.booleans())
def test_paper_size_windows(seed, mu, dyadic):
    job, t, z, n_prev, prices, avails, _ = paper_size_case(seed, mu, dyadic)
    assert_same(kernel_args(job, t, z, n_prev, prices, avails, 1.0))
