"""The family interface the sweep engine calls (algorithms/spot/family.py)."""

import pickle
from pathlib import Path

import numpy as np
import pytest

from algorithms.spot import family
from algorithms.spot.simulation import simulate
from algorithms.spot.window_problem import WindowSolver
from market.spot.spot_trace import TraceError

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "data" / "market_aws_us-west-2a_v100.csv"
ALL = ["OD-Only", "MSU", "UP"]
KEYS = {
    "mechanism",
    "utility",
    "cost",
    "completion_time",
    "spot_cost",
    "on_demand_cost",
    "progress_at_deadline",
    "met_deadline",
    "reconfigurations",
}


def synthetic(**market):
    return {"job": {}, "market": {"kind": "synthetic", **market}, "mechanisms": list(ALL), "seed": 0, "replicates": 3}


def trace(**market):
    m = {"kind": "trace", "path": str(REAL), "capacity": 16, "on_demand_price": 1.0, "start": None}
    m.update(market)
    return {"job": {}, "market": m, "mechanisms": list(ALL)}


def test_name_and_mechanisms_in_config_order():
    assert family.NAME == "spot"
    cfg = synthetic()
    cfg["mechanisms"] = ["UP", "OD-Only"]
    assert family.mechanism_names(cfg) == ["UP", "OD-Only"]
    rows = family.simulate_replicate(family.prepare(cfg), 0, np.random.default_rng(0))
    assert [r["mechanism"] for r in rows] == ["UP", "OD-Only"]


def test_rows_have_the_engine_keys():
    for cfg in (synthetic(), trace()):
        family.prepare(cfg)
        rows = family.simulate_replicate(family.prepare(cfg), 0, np.random.default_rng(1))
        assert [r["mechanism"] for r in rows] == ALL
        for r in rows:
            assert set(r) == KEYS
            assert isinstance(r["completion_time"], int) and isinstance(r["met_deadline"], bool)
            assert isinstance(r["reconfigurations"], int)


def test_deterministic_given_the_rng_state():
    prepared = family.prepare(synthetic())
    a = family.simulate_replicate(prepared, 0, np.random.default_rng(42))
    b = family.simulate_replicate(prepared, 5, np.random.default_rng(42))
    assert a == b
    c = family.simulate_replicate(prepared, 0, np.random.default_rng(43))
    assert a != c


def test_common_random_numbers_rng_use_does_not_depend_on_mechanisms():
    for cfg in (synthetic(), trace()):
        one, three = dict(cfg), dict(cfg)
        one["mechanisms"] = ["UP"]
        r1, r3 = np.random.default_rng(7), np.random.default_rng(7)
        up_alone = family.simulate_replicate(family.prepare(one), 0, r1)
        up_with_others = family.simulate_replicate(family.prepare(three), 0, r3)[2]
        assert up_alone == [up_with_others]
        assert r1.random() == r3.random()  # same rng consumption


def test_od_only_row_at_paper_defaults():
    rows = family.simulate_replicate(family.prepare(synthetic()), 0, np.random.default_rng(3))
    od = rows[0]
    assert od["mechanism"] == "OD-Only"
    assert od["utility"] == pytest.approx(79.0) and od["spot_cost"] == 0.0


def test_trace_with_fixed_start_is_that_window():
    cfg = trace(start=14)  # slots 14..23 of the real trace have no spot available
    cfg["forecast"] = {"history": 0, "horizon": 0}  # the world is then the job's 10 slots
    prepared = family.prepare(cfg)
    world = family.draw_market(prepared, np.random.default_rng(0))
    assert world.availability.tolist() == [0] * 10
    rows = family.simulate_replicate(prepared, 0, np.random.default_rng(0))
    assert all(r["spot_cost"] == 0.0 for r in rows)
    assert rows[1]["utility"] == pytest.approx(76.0)  # MSU waits, then 12 on-demand x 7 slots
    rows2 = family.simulate_replicate(family.prepare(cfg), 0, np.random.default_rng(99))
    assert rows == rows2


def test_relative_trace_path_resolves_against_cwd(monkeypatch):
    monkeypatch.chdir(ROOT)
    family.prepare(trace(path="data/market_aws_us-west-2a_v100.csv"))


def test_prepared_is_picklable():
    prepared = family.prepare(trace())
    clone = pickle.loads(pickle.dumps(prepared))
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    assert family.simulate_replicate(clone, 0, rng_a) == family.simulate_replicate(prepared, 0, rng_b)


