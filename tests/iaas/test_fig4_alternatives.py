"""`python -m reproduction.iaas.alternatives fig4` (Fig. 4's interior beta): the best-beta and
interior logic on hand-made tables, each model switch of algorithms/iaas/job_execution.py on a
job whose cost is computed by hand, the expected-value world (b), and a tiny end-to-end run."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from algorithms.iaas.job_execution import DYNALLOC, THETA, proportion_split, proportion_split_on_size, run_job
from algorithms.iaas.policies import BETAS, Policy, dynalloc_grid, stream_cost
from market.iaas.jobs import JobParams, JobStream, draw_jobs
from market.iaas.spot_prices import PriceParams, draw_prices
from reproduction.iaas.alternatives import (
    FIG4_CHOICES,
    FIG4_COLUMNS,
    LOST,
    Choice,
    best_betas,
    beta_label,
    choice_money,
    expected_value_path,
    fig4,
    fig4_summary,
    run_money,
    spot_slots,
    unit_cost,
)


def table(rows: dict, betas=BETAS) -> dict:
    return {(bid, beta): cost for bid, costs in rows.items() for beta, cost in zip(betas, costs)}


def test_best_beta_and_the_interior_flag_on_a_hand_made_table():
    betas = (0.0, 0.5, 0.9999)
    costs = table(
        {
            0.10: [0.3, 0.2, 0.25],  # dip in the middle: interior
            0.13: [0.3, 0.2, 0.1],  # falls with beta: the highest, not interior
            0.16: [0.1, 0.2, 0.3],  # rises: the lowest, not interior
            0.19: [0.2, 0.2, 0.2],
        },
        betas,
    )  # flat: the tie goes to the lowest beta
    rows = best_betas(costs, betas)
    assert [r["bid"] for r in rows] == [0.10, 0.13, 0.16, 0.19]
    assert [r["best_beta"] for r in rows] == [0.5, 0.9999, 0.0, 0.0]
    assert [r["interior"] for r in rows] == [True, False, False, False]
    assert [r["unit_cost_best"] for r in rows] == [0.2, 0.1, 0.1, 0.2]
    assert [r["unit_cost_beta_max"] for r in rows] == [0.25, 0.1, 0.3, 0.2]


def test_summary_counts_interior_bids_and_names_the_best_betas():
    rows = [
        {
            "x0": x0,
            "bid": bid,
            "best_beta": beta,
            "interior": 0 < beta < 0.9999,
            "unit_cost_best": best,
            "unit_cost_beta_max": top,
        }
        for x0, bid, beta, best, top in (
            (3.0, 0.10, 1 / 12, 0.09, 0.10),
            (3.0, 0.13, 0.9999, 0.2, 0.2),
            (13.0, 0.10, 0.9999, 0.1, 0.1),
            (13.0, 0.13, 0.0, 0.3, 0.3),
        )
    ]
    assert fig4_summary("x", rows) == (
        "x: 1 of 4 bids interior; best betas per bid (0.10, 0.13) "
        "x0 = 3: 1/12 0.9999; x0 = 13: 0.9999 0/12; "
        "largest saving of the best beta over beta = 0.9999: 10.0%"
    )
    assert beta_label(5 / 12) == "5/12" and beta_label(0.9999) == "0.9999"


def test_the_default_choice_is_stream_cost():
    rng = np.random.default_rng(3)
    jobs = draw_jobs(JobParams.from_config({"slots": 150, "slackness_max": 3.0}), rng)
    path = draw_prices(PriceParams.from_config({}), jobs.horizon(), rng)
    for policy in dynalloc_grid()[::7]:
        assert unit_cost(choice_money(jobs, path, policy, FIG4_CHOICES[0])) == stream_cost(jobs, path, policy).unit_cost


def test_a_cloud_ended_spot_hour_billed_pro_rata_costs_its_slots_at_the_hour_price():
    # all spot (theta = 1), 2 instances: slot 6 above the bid ends hour 1 after 5 slots (10 units);
    # hour 2 at 0.1 (24 units), hour 3 at 0.12 until the job is done in slot 27 (as in
    # test_job_execution): free today, 2 x 0.1 x 5 / 12 pro rata
    prices = np.full(60, 0.1)
    prices[5], prices[24] = 0.5, 0.12
    free = run_job(1, 60, 40.0, 2, prices, THETA, bid=0.2, theta=1.0)
    pro_rata = run_job(1, 60, 40.0, 2, prices, THETA, bid=0.2, theta=1.0, lost_spot_pro_rata=True)
    assert free.spot_cost == pytest.approx(2 * 0.1 + 2 * 0.12)
    assert pro_rata.spot_cost == pytest.approx(free.spot_cost + 2 * 0.1 * 5 / 12)
    assert (pro_rata.spot_work, pro_rata.finish) == (free.spot_work, free.finish)


def test_on_demand_billed_per_slot_pays_only_the_slots_run():
    # 2 on-demand instances, 30 units, done in slot 15: 2 started hours each (4 x 0.25) today,
    # 2 x 15 slots x 0.25 / 12 per slot
    hourly = run_job(1, 20, 30.0, 2, np.full(20, 0.1), THETA, bid=0.2, theta=0.0)
    per_slot = run_job(1, 20, 30.0, 2, np.full(20, 0.1), THETA, bid=0.2, theta=0.0, od_per_slot=True)
    assert hourly.on_demand_cost == pytest.approx(1.0) and per_slot.on_demand_cost == pytest.approx(30 * 0.25 / 12)
    assert (per_slot.on_demand_work, per_slot.finish) == (hourly.on_demand_work, hourly.finish)


def test_alg1_as_printed_bids_on_the_jobs_size():
    # the Fig. 3 job (z = 122, d = 42, delta = 4, beta = 1/2) after an hour of 6 spot slots:
    # z' = 98, 30 slots left: nu(z', 30) = 3 (3 spot, 1 on-demand), nu(z_j, 30) < 0: 4 spot
    assert proportion_split(98.0, 30, 4, 0.5) == (3, 1)
    assert proportion_split_on_size(98.0, 122.0, 30, 4, 0.5) == (4, 0)
    assert proportion_split_on_size(98.0, 110.0, 30, 4, 0.5) == (1, 3)  # nu(110, 30) = 1
    assert proportion_split_on_size(98.0, 122.0, 40, 4, 0.5) == (4, 0)  # kappa2(z') >= 1: line 1
    # the whole job, spot lost only in slot 7 (prices 0.1, bid 0.2): today hours 2 and 3 bid 3
    # spot + 1 on-demand, and hour 4 (2 units left) too: 3 x 3 x 0.1 + 3 x 0.25 = 1.65; as printed,
    # 4 spot each hour: 3 x 4 x 0.1 = 1.2, no on-demand
    prices = np.full(60, 0.1)
    prices[6] = 0.5
    today = run_job(1, 42, 122.0, 4, prices, DYNALLOC, beta=0.5, bid=0.2)
    printed = run_job(1, 42, 122.0, 4, prices, DYNALLOC, beta=0.5, bid=0.2, nu_on_size=True)
    assert today.cost == pytest.approx(1.65) and today.on_demand_work == 24.0
    assert printed.cost == pytest.approx(1.2) and printed.on_demand_work == 0.0 and printed.finish == today.finish


def test_expected_value_path_runs_the_spot_the_same_slots_of_every_hour():
    rng = np.random.default_rng(0)
    prices = rng.exponential(0.11, 48)
    path = expected_value_path(prices, 0.19, 0.11, 4, 2)
    slot = np.arange(1, 49)
    lost = (slot - 1 - 2) % 12 == 4
    assert np.all(path[lost] == LOST) and np.all(path[~lost] <= 0.19)
    kept = ~lost & (prices <= 0.19)
    assert np.array_equal(path[kept], prices[kept])
    assert spot_slots(0.10, 0.11) == 1 and spot_slots(0.28, 0.11) == 7  # 12 x 0.123, 12 x 0.612


def test_expected_value_prices_have_the_law_of_a_price_at_or_below_the_bid():
    mean, bid = 0.11, 0.13
    prices = np.random.default_rng(1).exponential(mean, 200_000)
    path = expected_value_path(prices, bid, mean, 12, 0)  # run = Len: no slot lost
    for x in (0.02, 0.06, 0.1):
        assert np.mean(path <= x) == pytest.approx(np.expm1(-x / mean) / np.expm1(-bid / mean), abs=0.005)


def test_expected_value_job_runs_its_spot_k_slots_an_hour():
    # a job arriving in slot 3 (phase 2), z = 20, delta = 2, d = 36, all spot (beta 0.9999), k = 4:
    # 8 free units in each of hours 1 and 2 (the spot ended in their 5th slot), then 4 units in
    # slots 27-28 of hour 3, which the tenant stops: 2 x that hour's first price
    prices = np.full(60, 0.05)
    path = expected_value_path(prices, 0.19, 0.11, 4, 2)
    jobs = JobStream(np.array([3]), np.array([20.0]), np.array([36]), np.array([2]))
    money = choice_money(jobs, prices, Policy("dynalloc", 0.19, 0.9999), Choice("b", expected_value=True), 0.11)
    assert spot_slots(0.19, 0.11) == 4
    assert money.tolist() == [[pytest.approx(2 * path[26]), 0.0, 20.0, 0.0]]
    result = run_job(3, 36, 20.0, 2, path, DYNALLOC, beta=0.9999, bid=0.19)
    assert result.finish == 28 and result.fell_back == 0


def test_run_money_passes_the_switches():
    jobs = JobStream(np.array([1]), np.array([30.0]), np.array([20]), np.array([2]))
    policy = Policy("theta", 0.2, theta=0.0)
    assert run_money(jobs, np.full(20, 0.1), policy)[0, 1] == pytest.approx(1.0)
    assert run_money(jobs, np.full(20, 0.1), policy, {"od_per_slot": True})[0, 1] == pytest.approx(0.625)


def test_fig4_writes_one_row_per_choice_job_type_and_bid(tmp_path, capsys):
    out = tmp_path / "fig4_alternatives.csv"
    table = fig4((FIG4_CHOICES[0], FIG4_CHOICES[1]), out, slots=120, seeds=(0,), x0s=(3.0,))
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == FIG4_COLUMNS and len(rows) == len(table) == 14
    assert {r["choice"] for r in rows} == {"default", "expected_value"} and {r["x0"] for r in rows} == {"3"}
    for r in rows:
        assert r["interior"] == str(0 < float(r["best_beta"]) < 0.9999)
        assert float(r["unit_cost_best"]) <= float(r["unit_cost_beta_max"])
    printed = capsys.readouterr().out
    assert "default: " in printed and " of 7 bids interior; best betas per bid" in printed
