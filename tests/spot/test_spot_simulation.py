"""simulate(): the rules (5b)-(5e) and the accounting of paper 000 Sec. III (eq. 2-9)."""

import numpy as np
import pytest

from algorithms.spot.simulation import (
    PolicyError,
    SpotPolicy,
    can_finish,
    max_work,
    simulate,
    usable_spot,
    work_running,
)
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket

JOB = FineTuneJob(workload=10, deadline=4, n_min=2, n_max=4, mu1=0.5, mu2=0.8, value=20, gamma=2)
MARKET = SpotMarket([0.2, 0.3, 0.4, 0.5], [3, 0, 4, 1], on_demand_price=1.5)


class Script(SpotPolicy):
    name = "script"

    def __init__(self, decisions):
        self.decisions = list(decisions)

    def decide(self, t, state):
        return self.decisions[t - 1]


def test_accounting_with_idle_slot_and_termination():
    out = simulate(JOB, MARKET, Script([(0, 3), (0, 0), (1, 3), (3, 1)]))
    # t1: n=3 up from 0: 0.5*3 = 1.5; spot 3*0.2 = 0.6
    # t2: idle: 0 work, no cost
    # t3: n=4 up from 0: 0.5*4 = 2 -> 3.5; od 1*1.5, spot 3*0.4 = 1.2
    # t4: n=4 unchanged: 4 -> 7.5; od 3*1.5 = 4.5, spot 1*0.5
    # termination: 2.5 left, n_last = 4 = N_max so mu = 1: one slot, 4*1.5 = 6, T = 5
    # V(5) = 20 (1 - 1/4) = 15; cost = 2.3 spot + 12 on-demand
    assert out.progress_at_deadline == pytest.approx(7.5)
    assert out.spot_cost == pytest.approx(2.3)
    assert out.on_demand_cost == pytest.approx(12.0)
    assert out.cost == pytest.approx(14.3)
    assert out.completion_time == 5 and out.termination_slots == 1
    assert not out.met_deadline
    assert out.utility == pytest.approx(15 - 14.3)
    assert out.reconfigurations == 3  # 0->3, 3->0, 0->4
    assert out.n_on_demand.tolist() == [0, 0, 1, 3]
    assert out.n_spot.tolist() == [3, 0, 3, 1]


def test_termination_from_a_smaller_count_pays_mu_and_a_reconfiguration():
    out = simulate(JOB, MARKET, Script([(0, 3), (0, 0), (0, 0), (0, 0)]))
    # Z_ddl = 1.5; 8.5 left from n_last = 0: 0.5*4 + 4 + 4 = 10 >= 8.5 -> 3 slots, T = 7
    # V(7) = 20 (1 - 3/4) = 5; cost 0.6 + 3*4*1.5 = 18.6
    assert out.completion_time == 7 and out.termination_slots == 3
    assert out.utility == pytest.approx(5 - 18.6)
    assert out.reconfigurations == 3  # 0->3, 3->0, 0->4 after d


def test_completion_stops_the_run_and_pads_decisions():
    job = FineTuneJob(workload=5, deadline=4, n_min=2, n_max=4, mu1=0.5, mu2=0.8, value=20)
    out = simulate(job, MARKET, Script([(1, 3), (4, 0), (4, 0), (4, 0)]))
    # t1: 0.5*4 = 2; t2: 4 -> 6 >= 5: T = 2, only two slots billed
    assert out.completion_time == 2 and out.met_deadline
    assert out.cost == pytest.approx(1.5 + 0.6 + 6.0)
    assert out.utility == pytest.approx(20 - 8.1)
    assert out.progress_at_deadline == pytest.approx(6.0)
    assert out.n_on_demand.tolist() == [1, 4, 0, 0]
    assert out.reconfigurations == 1


def test_record_has_the_engine_keys_with_plain_types():
    row = simulate(JOB, MARKET, Script([(0, 3), (0, 0), (1, 3), (3, 1)])).record("X")
    assert list(row) == [
        "mechanism",
        "utility",
        "cost",
        "completion_time",
        "spot_cost",
        "on_demand_cost",
        "progress_at_deadline",
        "met_deadline",
        "reconfigurations",
    ]
    assert type(row["completion_time"]) is int and type(row["reconfigurations"]) is int
    assert type(row["met_deadline"]) is bool and type(row["utility"]) is float


@pytest.mark.parametrize(
    "decision, message",
    [
        ((0, 4), r"n_spot 4 exceeds availability 3 \(5b\)"),
        ((1, 0), r"1 instances, must be 0 or in \[2, 4\]"),
        ((2, 3), r"5 instances, must be 0 or in \[2, 4\]"),
        ((-1, 3), "n_on_demand must be >= 0"),
        ((2.0, 0), "n_on_demand must be an integer"),
        ((0, True), "n_spot must be an integer"),
        (None, "decide must return"),
        ((1, 2, 3), "decide must return"),
    ],
)
def test_rule_violations_raise_policy_error(decision, message):
    with pytest.raises(PolicyError, match=f"script: slot 1: {message}"):
        simulate(JOB, MARKET, Script([decision] * 4))


def test_numpy_integers_are_accepted():
    out = simulate(JOB, MARKET, Script([(np.int64(1), np.int32(3))] + [(0, 0)] * 3))
    assert out.n_on_demand[0] == 1


def test_market_shorter_than_the_deadline():
    with pytest.raises(ValueError, match="market has 4 slots, the job's deadline needs 5"):
        simulate(FineTuneJob(deadline=5), MARKET, Script([]))


class Spy(SpotPolicy):
    name = "spy"

    def reset(self, job, market_info):
        super().reset(job, market_info)
        self.seen = []

    def decide(self, t, state):
        self.seen.append(state)
        return (0, 0)


def test_policies_see_only_the_past_and_the_present():
    spy = Spy()
    simulate(JOB, MARKET, spy)
    assert spy.market_info.horizon == 4 and spy.market_info.on_demand_price == 1.5
    assert not hasattr(spy.market_info, "price")
    for t, s in enumerate(spy.seen, start=1):
        assert s.t == t and s.slots_left == 4 - t + 1
        assert s.price_history.tolist() == MARKET.price[:t].tolist()
        assert s.availability_history.tolist() == MARKET.availability[:t].tolist()
        assert s.price == MARKET.price[t - 1] and s.availability == MARKET.availability[t - 1]
        with pytest.raises(ValueError):
            s.price_history[0] = 9.0


def test_helpers():
    # N_max = 4: from 0 the first slot pays mu1 = 0.5: 2 + 4 + 4 = 10
    assert max_work(3, 0, JOB) == 10.0
    assert max_work(3, 4, JOB) == 12.0
    assert max_work(0, 0, JOB) == 0.0
    assert can_finish(10.0, 3, 0, JOB) and not can_finish(10.01, 3, 0, JOB)
    assert can_finish(0.0, 0, 0, JOB)
    # 3 instances for 2 slots after 4: mu2 * 3 + 3 = 5.4
    assert work_running(3, 2, 4, JOB) == pytest.approx(5.4)
    assert usable_spot(1, JOB) == 0 and usable_spot(3, JOB) == 3 and usable_spot(9, JOB) == 4
