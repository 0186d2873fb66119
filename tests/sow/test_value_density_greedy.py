"""The value-density greedy baseline (algorithms/sow/value_density_greedy.py): hand cases worked
out in comments, its densities with and without the duration signal, properties on random
worlds, and the mechanism name through the family."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.sow.family import mechanism_names, prepare, simulate_replicate
from algorithms.sow.first_come_greedy import first_come_greedy
from algorithms.sow.outcome import NOT_STARTED
from algorithms.sow.value_density_greedy import start_densities, value_density_greedy
from market.sow.statement_of_work import realise
from tests.sow.test_baselines import B, values, world  # the same hand-built worlds
from tests.sow.worlds import random_sequence


def test_the_denser_job_goes_first_where_first_come_blocks_it():
    # N = 1, both jobs arrive at round 0. Job 0 (submitted first): c = 1, d = 2, V = 2 for any
    # finish up to b + 6: density 2 / 2 = 1. Job 1: c = 1, d = 1, V = 3 only for a finish at
    # b + 1: density 3. First come starts job 0 (rounds 0-1) and job 1 can no longer finish by
    # round 1: dropped, welfare 2. The value-density greedy starts job 1 at 0 (f = 1, V = 3), then
    # job 0 at 1 (f = 3 <= 6, V = 2): welfare 5.
    sequence, real = world([(0, 1, values(2.0, 6), [(0, 2, 1.0)]), (0, 1, values(3.0, 1), [(0, 1, 1.0)])], drawn=[0, 0])
    first = first_come_greedy(sequence, real, 1)
    assert first.start.tolist() == [0, NOT_STARTED] and first.extra["dropped"].tolist() == [False, True]
    assert first.welfare() == 2.0
    dense = value_density_greedy(sequence, real, 1)
    assert dense.start.tolist() == [1, 0]
    assert dense.finish.tolist() == [3, 1]
    assert dense.completed.tolist() == [True, True] and not dense.extra["dropped"].any()
    assert dense.extra["wait"].tolist() == [1, 0]
    assert dense.extra["density"].tolist() == [1.0, 3.0]
    assert dense.welfare() == 5.0 and dense.payment.tolist() == [0.0, 0.0]
    assert not dense.evicted.any() and not dense.cancelled.any()


def test_list_scheduling_lets_a_smaller_job_pass_and_ties_go_first_come():
    # N = 2, all jobs arrive at round 0, values flat for any finish up to b + 9. Job 0: c = 2,
    # d = 1, V = 6: density 3. Job 1: c = 1, d = 2, V = 6: density 3
    # (a tie with job 0: first come, job 0 goes first). Job 2: c = 1, d = 1, V = 9: density 9.
    # Round 0: job 2 (9) takes one node; job 0 (c = 2) does not fit; job 1 takes the other node.
    # Round 1: job 1 still runs, one node free: job 0 waits. Round 2: job 0 starts.
    sequence, real = world(
        [
            (0, 2, values(6.0, 9), [(0, 1, 1.0)]),
            (0, 1, values(6.0, 9), [(0, 2, 1.0)]),
            (0, 1, values(9.0, 9), [(0, 1, 1.0)]),
        ],
        drawn=[0, 0, 0],
    )
    out = value_density_greedy(sequence, real, 2)
    assert out.start.tolist() == [2, 0, 0]
    assert out.welfare() == 21.0
    # the tie: with room for one of them only (N = 2, job 2 removed), job 0 comes first
    sequence, real = world([(0, 2, values(6.0, 9), [(0, 1, 1.0)]), (0, 1, values(6.0, 9), [(0, 2, 1.0)])], drawn=[0, 0])
    assert value_density_greedy(sequence, real, 2).start.tolist() == [0, 1]


def test_densities_with_and_without_the_duration_signal():
    # One job, c = 2, arrival 1 with d = 1 or 3 (p = 1/2 each) or arrival 2 with d = 2, value 8
    # for a finish up to b + 4 then 0. Drawn: (a = 1, d = 3).
    jobs = [(0, 2, values(8.0, 4), [(1, 1, 0.25), (1, 3, 0.25), (2, 2, 0.5)])]
    sequence, real = world(jobs, drawn=[1])
    # no signal: the points with a = 1, renormalised to 1/2 each. Starting at 1: E[V] = (8 + 8) / 2
    # = 8 over c E[d] = 2 x 2: 2. At 2: finishes 3 or 5, E[V] = (8 + 0) / 2 = 4: 1.
    assert start_densities(sequence, real, 0, np.array([1, 2])).tolist() == [2.0, 1.0]
    # duration signal: d = 3 known. At 1: V(4) = 8 over 2 x 3. At 2: V(5) = 0.
    told, real = world(jobs, drawn=[1], signal="duration")
    assert np.allclose(start_densities(told, real, 0, np.array([1, 2])), [8.0 / 6.0, 0.0])


@pytest.mark.parametrize("signal", ["none", "duration"])
@pytest.mark.parametrize("seed", range(6))
def test_random_worlds_respect_capacity_arrivals_and_deadlines(signal, seed):
    rng = np.random.default_rng(seed)
    sequence = random_sequence(rng, 60, B, signal, births_per_round=3.0)
    real = realise(sequence, rng)
    nodes = 4
    out = value_density_greedy(sequence, real, nodes)
    started = out.start != NOT_STARTED
    assert (out.start[started] >= real.arrival[started]).all()
    assert (started ^ out.extra["dropped"]).all()  # every job ends started or dropped
    load = np.zeros(sequence.rounds() + B.max_duration + 1, np.int64)
    for j in np.flatnonzero(started):
        load[out.start[j] : out.start[j] + real.duration[j]] += sequence.jobs[j].concurrency
    assert load.max() <= nodes
    assert np.allclose(out.value[started], [sequence.jobs[j].value(out.finish[j]) for j in np.flatnonzero(started)])
    assert (out.extra["density"][started] > 0).all() and out.payment.sum() == 0
    again = value_density_greedy(sequence, real, nodes)
    assert again.start.tolist() == out.start.tolist()


def test_bad_input_and_the_mechanism_name():
    sequence, real = world([(0, 3, values(6.0, 9), [(0, 1, 1.0)])], drawn=[0])
    with pytest.raises(ValueError):
        value_density_greedy(sequence, real, 2)  # concurrency 3 above the 2 nodes
    config = {
        "bounds": {},
        "births": {"kind": "toy", "jobs": 4},
        "cluster": {"nodes": 4},
        "mechanisms": ["ValueDensityGreedy", "FirstComeGreedy"],
    }
    assert mechanism_names(config) == ["ValueDensityGreedy", "FirstComeGreedy"]
    rows = simulate_replicate(prepare(config), 0, np.random.default_rng(0))
    assert rows[0]["mechanism"] == "ValueDensityGreedy" and rows[0]["payments"] == 0.0
    with pytest.raises(
        ValueError,
        match=r"^mechanisms\[0\]: ValueDensityGreedy\(x=1\): .*ValueDensityGreedy takes no parameters$",
    ):
        prepare({**config, "mechanisms": ["ValueDensityGreedy(x=1)"]})
