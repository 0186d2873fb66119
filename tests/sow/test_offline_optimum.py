"""The offline benchmarks of paper 004 (algorithms/sow/offline_optimum.py): hindsight optima
worked out by hand, CP-SAT against brute force over every combination of starts on small random
worlds, the LP bounds above the optimum (the ex-ante LP above the exact expectation over every
realisation of tiny worlds), the schedule check, determinism and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from algorithms.sow.offline_optimum import (
    NOT_RUN,
    candidate_starts,
    check_schedule,
    ex_ante_bound,
    hindsight_lp_bound,
    hindsight_optimum,
)
from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, realise, sow_from_lists
from tests.sow.worlds import random_sequence


def world(bounds, jobs, nodes=None):
    """jobs: [(birth, concurrency, values, [(arrival, duration, probability), ...]), ...]"""
    return BirthSequence(tuple(sow_from_lists(*job) for job in jobs), bounds).check(nodes)


def realised(sequence, point):
    """The realisation in which job j draws its support point point[j]."""
    point = np.asarray(point, dtype=np.int64)
    arrival = np.array([sow.arrival[i] for sow, i in zip(sequence.jobs, point)], dtype=np.int64)
    duration = np.array([sow.duration[i] for sow, i in zip(sequence.jobs, point)], dtype=np.int64)
    return Realisation(point, arrival, duration)


def certain(sequence):
    """Each job of `sequence` with one support point, its first: the only realisation."""
    return realised(sequence, np.zeros(len(sequence), dtype=np.int64))


# --- hand cases ---------------------------------------------------------------------------------


def test_two_jobs_wanting_the_same_round_on_one_node_the_higher_value_wins():
    # S_max = 3; both born at 0, arrive at 0, last 1 round and are worth something only if they
    # finish at 1 (values [v, v, 0, 0]): both need round 0, N = 1 holds one: 9 beats 6
    seq = world(Bounds(1, 2, 3, 10.0), [(0, 1, [6, 6, 0, 0], [(0, 1, 1.0)]), (0, 1, [9, 9, 0, 0], [(0, 1, 1.0)])])
    opt = hindsight_optimum(seq, certain(seq), 1)
    assert opt.welfare == 9.0 and opt.proven and opt.bound == pytest.approx(9.0)
    assert opt.start.tolist() == [NOT_RUN, 0] and opt.value.tolist() == [0.0, 9.0]
    # with two nodes both run at round 0
    assert hindsight_optimum(seq, certain(seq), 2).start.tolist() == [0, 0]


def test_a_job_that_waits_loses_value():
    # N = 1, S_max = 4. Job 0 (values [8, 8, 5, 2, 0]) and job 1 (values [10, 10, 0, 0, 0])
    # arrive at 0 and last 1 round. Job 1 is worth 10 only if it finishes at 1 (starts at 0);
    # job 0 then starts at 1 and finishes at 2 worth 5: 15. Job 0 first: 8 + 0. So 15, and
    # job 0 loses 3 by waiting.
    seq = world(
        Bounds(1, 2, 4, 10.0), [(0, 1, [8, 8, 5, 2, 0], [(0, 1, 1.0)]), (0, 1, [10, 10, 0, 0, 0], [(0, 1, 1.0)])]
    )
    opt = hindsight_optimum(seq, certain(seq), 1)
    assert opt.welfare == 15.0 and opt.start.tolist() == [1, 0] and opt.value.tolist() == [5.0, 10.0]


def test_a_long_job_pushes_a_short_one_later():
    # N = 1, S_max = 4. Job A: arrives 0, lasts 2 rounds, worth 10 if it finishes by 2 (so it
    # must start at 0 and hold rounds 0-1). Job B: arrives 1, lasts 1, worth 7 finishing at 2
    # (start 1) and 3 finishing at 3 (start 2). A at 0 and B at 2: 10 + 3 = 13; B at 1 blocks
    # A: 7.
    seq = world(
        Bounds(1, 2, 4, 10.0), [(0, 1, [10, 10, 10, 0, 0], [(0, 2, 1.0)]), (0, 1, [7, 7, 7, 3, 0], [(1, 1, 1.0)])]
    )
    opt = hindsight_optimum(seq, certain(seq), 1)
    assert opt.welfare == 13.0 and opt.start.tolist() == [0, 2]


@pytest.mark.parametrize("wide, expected, starts", [(7.0, 8.0, [NOT_RUN, 0, 0]), (9.0, 9.0, [0, NOT_RUN, NOT_RUN])])
def test_a_wide_job_blocks_two_narrow_ones(wide, expected, starts):
    # N = 2, S_max = 2, all arrive at 0, last 1 round and are worth something only finishing at
    # 1. Job 0 needs both nodes (c = 2), jobs 1 and 2 one each, worth 4 each: the two narrow
    # jobs (8) beat a wide job worth 7, a wide job worth 9 beats them.
    seq = world(
        Bounds(2, 1, 2, 10.0),
        [(0, 2, [wide, wide, 0], [(0, 1, 1.0)]), (0, 1, [4, 4, 0], [(0, 1, 1.0)]), (0, 1, [4, 4, 0], [(0, 1, 1.0)])],
    )
    opt = hindsight_optimum(seq, certain(seq), 2)
    assert opt.welfare == expected and opt.start.tolist() == starts and opt.proven


def test_a_job_that_cannot_finish_with_value_never_runs():
    # S_max = 3, values [5, 5, 5, 0]: worth 5 finishing by 2. Job 0 arrives at 1 and lasts 2:
    # it finishes at 3 at the earliest, worth 0, so it has no candidate start and never runs,
    # even on an empty platform; job 1 (same values, arrives 0, lasts 2) runs at 0.
    seq = world(Bounds(1, 2, 3, 10.0), [(0, 1, [5, 5, 5, 0], [(1, 2, 1.0)]), (0, 1, [5, 5, 5, 0], [(0, 2, 1.0)])])
    starts, values = candidate_starts(seq.jobs[0], 1, 2)
    assert starts.size == 0 and values.size == 0
    assert candidate_starts(seq.jobs[1], 0, 2)[0].tolist() == [0]
    opt = hindsight_optimum(seq, certain(seq), 5)
    assert opt.start.tolist() == [NOT_RUN, 0] and opt.welfare == 5.0
    assert hindsight_lp_bound(seq, certain(seq), 5) == pytest.approx(5.0, abs=1e-9)


def test_candidate_starts_stop_where_the_value_reaches_zero():
    # born 2, S_max = 5, values [9, 9, 6, 6, 1, 0]: V(f) = 9 for f <= 3, 6 for 4-5, 1 at 6, 0
    # from 7 = birth + S_max. Arrival 3, duration 2: starts 3..4 (f = 5, 6); 5 gives f = 7.
    sow = sow_from_lists(2, 1, [9, 9, 6, 6, 1, 0], [(3, 2, 1.0)])
    starts, values = candidate_starts(sow, 3, 2)
    assert starts.tolist() == [3, 4] and values.tolist() == [6.0, 1.0]


def test_the_hindsight_lp_splits_what_the_optimum_cannot():
    # N = 3, two jobs of c = 2 both wanting round 0 (worth 10 each): one runs (10); the LP runs
    # each at 3/4 (2 x 0.75 + 2 x 0.75 = 3 nodes): 15.
    seq = world(Bounds(2, 1, 2, 10.0), [(0, 2, [10, 10, 0], [(0, 1, 1.0)]), (0, 2, [10, 10, 0], [(0, 1, 1.0)])])
    assert hindsight_optimum(seq, certain(seq), 3).welfare == 10.0
    assert hindsight_lp_bound(seq, certain(seq), 3) == pytest.approx(15.0, abs=1e-7)


def test_the_ex_ante_bound_is_met_only_in_expectation():
    # N = 1, S_max = 2, two jobs worth 10 finishing at 1 (values [10, 10, 0]), each arriving at
    # 0 (p 1/2: it can finish at 1) or at 1 (p 1/2: worth 0), lasting 1. Hindsight: 10 when at
    # least one arrives at 0 (p 3/4), so E[OPT] = 7.5. Ex ante: z = 1/2 for each job's early
    # task, round 0 holds 1/2 + 1/2 = 1 node in expectation: 10.
    job = (0, 1, [10, 10, 0], [(0, 1, 0.5), (1, 1, 0.5)])
    seq = world(Bounds(1, 1, 2, 10.0), [job, job])
    expectation = sum(
        0.25 * hindsight_optimum(seq, realised(seq, point), 1).welfare
        for point in itertools.product(range(2), repeat=2)
    )
    assert expectation == pytest.approx(7.5)
    assert ex_ante_bound(seq, 1) == pytest.approx(10.0, abs=1e-7)
    # one job alone on a large platform: sum_i lambda_i V(a_i + d_i) = 0.5 x 10 = 5
    assert ex_ante_bound(world(Bounds(1, 1, 2, 10.0), [job]), 4) == pytest.approx(5.0, abs=1e-7)


def test_an_empty_sequence_is_worth_nothing():
    seq = BirthSequence((), Bounds(1, 1, 2, 10.0))
    empty = Realisation(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    opt = hindsight_optimum(seq, empty, 1)
    assert opt.welfare == 0.0 and opt.proven and opt.start.size == 0
    assert hindsight_lp_bound(seq, empty, 1) == 0.0 and ex_ante_bound(seq, 1) == 0.0


# --- brute force ---------------------------------------------------------------------------------


def brute_force(sequence, realisation, nodes):
    """The best welfare over every combination of starts: each job either not run or started
    at any s in [a_j, b_j + S_max] (later starts are worth 0 too), combined job by job and
    pruned as soon as a round holds more than `nodes` nodes (loads only grow)."""
    rounds = sequence.rounds() + 1
    loads = np.zeros((1, rounds), dtype=np.int64)
    welfare = np.zeros(1)
    for j, sow in enumerate(sequence.jobs):
        a, d = int(realisation.arrival[j]), int(realisation.duration[j])
        option_load = [np.zeros(rounds, dtype=np.int64)]
        option_value = [0.0]
        for s in range(a, sow.birth + sequence.bounds.horizon + 1):
            load = np.zeros(rounds, dtype=np.int64)
            load[s : s + d] = sow.concurrency
            option_load.append(load)
            option_value.append(float(sow.value(s + d)))
        loads = (loads[:, None, :] + np.array(option_load)[None, :, :]).reshape(-1, rounds)
        welfare = (welfare[:, None] + np.array(option_value)[None, :]).reshape(-1)
        fits = loads.max(axis=1) <= nodes
        loads, welfare = loads[fits], welfare[fits]
    return float(welfare.max())


SMALL = [(seed, nodes) for seed in range(12) for nodes in (1, 2, 3)]


@pytest.mark.parametrize("seed, nodes", SMALL)
def test_cp_sat_matches_brute_force(seed, nodes):
    rng = np.random.default_rng(seed)
    bounds = Bounds(min(2, nodes), 3, 8, 10.0)
    seq = random_sequence(rng, 4 + seed % 2, bounds)
    realisation = realise(seq, rng)
    opt = hindsight_optimum(seq, realisation, nodes)
    assert opt.proven and opt.status == "OPTIMAL"
    assert opt.welfare == pytest.approx(brute_force(seq, realisation, nodes), abs=1e-6)
    # the plan is a real schedule worth what it reports, below CP-SAT's and the LP's bounds
    assert check_schedule(seq, realisation, nodes, opt.start).sum() == pytest.approx(opt.welfare, abs=1e-12)
    assert opt.bound >= opt.welfare - 1e-6 * len(seq)
    assert hindsight_lp_bound(seq, realisation, nodes) >= opt.welfare - 1e-9


# --- the LP bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_the_ex_ante_bound_is_above_the_exact_expected_optimum(seed):
    # every realisation of 3 jobs x up to 3 support points, weighted by its probability:
    # E[hindsight optimum] <= E[hindsight LP] <= ex-ante LP (the ex_ante_bound docstring)
    rng = np.random.default_rng(100 + seed)
    nodes = 1 + seed % 3
    seq = random_sequence(rng, 3, Bounds(min(2, nodes), 3, 8, 10.0), points=3)
    expected_opt = expected_lp = 0.0
    total = 0.0
    for point in itertools.product(*(range(sow.probability.size) for sow in seq.jobs)):
        weight = float(np.prod([sow.probability[i] for sow, i in zip(seq.jobs, point)]))
        realisation = realised(seq, point)
        expected_opt += weight * hindsight_optimum(seq, realisation, nodes).welfare
        expected_lp += weight * hindsight_lp_bound(seq, realisation, nodes)
        total += weight
    assert total == pytest.approx(1.0)
    assert expected_lp >= expected_opt - 1e-9
    assert ex_ante_bound(seq, nodes) >= expected_lp - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_with_one_support_point_the_ex_ante_lp_is_the_hindsight_lp(seed):
    rng = np.random.default_rng(200 + seed)
    seq = random_sequence(rng, 12, Bounds(3, 4, 10, 10.0), births_per_round=2.0)
    seq = BirthSequence(
        tuple(
            sow.replace(arrival=sow.arrival[:1], duration=sow.duration[:1], probability=np.ones(1)) for sow in seq.jobs
        ),
        seq.bounds,
    ).check()
    lp = hindsight_lp_bound(seq, certain(seq), 4)
    assert ex_ante_bound(seq, 4) == pytest.approx(lp, abs=1e-7)
    assert lp >= hindsight_optimum(seq, certain(seq), 4).welfare - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_bounds_on_busier_worlds(seed):
    # 40 jobs, two born a round, on 4 nodes: the optimum is proven, below both of its bounds
    rng = np.random.default_rng(300 + seed)
    seq = random_sequence(rng, 40, Bounds(3, 4, 10, 10.0), births_per_round=2.0)
    realisation = realise(seq, rng)
    opt = hindsight_optimum(seq, realisation, 4)
    assert opt.proven
    assert opt.bound >= opt.welfare - 1e-6 * len(seq)
    assert hindsight_lp_bound(seq, realisation, 4) >= opt.welfare - 1e-9
    assert ex_ante_bound(seq, 4) > 0


# --- the schedule check, determinism, bad input ----------------------------------------------------


def test_check_schedule_rejects_broken_plans():
    seq = world(
        Bounds(1, 2, 4, 10.0), [(0, 1, [10, 10, 10, 0, 0], [(0, 2, 1.0)]), (0, 1, [7, 7, 7, 3, 0], [(1, 1, 1.0)])]
    )
    r = certain(seq)
    assert check_schedule(seq, r, 1, [0, 2]).tolist() == [10.0, 3.0]
    with pytest.raises(ValueError, match="round 1: 2 nodes in use, above the 1 nodes"):
        check_schedule(seq, r, 1, [0, 1])
    with pytest.raises(ValueError, match="job 1: starts at round 0, before its arrival 1"):
        check_schedule(seq, r, 2, [0, 0])
    with pytest.raises(ValueError, match="job 0: starts at round 1 and finishes at 3 with no value"):
        check_schedule(seq, r, 2, [1, NOT_RUN])


def test_the_optimum_is_deterministic():
    rng = np.random.default_rng(7)
    seq = random_sequence(rng, 60, Bounds(3, 4, 12, 10.0), births_per_round=3.0)
    realisation = realise(seq, rng)
    first, second = (hindsight_optimum(seq, realisation, 3) for _ in range(2))
    assert first.start.tolist() == second.start.tolist() and first.welfare == second.welfare
    assert hindsight_lp_bound(seq, realisation, 3) == hindsight_lp_bound(seq, realisation, 3)
    assert ex_ante_bound(seq, 3) == ex_ante_bound(seq, 3)


@pytest.mark.parametrize("nodes", [0, -1, 1.5, True, None])
def test_nodes_must_be_a_positive_integer(nodes):
    seq = world(Bounds(1, 1, 2, 10.0), [(0, 1, [5, 5, 0], [(0, 1, 1.0)])])
    for call in (
        lambda: hindsight_optimum(seq, certain(seq), nodes),
        lambda: hindsight_lp_bound(seq, certain(seq), nodes),
        lambda: ex_ante_bound(seq, nodes),
    ):
        with pytest.raises(ValueError, match="nodes must be a positive integer"):
            call()


def test_a_job_wider_than_the_platform_is_rejected():
    seq = world(Bounds(3, 1, 2, 10.0), [(0, 1, [5, 5, 0], [(0, 1, 1.0)]), (0, 3, [5, 5, 0], [(0, 1, 1.0)])])
    for call in (
        lambda: hindsight_optimum(seq, certain(seq), 2),
        lambda: hindsight_lp_bound(seq, certain(seq), 2),
        lambda: ex_ante_bound(seq, 2),
    ):
        with pytest.raises(ValueError, match="job 1: concurrency 3 is above the 2 nodes"):
            call()
    # on 4 nodes both fit (1 + 3); on 3 only one: 5
    assert hindsight_optimum(seq, certain(seq), 4).welfare == 10.0
    assert hindsight_optimum(seq, certain(seq), 3).welfare == 5.0


def test_other_bad_input_is_rejected():
    seq = world(Bounds(1, 1, 2, 10.0), [(0, 1, [5, 5, 0], [(0, 1, 1.0)])])
    short = Realisation(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="one arrival and one duration per job"):
        hindsight_optimum(seq, short, 1)
    with pytest.raises(ValueError, match="job 0: realised duration 0 is below 1"):
        zero = np.zeros(1, np.int64)
        hindsight_lp_bound(seq, Realisation(zero, zero, zero), 1)
    with pytest.raises(ValueError, match="time_limit must be > 0"):
        hindsight_optimum(seq, certain(seq), 1, time_limit=0)
