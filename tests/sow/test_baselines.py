"""The two welfare baselines of paper 004 (Sec. 1-2): reserve-in-advance for the worst case
(algorithms/sow/reserve_worst_case.py) and first-come greedy without prices
(algorithms/sow/first_come_greedy.py): hand cases worked out in comments, properties on random
worlds, determinism and bad input; and a blocking world (births=blocking) end to end through the
family, where the greedy is far below OPT."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.sow.family import prepare, simulate_replicate
from algorithms.sow.first_come_greedy import first_come_greedy
from algorithms.sow.outcome import NOT_STARTED
from algorithms.sow.reserve_worst_case import reserve_worst_case
from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, realise, sow_from_lists
from tests.sow.worlds import random_sequence

BASELINES = [reserve_worst_case, first_come_greedy]
B = Bounds(max_concurrency=3, max_duration=5, horizon=10, max_value=10.0)


def values(level: float, last: int) -> list[float]:
    """V(b + k) = level for k <= last, 0 after (S_max = 10: 11 values)."""
    return [level if k <= last else 0.0 for k in range(B.horizon + 1)]


FLAT = values(5.0, 7)  # V = 5 for every finish up to b + 7


def world(jobs, drawn, signal="none"):
    """jobs: [(birth, concurrency, values, [(a, d, p), ...])]; drawn: the support point index per job."""
    sows = tuple(sow_from_lists(*job) for job in jobs)
    sequence = BirthSequence(sows, B, signal).check()
    arrival = np.array([s.arrival[i] for s, i in zip(sows, drawn)], np.int64)
    duration = np.array([s.duration[i] for s, i in zip(sows, drawn)], np.int64)
    return sequence, Realisation(np.asarray(drawn, np.int64), arrival, duration)


# ---------------------------------------------------------------- hand cases


def test_overlapping_windows_waste_a_block_the_greedy_uses():
    # N = 2. Job 0 (c = 2) arrives at 0 or 3 with d = 1: window [0, 3]; it draws a = 0 and runs
    # in round 0 only. Job 1 (c = 1) arrives at 2 with d = 1: window [2, 2]. Round 2 would hold
    # 2 + 1 = 3 > 2 reserved nodes, so reserve_worst_case rejects job 1 although the realised
    # runs (round 0 and round 2) never overlap. The greedy runs job 0 at 0 and job 1 at 2.
    sequence, real = world([(0, 2, FLAT, [(0, 1, 0.5), (3, 1, 0.5)]), (0, 1, FLAT, [(2, 1, 1.0)])], drawn=[0, 0])
    res = reserve_worst_case(sequence, real, 2)
    assert res.extra["admitted"].tolist() == [True, False]
    assert res.extra["reserved"].tolist() == [2 * 4, 0]
    assert res.start.tolist() == [0, NOT_STARTED]
    assert res.finish.tolist() == [1, NOT_STARTED]
    assert res.completed.tolist() == [True, False]
    assert res.welfare() == 5.0
    greedy = first_come_greedy(sequence, real, 2)
    assert greedy.start.tolist() == [0, 2]
    assert greedy.finish.tolist() == [1, 3]
    assert greedy.completed.tolist() == [True, True]
    assert greedy.extra["wait"].tolist() == [0, 0]
    assert greedy.welfare() == 10.0


def test_wide_arrival_distribution_reserves_its_whole_window():
    # N = 3. Job 0 (c = 2) arrives anywhere in 0..5 with d = 1: window [0, 5], 2 x 6 = 12
    # node-rounds reserved; it draws a = 2 and uses only 2 node-rounds (round 2). Job 1 (c = 2,
    # a = 5, d = 1) needs round 5, which holds 2 reserved nodes: 2 + 2 > 3, rejected although
    # job 0 ran long before. Job 2 (c = 2, a = 6, d = 2) has window [6, 7], outside job 0's
    # block: admitted with 2 x 2 = 4 node-rounds.
    sequence, real = world(
        [(0, 2, FLAT, [(a, 1, 1 / 6) for a in range(6)]), (1, 2, FLAT, [(5, 1, 1.0)]), (1, 2, FLAT, [(6, 2, 1.0)])],
        drawn=[2, 0, 0],
    )
    res = reserve_worst_case(sequence, real, 3)
    assert res.extra["reserved"].tolist() == [12, 0, 4]
    assert res.extra["admitted"].tolist() == [True, False, True]
    assert res.start.tolist() == [2, NOT_STARTED, 6]
    assert res.finish.tolist() == [3, NOT_STARTED, 8]
    # V_j(f) = 5 while f <= b_j + 7: job 0 finishes at 3, job 2 at 8 = 1 + 7.
    assert res.value.tolist() == [5.0, 0.0, 5.0]


def test_reserve_rejects_a_job_with_zero_expected_value():
    # Job 0's value is positive only for finish <= 1; it arrives at 3 with d = 1, so V(4) = 0
    # at its only support point: expected value 0, rejected though all nodes are free. The
    # greedy drops it at its arrival (its last useful start is 0 + 1 - 1 = 0 < 3), wait 0.
    sequence, real = world([(0, 1, values(5.0, 1), [(3, 1, 1.0)])], drawn=[0])
    res = reserve_worst_case(sequence, real, 2)
    assert res.extra["admitted"].tolist() == [False]
    assert res.extra["reserved"].tolist() == [0]
    assert res.start.tolist() == [NOT_STARTED]
    greedy = first_come_greedy(sequence, real, 2)
    assert greedy.start.tolist() == [NOT_STARTED]
    assert greedy.extra["dropped"].tolist() == [True]
    assert greedy.extra["wait"].tolist() == [0]


def test_greedy_list_scheduling_lets_a_small_job_pass_a_blocked_large_one():
    # N = 3. Job 0 (c = 2) runs rounds 0..2. At round 1 jobs 1 (c = 3) and 2 (c = 1) both
    # arrive; the queue is [1, 2] (tie on arrival: submission order). One node is free: job 1
    # does not fit and waits, job 2 passes it and starts at 1. Job 1 starts at 3, when job 0
    # has finished: waits 2 rounds.
    sequence, real = world(
        [(0, 2, FLAT, [(0, 3, 1.0)]), (0, 3, FLAT, [(1, 1, 1.0)]), (0, 1, FLAT, [(1, 1, 1.0)])], drawn=[0, 0, 0]
    )
    greedy = first_come_greedy(sequence, real, 3)
    assert greedy.start.tolist() == [0, 3, 1]
    assert greedy.finish.tolist() == [3, 4, 2]
    assert greedy.extra["wait"].tolist() == [0, 2, 0]
    assert greedy.completed.all() and not greedy.extra["dropped"].any()
    assert greedy.welfare() == 15.0


def test_greedy_queue_is_in_arrival_order_ties_by_submission():
    # N = 2, every job needs both nodes for 1 round except job 0 (2 rounds). Round 0: jobs 0
    # and 3 arrive (tie: job 0, submitted first, starts; job 3 waits). Jobs 1 and 2 arrive at 1.
    # Round 2: the queue is [3 (arrived at 0), 1, 2 (arrived at 1, in submission order)]: job 3
    # starts at 2, job 1 at 3, job 2 at 4, although job 3 was submitted last.
    sequence, real = world(
        [
            (0, 2, FLAT, [(0, 2, 1.0)]),
            (0, 2, FLAT, [(1, 1, 1.0)]),
            (0, 2, FLAT, [(1, 1, 1.0)]),
            (0, 2, FLAT, [(0, 1, 1.0)]),
        ],
        drawn=[0, 0, 0, 0],
    )
    greedy = first_come_greedy(sequence, real, 2)
    assert greedy.start.tolist() == [0, 3, 4, 2]
    assert greedy.extra["wait"].tolist() == [0, 2, 3, 2]


@pytest.mark.parametrize("signal", ["none", "duration"])
def test_greedy_drops_a_job_whose_value_runs_out_while_waiting(signal):
    # N = 1. Job 0 runs rounds 0..4. Job 1 arrives at 1 with d = 1 (its only support point, so
    # d_min = d) and has value only for finish <= 2: its last useful start is 1. It waits in
    # round 1 (no node), and in round 2 V(2 + 1) = 0: dropped, after 1 round of waiting. It is
    # not started when the node frees at 5, and it is neither evicted nor cancelled.
    sequence, real = world(
        [(0, 1, FLAT, [(0, 5, 1.0)]), (0, 1, values(4.0, 2), [(1, 1, 1.0)])], drawn=[0, 0], signal=signal
    )
    greedy = first_come_greedy(sequence, real, 1)
    assert greedy.start.tolist() == [0, NOT_STARTED]
    assert greedy.completed.tolist() == [True, False]
    assert greedy.extra["dropped"].tolist() == [False, True]
    assert greedy.extra["wait"].tolist() == [0, 1]
    assert not greedy.evicted.any() and not greedy.cancelled.any()
    assert greedy.value.tolist() == [5.0, 0.0]


def test_duration_signal_keeps_the_greedy_from_starting_a_worthless_job():
    # N = 1. Job 0 runs rounds 0..3. Job 1 arrives at 1 with d = 1 or 3 (it draws 3) and has
    # value 6 for finish <= 5. With the signal the scheduler knows d = 3: its last useful start
    # is 5 - 3 = 2; it waits in rounds 1 and 2 and is dropped at 3. Without it, the scheduler
    # only knows d_min = 1 (last useful start 4): it starts job 1 at 4, which finishes at 7 with
    # V(7) = 0, a completion that earns 0.
    jobs = [(0, 1, FLAT, [(0, 4, 1.0)]), (0, 1, values(6.0, 5), [(1, 1, 0.5), (1, 3, 0.5)])]
    sequence, real = world(jobs, drawn=[0, 1], signal="duration")
    told = first_come_greedy(sequence, real, 1)
    assert told.start.tolist() == [0, NOT_STARTED]
    assert told.extra["dropped"].tolist() == [False, True]
    assert told.extra["wait"].tolist() == [0, 2]
    sequence, real = world(jobs, drawn=[0, 1], signal="none")
    blind = first_come_greedy(sequence, real, 1)
    assert blind.start.tolist() == [0, 4]
    assert blind.finish.tolist() == [4, 7]
    assert blind.completed.tolist() == [True, True]
    assert blind.value.tolist() == [5.0, 0.0]
    assert blind.extra["wait"].tolist() == [0, 3]
    assert not blind.extra["dropped"].any()
    assert told.welfare() == blind.welfare() == 5.0  # the blind start wasted 3 node-rounds for 0


# ---------------------------------------------------------------- random worlds

RANDOM_BOUNDS = Bounds(3, 3, 10, 10.0)


def random_world(seed: int, signal: str):
    """8 jobs, N in 2..4 (a job's concurrency is capped at N), the same jobs and draws for both
    signals."""
    rng = np.random.default_rng(seed)
    nodes = int(rng.integers(2, 5))
    sequence = random_sequence(rng, 8, RANDOM_BOUNDS)
    jobs = tuple(s.replace(concurrency=min(s.concurrency, nodes)) for s in sequence.jobs)
    sequence = BirthSequence(jobs, RANDOM_BOUNDS, signal).check(nodes)
    return sequence, realise(sequence, rng), nodes


def window(sow):
    """The reserved rounds [lo, hi) of a SoW: from its first arrival to its last finish."""
    return int(sow.arrival.min()), int((sow.arrival + sow.duration).max())


def usage_from(out, sequence, real) -> np.ndarray:
    """Nodes in use per round, rebuilt from the outcomes and the realised durations."""
    use = np.zeros(sequence.rounds() + 1, np.int64)
    for j, sow in enumerate(sequence.jobs):
        if out.start[j] != NOT_STARTED:
            use[out.start[j] : out.start[j] + real.duration[j]] += sow.concurrency
    return use


def check_common(out, sequence, real, nodes):
    """What both baselines promise: capacity, starts after arrival, V_j(f), no payments, no
    evictions or cancellations, started == completed with f = s + d."""
    assert (usage_from(out, sequence, real) <= nodes).all()
    started = out.start != NOT_STARTED
    assert (out.start[started] >= real.arrival[started]).all()
    assert (out.completed == started).all()
    assert (out.finish[started] == out.start[started] + real.duration[started]).all()
    assert (out.finish[~started] == NOT_STARTED).all()
    for j, sow in enumerate(sequence.jobs):
        expected = float(sow.value(out.finish[j])) if out.completed[j] else 0.0
        assert out.value[j] == expected
    assert (out.payment == 0).all()
    assert not out.evicted.any() and not out.cancelled.any()


SEEDS = range(50)
SIGNALS = ["none", "duration"]


@pytest.mark.parametrize("seed", SEEDS)
def test_reserve_properties_on_random_worlds(seed):
    for signal in SIGNALS:
        sequence, real, nodes = random_world(seed, signal)
        out = reserve_worst_case(sequence, real, nodes)
        check_common(out, sequence, real, nodes)
        admitted = out.extra["admitted"]
        blocks = np.zeros(sequence.rounds() + 1, np.int64)
        for j, sow in enumerate(sequence.jobs):
            lo, hi = window(sow)
            expected = float(sow.probability @ sow.value(sow.arrival + sow.duration))
            fits = blocks[lo:hi].max() + sow.concurrency <= nodes
            # first come, first served: admitted exactly when worth something and the block fits
            assert admitted[j] == (expected > 0 and fits)
            if admitted[j]:
                blocks[lo:hi] += sow.concurrency
                assert out.extra["reserved"][j] == sow.concurrency * (hi - lo)
                assert out.start[j] == real.arrival[j]  # runs on arrival, inside its block
                assert lo <= out.start[j] and out.finish[j] <= hi
            else:
                assert out.extra["reserved"][j] == 0 and out.start[j] == NOT_STARTED
        assert (blocks <= nodes).all()
        assert (usage_from(out, sequence, real) <= blocks).all()  # the runs sit inside the blocks


def anticipated(sequence, real, j):
    """The duration the greedy plans with: d_j with the signal, else the smallest support
    duration at the realised arrival."""
    sow = sequence.jobs[j]
    if sequence.signal == "duration":
        return int(real.duration[j])
    return int(sow.duration[sow.arrival == real.arrival[j]].min())


@pytest.mark.parametrize("seed", SEEDS)
def test_greedy_properties_on_random_worlds(seed):
    for signal in SIGNALS:
        sequence, real, nodes = random_world(seed, signal)
        out = first_come_greedy(sequence, real, nodes)
        check_common(out, sequence, real, nodes)
        use = usage_from(out, sequence, real)
        wait, dropped = out.extra["wait"], out.extra["dropped"]
        started = out.start != NOT_STARTED
        assert (started != dropped).all()  # every job ends started or dropped
        for j, sow in enumerate(sequence.jobs):
            a, d_hat = int(real.arrival[j]), anticipated(sequence, real, j)
            end = a + int(wait[j])  # its start or its drop round
            if started[j]:
                assert out.start[j] == end
                assert sow.value(end + d_hat) > 0  # it was still worth starting
            else:
                assert sow.value(end + d_hat) == 0  # dropped once worthless ...
                if end > a:
                    assert sow.value(end - 1 + d_hat) > 0  # ... and not before
            # list scheduling: while it waited it never fitted in the nodes left free
            for t in range(a, end):
                assert sow.concurrency > nodes - use[t]


def test_random_worlds_exercise_every_branch():
    """The properties above are not vacuous: the worlds hold rejections, waits, drops and
    zero-value completions."""
    seen = {"rejected": 0, "waited": 0, "dropped": 0, "zero_value": 0}
    for seed in SEEDS:
        for signal in SIGNALS:
            sequence, real, nodes = random_world(seed, signal)
            res = reserve_worst_case(sequence, real, nodes)
            greedy = first_come_greedy(sequence, real, nodes)
            seen["rejected"] += int((~res.extra["admitted"]).sum())
            seen["waited"] += int(((greedy.extra["wait"] > 0) & ~greedy.extra["dropped"]).sum())
            seen["dropped"] += int(greedy.extra["dropped"].sum())
            seen["zero_value"] += int((greedy.completed & (greedy.value == 0)).sum())
    assert all(count > 0 for count in seen.values()), seen


# ---------------------------------------------------------------- determinism and bad input


@pytest.mark.parametrize("baseline", BASELINES)
@pytest.mark.parametrize("signal", SIGNALS)
def test_deterministic(baseline, signal):
    sequence, real, nodes = random_world(7, signal)
    first, second = baseline(sequence, real, nodes), baseline(sequence, real, nodes)
    for name in ("start", "finish", "completed", "evicted", "cancelled", "value", "payment"):
        assert np.array_equal(getattr(first, name), getattr(second, name)), name
    assert first.extra.keys() == second.extra.keys()
    for key in first.extra:
        assert np.array_equal(first.extra[key], second.extra[key]), key


@pytest.mark.parametrize("baseline", BASELINES)
def test_empty_sequence(baseline):
    out = baseline(
        BirthSequence((), B), Realisation(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)), 1
    )
    assert out.start.size == 0 and out.welfare() == 0.0


@pytest.mark.parametrize("baseline", BASELINES)
@pytest.mark.parametrize("nodes", [0, -1, 1.5, True, "2"])
def test_bad_nodes(baseline, nodes):
    sequence, real = world([(0, 1, FLAT, [(0, 1, 1.0)])], drawn=[0])
    with pytest.raises(ValueError, match="nodes must be a positive integer"):
        baseline(sequence, real, nodes)


@pytest.mark.parametrize("baseline", BASELINES)
def test_concurrency_above_nodes_names_the_job(baseline):
    sequence, real = world([(0, 1, FLAT, [(0, 1, 1.0)]), (0, 3, FLAT, [(1, 1, 1.0)])], drawn=[0, 0])
    with pytest.raises(ValueError, match=r"job 1: concurrency 3 is above the 2 nodes"):
        baseline(sequence, real, 2)
    assert baseline(sequence, real, np.int64(3)).completed.all()  # numpy integers are fine


@pytest.mark.parametrize("baseline", BASELINES)
def test_realisation_off_the_support_is_refused(baseline):
    sequence, _ = world([(0, 1, FLAT, [(0, 1, 0.5), (2, 2, 0.5)])], drawn=[0])
    off = Realisation(np.zeros(1, np.int64), np.array([0]), np.array([2]))  # (0, 2) is not a point
    with pytest.raises(ValueError, match="job 0: the realised"):
        baseline(sequence, off, 2)


# ---------------------------------------------------------------- a blocking world, end to end


@pytest.mark.parametrize("seed", [0, 1])
def test_a_blocking_world_hurts_the_greedy_end_to_end(seed):
    # births=blocking through the family (algorithms/sow/family.py), default bounds (C_max 4,
    # D_max 4, S_max 16, V_bar 16), N = 8, one wave, concurrency 4, jitter 0: nothing is random.
    # Jobs 0, 1 (low): born 0, arrive 1, run 4 rounds, worth 1 for f <= 0 + 1 + 4 + 8 = 13.
    # Jobs 2, 3 (high): born 1, arrive 2, run 4 rounds, worth 16 for f <= 1 + 1 + 0 + 4 = 6, so
    # they must start on arrival, at 2.
    # - FirstComeGreedy starts jobs 0 and 1 at 1 (8 nodes, rounds 1..4); jobs 2 and 3 cannot
    #   start at 2 and are dropped at 3: welfare 1 + 1 = 2.
    # - ReserveWorstCase: jobs 0, 1 reserve 8 nodes over [1, 4]; 2, 3 find no room: 2.
    # - OPT: 2 and 3 at 2..5 (finish 6, 32), then 0 and 1 at 6..9 (finish 10 <= 13, 2): 34.
    # - Reduction (paper start): p(y) = (1/8) 256^(y/N'), N' = 8 (1 - 0.1/10) = 7.92. A low job
    #   costs 4 * 4 * p(0) = 2 > 1 anywhere: never. Job 2 costs 16 p(0) = 2 <= 16: it buys start
    #   2 and pays 2; y = 4 on rounds 2..5, p(4) = 256^(4/7.92) / 8 = 2.06, so job 3 would pay
    #   16 * 2.06 = 33 > 16: never. Welfare 16.
    # - Reduction(start=concurrency): p(y) = (1/32) 1024^(y/N'). Job 0 pays 16/32 = 0.5 <= 1 at
    #   start 1 (the earliest of the cheapest); y = 4 on 1..4 and p(4) = 1.036, so job 1 takes
    #   start 5 (0.5, rounds 5..8). Job 2 now costs 4 * 4 * p(4) = 16.6 > 16 on rounds 2..5:
    #   never, and job 3 alike. Welfare 1 + 1 = 2: below the capacity condition, the finer start
    #   lets the low jobs in.
    prepared = prepare(
        {
            "births": {"kind": "blocking", "waves": 1, "nodes_hint": 8, "concurrency": [4, 4], "jitter": 0},
            "cluster": {"nodes": 8},
            "mechanisms": ["Reduction", "Reduction(start=concurrency)", "FirstComeGreedy", "ReserveWorstCase", "OPT"],
        }
    )
    rows = {row["mechanism"]: row for row in simulate_replicate(prepared, 0, np.random.default_rng(seed))}
    welfare = {name: row["welfare"] for name, row in rows.items()}
    assert welfare == {
        "Reduction": 16.0,
        "Reduction(start=concurrency)": 2.0,
        "FirstComeGreedy": 2.0,
        "ReserveWorstCase": 2.0,
        "OPT": 34.0,
    }
    assert rows["FirstComeGreedy"]["opt_ratio"] == pytest.approx(17.0)
    assert rows["Reduction"]["opt_ratio"] == pytest.approx(34 / 16)
    jobs = rows["Reduction"]["tables"]["jobs"]
    assert list(jobs["start"]) == [NOT_STARTED, NOT_STARTED, 2, NOT_STARTED]
    assert list(jobs["paid"]) == [0.0, 0.0, pytest.approx(2.0), 0.0]
    assert list(rows["Reduction(start=concurrency)"]["tables"]["jobs"]["start"]) == [1, 5, NOT_STARTED, NOT_STARTED]
    assert list(rows["FirstComeGreedy"]["tables"]["jobs"]["start"]) == [1, 1, NOT_STARTED, NOT_STARTED]
