"""The stochastic variant's mechanism (algorithms/sow/stochastic_menu.py): Lemma E.2's menu by hand,
the relaxed usage within N' = N (1 - eps/10) = 2 C' at every round of random runs, and Theorem 3.2's
audit on it."""

import numpy as np
import pytest

from algorithms.sow.fractional_unit_allocation import FractionalUnitAllocation
from algorithms.sow.scheduler_framework import FrameworkSettings, run_framework
from algorithms.sow.stochastic_menu import (
    BundleMenu,
    audit_stochastic,
    capacity_condition,
    check_stochastic,
    prepare_stochastic,
    run_stochastic,
)
from market.sow.birth_sequences import BirthParams, draw_births
from market.sow.statement_of_work import Bounds, realise

INF = np.inf


def hand_menu():
    # C_max = 2, C' = 4 (2 lanes). Bundle 0: lane 0, rounds [0, 3), V(A) = 12, W(A) = 2: p = 12 / 4 = 3.
    # Bundle 1: lane 1, rounds [1, 3), V(A) = 4, W(A) = 1: p = 4 / 2 = 2.
    fua = FractionalUnitAllocation(
        4.0,
        2,
        2,
        5,
        np.array([0, 1]),
        np.array([0, 1]),
        np.array([3, 3]),
        np.array([12.0, 4.0]),
        np.array([2.0, 1.0]),
        np.zeros(0, np.int64),
        np.zeros(0),
        16.0,
        16.0,
    )
    return BundleMenu(fua, max_concurrency=2, max_duration=2, rounds=5)


def test_the_menus_prices_by_hand():
    menu = hand_menu()
    assert menu.price.tolist() == [3.0, 2.0]
    announced = menu.announce(0, 3)
    # t' = 0: only bundle 0 holds [0, 1) and [0, 2); t' = 1, 2: bundle 1 (cheaper) holds [1, 2), [1, 3), [2, 3);
    # [2, 4) and anything from 3 lie in no bundle: +inf
    assert announced(1).tolist() == [[3, 3], [2, 2], [2, INF], [INF, INF]]
    assert announced(2).tolist() == [[6, 6], [4, 4], [4, INF], [INF, INF]]
    menu.allocate(2, np.array([1]), np.array([2]), np.array([1.0]))  # width 2 into bundle 1: R_1 = 2
    assert menu.filled.tolist() == [0.0, 2.0] and menu.usage.tolist() == [0, 2, 2, 0, 0]
    assert menu.announce(0, 3)(2).tolist() == [[6, 6], [4, 4], [4, INF], [INF, INF]]  # R_1 + 2 = 4 <= 2 C_max
    menu.allocate(2, np.array([1]), np.array([2]), np.array([1.0]))  # R_1 = 4: bundle 1 is full
    again = menu.announce(0, 3)
    assert again(1).tolist() == [[3, 3], [3, 3], [3, INF], [INF, INF]]  # R_1 + 1 = 5 > 4: bundle 0's price
    assert announced(1).tolist() == [[3, 3], [2, 2], [2, INF], [INF, INF]]  # a menu is frozen when announced
    # a task of weight 1/4 (width 1/2) goes to the bundle that priced it and pays its share
    menu.allocate(2, np.array([0]), np.array([1]), np.array([0.25]))
    assert menu.filled.tolist() == [0.5, 4.0] and menu.sold.tolist() == [1.5, 8.0]


def prior_world(seed, jobs=10, nodes=None):
    rng = np.random.default_rng(seed)
    bounds = Bounds(int(rng.integers(1, 3)), int(rng.integers(1, 4)), 14, float(rng.choice([4.0, 16.0, 64.0])))
    config = {
        "kind": "prior",
        "signal": "duration",
        "jobs": jobs,
        "pipelines": int(rng.integers(1, 4)),
        "variants": int(rng.integers(1, 4)),
        "rounds": int(rng.integers(1, 5)),
        "lead": 2,
        "order": ["random", "ascending"][seed % 2],
    }
    seq = draw_births(BirthParams.from_config(config, bounds), bounds, rng)
    nodes = nodes or int(rng.integers(2 * bounds.max_concurrency + 1, 4 * bounds.max_concurrency + 3))
    return seq, realise(seq, rng), nodes, rng


def test_the_relaxed_usage_stays_within_n_prime_at_every_round_of_every_run():
    """Lemma E.2's feasibility with supply 2 C' = N' = N (1 - eps/10): after every allocation, every
    round's relaxed usage is at most N' (and at most 2 L C_max), every R_k at most 2 C_max."""
    runs = 0
    for seed in range(40):
        seq, real, nodes, rng = prior_world(seed)
        settings = FrameworkSettings(nodes=nodes, epsilon=float(rng.choice([0.1, 0.5])), samples=30)
        lp, fua, menu = prepare_stochastic(seq, settings)
        assert lp.capacity == pytest.approx(settings.relaxed_capacity / 2)
        peaks = []

        def seen(ctx, menu=menu):
            peaks.append(menu.usage.max(initial=0.0))
            assert np.all(menu.filled <= 2 * seq.bounds.max_concurrency + 1e-9)

        out = run_framework(seq, real, settings, rng, on_birth=seen, relaxed=menu)
        assert len(peaks) == len(seq)
        assert max(peaks) <= settings.relaxed_capacity + 1e-9
        assert max(peaks) <= 2 * fua.lanes * fua.unit + 1e-9
        done = out.completed
        assert np.all(out.payment[done] < out.value[done] + 1e-9)  # duration signal: V > pi for every run point
        runs += int(out.completed.any())
    assert runs >= 30


def test_run_stochastic_keeps_the_frameworks_invariants():
    seq, real, nodes, rng = prior_world(3, jobs=14)
    run = run_stochastic(seq, real, FrameworkSettings(nodes=nodes, samples=30), rng)
    out = run.out
    assert np.all(out.payment[~out.completed] == 0) and not np.any(out.extra["receptive_break"])
    assert np.all(out.start[out.start >= 0] >= real.arrival[out.start >= 0])
    assert 0 <= run.fua.share <= 1 + 1e-9


def test_truth_audit_on_stochastic_no_report_keeping_the_concurrency_gains_more_than_2_mu_v_bar():
    audited = 0
    for seed in range(12):
        seq, real, nodes, rng = prior_world(seed, jobs=7, nodes=None)
        settings = FrameworkSettings(nodes=nodes, oracle=["exact", "sampled"][seed % 2], samples=20, max_outcomes=10**6)
        run, rows = audit_stochastic(seq, real, settings, rng)
        lies = [r for r in rows if r["kind"] not in ("truthful", "concurrency")]
        assert all(r["within_mu"] for r in lies), [r for r in lies if not r["within_mu"]][:2]
        assert all(r["within_plans"] for r in rows if r["kind"] != "truthful")
        if settings.oracle == "exact":  # mu = 0 up to the eps/10 threshold: no gain beyond it
            assert all(r["gain"] <= 2 * r["mu"] * seq.bounds.max_value + 1e-9 for r in lies)
        audited += len(lies)
    assert audited > 200


def test_the_capacity_condition_and_the_lane_check():
    assert capacity_condition(2, 8) == pytest.approx(2 * np.log(8))
    check_stochastic(5, 0.1, True, 2, "here")  # C' = 2.475 >= 2
    with pytest.raises(
        ValueError, match=r"^m: the stochastic variant's LP supply C' = N'/2 = 1\.98 \(cluster\.nodes = 4"
    ):
        check_stochastic(4, 0.1, True, 2, "m")
