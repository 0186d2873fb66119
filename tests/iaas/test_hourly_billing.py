"""The per-slot billing steps (algorithms/iaas/hourly_billing.py, paper 003 Sec. III-A) on cases
computed by hand: on-demand paid per started hour from its launch, only the missing instances
launched, the work of a slot in which the job finishes, and the spot hour's charge."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.iaas.hourly_billing import charge_spot_hour, do_work, paid_instances, pay_on_demand


def test_an_on_demand_instance_is_paid_once_per_started_hour_from_its_launch():
    # one instance wanted from slot 5 on (Len = 12, 0.25 an hour): paid at 5 for slots 5..16,
    # not again before slot 17, where its second hour starts
    paid_until = np.zeros(1, dtype=np.int64)
    cost = 0.0
    for t in range(5, 17):
        paid, cost = pay_on_demand(paid_until, t, 1, 0.25, 12, cost)
        assert paid == 1 and cost == 0.25
    assert paid_until.tolist() == [16]
    paid, cost = pay_on_demand(paid_until, 17, 1, 0.25, 12, cost)
    assert (paid, cost, paid_until.tolist()) == (1, 0.5, [28])


def test_only_the_missing_instances_are_launched():
    # two wanted at slot 10: instance 0 paid until 15, instance 1's hour ended at 9: one launched
    paid_until = np.array([15, 9], dtype=np.int64)
    assert paid_instances(paid_until, 10) == 1
    paid, cost = pay_on_demand(paid_until, 10, 2, 0.25, 12, 1.0)
    assert (paid, cost, paid_until.tolist()) == (2, 1.25, [15, 21])
    # none wanted: the paid instance still counts (it works until its hour ends), none launched
    paid, cost = pay_on_demand(paid_until, 12, 0, 0.25, 12, cost)
    assert (paid, cost, paid_until.tolist()) == (2, 1.25, [15, 21])
    # at 16 instance 0's hour has ended: one wanted, instance 1 still paid, nothing launched
    paid, cost = pay_on_demand(paid_until, 16, 1, 0.25, 12, cost)
    assert (paid, cost, paid_until.tolist()) == (1, 1.25, [15, 21])


def test_the_work_of_a_slot_in_which_the_job_finishes():
    # 3 spot + 2 on-demand instances with 10 units left: a full slot, added to the totals so far
    assert do_work(3, 2, 10.0, 0.0, 0.0) == (3.0, 2.0, 5.0)
    assert do_work(3, 2, 10.0, 6.0, 1.0) == (9.0, 3.0, 5.0)
    # with 4.5 left the job is done mid-slot: 4.5 processed, the 3 spot units first
    assert do_work(3, 2, 4.5, 6.0, 1.0) == (9.0, 2.5, -0.5)
    # with 2 left the spot instances alone finish it
    assert do_work(3, 2, 2.0, 0.0, 0.0) == (2.0, 0.0, -3.0)
    # no instances: nothing processed
    assert do_work(0, 0, 7.0, 0.0, 0.0) == (0.0, 0.0, 7.0)


def test_a_spot_hour_is_charged_when_it_runs_to_its_end_or_the_job_is_done():
    # 2 instances at 0.1 (the hour's first price): slot 11 of 12 with work left, nothing yet
    assert charge_spot_hour(True, 10, 2, 0.1, 5.0, 12, 1.0) == (11, True, 1.0)
    # the twelfth slot: the whole hour, 2 x 0.1
    assert charge_spot_hour(True, 11, 2, 0.1, 5.0, 12, 1.0) == (12, False, pytest.approx(1.2))
    # the job done in the hour's third slot: the tenant stops them and pays the whole hour
    assert charge_spot_hour(True, 2, 2, 0.1, -0.5, 12, 0.0) == (3, False, pytest.approx(0.2))
    # ended by the cloud (not running): nothing charged, even when the job is done
    assert charge_spot_hour(False, 4, 2, 0.1, -0.5, 12, 1.0) == (4, False, 1.0)
