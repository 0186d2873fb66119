"""`births.kind: dense` (market/sow/dense_births.py): demand scaled to N, the jobs' shape, the
relaxed usage it produces under Alg. 3 (near N' when 4 V_bar D_max is large, never past eq. (7)'s
ceiling), the framework's per-round usage record, and validation errors naming the key."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.sow.scheduler_framework import FrameworkSettings, run_framework
from market.sow.birth_sequences import BirthParams, bounds_from_config, draw_births
from market.sow.dense_births import DenseParams, decaying_values
from market.sow.statement_of_work import Bounds, realise

UNIT = Bounds(max_concurrency=1, max_duration=1, horizon=6, max_value=4096.0)  # experiment=sow/theorem41


def births(config, bounds=UNIT, seed=0):
    params = BirthParams.from_config({"kind": "dense", **config}, bounds)
    return draw_births(params, bounds, np.random.default_rng(seed))


@pytest.mark.parametrize("nodes", [8, 32, 100])
def test_each_rounds_demand_is_load_times_the_nodes_plus_less_than_one_job(nodes):
    bounds = bounds_from_config({})  # C_max = 4, D_max = 4
    config = {"nodes_hint": nodes, "load": 1.5, "rounds": 3, "concurrency": [1, 4], "duration": [1, 3]}
    seq = births(config, bounds)
    for b in range(3):
        jobs = [s for s in seq.jobs if s.birth == b]
        demand = [s.concurrency * int(np.round(s.expected_duration())) for s in jobs]
        assert 1.5 * nodes <= sum(demand) < 1.5 * nodes + max(demand)
        assert sum(demand[:-1]) < 1.5 * nodes  # the shortest prefix that reaches the target
    assert max(s.birth for s in seq.jobs) == 2


def test_demand_scales_with_the_cluster():
    counts = [len(births({"nodes_hint": n, "rounds": 2})) for n in (32, 64, 128, 512)]
    assert counts == [2 * math.ceil(1.5 * n) for n in (32, 64, 128, 512)]  # unit jobs: 1.5 N a round


def test_a_jobs_support_and_its_decaying_value():
    seq = births({"nodes_hint": 16, "rounds": 2})
    for sow in seq.jobs:
        assert sow.concurrency == 1 and set(sow.duration.tolist()) == {1}
        assert (sow.arrival - sow.birth).tolist() == [0, 1, 2] and sow.probability.tolist() == [0.25, 0.5, 0.25]
        peak = sow.values[0]
        assert 0.75 * 4096 <= peak <= 4096
        # full value up to the earliest finish (k = 1), then halved every round (floored to 3 decimals)
        assert sow.values[1] == peak
        assert np.allclose(sow.values[2:6], np.floor(peak * 0.5 ** np.arange(1, 5) * 1000) / 1000)
        assert sow.values[6] == 0.0
    values = decaying_values(3.0, 1, 1, UNIT)
    assert values.tolist() == [3.0, 3.0, 1.5, 0.0, 0.0, 0.0, 0.0]  # 0.75 < 1: 0


def test_the_draws_depend_on_the_seed_only():
    a, b = births({"nodes_hint": 20}, seed=4), births({"nodes_hint": 20}, seed=4)
    assert [s.values.tolist() for s in a.jobs] == [s.values.tolist() for s in b.jobs]
    c = births({"nodes_hint": 20}, seed=5)
    assert [s.values[0] for s in a.jobs] != [s.values[0] for s in c.jobs]


def _relaxed_peak(bounds, nodes, seed=0, epsilon=0.2):
    seq = births({"nodes_hint": nodes, "rounds": 2}, bounds, seed)
    rng = np.random.default_rng(seed + 100)
    real = realise(seq, rng)
    settings = FrameworkSettings(nodes=nodes, epsilon=epsilon, samples=30)
    out = run_framework(seq, real, settings, rng)
    return seq, out, out.extra["relaxed_usage"].max() / settings.relaxed_capacity


def test_the_relaxed_usage_reaches_0_9_of_n_prime_when_eq_7_allows_it():
    # V_bar = 4096, D_max = 1: eq. (7)'s ceiling is 1 - log 2 / log(4 V_bar D_max) = 13/14
    for seed in range(3):
        _, _, peak = _relaxed_peak(UNIT, 32, seed)
        assert 0.9 <= peak <= 13 / 14 + 1 / (0.98 * 32)


def test_the_relaxed_usage_never_passes_eq_7s_ceiling():
    # V_bar = 16, D_max = 1: p(y) reaches V_bar at y = N' log(2 V_bar D_max) / log(4 V_bar D_max) = 5/6 N';
    # a job buys a unit only below it, and adds at most c max P = 1/2 to it.
    bounds = Bounds(max_concurrency=1, max_duration=1, horizon=6, max_value=16.0)
    for nodes in (32, 64):
        _, _, peak = _relaxed_peak(bounds, nodes)
        assert 0.75 < peak <= 5 / 6 + 0.5 / (0.98 * nodes)


def test_the_framework_records_the_relaxed_usage_per_round():
    # y_t summed over the rounds is every job's expected allocation: c_j sum_i P_i d_i over the
    # points its plan runs (all inside the price horizon here)
    seq, out, _ = _relaxed_peak(UNIT, 16)
    plans = {}
    rng = np.random.default_rng(100)
    real = realise(seq, rng)
    out = run_framework(
        seq,
        real,
        FrameworkSettings(nodes=16, epsilon=0.2, samples=30),
        rng,
        on_birth=lambda ctx: plans.__setitem__(ctx.job, ctx.plan.start),
    )
    expected = sum(
        sow.concurrency * float(sow.probability[plans[j] >= 0] @ sow.duration[plans[j] >= 0])
        for j, sow in enumerate(seq.jobs)
    )
    usage = out.extra["relaxed_usage"]
    assert usage.shape == (seq.rounds(),) and np.isclose(usage.sum(), expected)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"load": 0}, r"^births\.load must be a finite number > 0, got 0$"),
        ({"rounds": 0}, r"^births\.rounds must be a positive integer, got 0$"),
        ({"lead": 4, "arrival_jitter": 2}, r"^births\.lead \+ births\.arrival_jitter must be < bounds\.horizon = 6 "),
        ({"concurrency": [1, 2]}, r"^births\.concurrency must lie within \[1, 1\] \(bounds\.max_concurrency = 1\), "),
        ({"value": [100, 5000]}, r"^births\.value must lie within \[1, 4096\] \(bounds\.max_value = 4096\)"),
        ({"value": [0.5, 10]}, r"^births\.value must satisfy 1 <= low <= high, got \[0\.5, 10\]$"),
        ({"duration_jitter": 1}, r"^births\.duration_jitter must be an integer in \[0, 0\], got 1$"),
        ({"half_life": 0}, r"^births\.half_life must be a positive integer, got 0$"),
        ({"nodes_hint": 0}, r"^births\.nodes_hint must be a positive integer, got 0$"),
        ({"pipelines": 3}, r"^births: unknown key\(s\) 'pipelines' for kind 'dense' \(known: kind, signal, rounds, "),
    ],
)
def test_validation_errors_name_the_key(config, message):
    with pytest.raises(ValueError, match=message):
        BirthParams.from_config({"kind": "dense", **config}, UNIT)


def test_nodes_hint_must_hold_the_widest_job():
    bounds = bounds_from_config({})
    with pytest.raises(ValueError, match=r"^births\.nodes_hint must be >= the highest concurrency 4 "):
        DenseParams.from_config({"nodes_hint": 3, "concurrency": [1, 4]}, bounds)
