"""Problem (10) of paper 000 (Sec. IV-A): the exact window solver against brute force."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot.window_problem import (
    TIE_TOL,
    WindowSolver,
    cheapest_split,
    continuation_value,
    continuation_values,
    solve_window,
    window_length,
)
from market.spot.finetune_job import FineTuneJob
from tests.spot.strategies import jobs

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- independent reference implementations --------------------------------------


def reference_continuation(job, z, n_last, slots_left, p_o):
    """Run m on-demand per slot (closed-form progress), then the termination; best m."""
    if job.is_complete(z):
        return job.value
    if slots_left == 0:
        return job.tilde_value(z, n_last, p_o)
    best = -math.inf
    for m in range(job.n_min, job.n_max + 1):
        first, h = job.slot_work(m, n_last), job.throughput(m)
        for k in range(1, slots_left + 1):
            if z + first + (k - 1) * h >= job.workload - job.tolerance():
                best = max(best, job.value - k * m * p_o)
                break
        else:
            z_d = z + first + (slots_left - 1) * h
            best = max(best, job.tilde_value(z_d, m, p_o) - slots_left * m * p_o)
    return best


def brute_force(job, t, z0, n_prev, prices, avails, p_o, spot_limit=None, cap=math.inf):
    """Every sequence of totals; the job finishing ends the plan (zeros afterwards).

    Returns the list of (objective, cost, progress, sum, totals) and the winner by the
    documented rule: objective within the tie tolerance of the best, then least cost,
    then most progress, then fewest instance-slots, then lexicographically smallest.
    With `spot_limit` (the `line` reading of sigma), a running slot priced at or below it
    with availability >= N_min must use all its spot, min(avail, N_max), spot first, and the
    terminal value is that of min(progress, cap).
    """
    length = min(len(prices), job.deadline - t + 1)
    opts = [0, *range(job.n_min, job.n_max + 1)]
    rows = []
    for seq in itertools.product(opts, repeat=length):
        z, c, prev, finished = z0, 0.0, n_prev, False
        valid = True
        for k, n in enumerate(seq):
            if finished:
                valid = n == 0
                if not valid:
                    break
                continue
            forced = spot_limit is not None and prices[k] <= spot_limit and avails[k] >= job.n_min
            if forced and n < min(avails[k], job.n_max):
                valid = False
                break
            if prices[k] < p_o or forced:
                s = min(avails[k], n)
            else:
                s = 0
            z = z + job.slot_work(n, prev)
            c = c + ((n - s) * p_o + s * prices[k])
            prev = n
            finished = z >= job.workload - job.tolerance()
        if not valid:
            continue
        if finished:
            obj = job.value - c
        else:
            obj = continuation_value(job, min(z, cap), prev, job.deadline - (t + length - 1), p_o) - c
        rows.append((obj, c, z, sum(seq), seq))
    best = max(r[0] for r in rows)
    tied = [r for r in rows if r[0] >= best - TIE_TOL * max(1.0, job.value)]
    winner = min(tied, key=lambda r: (r[1], -r[2], r[3], r[4]))
    return rows, best, winner


# --- strategies ------------------------------------------------------------------


@st.composite
def window_cases(draw, dyadic=False):
    """Small windows (omega in 0..3, N_max <= 4); `dyadic` makes float sums exact so
    that many plans tie exactly."""
    n_min = draw(st.integers(1, 3))
    n_max = draw(st.integers(n_min, 4))
    if dyadic:
        alpha = draw(st.sampled_from([0.5, 1.0, 2.0]))
        beta = draw(st.sampled_from([0.0, 0.5]))
        mu1 = draw(st.sampled_from([0.5, 0.75, 1.0]))
        mu2 = draw(st.sampled_from([0.5, 0.75, 1.0]))
        workload = draw(st.sampled_from([2.0, 4.0, 6.0, 8.0, 12.0, 16.0]))
        value = draw(st.sampled_from([4.0, 8.0, 16.0, 32.0]))
        price = st.sampled_from([0.25, 0.5, 0.75, 1.0, 1.5])
    else:
        alpha = draw(st.floats(0.25, 2.0))
        beta = draw(st.floats(-0.2, 1.0))
        if alpha * n_min + beta <= 0:
            beta = 0.0
        mu1 = draw(st.floats(0.3, 1.0))
        mu2 = draw(st.floats(0.3, 1.0))
        workload = draw(st.floats(1.0, 40.0))
        value = draw(st.floats(1.0, 80.0))
        price = st.floats(0.05, 2.0)
    deadline = draw(st.integers(1, 6))
    job = FineTuneJob(
        workload=workload,
        deadline=deadline,
        n_min=n_min,
        n_max=n_max,
        alpha=alpha,
        beta=beta,
        mu1=mu1,
        mu2=mu2,
        value=value,
        gamma=draw(st.sampled_from([1.5, 2.0, 3.0])),
    )
    t = draw(st.integers(1, deadline))
    omega = draw(st.integers(0, 3))
    prices = draw(st.lists(price, min_size=omega + 1, max_size=omega + 1))
    avails = draw(st.lists(st.integers(0, 5), min_size=omega + 1, max_size=omega + 1))
    if dyadic:
        z0 = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5])) * workload / 8
    else:
        z0 = draw(st.floats(0.0, 1.0)) * workload
    n_prev = draw(st.sampled_from([0, *range(n_min, n_max + 1)]))
    return job, t, z0, n_prev, prices, avails


def check_against_brute_force(case):
    job, t, z0, n_prev, prices, avails = case
    plan = solve_window(job, t, z0, n_prev, prices, avails, 1.0)
    length = window_length(job, t, len(prices) - 1)
    assert len(plan.on_demand) == len(plan.spot) == length
    if job.is_complete(z0):
        assert plan.totals == (0,) * length and plan.objective == job.value
        return
    rows, best, winner = brute_force(job, t, z0, n_prev, prices, avails, 1.0)
    assert plan.objective >= best - TIE_TOL * max(1.0, job.value)
    assert plan.objective == pytest.approx(best, abs=1e-9 * max(1.0, job.value))
    assert plan.totals == winner[4]
    assert plan.objective == winner[0]
    for k, (o, s) in enumerate(zip(plan.on_demand, plan.spot)):
        assert (o, s) == cheapest_split(o + s, prices[k], avails[k], 1.0)
        assert s <= avails[k]
        assert o + s == 0 or job.n_min <= o + s <= job.n_max


@PROPS
@given(window_cases())
def test_solver_matches_brute_force(case):
    check_against_brute_force(case)


def check_line_reading_against_brute_force(case, sigma):
    job, t, z0, n_prev, prices, avails = case
    length = window_length(job, t, len(prices) - 1)
    end = t + length - 1
    cap = math.inf if end >= job.deadline else job.workload / job.deadline * end
    plan = solve_window(job, t, z0, n_prev, prices, avails, 1.0, sigma, cap)
    if job.is_complete(z0):
        assert plan.totals == (0,) * length
        return
    rows, best, winner = brute_force(job, t, z0, n_prev, prices, avails, 1.0, sigma, cap)
    assert plan.totals == winner[4]
    assert plan.objective == winner[0]
    running = True
    z, prev = z0, n_prev
    for k, (o, s) in enumerate(zip(plan.on_demand, plan.spot)):
        if running and prices[k] <= sigma and avails[k] >= job.n_min:
            assert s == min(avails[k], job.n_max)  # all the spot under sigma p^o
        assert s <= avails[k]
        z = z + job.slot_work(o + s, prev)
        prev = o + s
        running = running and not job.is_complete(z)


@PROPS
@given(window_cases(), st.sampled_from([0.3, 0.5, 0.7, 0.9, 1.3]))
def test_line_reading_matches_brute_force(case, sigma):
    check_line_reading_against_brute_force(case, sigma)


@PROPS
@given(window_cases(dyadic=True), st.sampled_from([0.25, 0.5, 0.75, 1.5]))
def test_line_reading_matches_brute_force_with_exact_ties(case, sigma):
    check_line_reading_against_brute_force(case, sigma)


def test_line_reading_hand_computed():
    # L = 22 over d = 6 slots, N in 1..4, H(n) = n, no overhead, v = 40. At t = 2 with Z = 6
    # the window is slots 2-3 (spot 0.9 and 0.95, 4 available in each); the line at slot 3 is
    # 22 / 6 * 3 = 11, and slots 4-6 are left to the on-demand continuation.
    job = FineTuneJob(workload=22, deadline=6, n_min=1, n_max=4, mu1=1.0, mu2=1.0, value=40)
    prices, avails = [0.9, 0.95], [4, 4]
    # Today's reading: (4, 4) spot (7.4) reaches 14 and 2 on-demand slots of 4 finish (8.0):
    # 40 - 15.4 = 24.6, better than stopping at 12 with (4, 2) (5.5 + 12.0).
    plan = solve_window(job, 2, 6.0, 4, prices, avails, 1.0)
    assert plan.spot == (4, 4) and plan.objective == pytest.approx(24.6)
    # The line reading values progress up to 11 only. From 10 as from 11 the continuation needs
    # 3 on-demand slots of 4 (12.0), so 4 spot in slot 2 (3.6) is the best: 40 - 15.6 = 24.4.
    # sigma = 0.6 forces no slot ...
    plan = solve_window(job, 2, 6.0, 4, prices, avails, 1.0, 0.6, 22 / 6 * 3)
    assert plan.spot == (4, 0) and plan.totals == (4, 0) and plan.objective == pytest.approx(24.4)
    # ... nor does 0.9 add anything (slot 2 already uses its 4) ...
    assert solve_window(job, 2, 6.0, 4, prices, avails, 1.0, 0.9, 22 / 6 * 3).totals == (4, 0)
    # ... while sigma = 0.95 forces slot 3's spot too: 40 - 7.4 - 12.0 (progress above the line
    # is not counted by the capped terminal value).
    plan = solve_window(job, 2, 6.0, 4, prices, avails, 1.0, 0.95, 22 / 6 * 3)
    assert plan.spot == (4, 4) and plan.objective == pytest.approx(20.6)


@PROPS
@given(window_cases(dyadic=True))
def test_solver_matches_brute_force_with_exact_ties(case):
    check_against_brute_force(case)


def test_dyadic_cases_do_tie():
    # The tie-breaking test is meaningful: this window has several optimal plans.
    job = FineTuneJob(workload=4, deadline=2, n_min=1, n_max=2, mu1=1.0, mu2=1.0, value=8)
    rows, best, winner = brute_force(job, 1, 0.0, 0, [1.0, 1.0], [0, 0], 1.0)
    tied = [r for r in rows if r[0] == best]
    # 2 + 2 on-demand finishes in slot 2 (cost 4); so does any plan of 4 instance-slots ...
    # only (2, 2) reaches 4 in two slots; with the window ending at d, waiting costs more.
    assert winner[4] == (2, 2) and best == 4.0
    job = FineTuneJob(workload=4, deadline=4, n_min=1, n_max=2, mu1=1.0, mu2=1.0, value=8)
    rows, best, winner = brute_force(job, 1, 0.0, 0, [1.0, 1.0], [0, 0], 1.0)
    tied = [r for r in rows if r[0] == best]
    # Slots 3-4 remain after the window: (0, 0) then 2 + 2 on-demand costs the same as
    # (2, 2) now. Least window cost wins: wait.
    assert len(tied) > 1
    assert winner[4] == (0, 0)
    plan = solve_window(job, 1, 0.0, 0, [1.0, 1.0], [0, 0], 1.0)
    assert plan.totals == (0, 0) and plan.objective == 4.0


def vectorized_brute_force(job, t, z0, n_prev, prices, avails, p_o):
    """brute_force with numpy, for the paper's sizes (13 totals, windows up to 4 slots)."""
    length = min(len(prices), job.deadline - t + 1)
    opts = np.array([0, *range(job.n_min, job.n_max + 1)])
    seqs = opts[np.array(list(itertools.product(range(opts.size), repeat=length)))]
    work = np.array([[job.slot_work(int(n), p) for n in range(job.n_max + 1)] for p in range(job.n_max + 1)])
    rows = seqs.shape[0]
    z, c = np.full(rows, float(z0)), np.zeros(rows)
    prev = np.full(rows, n_prev)
    running, valid = np.ones(rows, dtype=bool), np.ones(rows, dtype=bool)
    obj = np.full(rows, np.nan)
    for k in range(length):
        n = seqs[:, k]
        valid &= running | (n == 0)
        s = np.minimum(n, avails[k]) if prices[k] < p_o else np.zeros_like(n)
        z = np.where(running, z + work[prev, n], z)
        c = np.where(running, c + ((n - s) * p_o + s * prices[k]), c)
        prev = np.where(running, n, prev)
        finished = running & (z >= job.workload - job.tolerance())
        obj[finished] = job.value - c[finished]
        running &= ~finished
    slots_after = job.deadline - (t + length - 1)
    # continuation_values is checked against the scalar reference above.
    obj[running] = continuation_values(job, z[running], prev[running], slots_after, p_o) - c[running]
    obj, c, z, seqs = obj[valid], c[valid], z[valid], seqs[valid]
    tied = np.flatnonzero(obj >= obj.max() - TIE_TOL * max(1.0, job.value))
    keys = tuple(seqs[tied, j] for j in range(length - 1, -1, -1))
    i = tied[np.lexsort(keys + (seqs[tied].sum(axis=1), -z[tied], c[tied]))[0]]
    return obj.max(), obj[i], tuple(seqs[i].tolist())


