"""Alg. 2's receptive condition (Sec. 4.1): the forced allocation x_j(L_j) must have
V~_j(x_j) >= pi~^t(x_j); scheduler_framework.py counts the births that break it."""

import numpy as np
import pytest

from algorithms.sow import family
from algorithms.sow.scheduler_framework import FrameworkSettings, run_framework
from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, realise, sow_from_lists
from tests.sow.worlds import random_sequence


def hand_world(signal):
    # N = 2 nodes, C_max = 2, D_max = 2, S_max = 4, V_bar = 4, eps = 0.1 (N' = 1.98).
    # Job 0 (born 0): c = 2, arrives at 2 for sure, d = 1, V = 4 for f <= 3: costs 2 p(0) = 1/2, runs
    #   at 2; ALG's usage of round 2 becomes 2 > N', so p(y_2) = (1/4) 32^(2/1.98) = 8.29.
    # Job 1 (born 0, after job 0): c = 1, arrives at 1, d = 1 or 2 (1/2 each), V = 4 for f <= 3.
    #   Started at 1: d = 1 costs p(0) = 1/4 and never fails; d = 2 costs 1/4 + 8.29 = 8.54 and is
    #   evicted for sure (round 2: job 0's 2 nodes + 1 > 2; LIFO removes job 1): q = 1.
    #   Signal none, one start for both: (1/2)(1)(4 - 1/4) + (1/2)(0)(4 - 8.54) = 1.875 > 0, so L
    #   starts at 1 (any later start finishes with value 0 or fails); but
    #   V~ - pi~ = (1/2)(4 - 1/4) + (1/2)(4 - 8.54) = -0.40 < 0: the receptive condition breaks.
    #   Signal duration: the point d = 2 is its own group, never run: no break.
    bounds = Bounds(2, 2, 4, 4.0)
    job0 = sow_from_lists(0, 2, [4, 4, 4, 4, 0], [(2, 1, 1.0)])
    job1 = sow_from_lists(0, 1, [4, 4, 4, 4, 0], [(1, 1, 0.5), (1, 2, 0.5)])
    seq = BirthSequence((job0, job1), bounds, signal).check()
    return seq, Realisation(np.array([0, 1]), np.array([2, 1]), np.array([1, 2]))


def test_hand_case_signal_none_breaks_and_signal_duration_does_not():
    seq, real = hand_world("none")
    out = run_framework(seq, real, FrameworkSettings(nodes=2, oracle="exact"), np.random.default_rng(0))
    extra = out.extra
    assert extra["planned_start"].tolist() == [2, 1]
    p2 = 0.25 * 32 ** (2 / 1.98)
    assert extra["relaxed_price"][1] == pytest.approx(0.5 * 0.25 + 0.5 * (0.25 + p2))
    assert extra["relaxed_value"][1] == pytest.approx(4.0)
    assert extra["receptive_break"].tolist() == [False, True]
    seq, real = hand_world("duration")
    out = run_framework(seq, real, FrameworkSettings(nodes=2, oracle="exact"), np.random.default_rng(0))
    assert out.extra["receptive_break"].tolist() == [False, False]


def test_random_worlds_with_the_duration_signal_never_break():
    bounds = Bounds(3, 3, 10, 10.0)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        seq = random_sequence(rng, 20, bounds, "duration", births_per_round=3.0)
        out = run_framework(seq, realise(seq, rng), FrameworkSettings(nodes=4, samples=20), rng)
        assert not out.extra["receptive_break"].any()
        runs = out.extra["planned"]
        assert np.all(out.extra["relaxed_value"][runs] >= out.extra["relaxed_price"][runs] - 1e-9)


def test_the_rows_count_the_breaks():
    rows = family.simulate_replicate(
        family.prepare(
            {
                "bounds": {"max_concurrency": 2, "max_duration": 2, "horizon": 10, "max_value": 8.0},
                "births": {"kind": "recurring", "pipelines": 6, "rounds": 12, "signal": "none"},
                "cluster": {"nodes": 3},
                "oracle": {"samples": 20},
                "mechanisms": ["Reduction", "FirstComeGreedy"],
            }
        ),
        0,
        np.random.default_rng(0),
    )
    assert isinstance(rows[0]["receptive_breaks"], int) and "receptive_breaks" not in rows[1]