@pytest.mark.parametrize(
    "cfg, message",
    [
        (
            {**synthetic(), "mechanisms": ["OD-Only", "X"]},
            r"mechanisms: unknown mechanism 'X' \(known: OD-Only, MSU, UP, UP-track, OPT, AHAP, AHANP",
        ),
        ({**synthetic(), "mechanisms": []}, "mechanisms: must be a non-empty list"),
        ({**synthetic(), "mechanisms": "MSU"}, "mechanisms: must be a non-empty list"),
        ({**synthetic(), "job": {"deadline": -1}}, "job.deadline must be a positive integer, got -1"),
        ({**synthetic(), "job": {"n_min": 5, "n_max": 3}}, r"job.n_min \(5\) must not exceed"),
        ({**synthetic(), "job": {"dedline": 3}}, r"job: unknown key\(s\) 'dedline'"),
        (synthetic(mean_price=-1.0), "market.mean_price must be > 0"),
        (synthetic(mean_prize=0.3), r"market: unknown key\(s\) 'mean_prize'"),
        ({"job": {}, "mechanisms": ALL}, "market: missing section"),
        (
            {"job": {}, "market": {"kind": "vast"}, "mechanisms": ALL},
            "market.kind must be 'synthetic' or 'trace', got 'vast'",
        ),
        (trace(path=None), "market.path must be a file path"),
        (trace(capacity=0), "market.capacity must be a positive integer"),
        (trace(on_demand_price=0), "market.on_demand_price must be > 0"),
        (trace(start=-3), "market.start must be null or an integer >= 0"),
        (trace(start=785), r"market.start \(785\) \+ a world's 111 slots exceeds the 789 slots"),
        (trace(seed=1), r"market: unknown key\(s\) 'seed' for kind 'trace'"),
        ({**trace(), "job": {"deadline": 800}}, "trace has 789 slots, a world needs 901"),
    ],
)
def test_prepare_names_the_key(cfg, message):
    with pytest.raises(ValueError, match=message):
        family.prepare(cfg)


def test_prepare_trace_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("slot,timestamp,spot_price,availability\n0,a,0.5,1\n1,b,0.5,99\n")
    with pytest.raises(TraceError, match=f"{bad}:3: availability '99'"):
        family.prepare(trace(path=str(bad)))
    with pytest.raises(ValueError, match=r"market\.path: .*missing\.csv: file not found"):
        family.prepare(trace(path=str(tmp_path / "missing.csv")))


def test_a_mechanism_listed_twice_is_an_error():
    # one rule for every family (algorithms/common/mechanism_names.py): never silently dropped
    with pytest.raises(ValueError, match="'MSU' is listed twice"):
        family.mechanism_names({**synthetic(), "mechanisms": ["MSU", "MSU", "UP"]})


def test_noise_growth_reaches_the_forecasts():
    """`noise.growth: sqrt` multiplies the error of look-ahead k by sqrt(k) in the family's
    forecasts (the same draws as `flat`)."""

    def forecast(noise):
        prepared = family.prepare({"job": {}, "market": {"kind": "synthetic"}, "mechanisms": ["UP"], "noise": noise})
        rng = np.random.default_rng(4)
        world = family.draw_market(prepared, rng)
        job = family.draw_job(prepared, rng)
        return family.make_forecast(prepared, world, job, 0, rng)

    clean = forecast({"kind": "none"})
    flat = forecast({"kind": "fixed_uniform", "level": 0.05, "growth": "flat"})
    grown = forecast({"kind": "fixed_uniform", "level": 0.05, "growth": "sqrt"})
    k = np.sqrt(np.arange(1, flat.price.shape[1]))
    assert np.allclose(grown.price[:, 1:] - clean.price[:, 1:], (flat.price[:, 1:] - clean.price[:, 1:]) * k)
    assert not np.allclose(grown.price, flat.price)


