"""Self-owned instances (algorithms/iaas/self_owned.py): eq. (3)-(5) and the naive eq. (2) by
hand, the zero denominators, and the paper's Fig. 2 example."""

from __future__ import annotations

import pytest

from algorithms.iaas.self_owned import allocate_self_owned, expected_need, utilisation


def test_eq3_and_eq4_by_hand():
    # d = 24, delta = 4, beta = 1/2: kappa0 = 1, d - Len = 12 >= 6: eq. (3), denominator 24 - 12 = 12
    assert expected_need(72.0, 24, 4, 0.5) == pytest.approx(4 - 24 / 12)
    assert expected_need(48.0, 24, 4, 0.5) == pytest.approx(0.0)
    # d = 15: kappa0 = 1, d - Len = 3 < 6: eq. (4), denominator (1 - 1/2) x 12 = 6
    assert expected_need(54.0, 15, 4, 0.5) == pytest.approx(4 - 6 / 6)
    # beta = 0: eq. (3) with denominator d: r = delta - (d delta - z) / d = z / d
    assert expected_need(50.0, 20, 4, 0.0) == pytest.approx(50 / 20)


def test_zero_denominators_need_no_self_owned_instance():
    assert expected_need(20.0, 6, 4, 0.5) == 0.0  # eq. (3): d = beta Len, kappa0 = 0
    assert expected_need(20.0, 5, 4, 0.5) == 0.0  # eq. (4): kappa0 = 0


def test_fig2_one_instance_goes_to_the_job_that_needs_it():
    # Sec. IV-A, Fig. 2: two jobs arrive together, d = 2 hours, delta = 4, sizes 4 Len and
    # 6 Len, one self-owned instance, beta = 1/2. The naive eq. (2) gives it to the first
    # (z/d = 2); eq. (5) with beta0 = 1/2 skips it (r_bar = 0, it can finish on spot) and gives
    # it to the second (r_bar = 2, capped by the one idle instance).
    arrival, size, deadline, delta = [1, 1], [48.0, 72.0], [24, 24], [4, 4]
    assert allocate_self_owned(arrival, size, deadline, delta, 1, None).tolist() == [1, 0]
    assert allocate_self_owned(arrival, size, deadline, delta, 1, 0.5).tolist() == [0, 1]
    # with 4 instances and beta0 = 0 both get z / d = 2 and the instances are fully used
    r = allocate_self_owned(arrival, size, deadline, delta, 4, 0.0)
    assert r.tolist() == [2, 2] and utilisation(arrival, size, deadline, r, 4) == pytest.approx(1.0)


def test_instances_are_held_over_the_whole_window_and_rounded_up():
    # job 1 holds ceil(2.5) = 3 of 4 over slots 1..20; job 2 (slots 10..29) finds 1 idle
    r = allocate_self_owned([1, 10], [50.0, 100.0], [20, 20], [4, 6], 4, 0.0)
    assert r.tolist() == [3, 1]
    # the naive policy takes ceil(z / d) too; a later job after the first window finds all 4
    assert allocate_self_owned([1, 21], [50.0, 100.0], [20, 20], [4, 6], 4, None).tolist() == [3, 4]
    assert allocate_self_owned([1], [50.0], [20], [4], 0, 0.0).tolist() == [0]


def test_utilisation_counts_the_arrival_window_only():
    # R = 4; jobs at slots 1 and 5 each hold 2 instances for 20 slots (40 units of work). The
    # arrival window is slots 1..5: job 1 works 5 slots x 2, job 2 one slot x 2, of 4 x 5
    assert utilisation([1, 5], [40.0, 40.0], [20, 20], [2, 2], 4) == pytest.approx(12 / 20)
    # over the horizon of the last deadline (slot 24) every unit counts: 80 of 4 x 24
    assert utilisation([1, 5], [40.0, 40.0], [20, 20], [2, 2], 4, horizon=24) == pytest.approx(80 / 96)
    # a job whose self-owned share is done early (z < r d) stops counting when it is done
    assert utilisation([1, 5], [6.0, 40.0], [20, 20], [2, 2], 4) == pytest.approx((6 + 2) / 20)