@pytest.mark.parametrize(
    "job",
    [
        FineTuneJob(),
        FineTuneJob(n_min=2, beta=0.5, mu1=0.8, mu2=0.95),
        FineTuneJob(mu1=1.0, mu2=1.0),
    ],
)
def test_solver_matches_brute_force_at_the_paper_size(job):
    # N in [n_min, 12], windows of 2-4 slots, half of them with prices on a coarse grid
    # (many exact ties), progress anywhere before the deadline.
    rng = np.random.default_rng(2024)
    for _ in range(12):
        omega = int(rng.integers(1, 4))
        t = int(rng.integers(1, job.deadline + 1))
        z0 = float(rng.uniform(0.0, 0.9)) * job.workload * min(1.0, 1.3 * t / job.deadline)
        n_prev = int(rng.choice([0, *range(job.n_min, job.n_max + 1)]))
        if rng.random() < 0.5:
            prices = rng.choice([0.25, 0.5, 0.75, 1.0, 1.25], omega + 1).tolist()
        else:
            prices = rng.uniform(0.1, 1.3, omega + 1).tolist()
        avails = rng.integers(0, 17, omega + 1).tolist()
        plan = solve_window(job, t, z0, n_prev, prices, avails, 1.0)
        best, objective, totals = vectorized_brute_force(job, t, z0, n_prev, prices, avails, 1.0)
        assert plan.totals == totals and plan.objective == objective
        assert plan.objective >= best - TIE_TOL * job.value


