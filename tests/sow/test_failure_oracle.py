"""The failure oracle (Lemma 3.1, Alg. 2 line 6, Appendix F) and Lemma 3.1 itself."""

import itertools

import numpy as np
import pytest

from algorithms.sow.failure_oracle import Candidates, exact_paths, hoeffding_samples, sampled_paths
from algorithms.sow.launch_plan import NEVER, plan_for_points
from algorithms.sow.scheduler_framework import FrameworkSettings, run_framework
from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, realise
from tests.sow.worlds import random_sequence

BOUNDS = Bounds(2, 3, 8, 10.0)


def every_realisation(sequence):
    """All joint (a, d) draws with their probabilities."""
    for points in itertools.product(*[range(len(s.probability)) for s in sequence.jobs]):
        p = np.array(points)
        weight = float(np.prod([s.probability[i] for s, i in zip(sequence.jobs, points)]))
        yield (
            weight,
            Realisation(
                p,
                np.array([s.arrival[i] for s, i in zip(sequence.jobs, points)]),
                np.array([s.duration[i] for s, i in zip(sequence.jobs, points)]),
            ),
        )


@pytest.mark.parametrize("signal", ["none", "duration"])
def test_exact_failure_probability_is_the_chance_of_failing(signal):
    """Tower rule: E[FAIL_j | start, d] = E[q_j(start, c_j, d) | start, d] over every joint
    realisation of a tiny world, q read from the exact oracle at j's birth (no threshold)."""
    checked = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        seq = random_sequence(rng, 5, BOUNDS, signal, births_per_round=2.0, points=2)
        settings = FrameworkSettings(nodes=2, epsilon=1e-9, oracle="exact")
        fail_mass, q_mass = {}, {}
        for weight, real in every_realisation(seq):
            seen = {}
            out = run_framework(
                seq,
                real,
                settings,
                np.random.default_rng(0),
                on_birth=lambda ctx: seen.__setitem__(ctx.job, (ctx.raw_failure, ctx.plan.start)),
            )
            for j in range(len(seq)):
                q_table, plan = seen[j]
                start = int(plan_for_points(plan, seq.jobs[j], real.arrival[j], real.duration[j], signal)[0])
                if start == NEVER:
                    continue
                key = (j, start, int(real.duration[j]))
                q = q_table[start - seq.jobs[j].birth, real.duration[j] - 1]
                fail_mass[key] = fail_mass.get(key, 0.0) + weight * (not out.completed[j])
                q_mass[key] = q_mass.get(key, 0.0) + weight * q
        for key in fail_mass:
            assert fail_mass[key] == pytest.approx(q_mass[key], abs=1e-9), (seed, key)
        checked += sum(1 for key in fail_mass if fail_mass[key] > 0)
    assert checked >= 3  # evictions do happen in these worlds


def test_sampled_oracle_is_within_hoeffding_of_the_exact_one():
    rng = np.random.default_rng(4)
    runs, conc = [], []
    for _ in range(6):
        k = 3
        start = rng.integers(0, 6, k)
        runs.append((start, rng.integers(1, 4, k), rng.random(k) + 0.1))
        conc.append(int(rng.integers(1, 3)))
    cands = Candidates.build(runs, conc)
    R = hoeffding_samples(0.05, 0.01, 3, 8)
    assert R == int(np.ceil(np.log(3 * 8 / 0.01) / (2 * 0.05**2)))
    exact = exact_paths(cands, 0, 11, 4, 10**6).failure(2, 4, 8, 3)
    sampled = sampled_paths(cands, 0, 11, 4, R, np.random.default_rng(1)).failure(2, 4, 8, 3)
    assert 0 < exact.max() < 1
    assert np.abs(exact - sampled).max() <= 0.05


def test_exact_oracle_refuses_worlds_too_large():
    cands = Candidates.build([(np.arange(3), np.ones(3, int), np.ones(3))] * 5, [1] * 5)
    with pytest.raises(ValueError, match="oracle.max_outcomes"):
        exact_paths(cands, 0, 5, 2, 100)


@pytest.mark.parametrize("oracle", ["exact", "sampled"])
def test_lemma_3_1_later_jobs_change_nothing_for_earlier_ones(oracle):
    """Lemma 3.1: with LIFO, removing every job born after job m leaves jobs 0..m's fates as they
    were, realisation by realisation (the sampled oracle draws in birth order, so its earlier
    draws are the same)."""
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        seq = random_sequence(rng, 14, BOUNDS, "none", births_per_round=3.0, points=2)
        real = realise(seq, np.random.default_rng(seed))
        settings = FrameworkSettings(nodes=2, oracle=oracle, samples=50)
        full = run_framework(seq, real, settings, np.random.default_rng(seed))
        m = 6
        cut = BirthSequence(seq.jobs[: m + 1], seq.bounds, seq.signal)
        part = run_framework(
            cut,
            Realisation(real.point[: m + 1], real.arrival[: m + 1], real.duration[: m + 1]),
            settings,
            np.random.default_rng(seed),
        )
        for name in ("start", "completed", "evicted", "cancelled", "payment"):
            assert np.array_equal(getattr(full, name)[: m + 1], getattr(part, name)), (seed, name)


def test_fifo_eviction_breaks_lemma_3_1_somewhere():
    differs = 0
    for seed in range(30):
        rng = np.random.default_rng(200 + seed)
        seq = random_sequence(rng, 14, BOUNDS, "none", births_per_round=3.0, points=2)
        real = realise(seq, np.random.default_rng(seed))
        settings = FrameworkSettings(nodes=2, oracle="exact", eviction="fifo")
        full = run_framework(seq, real, settings, np.random.default_rng(0))
        cut = BirthSequence(seq.jobs[:7], seq.bounds, seq.signal)
        part = run_framework(
            cut, Realisation(real.point[:7], real.arrival[:7], real.duration[:7]), settings, np.random.default_rng(0)
        )
        differs += not np.array_equal(full.completed[:7], part.completed)
    assert differs > 0
