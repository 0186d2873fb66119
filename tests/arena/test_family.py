"""The arena family: its world (time base, market mappings), the meta-learner's row, the
determinism of its rows and the validation of its config (docs/arena.md)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from arena import family
from arena.meta_learner import feedback_delays
from arena.world import MarketConfig, draw_world

ROOT = Path(__file__).resolve().parents[2]


def config(**changes) -> dict:
    """conf/family/arena.yaml with conf/debug/family/arena_tiny.yaml's sizes, then `changes`
    (dotted keys)."""
    base = yaml.safe_load((ROOT / "conf" / "family" / "arena.yaml").read_text())
    tiny = yaml.safe_load((ROOT / "conf" / "debug" / "family" / "arena_tiny.yaml").read_text())
    for section, values in tiny.items():
        base[section].update(values)
    base["seed"] = 0
    base["market"]["trace"]["path"] = str(ROOT / base["market"]["trace"]["path"])
    for key, value in changes.items():
        node = base
        *parents, last = key.split(".")
        for part in parents:
            node = node[part]
        node[last] = value
    return base


def rows(cfg: dict, replicate: int = 0) -> list[dict]:
    prepared = family.prepare(cfg)
    return family.simulate_replicate(prepared, replicate, np.random.default_rng([7, replicate]))


@pytest.mark.parametrize("kind", ["synthetic", "trace", "exponential"])
def test_each_market_on_five_minute_slots(kind):
    cfg = config(**{"market.kind": kind})
    prepared = family.prepare(cfg)
    w = draw_world(prepared.world, np.random.default_rng(1))
    assert w.price.size == max(w.jobs.horizon(), 1) and np.all(w.price > 0)
    if kind != "exponential":  # paper 000's 30-minute slots, each held for 6 arena slots
        whole = w.price.size // 6 * 6
        assert np.all(w.price[:whole].reshape(-1, 6) == w.price[:whole:6, None])
        assert np.all(w.up[:whole].reshape(-1, 6) == w.up[:whole:6, None])
    else:
        assert w.up.all()
    assert np.array_equal(np.isinf(w.cloud_price()), ~w.up)


def test_price_scale_and_exponential_hold():
    base = MarketConfig.from_config({"kind": "exponential", "exponential": {"mean": 0.5, "hold": 12}})
    price, _ = base.draw(30, np.random.default_rng(0))
    assert np.all(price[:12] == price[0]) and np.all(price[12:24] == price[12]) and price[0] != price[12]
    scaled = MarketConfig.from_config(
        {"kind": "exponential", "price_scale": 2.0, "exponential": {"mean": 0.5, "hold": 12}}
    )
    assert np.allclose(scaled.draw(30, np.random.default_rng(0))[0], 2 * price)


def test_the_trace_wraps_around():
    trace = MarketConfig.from_config(
        {"kind": "trace", "trace": {"path": str(ROOT / "data/market_aws_us-west-2a_v100.csv"), "start": 788}}
    )
    price, up = trace.draw(18, np.random.default_rng(0))
    ratios, avail = trace.trace
    assert price.tolist() == [ratios[788]] * 6 + [ratios[0]] * 6 + [ratios[1]] * 6
    assert up.tolist() == [avail[788] > 0] * 6 + [avail[0] > 0] * 6 + [avail[1] > 0] * 6


def test_the_meta_learner_lies_between_the_best_and_the_worst_fixed_policy():
    """Its realised alpha mixes the candidates job by job, so it lies between the per-job
    cheapest and dearest choices (always), and here, on the default-sized world, between the
    best and the worst fixed candidate in hindsight."""
    cfg = config(**{"jobs.slots": 600})
    out = {row["mechanism"]: row for row in rows(cfg)}
    names = family.prepare(cfg).settings.candidates
    candidates = [out[name]["unit_cost"] for name in names]
    for learner in ("Meta", "Meta(normalisation=job_minmax)"):
        meta = out[learner]
        assert meta["best_fixed_unit_cost"] == pytest.approx(min(candidates))
        assert meta["worst_fixed_unit_cost"] == pytest.approx(max(candidates))
        assert meta["best_fixed_unit_cost"] <= meta["unit_cost"] <= meta["worst_fixed_unit_cost"], learner
        assert meta["best_fixed_unit_cost"] <= meta["expected_unit_cost"] <= meta["worst_fixed_unit_cost"], learner
        table = meta["tables"]["meta"]
        assert np.isclose(np.sum(table["final_weight"]), 1.0) and int(np.sum(table["chosen_jobs"])) == meta["jobs"]


def test_feedback_delays():
    arrival, deadline = np.array([1, 1, 2, 5]), np.array([2, 10, 3, 1])
    assert feedback_delays(arrival, deadline, "immediate").tolist() == [0, 0, 0, 0]
    # known at slots 2, 10, 4, 5: jobs arriving by then, minus the job's own position
    assert feedback_delays(arrival, deadline, "deadline").tolist() == [2, 2, 0, 0]
    assert feedback_delays(arrival, deadline, "max_deadline").tolist() == [3, 2, 1, 0]


def test_same_seed_same_rows_and_every_deadline_met():
    cfg = config()
    first, second = rows(cfg, 1), rows(cfg, 1)
    assert [{k: v for k, v in r.items() if k != "tables"} for r in first] == [
        {k: v for k, v in r.items() if k != "tables"} for r in second
    ]
    assert [r["mechanism"] for r in first] == family.mechanism_names(cfg)
    assert all(r["missed"] == 0 for r in first)
    assert {r["paper"] for r in first} == {"000", "003", "meta"}


@pytest.mark.parametrize(
    "key, value, needle",
    [
        ("market.kind", "spot", "market.kind"),
        ("market.price_scale", 0, "market.price_scale"),
        ("market.synthetic.mean_price", -1, "market.synthetic.mean_price"),
        ("market.synthetic.no_such_key", 1, "market.synthetic"),
        ("market.exponential.hold", 0, "market.exponential.hold"),
        ("market.exponential.no_such_key", 1, "market.exponential"),
        ("market.trace.no_such_key", 1, "market.trace"),
        ("jobs.slackness_max", 0.5, "jobs.slackness_max"),
        ("policies.bids", [-1], "policies.bids"),
        ("policies.beta0s", [0.5], "policies"),
        ("pool.threshold", [0], "pool.threshold"),
        ("adapt.bid", 0, "adapt.bid"),
        ("adapt.mu", 0.9, "adapt"),
        ("learning.feedback", "later", "learning.feedback"),
        ("learning.candidates", ["MSU"], "learning.candidates"),
        ("learning.candidates", ["MSU", "Meta"], "learning.candidates"),
        ("learning.candidates", ["MSU", "Nope"], "learning.candidates"),
        ("mechanisms", ["OPT"], "mechanisms"),
        ("mechanisms", ["MSU", "MSU"], "mechanisms"),
        ("mechanisms", ["Dynalloc(beta=1.0,b=1)"], "beta"),
        ("mechanisms", ["Theta(theta=0.5)"], "mechanisms"),
        ("mechanisms", ["Meta(normalisation=opt)"], "normalisation"),
        ("mechanisms", ["Meta(eta=1)"], "Meta"),
        ("learning.normalisation", "opt", "learning.normalisation"),
        ("learning.candidates", ["MSU", "Meta(normalisation=job_minmax)"], "learning.candidates"),
    ],
)
def test_bad_values_are_rejected_naming_the_key(key, value, needle):
    cfg = config(**{key: value})
    with pytest.raises(ValueError, match=needle.replace(".", r"\.")):
        family.prepare(cfg)


def test_a_missing_trace_file_is_named_only_when_the_trace_is_used():
    family.prepare(config(**{"market.trace.path": "no/such.csv"}))  # a synthetic cell does not read it
    with pytest.raises(ValueError, match="market.trace.path"):
        family.prepare(config(**{"market.trace.path": "no/such.csv", "market.kind": "trace"}))


def test_explicit_names_are_written_canonically():
    cfg = config(mechanisms=["AHAP(sigma=0.50,w=2,v=1)", "Dynalloc(b=1.0,beta=0.50)", "Theta(b=1,theta=1.0)", "Meta"])
    assert family.mechanism_names(cfg) == [
        "AHAP(w=2,v=1,sigma=0.5)",
        "Dynalloc(beta=0.5,b=1)",
        "Theta(theta=1,b=1)",
        "Meta",
    ]
    assert copy.deepcopy(cfg) == cfg


def test_ahap_with_a_persistence_forecast():
    cfg = config(
        mechanisms=[
            "AHAP(w=2,v=1,sigma=0.6,forecast=persistence)",
            "AHAP(w=2,v=1,sigma=0.6,forecast=oracle)",
            "AHAP(w=2,v=1,sigma=0.6)",
        ]
    )
    with pytest.raises(ValueError, match="listed twice"):
        family.prepare(cfg)
    cfg["mechanisms"] = ["AHAP(forecast=persistence,w=2,v=1,sigma=0.6)", "AHAP(w=2,v=1,sigma=0.6)"]
    assert family.mechanism_names(cfg) == ["AHAP(w=2,v=1,sigma=0.6,forecast=persistence)", "AHAP(w=2,v=1,sigma=0.6)"]
    out = rows(config(**{"jobs.slots": 300}) | {"mechanisms": cfg["mechanisms"]})
    assert all(r["missed"] == 0 for r in out) and out[0]["unit_cost"] != out[1]["unit_cost"]
    with pytest.raises(ValueError, match="forecast"):
        family.prepare(config(mechanisms=["AHAP(w=2,v=1,sigma=0.6,forecast=arima)"]))
