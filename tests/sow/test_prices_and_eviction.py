"""Alg. 3's exponential prices (eq. (7), Appendix D) and the eviction rules (Alg. 1 lines 6-7)."""

import math

import numpy as np
import pytest

from algorithms.sow.eviction import removed_jobs
from algorithms.sow.exponential_prices import ExponentialPrices


def prices(N=40.0, V=8.0, D=4, C=3, rounds=30, start="paper"):
    return ExponentialPrices(N, V, D, C, rounds, start)


def test_eq7_endpoints_and_the_concurrency_switch():
    p = prices()
    assert p.unit_price(0.0) == pytest.approx(1 / (2 * 4))  # p(0) = 1/(2 D_max)
    assert p.unit_price(40.0) == pytest.approx(2 * 8.0)  # p(N') = 2 V_bar
    assert p.unit_price(20.0) == pytest.approx((1 / 8) * (4 * 8 * 4) ** 0.5)
    q = prices(start="concurrency")
    assert q.unit_price(0.0) == pytest.approx(1 / (2 * 3 * 4))  # half the least value density 1/(C D)
    assert q.unit_price(40.0) == pytest.approx(16.0)
    with pytest.raises(ValueError, match="prices.start"):
        prices(start="half")


def test_appendix_d_inequalities_hold_under_the_capacity_condition():
    V, D, C = 8.0, 4, 3
    N = math.ceil(C * math.log2(4 * V * D)) + 1  # N' > C_max log2(4 V_bar D_max)
    p = prices(N=float(N), V=V, D=D, C=C)
    y = np.linspace(0, N - C, 500)
    assert np.all(p.unit_price(y + C) <= 2 * p.unit_price(y) + 1e-12)  # p(y + C_max) <= 2 p(y)
    above = np.linspace(N - C + 1e-9, N, 50)
    assert np.all(p.unit_price(above) > V)  # unaffordable near N'
    small = prices(N=float(C * math.log2(4 * V * D)) / 2, V=V, D=D, C=C)  # condition broken: it fails
    assert small.unit_price(small.capacity - C + 1e-9) < V


def test_menu_is_the_sum_of_unit_prices_and_keeps_sec3_invariants():
    p = prices(rounds=9)  # rounds 0..8
    p.allocate(np.array([2, 3, 3, 7]), np.array([5.0, 1.0, 2.0, 10.0]))
    menu = p.unit_menu(1, 6)
    unit = p.unit_price(p.usage)
    assert menu[0, 0] == pytest.approx(unit[1])
    assert menu[2, 3] == pytest.approx(unit[3:7].sum())  # t' = 3, d = 4
    assert np.all(np.diff(menu, axis=1) > 0)  # non-decreasing in d
    assert np.isfinite(menu[5, 2]) and np.isinf(menu[5, 3])  # t' = 6: rounds 6..8 exist, round 9 does not
    before = p.unit_menu(1, 6).copy()
    p.allocate(np.array([4, 5]), np.array([3.0, 3.0]))
    after = p.unit_menu(1, 6)
    assert np.all(after >= before) and np.any(after > before)  # never falls with the announce time


def test_lifo_removes_the_latest_born_first_idle_ones_too():
    load = np.array([2, 0, 2, 1])  # job 1 is active but idle this round
    active = np.array([True, True, True, True])
    removed, before = removed_jobs(load, active, 3, "lifo")
    assert before == 5
    # pop job 3 (load 4), pop job 2 (load 2 <= 3): job 1 (idle, born before 2) stays
    assert removed.tolist() == [False, False, True, True]
    removed, _ = removed_jobs(np.array([2, 0, 2]), active[:3], 1, "lifo")
    assert removed.tolist() == [True, True, True]  # job 0 alone is over 1: every job goes, idle job 1 too
    removed, _ = removed_jobs(np.array([2, 0, 2, 1]), np.array([True, True, False, True]), 3, "lifo")
    assert removed.tolist() == [False, False, False, False]  # inactive job 2 counts for nothing


def test_fifo_and_evict_all():
    load = np.array([2, 0, 2, 1])
    active = np.ones(4, bool)
    removed, _ = removed_jobs(load, active, 3, "fifo")
    assert removed.tolist() == [True, False, False, False]  # pop job 0: 3 left, which fit
    removed, _ = removed_jobs(load, active, 3, "all")
    assert removed.all()
    removed, _ = removed_jobs(load, active, 5, "all")
    assert not removed.any()
    with pytest.raises(ValueError, match="eviction"):
        removed_jobs(load, active, 3, "random")


def test_rules_match_one_by_one_popping_on_random_rounds():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 8))
        load = rng.integers(0, 4, n) * rng.integers(0, 2, n)
        active = rng.random(n) < 0.8
        nodes = int(rng.integers(1, 8))
        for rule, order in (("lifo", range(n - 1, -1, -1)), ("fifo", range(n))):
            left = active.copy()
            for j in order:  # the paper's loop: pop while the load is over N
                if (load * left).sum() <= nodes:
                    break
                left[j] = False
            removed, _ = removed_jobs(load, active, nodes, rule)
            assert (active & ~left).tolist() == removed.tolist(), (rule, load, active, nodes)
