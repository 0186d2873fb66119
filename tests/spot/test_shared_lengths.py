"""One label sweep for the windows of several AHAP policies at one state (paper 000, Sec.
IV-A, Alg. 1 line 13; `shared_incumbents.solve_lengths`, `window_kernels.dp_layers`) and the
tabulated bound on the terminal value that prunes its labels (`terminal_table`), against the
reference: each window's plan, objective and best objective the same bit for bit as
`solve_with_incumbents` (and `window_kernels.solve`) give it alone, on small windows (also
with exact float ties) and windows of the paper's size, under both readings of sigma."""

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot import shared_incumbents as si, window_kernels as wk, window_problem as wp
from market.spot.finetune_job import FineTuneJob
from tests.spot.test_spot_window_dp import kernel_args, paper_size_case
from tests.spot.test_spot_window_problem import window_cases

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIGMAS = [None, 0.3, 0.6, 0.9, 1.2]


def tables_of(job):
    tables = wp._job_tables(job)
    return (
        tables.jf,
        tables.ji,
        tables.counts_np,
        tables.count_h_np,
        tables.count_first_np,
        tables.first_late_np,
        tables.tilde_first_np,
    )


def solve_group(job, t, z, n_prev, prices, avails, sigma, ends, rows, n_inc, terminal):
    """solve_lengths for the windows of ends[g] slots from slot t, set up as `kernel_args`
    sets up each (the longest window's costs; each window's floors)."""
    longest = kernel_args(job, t, z, n_prev, prices[: ends[-1]], avails[: ends[-1]], 1.0, sigma)
    each = [kernel_args(job, t, z, n_prev, prices[:end], avails[:end], 1.0, sigma) for end in ends]
    width = max(args[12].shape[1] for args in each)
    fx = np.zeros((len(ends), ends[-1], width))
    fy = np.zeros((len(ends), ends[-1], width))
    fn = np.ones((len(ends), ends[-1]), dtype=np.int64)
    for g, args in enumerate(each):
        fx[g, : ends[g], : args[12].shape[1]] = args[12]
        fy[g, : ends[g], : args[13].shape[1]] = args[13]
        fn[g, : ends[g]] = args[14]
    slots_after = np.array([args[16] for args in each], dtype=np.int64)
    caps = np.array([args[25] for args in each])
    table = np.empty((len(ends), 0))
    if terminal:
        table = np.array([si.terminal_table(int(s), 1.0, *tables_of(job)) for s in slots_after])
    index = si.total_index(wp._job_tables(job).opts_np, job.n_max)
    return each, si.solve_lengths(
        *longest[:12],
        fx,
        fy,
        fn,
        longest[15],
        np.array(ends, dtype=np.int64),
        slots_after,
        1.0,
        *tables_of(job),
        caps,
        index,
        rows,
        n_inc,
        table,
        si.terminal_step(job.workload),
    )


def assert_group_same(job, t, z, n_prev, prices, avails, sigma, ends, plans, terminal):
    length = ends[-1]
    rows = np.zeros((max(1, len(plans)), length), dtype=np.int64)
    for r, plan in enumerate(plans):
        for k in range(length):
            rows[r, k] = plan[min(k, len(plan) - 1)]
    index = si.total_index(wp._job_tables(job).opts_np, job.n_max)
    each, (seqs, objs, tops) = solve_group(job, t, z, n_prev, prices, avails, sigma, ends, rows, len(plans), terminal)
    for g, args in enumerate(each):
        seq, obj, top = si.solve_with_incumbents(*args, index, rows[:, : ends[g]].copy(), len(plans))
        assert wk.solve(*args)[0].tolist() == seq.tolist()
        if seq.size == 0:
            assert np.isnan(objs[g])
            continue
        assert seqs[g, : ends[g]].tolist() == seq.tolist()
        assert repr(float(objs[g])) == repr(float(obj))
        assert repr(float(tops[g])) == repr(float(top))


