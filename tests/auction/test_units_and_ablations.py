"""pdFTSP's unit of bbar (kappa, work_unit), the zero-price ablation and the welfare-aware EFT
(issue: auction fidelity), by hand on one-node worlds, and the EFT vendor rule and NTM's
exclusive nodes by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from algorithms.auction import family
from algorithms.auction.eft import EFT
from algorithms.auction.ntm import NTM
from algorithms.auction.pdftsp import PdFTSP
from market.auction.lora_tasks import TaskParams, draw_tasks
from tests.auction.worlds import A100, make_instance, small_instances

ALPHA, BETA = 6.0, 150.0


def test_bbar_in_samples_and_scaled_by_kappa_by_hand():
    # One A100, night tariff (e = 6 cents a slot): 12 ksamples run in slots 0-1, b_il = 100 - 12.
    inst = make_instance([A100], 6, [0], [5], [12.0], [10], [False], [100.0])
    for kappa, work_unit in [(1.0, 1.0), (1.0, 1000.0), (29.8, 1.0), (1028.8, 1000.0)]:
        mech = PdFTSP(ALPHA, BETA, kappa=kappa, work_unit=work_unit)
        mech.run(inst)
        lam, phi = mech.final_duals
        bbar = kappa * 88.0 / (work_unit * 12.0 + 2 * 10.0)
        assert math.isclose(lam[0, 0], ALPHA * bbar * 6 / 24)
        assert math.isclose(phi[0, 1], BETA * bbar * 10 / 79.5)


def test_kappa_is_price_scale_under_another_name():
    small = {"cluster": {"nodes": 3}, "tasks": {"load": 4, "slots": 24}}
    prepared = family.prepare({**small, "mechanisms": ["pdFTSP(price_scale=0.1)", "pdFTSP(kappa=0.1)"]})
    rows = family.simulate_replicate(prepared, 0, np.random.default_rng(1))
    assert rows[0]["welfare"] == rows[1]["welfare"] and rows[0]["admitted"] == rows[1]["admitted"]
    both = family.prepare({**small, "mechanisms": ["pdFTSP(kappa=0.5,price_scale=0.2)"]})
    p = both.pdftsp["pdFTSP(kappa=0.5,price_scale=0.2)"]
    assert (p.kappa, p.alpha) == (0.5, pytest.approx(0.2 * 6.0))  # their product is the unit


def test_kappa_lemma_is_one_over_the_gross_bbar_floor_by_hand():
    # Defaults: the smallest task has M = 5 x 1 ksamples, value 1 cent a ksample, up to 24 GB and a
    # window of 3 + ceil(3 x 5 / 6) = 6 slots: bbar >= 5 / (u 5 + 24 x 6).
    tasks = TaskParams()
    assert tasks.gross_bbar_floor(1.0) == pytest.approx(5 / 149)
    assert tasks.gross_bbar_floor(1000.0) == pytest.approx(5 / 5144)
    prepared = family.prepare({"mechanisms": ["pdFTSP(kappa=lemma)", "pdFTSP(kappa=lemma,work_unit=samples)"]})
    assert prepared.pdftsp["pdFTSP(kappa=lemma)"].kappa == pytest.approx(29.8)
    assert prepared.pdftsp["pdFTSP(kappa=lemma,work_unit=samples)"].kappa == pytest.approx(1028.8)
    assert prepared.pdftsp["pdFTSP(kappa=lemma,work_unit=samples)"].work_unit == 1000.0


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("work_unit", [1.0, 1000.0])
def test_lemma_kappa_makes_every_gross_bbar_at_least_one(seed, work_unit):
    """On drawn days: every task's bbar on its gross value, over any schedule inside its window,
    is >= the floor (so kappa = 1 / floor gives bbar >= 1), and the floor is nearly reached."""
    tasks = TaskParams(load=40.0)
    day = draw_tasks(tasks, np.random.default_rng(seed))
    window = day.deadline - day.arrival + 1
    gross = day.bid / (work_unit * day.work + day.memory * window)
    floor = tasks.gross_bbar_floor(work_unit)
    assert gross.min() >= floor - 1e-12
    assert gross.min() < 20 * floor


def test_zero_price_keeps_duals_at_zero_and_admits_on_positive_margin():
    # Two tasks on one A100 slot pair; each costs e = 6 a slot x 2 slots = 12. Task 1 bids 10 < 12.
    inst = make_instance(
        [A100], 2, [0, 0, 0], [1, 1, 1], [12.0, 12.0, 12.0], [10, 10, 10], [False] * 3, [100.0, 10.0, 100.0]
    )
    mech = PdFTSP(ALPHA, BETA, prices=False, schedule_space="fitting")
    out = mech.run(inst)
    lam, phi = mech.final_duals
    assert not lam.any() and not phi.any()
    assert out.admitted.tolist() == [True, False, True]
    assert out.payment[0] == pytest.approx(12.0)  # b - F = the schedule's cost
    prepared = family.prepare({"cluster": {"nodes": 2}, "tasks": {"load": 3, "slots": 12}, "mechanisms": ["ZeroPrice"]})
    p = prepared.pdftsp["ZeroPrice"]
    assert (p.prices, p.schedule_space) == (False, "fitting")


def test_eft_takes_the_fastest_vendor_then_the_cheaper_by_hand():
    # Vendor delays 2, 1, 1 and prices 1, 9, 5: vendors 1 and 2 tie on delay, 2 is cheaper.
    inst = make_instance(
        [A100], 8, [0], [7], [12.0], [10], [True], [100.0], vendor_price=[[1.0, 9.0, 5.0]], vendor_delay=[[2, 1, 1]]
    )
    out = EFT().run(inst)
    assert out.vendor[0] == 2 and list(out.schedules[0].slots) == [1, 2]
    assert out.payment[0] == 100.0  # pay as bid


def test_welfare_aware_eft_rejects_negative_welfare_the_literal_one_admits_it():
    # Bid 10 against a cost of 12 (two night slots on an A100): welfare -2.
    inst = make_instance([A100], 4, [0], [3], [12.0], [10], [False], [10.0])
    assert EFT().run(inst).admitted[0]
    assert not EFT(admit="positive").run(inst).admitted[0]
    with pytest.raises(ValueError, match="admit"):
        EFT(admit="some")


@given(small_instances())
@settings(max_examples=60, deadline=None)
def test_welfare_aware_eft_admits_no_task_below_its_cost(inst):
    out = EFT(admit="positive").run(inst)
    for i in np.flatnonzero(out.admitted):
        s = out.schedules[i]
        assert inst.tasks.bid[i] > s.vendor_cost(inst) + s.operating_cost(inst)


def test_ntm_runs_one_task_per_node_and_slot_by_hand():
    # Four small tasks that could share one A100 (4 x 6 = 24 = C_kp): NTM runs them one after
    # another, one per slot, so the fourth (deadline slot 2) misses.
    inst = make_instance([A100], 4, [0] * 4, [2] * 4, [6.0] * 4, [4] * 4, [False] * 4, [50.0] * 4)
    out = NTM().run(inst, np.random.default_rng(0))
    assert out.admitted.tolist() == [True, True, True, False]
    slots = [int(out.schedules[i].slots[0]) for i in range(3)]
    assert sorted(slots) == [0, 1, 2]
    assert EFT().run(inst).admitted.all()  # EFT shares the node


@pytest.mark.parametrize(
    "change, key",
    [
        ({"kappa": 0}, "pdftsp.kappa"),
        ({"kappa": "paper"}, "pdftsp.kappa"),
        ({"work_unit": "GB"}, "pdftsp.work_unit"),
        ({"prices": "maybe"}, "pdftsp.prices"),
    ],
)
def test_unit_settings_are_checked(change, key):
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        family.prepare({"pdftsp": change, "mechanisms": ["pdFTSP"]})


def test_a_variants_kappa_replaces_the_sections_price_scale():
    prepared = family.prepare(
        {"pdftsp": {"price_scale": 0.5}, "mechanisms": ["pdFTSP", "pdFTSP(kappa=2)", "pdFTSP(price_scale=0.1)"]}
    )
    assert prepared.pdftsp["pdFTSP"].alpha == pytest.approx(0.5 * 6.0)
    assert prepared.pdftsp["pdFTSP(kappa=2)"].alpha == pytest.approx(6.0)
    assert prepared.pdftsp["pdFTSP(kappa=2)"].kappa == 2.0
    assert prepared.pdftsp["pdFTSP(price_scale=0.1)"].alpha == pytest.approx(0.6)


def test_calibration_keys_scale_capacity_and_cost():
    from market.auction.gpu_cluster import ClusterParams

    c = ClusterParams.from_dict({"nodes": 3, "node_type": "mixed", "tasks_per_node": 2, "cost_scale": 0.7}).build(2)
    assert c.compute.tolist() == [12.0, 12.0, 6.0] and c.task_rate.tolist() == [6.0, 6.0, 3.0]
    assert c.node_cost[:, 0].tolist() == pytest.approx([40 * 0.7 * 0.6, 40 * 0.7 * 0.6, 20 * 0.7 * 0.6])  # night tariff
    default = ClusterParams.from_dict({"nodes": 1}).build(2)
    assert default.compute.tolist() == [24.0] and default.node_cost[0, 0] == pytest.approx(24.0)
    for bad, key in [({"tasks_per_node": 0.5}, "cluster.tasks_per_node"), ({"cost_scale": 0}, "cluster.cost_scale")]:
        with pytest.raises(ValueError, match=key.replace(".", r"\.")):
            ClusterParams.from_dict(bad)


def test_the_paper_like_calibration_composes():
    from hydra import compose, initialize_config_dir

    from sweep.api import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        paper = compose("config", overrides=["family=auction", "calibration=paper_like", "tracking=off"])
        project = compose("config", overrides=["family=auction", "tracking=off"])
    assert (paper.cluster.tasks_per_node, paper.cluster.cost_scale) == (2, 0.7)
    assert (paper.pdftsp.work_unit, paper.pdftsp.kappa) == ("samples", 0.1)
    assert project.cluster.tasks_per_node is None and project.pdftsp.kappa is None  # the code's defaults
    from omegaconf import OmegaConf

    sections = OmegaConf.to_container(paper, resolve=True)
    prepared = family.prepare({**{k: v for k, v in sections.items() if k in family.SECTIONS}, "mechanisms": ["pdFTSP"]})
    assert prepared.pdftsp["pdFTSP"].kappa == 0.1 and prepared.pdftsp["pdFTSP"].work_unit == 1000.0