# --- hand-computed windows ------------------------------------------------------


def test_cheapest_split_uses_spot_only_when_cheaper():
    assert cheapest_split(5, 0.4, 3, 1.0) == (2, 3)
    assert cheapest_split(2, 0.4, 3, 1.0) == (0, 2)
    assert cheapest_split(5, 1.0, 3, 1.0) == (5, 0)
    assert cheapest_split(5, 1.2, 3, 1.0) == (5, 0)
    assert cheapest_split(0, 0.4, 3, 1.0) == (0, 0)


def test_window_is_cut_at_the_deadline():
    job = FineTuneJob()
    assert window_length(job, 1, 3) == 4
    assert window_length(job, 8, 3) == 3
    assert window_length(job, 10, 3) == 1
    plan = solve_window(job, 9, 70.0, 10, [0.3] * 4, [16] * 4, 1.0)
    assert len(plan.totals) == 2


def test_hand_computed_window():
    # L = 8, d = 2, N in [1, 4], H(n) = n, mu = 1, v = 20, p_o = 1; window = both slots.
    # Spot 0.25 x 2 in slot 1, none in slot 2. Finishing needs 8 work by d.
    # Best: 4 in slot 1 (2 spot + 2 od = 2.5), 4 od in slot 2 (4): Z = 8, utility 20 - 6.5.
    job = FineTuneJob(workload=8, deadline=2, n_min=1, n_max=4, mu1=1.0, mu2=1.0, value=20)
    plan = solve_window(job, 1, 0.0, 0, [0.25, 0.5], [2, 0], 1.0)
    assert plan.on_demand == (2, 4) and plan.spot == (2, 0)
    assert plan.objective == pytest.approx(13.5)