def group_ends(data, length):
    ends = sorted(data.draw(st.sets(st.integers(1, length), max_size=length)) | {length})
    return ends


@PROPS
@given(window_cases(), st.sampled_from(SIGMAS), st.booleans(), st.data())
def test_one_sweep_gives_each_window_its_plan(case, sigma, terminal, data):
    job, t, z, n_prev, prices, avails = case
    if job.is_complete(z):
        return
    length = min(len(prices), job.deadline - t + 1)
    ends = group_ends(data, length)
    plans = data.draw(
        st.lists(st.lists(st.sampled_from([0, *range(job.n_min, job.n_max + 1)]), min_size=1), max_size=3)
    )
    assert_group_same(job, t, z, n_prev, prices, avails, sigma, ends, plans, terminal)


@PROPS
@given(window_cases(dyadic=True), st.sampled_from(SIGMAS), st.booleans(), st.data())
def test_one_sweep_with_exact_ties(case, sigma, terminal, data):
    job, t, z, n_prev, prices, avails = case
    if job.is_complete(z):
        return
    length = min(len(prices), job.deadline - t + 1)
    assert_group_same(job, t, z, n_prev, prices, avails, sigma, group_ends(data, length), [], terminal)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([(0.9, 0.9), (0.7, 0.9), (1.0, 0.6)]),
    st.booleans(),
    st.sampled_from(SIGMAS),
    st.data(),
)
def test_paper_size_windows(seed, mu, dyadic, sigma, data):
    job, t, _, _, _, _, _ = paper_size_case(seed, mu, dyadic)
    job, t, z, n_prev, prices, avails, rng = paper_size_case(seed, mu, dyadic, min(6, job.deadline - t + 1))
    length = len(prices)
    n_min, n_max = job.n_min, job.n_max
    opts = [0, *range(n_min, n_max + 1)]
    plans = [rng.choice(opts, length).tolist() for _ in range(3)]
    assert_group_same(job, t, z, n_prev, prices, avails, sigma, group_ends(data, length), plans, True)


@settings(max_examples=100, deadline=None)
@given(window_cases(), st.data())
def test_the_terminal_table_bounds_the_continuation_value(case, data):
    """Entry i of terminal_table is at least the continuation value (window_problem.py) at
    any progress up to i L / TERMINAL_GRID after any last total, and the entries never
    decrease."""
    job, _, _, _, _, _ = case
    slots_after = data.draw(st.integers(0, job.deadline))
    table = si.terminal_table(slots_after, 1.0, *tables_of(job))
    assert np.all(np.diff(table) >= 0)
    step = job.workload / si.TERMINAL_GRID
    opts = wp._job_tables(job).opts_np
    for _ in range(20):
        i = data.draw(st.integers(0, table.size - 1))
        z = data.draw(st.floats(0.0, i * step)) if i else 0.0
        n = int(data.draw(st.sampled_from(opts.tolist())))
        assert table[i] >= wk.continuation(z, n, slots_after, 1.0, *tables_of(job))


def test_a_window_of_one_slot_on_a_hand_made_case():
    """L = 4, H(n) = n, mu = 1, p^o = 1, v = 10, deadline 2 and spot at 0.5 with 2 available:
    from Z = 0 at slot 1 the window of one slot buys 2 spot and leaves 2 work for slot 2
    (objective 10 - 1 - 2 = 7, on-demand in the continuation), the window of two slots buys 2
    spot in each (10 - 2 = 8); one sweep gives both."""
    job = FineTuneJob(workload=4.0, deadline=2, n_min=1, n_max=3, mu1=1.0, mu2=1.0, value=10.0)
    prices, avails = [0.5, 0.5], [2, 2]
    rows = np.zeros((1, 2), dtype=np.int64)
    _, (seqs, objs, _) = solve_group(job, 1, 0.0, 0, prices, avails, None, [1, 2], rows, 0, True)
    assert seqs[0, :1].tolist() == [2]
    assert seqs[1].tolist() == [2, 2]
    assert objs[1] == 8.0
    assert objs[0] == 7.0
