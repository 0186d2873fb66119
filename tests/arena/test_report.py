"""The arena's win table (reproduction/arena/__init__.py): each paper's best picked on tuning replicates
and scored on held-out ones, the adapters' all-on-demand gap, and a win claimed only beyond it
with a paired interval excluding 0; computed by hand on made-up cells."""

from __future__ import annotations

import pandas as pd
import pytest

from reproduction import arena

PAPER = {
    "OD-Only": "000",
    "AHAP(w=1,v=1,sigma=0.6)": "000",
    "MSU": "000",
    "Theta(theta=0,b=1)": "003",
    "Dynalloc(beta=0.9,b=1)": "003",
    "Dynalloc(beta=0,b=1)": "003",
}


def cell(costs: dict[str, list[float]]) -> pd.DataFrame:
    rows = [
        {
            "market": "m",
            "deadline": "tight",
            "price": "cheap",
            "spot": "",
            "replicate": r,
            "mechanism": name,
            "paper": PAPER[name],
            "unit_cost": cost,
        }
        for name, values in costs.items()
        for r, cost in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_the_best_is_picked_on_tuning_replicates_and_scored_on_held_out_ones():
    # MSU is cheapest on replicates 0-1 (tuning), AHAP on 2-3 (held-out): MSU is paper 000's pick
    frame = cell(
        {
            "OD-Only": [1.2, 1.2, 1.2, 1.2],
            "MSU": [0.5, 0.5, 0.9, 0.9],
            "AHAP(w=1,v=1,sigma=0.6)": [0.6, 0.6, 0.4, 0.4],
            "Theta(theta=0,b=1)": [1.2, 1.2, 1.22, 1.24],
            "Dynalloc(beta=0.9,b=1)": [0.8, 0.8, 0.5, 0.7],
            "Dynalloc(beta=0,b=1)": [1.0, 1.0, 1.0, 1.0],
        }
    )
    row = arena.win_row(frame)
    assert (row["tuning_replicates"], row["held_out_replicates"]) == (2, 2)
    assert row["best_000"] == "MSU" and row["alpha_000"] == pytest.approx(0.9)
    assert row["best_000_without_oracle"] == "MSU" and row["candidates_000"] == 3
    assert row["best_003"] == "Dynalloc(beta=0.9,b=1)" and row["alpha_003"] == pytest.approx(0.6)
    assert row["adapter_gap"] == pytest.approx(0.03)  # (0.02 + 0.04) / 2
    assert row["margin"] == pytest.approx(0.3) and row["margin_net_of_gap"] == pytest.approx(0.27)


def test_a_win_needs_a_margin_beyond_the_gap_and_an_interval_excluding_zero():
    assert arena.verdict(-0.10, 0.02, 0.06) == "paper 000"
    assert arena.verdict(0.10, 0.02, -0.06) == "paper 003"
    assert arena.verdict(0.05, 0.01, 0.06) == "none (within the adapter gap)"
    assert arena.verdict(0.10, 0.12, 0.06) == "none (interval holds 0)"


def test_the_oracle_ahap_is_left_out_of_the_blind_pick_and_theta0_is_all_on_demand():
    assert arena.oracle("AHAP(w=1,v=1,sigma=0.6)") and not arena.oracle("AHAP(w=1,v=1,sigma=0.6,forecast=persistence)")
    assert arena.all_on_demand("Theta(theta=0,b=0.5)") and not arena.all_on_demand("Theta(theta=0.5,b=0.5)")
    tuning, held_out = arena.split_replicates(cell({"OD-Only": [1.0] * 5}))
    assert sorted(tuning["replicate"]) == [0, 1] and sorted(held_out["replicate"]) == [2, 3, 4]