def test_terminal_value_gives_buying_inside_the_window_value():
    # Default job at slot 1 with a 2-slot window of cheap spot: the window buys spot
    # (worth p_o per unit of work in the continuation) instead of waiting.
    # (11, 12): Z = 9.9 + 10.8 = 20.7, 59.3 left = 5 slots of 12 (mu = 1): 160 - 60 - 4.6.
    # (12, 12): Z = 22.8, 57.2 left still needs 60 instance-slots: 160 - 60 - 4.8 = 95.2.
    job = FineTuneJob()
    plan = solve_window(job, 1, 0.0, 0, [0.2, 0.2], [12, 12], 1.0)
    assert plan.spot == (11, 12) and plan.on_demand == (0, 0)
    assert plan.objective == pytest.approx(95.4)
    # Expensive spot: nothing in the window is cheaper than the on-demand continuation.
    plan = solve_window(job, 1, 0.0, 0, [1.5, 1.5], [12, 12], 1.0)
    assert sum(plan.spot) == 0


def test_job_finishing_inside_the_window_ends_the_accounting():
    # L = 4, H(n) = n, mu = 1: 4 spot at 0.5 in slot 1 finishes; utility v - 2.
    job = FineTuneJob(workload=4, deadline=5, n_min=1, n_max=4, mu1=1.0, mu2=1.0, value=10)
    plan = solve_window(job, 1, 0.0, 0, [0.5, 0.1, 0.2], [4, 4, 4], 1.0)
    # Slot 2 spot at 0.1 is cheapest: 4 spot in slot 2 (0.4) finish the job, the plan is
    # 0 afterwards and no continuation is added.
    assert plan.totals == (0, 4, 0) and plan.objective == pytest.approx(10 - 0.4)
    # Equal prices in slots 2 and 3: same cost and progress, same instance-slots; the
    # lexicographically smallest sequence of totals, (0, 0, 4), wins.
    plan = solve_window(job, 1, 0.0, 0, [0.5, 0.1, 0.1], [4, 4, 4], 1.0)
    assert plan.totals == (0, 0, 4) and plan.objective == pytest.approx(10 - 0.4)


