"""Alg. 1 + Alg. 2 + Alg. 3 on random worlds: capacity, payments, prices, the relaxed usage."""

import math

import numpy as np
import pytest

from algorithms.sow.exponential_prices import ExponentialPrices
from algorithms.sow.scheduler_framework import FrameworkSettings, run_framework
from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, realise, sow_from_lists
from tests.sow.worlds import random_sequence

BOUNDS = Bounds(3, 3, 10, 10.0)


def usage(sequence, out):
    used = np.zeros(sequence.rounds() + 1)
    for j, sow in enumerate(sequence.jobs):
        if out.start[j] < 0:
            continue
        end = out.finish[j] if out.completed[j] else out.extra["stopped"][j]
        used[out.start[j] : end] += sow.concurrency
    return used


@pytest.mark.parametrize("eviction", ["lifo", "fifo", "all"])
def test_capacity_payments_and_stops_on_random_worlds(eviction):
    for seed in range(25):
        rng = np.random.default_rng(seed)
        seq = random_sequence(rng, 20, BOUNDS, ["none", "duration"][seed % 2], births_per_round=3.0)
        real = realise(seq, rng)
        N = int(rng.integers(3, 6))
        out = run_framework(seq, real, FrameworkSettings(nodes=N, eviction=eviction, samples=30), rng)
        assert usage(seq, out).max() <= N
        assert np.all(out.payment[~out.completed] == 0) and np.all(out.value[~out.completed] == 0)
        done = np.flatnonzero(out.completed)
        assert np.all(out.finish[done] == out.start[done] + real.duration[done])
        assert np.all(out.start[out.start >= 0] >= real.arrival[out.start >= 0])
        for j in done:
            assert out.value[j] == seq.jobs[j].value(out.finish[j])
        assert not np.any(out.evicted & out.cancelled)
        assert np.all(out.start[out.cancelled] == -1) and np.all(out.start[out.evicted] >= 0)


def test_announced_prices_never_fall_and_payment_is_the_birth_price():
    rng = np.random.default_rng(3)
    seq = random_sequence(rng, 30, BOUNDS, "none", births_per_round=3.0)
    real = realise(seq, rng)
    seen = []
    out = run_framework(seq, real, FrameworkSettings(nodes=4, samples=30), rng, on_birth=seen.append)
    latest = {}
    for ctx in seen:  # pi^t(t', 1, d) for absolute t': later announcements are never lower
        for k in range(ctx.unit_price.shape[0]):
            for d in range(ctx.unit_price.shape[1]):
                key = (ctx.round + k, d)
                if key in latest:
                    assert ctx.unit_price[k, d] >= latest[key] - 1e-12
                latest[key] = ctx.unit_price[k, d]
    by_job = {ctx.job: ctx for ctx in seen}
    for j in np.flatnonzero(out.completed):
        ctx, sow = by_job[j], seq.jobs[j]
        assert out.payment[j] == pytest.approx(
            sow.concurrency * ctx.unit_price[out.start[j] - sow.birth, real.duration[j] - 1]
        )


def test_relaxed_usage_stays_within_capacity_under_the_theorem_5_1_condition():
    """Appendix D: with N' > C_max log2(4 V_bar D_max) and tasks allocated one by one (duration
    signal), p(y) > V_bar near N' keeps every y_t <= N'."""
    bounds = Bounds(2, 3, 10, 4.0)
    N = math.ceil(2 * math.log2(4 * 4.0 * 3) / (1 - 0.01)) + 1
    seen_usage = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        seq = random_sequence(rng, 120, bounds, "duration", births_per_round=8.0)
        settings = FrameworkSettings(nodes=N, oracle="none")
        prices = []
        run_framework(seq, realise(seq, rng), settings, rng, on_birth=lambda ctx: prices.append(ctx.unit_price))
        p = ExponentialPrices(settings.relaxed_capacity, 4.0, 3, 2, 10)
        last = prices[-1][:, 0]  # the unit prices announced to the last job
        y = np.log(last / p.p0) / p._log_growth
        seen_usage.append(y.max())
        assert y.max() <= settings.relaxed_capacity + 1e-9
    assert max(seen_usage) > 0.5 * N  # the worlds do load the nodes


def test_hand_case_lifo_cancels_the_later_job():
    # N = 1, D_max = 2, V_bar = 10. Job 0 (born 0, value 10 until finish 8) arrives at 1 or 4
    # (p 1/2 each) and runs 2 rounds: its expected allocation, 1/2 node in rounds 1, 2, 4, 5,
    # prices a round there at p(1/2) = (1/4) 80^(0.5/0.99) ~ 2.29. Job 1 (born 0, after job 0)
    # arrives at 1 and runs 1 round, value 10 up to finish 3, then 5. Without an oracle round 1
    # gives 10 - 2.29 = 7.71 > 5 - 0.25 (round 3); job 0 does arrive at 1, the load is 2 > 1, and
    # LIFO cancels job 1, the later born. The exact oracle announces q(1, 1, 1) = 1/2 > eps/10:
    # round 1 is worth 0.5 x 7.71 = 3.86 < 4.75 at round 3, so both complete.
    b = Bounds(1, 2, 8, 10.0)
    seq = BirthSequence(
        (
            sow_from_lists(0, 1, [10] * 8 + [0], [(1, 2, 0.5), (4, 2, 0.5)]),
            sow_from_lists(0, 1, [10, 10, 10, 5, 5, 5, 5, 5, 0], [(1, 1, 1.0)]),
        ),
        b,
    ).check()
    real = Realisation(np.array([0, 0]), np.array([1, 1]), np.array([2, 1]))
    out = run_framework(seq, real, FrameworkSettings(nodes=1, oracle="none"), np.random.default_rng(0))
    assert out.completed.tolist() == [True, False] and out.cancelled.tolist() == [False, True]
    assert out.start.tolist() == [1, -1] and out.extra["stopped"][1] == 1
    out = run_framework(seq, real, FrameworkSettings(nodes=1, oracle="exact"), np.random.default_rng(0))
    assert out.completed.tolist() == [True, True] and out.start.tolist() == [1, 3]
    assert out.payment[1] == pytest.approx(0.25)  # p(0) = 1/(2 D_max), nothing else in round 3