def test_sigma_reading_reaches_every_ahap_path():
    cfg = synthetic(mean_price=1.0)
    cfg["mechanisms"] = ["AHAP(w=3,v=1,sigma=0.4)", "AHAP(w=3,v=1,sigma=0.9)", "AHAP(w=4,v=2,sigma=0.6)"]
    with pytest.raises(ValueError, match="pool.sigma_reading must be one of ahead, line"):
        family.prepare({**cfg, "pool": {"sigma_reading": "both"}})
    with pytest.raises(ValueError, match="pool.sigma_reading: 'line' supports AHAP windows up to 62"):
        family.prepare({**cfg, "mechanisms": ["AHAP(w=63,v=1,sigma=0.5)"], "pool": {"sigma_reading": "line"}})
    ahead = family.prepare(cfg)
    line = family.prepare({**cfg, "pool": {"sigma_reading": "line"}})
    assert (ahead.sigma_reading, line.sigma_reading) == ("ahead", "line")
    differ = 0
    for r in range(6):
        a = family.simulate_replicate(ahead, r, np.random.default_rng(r))
        b = family.simulate_replicate(line, r, np.random.default_rng(r))
        differ += a != b
        # the one-by-one path (simulate + AHAP) gives the pool's rows
        rng = np.random.default_rng(r)
        world = family.draw_market(line, rng)
        job = family.draw_job(line, rng)
        forecast = family.make_forecast(line, world, job, r, rng)
        market = world.window(line.forecast.history, job.deadline + line.forecast.horizon)
        solver = WindowSolver()
        ref = [
            simulate(job, market, family.make_policy(n, solver, "line"), forecast).record(n) for n in line.mechanisms
        ]
        assert repr(ref) == repr(b)
    assert differ > 0  # sigma acts in the behind branch under the line reading


def test_ahanp_starts_reach_the_fast_path_and_make_policy():
    """`pool.ahanp_start` expands the group AHANP over sigma x start; the fast path
    (AHANPPool) gives the rows `simulate` with `make_policy` gives, for every start."""
    cfg = synthetic(mean_price=1.0, outage_fraction=0.2)
    cfg["mechanisms"] = ["AHANP", "AHANP(sigma=0.5,start=literal)", "UP"]
    cfg["pool"] = {"threshold": [0.4, 0.7], "ahanp_start": ["literal", "fresh", "cold"]}
    names = [
        "AHANP(sigma=0.4)",
        "AHANP(sigma=0.7)",
        "AHANP(sigma=0.4,start=fresh)",
        "AHANP(sigma=0.7,start=fresh)",
        "AHANP(sigma=0.4,start=cold)",
        "AHANP(sigma=0.7,start=cold)",
        "AHANP(sigma=0.5)",
        "UP",
    ]
    assert family.mechanism_names(cfg) == names
    with pytest.raises(ValueError, match="pool.ahanp_start must be a non-empty list"):
        family.prepare({**cfg, "pool": {"ahanp_start": ["lazy"]}})
    prepared = family.prepare(cfg)
    assert [family.make_policy(n).name for n in names[:-1]] == names[:-1]
    differ = set()
    for r in range(8):
        rows = family.simulate_replicate(prepared, r, np.random.default_rng(r))
        rng = np.random.default_rng(r)
        world = family.draw_market(prepared, rng)
        job = family.draw_job(prepared, rng)
        market = world.window(prepared.forecast.history, job.deadline + prepared.forecast.horizon)
        ref = [simulate(job, market, family.make_policy(n)).record(n) for n in names]
        assert repr(ref) == repr(rows)
        by_name = {row["mechanism"]: row for row in rows}
        for start in ("fresh", "cold"):
            if any(
                by_name[f"AHANP(sigma={s},start={start})"]
                != {**by_name[f"AHANP(sigma={s})"], "mechanism": f"AHANP(sigma={s},start={start})"}
                for s in (0.4, 0.7)
            ):
                differ.add(start)
    assert differ == {"fresh", "cold"}


def test_ahanp_start_null_keeps_the_cell_as_it_was():
    """A null `pool.ahanp_start` (conf/family/spot.yaml) stays out of the cell's config, hash
    and seeds (OPTIONAL_KEYS), and the literal AHANP keeps its name."""
    import yaml

    assert "pool.ahanp_start" in family.OPTIONAL_KEYS
    conf = yaml.safe_load((ROOT / "conf" / "family" / "spot.yaml").read_text())
    assert "ahanp_start" in conf["pool"] and conf["pool"]["ahanp_start"] is None
    cfg = {**synthetic(), "mechanisms": ["AHANP"]}
    with_null = {**cfg, "pool": {"threshold": [0.7], "ahanp_start": None}}
    assert family.prepare(with_null) == family.prepare({**cfg, "pool": {"threshold": [0.7]}})
    assert family.mechanism_names(with_null) == ["AHANP(sigma=0.7)"]