# --- the terminal (continuation) value ------------------------------------------


@st.composite
def continuation_cases(draw):
    job = draw(jobs())
    z = draw(st.lists(st.floats(0.0, 1.2), min_size=1, max_size=30))
    n_last = draw(st.sampled_from([0, *range(job.n_min, job.n_max + 1)]))
    slots_left = draw(st.integers(0, job.deadline))
    p_o = draw(st.sampled_from([1.0, 0.5, 2.0]))
    return job, np.array(z) * job.workload, n_last, slots_left, p_o


@PROPS
@given(continuation_cases())
def test_continuation_matches_reference_and_tilde_value(case):
    job, z, n_last, slots_left, p_o = case
    got = continuation_values(job, z, np.full(z.size, n_last), slots_left, p_o)
    for zi, gi in zip(z.tolist(), got.tolist()):
        assert gi == reference_continuation(job, zi, n_last, slots_left, p_o)
        if slots_left == 0:
            assert gi == job.tilde_value(zi, n_last, p_o)  # eq. 9 exactly at d
        assert gi <= job.value


@PROPS
@given(continuation_cases())
def test_continuation_is_non_decreasing_in_progress(case):
    # The claim behind the (progress, cost) Pareto pruning of the DP.
    job, z, n_last, slots_left, p_o = case
    z = np.sort(z)
    got = continuation_values(job, z, np.full(z.size, n_last), slots_left, p_o)
    assert np.all(np.diff(got) >= 0)


