"""The iaas family contract's specifics (algorithms/iaas/family.py): bad input named by key or
file and line before any work, the best-of-grid rows against their side tables, self-owned
instances, and one policy's row equal to stream_cost."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.iaas import family
from algorithms.iaas.policies import Policy, stream_cost
from market.common.csv_trace import TraceError
from market.iaas.jobs import JobParams, draw_jobs
from market.iaas.spot_prices import PriceParams, draw_prices

SMALL = {"betas": [0.0, 0.5, 0.9999], "bids": [0.1, 0.19, 0.28], "thetas": [0.0, 0.5, 1.0], "beta0s": [0.0, 0.5]}


def config(**overrides):
    base = {
        "jobs": {"slots": 200},
        "prices": {},
        "self_owned": {"instances": 0},
        "policies": SMALL,
        "learning": {},
        "mechanisms": ["BestDynalloc", "BestTheta", "OptiLearning", "Dynalloc(beta=0.5,b=0.19)"],
    }
    base.update(overrides)
    return base


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"policies": {**SMALL, "betas": [0.5, 1.0]}}, r"policies.betas must hold numbers in \[0, 1\)"),
        ({"policies": {**SMALL, "bids": [-0.1]}}, "policies.bids must"),
        ({"policies": {**SMALL, "gammas": [1]}}, "policies: unknown key"),
        ({"self_owned": {"instances": -1}}, "self_owned.instances must be"),
        ({"policies": {**SMALL, "theta_reading": "twice"}}, "policies.theta_reading must be one of once, rebid"),
        ({"learning": {"normalisation": "minmax"}}, "learning.normalisation must be one of"),
        ({"mechanisms": ["BestDynalloc", "Greedy"]}, "unknown mechanism 'Greedy' for family iaas"),
        ({"mechanisms": ["Dynalloc(beta=1.5)"]}, r"mechanisms: Dynalloc\(beta=1.5\): beta must be"),
        ({"mechanisms": ["Theta(theta=0.5,bid=0.2)"]}, r"unknown key\(s\) 'bid'"),
        ({"mechanisms": ["BestDynalloc", "BestDynalloc"]}, "twice"),
        ({"policies": {"beta_per_bid": "each"}}, "policies.beta_per_bid must be"),
        ({"jobs": {"parallelism": 0}}, "jobs.parallelism must be"),
        ({"prices": {"mean": -1}}, "prices.mean must be"),
    ],
)
def test_bad_config_is_rejected_naming_the_key(overrides, message):
    with pytest.raises(ValueError, match=message):
        family.prepare(config(**overrides))


def test_a_trace_with_a_gap_is_rejected_naming_file_and_line(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("slot,spot_price\n0,0.4\n1,0.5\n3,0.5\n")
    with pytest.raises(TraceError, match=r"prices.csv:4"):
        family.prepare(config(prices={"kind": "trace", "path": str(path)}))


def test_best_rows_are_the_minimum_of_their_grid_and_a_single_policy_is_stream_cost():
    prepared = family.prepare(config())
    rows = {r["mechanism"]: r for r in family.simulate_replicate(prepared, 0, np.random.default_rng(5))}
    for name in ("BestDynalloc", "BestTheta"):
        table = rows[name]["tables"]["policies"]
        assert rows[name]["unit_cost"] == min(table["unit_cost"]) == -rows[name]["utility"]
        assert rows[name]["policy"] == table["policy"][int(np.argmin(table["unit_cost"]))]
    assert len(rows["BestDynalloc"]["tables"]["policies"]["policy"]) == 9  # 3 betas x 3 bids
    assert len(rows["BestTheta"]["tables"]["policies"]["policy"]) == 9  # 3 thetas x 3 bids
    assert rows["BestDynalloc"]["unit_cost"] <= rows["Dynalloc(beta=0.5,b=0.19)"]["unit_cost"]
    rng = np.random.default_rng(5)
    jobs = draw_jobs(JobParams.from_config({"slots": 200}), rng)
    prices = draw_prices(PriceParams.from_config({}), jobs.horizon(), rng)
    single = stream_cost(jobs, prices, Policy("dynalloc", 0.19, 0.5))
    assert rows["Dynalloc(beta=0.5,b=0.19)"]["unit_cost"] == single.unit_cost
    weights = rows["OptiLearning"]["tables"]["weights"]
    assert len(weights["weight"]) == len(weights["policy"]) == len(weights["job"])
    # Proposition 6's n, d, N': the grid of 9, the longest deadline, the jobs of the stream
    learning = rows["OptiLearning"]
    assert (learning["learning_policies"], learning["learning_lag"], learning["learning_jobs"]) == (
        9,
        int(jobs.deadline.max()),
        len(jobs),
    )


def test_self_owned_rows():
    prepared = family.prepare(
        config(self_owned={"instances": 200}, mechanisms=["BestDynalloc", "BestNaive", "BestTheta"])
    )
    rows = {r["mechanism"]: r for r in family.simulate_replicate(prepared, 0, np.random.default_rng(2))}
    assert len(rows["BestDynalloc"]["tables"]["policies"]["policy"]) == 18  # x 2 beta0
    assert len(rows["BestNaive"]["tables"]["policies"]["policy"]) == 9
    assert all(0 < r["self_owned_utilisation"] <= 1 for r in rows.values())
    assert all(r["missed"] == 0 for r in rows.values())


def test_experiment_2_grid_keeps_each_bids_best_beta():
    # Sec. V-B, Exp. 2: beta*(b) from the spot-only grid of the same stream, then beta0 x b
    policies = {**SMALL, "beta_per_bid": "best"}
    spot_only = family.simulate_replicate(
        family.prepare(config(policies=policies, mechanisms=["BestDynalloc"])), 0, np.random.default_rng(7)
    )[0]["tables"]["policies"]
    full = family.simulate_replicate(family.prepare(config(mechanisms=["BestDynalloc"])), 0, np.random.default_rng(7))[
        0
    ]["tables"]["policies"]
    best = {}
    for bid, beta, cost in zip(full["bid"], full["beta"], full["unit_cost"]):
        if bid not in best or cost < best[bid][1]:
            best[bid] = (beta, cost)
    assert dict(zip(spot_only["bid"], spot_only["beta"])) == {b: v[0] for b, v in best.items()}
    owned = family.prepare(
        config(
            policies=policies,
            self_owned={"instances": 200},
            mechanisms=["BestDynalloc", "BestNaive", "OptiLearning", "OptiLearning(grid=theta)"],
        )
    )
    rows = {r["mechanism"]: r for r in family.simulate_replicate(owned, 0, np.random.default_rng(7))}
    table = rows["BestDynalloc"]["tables"]["policies"]
    assert len(table["policy"]) == 6 and dict(zip(table["bid"], table["beta"])) == {b: v[0] for b, v in best.items()}
    assert len(rows["BestNaive"]["tables"]["policies"]["policy"]) == 3
    for name in ("OptiLearning", "OptiLearning(grid=theta)"):
        assert 0 < rows[name]["self_owned_utilisation"] <= 1 and rows[name]["missed"] == 0
    assert len(set(rows["OptiLearning"]["tables"]["weights"]["policy"])) == 6