def test_continuation_hand_computed():
    job = FineTuneJob()  # L = 80, d = 10, N in [1, 12], H(n) = n, mu = 0.9, v = 160
    # 8 slots left from Z = 0 after idling: m = 11: 9.9 + 7 * 11 = 86.9 >= 80 in 8 slots
    # (cost 88); m = 10: 9 + 70 = 79 < 80 -> late. m = 11 finishing earlier? 9.9 + 6*11 =
    # 75.9 < 80, so 8 slots. m = 12: 10.8 + 6*12 = 82.8 in 7 slots: cost 84. Best 160 - 84.
    assert continuation_value(job, 0.0, 0, 8, 1.0) == pytest.approx(76.0)
    # At d (no slot left) it is V~: 80 left on 12 from 12: 7 slots, T = 17, V = 160 * 0.3.
    assert continuation_value(job, 0.0, 12, 0, 1.0) == pytest.approx(160 * 0.3 - 84)
    assert continuation_value(job, 80.0, 3, 4, 1.0) == 160.0


# --- the memo -----------------------------------------------------------------------


def test_window_solver_caches_on_rounded_progress():
    job = FineTuneJob()
    solver = WindowSolver()
    a = solver.solve(job, 2, 10.0, 9, [0.4, 0.6, 0.9], [8, 4, 0], 1.0)
    b = solver.solve(job, 2, 10.0 + 1e-12, 9, np.array([0.4, 0.6, 0.9]), np.array([8, 4, 0]), 1.0)
    assert a is b and solver.hits == 1 and solver.misses == 1
    assert a == solve_window(job, 2, 10.0, 9, [0.4, 0.6, 0.9], [8, 4, 0], 1.0)
    c = solver.solve(job, 2, 10.5, 9, [0.4, 0.6, 0.9], [8, 4, 0], 1.0)
    assert c is not a and solver.misses == 2 and len(solver) == 2
    # Entries past the deadline do not change the key.
    d = solver.solve(job, 9, 60.0, 9, [0.4, 0.6, 0.9], [8, 4, 0], 1.0)
    e = solver.solve(job, 9, 60.0, 9, [0.4, 0.6, 0.1], [8, 4, 16], 1.0)
    assert d is e


def test_window_solver_drops_the_oldest_entry():
    job = FineTuneJob()
    solver = WindowSolver(maxsize=2)
    for z in (1.0, 2.0, 3.0):
        solver.solve(job, 1, z, 0, [0.5], [4], 1.0)
    assert len(solver) == 2
    solver.solve(job, 1, 1.0, 0, [0.5], [4], 1.0)
    assert solver.misses == 4


def test_invalid_inputs():
    job = FineTuneJob()
    with pytest.raises(ValueError, match="outside 1..10"):
        solve_window(job, 11, 0.0, 0, [0.5], [4], 1.0)
    with pytest.raises(ValueError, match="n_prev"):
        solve_window(job, 1, 0.0, 13, [0.5], [4], 1.0)
    with pytest.raises(ValueError, match="at least 1 slot"):
        solve_window(job, 1, 0.0, 0, [], [], 1.0)
    with pytest.raises(ValueError, match="maxsize"):
        WindowSolver(maxsize=0)
