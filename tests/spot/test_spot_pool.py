"""The policy pool of paper 000 Sec. VI-A and the mechanism names of the results."""

import re

import pytest

from algorithms.spot.config import PoolConfig
from algorithms.spot.registry import AHANP_STARTS, ahanp_name, expand, parse


def test_the_papers_pool_has_105_ahap_and_7_ahanp_in_fig10_order():
    names = expand(["AHAP", "AHANP"], PoolConfig())
    assert len(names) == 112 and len(set(names)) == 112
    assert names[0] == "AHAP(w=1,v=1,sigma=0.3)"
    assert names[7] == "AHAP(w=2,v=1,sigma=0.3)"  # omega=1 has one v, seven sigmas
    assert names[104] == "AHAP(w=5,v=5,sigma=0.9)"
    assert names[105:] == [f"AHANP(sigma={s})" for s in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]


def test_fixed_commitment_and_threshold_subgrids():
    # Fig. 9's "fixed hyperparameters": v = 1 keeps 5 windows x 7 sigmas; sigma = 0.9 keeps 15 (omega, v)
    assert len(expand(["AHAP"], PoolConfig.from_dict({"commitment": [1]}))) == 35
    assert len(expand(["AHAP"], PoolConfig.from_dict({"threshold": [0.9]}))) == 15


def test_explicit_names_round_trip_in_any_key_order():
    assert parse("AHAP(w=3,v=2,sigma=0.5)") == ("AHAP", {"window": 3, "commitment": 2, "threshold": 0.5})
    assert parse("AHAP(sigma=0.5,v=2,w=3)") == parse("AHAP(w=3,v=2,sigma=0.5)")
    assert parse("AHANP(sigma=0.7)") == ("AHANP", {"threshold": 0.7})
    assert expand(["UP", "AHANP(sigma=0.70)", "AHAP(sigma=0.50,v=1,w=2)"], PoolConfig()) == [
        "UP",
        "AHANP(sigma=0.7)",
        "AHAP(w=2,v=1,sigma=0.5)",
    ]


@pytest.mark.parametrize(
    "names, twice",
    [
        (["UP", "UP"], "UP"),
        (["AHANP(sigma=0.70)", "AHANP(sigma=0.7)"], "AHANP(sigma=0.7)"),
        (["AHAP", "AHAP(w=1,v=1,sigma=0.3)"], "AHAP(w=1,v=1,sigma=0.3)"),  # also in the group
    ],
)
def test_a_mechanism_listed_twice_is_an_error(names, twice):
    with pytest.raises(ValueError, match=re.escape(f"'{twice}' is listed twice")):
        expand(names, PoolConfig())


@pytest.mark.parametrize(
    "name, message",
    [
        ("AHAP(w=2,v=3,sigma=0.5)", "commitment"),
        ("Greedy", "unknown mechanism 'Greedy'"),
        ("AHAP(w=2,v=1)", "takes the keys w, v, sigma"),
        ("AHAP(w=2.5,v=1,sigma=0.5)", "w must be a positive integer, got 2.5"),
        ("AHANP(sigma=-1)", re.escape("sigma must be a number in (0, inf), got -1")),
        ("AHANP(sigma=0.5", "not a mechanism name"),
        ("MSU()", "expected key=value"),
    ],
)
def test_bad_names_are_rejected(name, message):
    with pytest.raises(ValueError, match=message):
        parse(name)


@pytest.mark.parametrize(
    "pool, key",
    [
        ({"window": [0]}, "pool.window"),
        ({"threshold": [-0.1]}, "pool.threshold"),
        ({"sigma": [0.5]}, "unknown key"),
    ],
)
def test_bad_pool_keys_are_named(pool, key):
    with pytest.raises(ValueError, match=key):
        PoolConfig.from_dict(pool)


def test_msu_takes_its_switch_reading():
    assert parse("MSU(switch=time)") == ("MSU", {"switch": "time"})
    assert parse("MSU") == ("MSU", {})
    with pytest.raises(ValueError, match="switch must be one of safety_net, time"):
        parse("MSU(switch=soon)")
    with pytest.raises(ValueError, match="MSU takes the optional keys switch"):
        parse("MSU(when=time)")


def test_ahanp_takes_its_start_reading():
    assert AHANP_STARTS == ("literal", "fresh", "cold")
    assert parse("AHANP(sigma=0.7,start=fresh)") == ("AHANP", {"threshold": 0.7, "start": "fresh"})
    assert parse("AHANP(start=cold,sigma=0.70)") == ("AHANP", {"threshold": 0.7, "start": "cold"})
    # start=literal is the default: accepted, and written as the plain name
    assert parse("AHANP(sigma=0.7,start=literal)") == parse("AHANP(sigma=0.7)") == ("AHANP", {"threshold": 0.7})
    assert expand(["AHANP(start=cold,sigma=0.70)", "AHANP(sigma=0.7,start=literal)"], PoolConfig()) == [
        "AHANP(sigma=0.7,start=cold)",
        "AHANP(sigma=0.7)",
    ]
    assert ahanp_name(0.7) == ahanp_name(0.7, "literal") == "AHANP(sigma=0.7)"
    assert ahanp_name(0.5, "fresh") == "AHANP(sigma=0.5,start=fresh)"
    with pytest.raises(ValueError, match=re.escape("'AHANP(sigma=0.7)' is listed twice")):
        expand(["AHANP", "AHANP(sigma=0.7,start=literal)"], PoolConfig())


@pytest.mark.parametrize(
    "name, message",
    [
        ("AHANP(sigma=0.7,start=warm)", "start must be one of literal, fresh, cold"),
        ("AHANP(sigma=0.7,start=1)", "start must be one of literal, fresh, cold"),
        ("AHANP(start=fresh)", re.escape("AHANP takes the keys sigma (and optionally start)")),
        ("AHANP(sigma=0.7,begin=fresh)", re.escape("AHANP takes the keys sigma (and optionally start)")),
        ("AHAP(w=1,v=1,sigma=0.5,start=fresh)", "AHAP takes the keys w, v, sigma$"),
    ],
)
def test_bad_ahanp_starts_are_rejected(name, message):
    with pytest.raises(ValueError, match=message):
        parse(name)


def test_pool_ahanp_start_expands_sigma_by_start_literal_first():
    assert PoolConfig().ahanp_start == ("literal",)
    assert PoolConfig.from_dict({"ahanp_start": None}) == PoolConfig()
    # the default pool's names, untouched by the readings
    assert expand(["AHANP"], PoolConfig.from_dict({"ahanp_start": ["literal"]})) == expand(["AHANP"], PoolConfig())
    pool = PoolConfig.from_dict({"threshold": [0.3, 0.9], "ahanp_start": ["cold", "literal", "fresh"]})
    assert pool.ahanp_start == AHANP_STARTS  # AHANP_STARTS order, whatever the config's
    assert expand(["AHANP"], pool) == [
        "AHANP(sigma=0.3)",
        "AHANP(sigma=0.9)",
        "AHANP(sigma=0.3,start=fresh)",
        "AHANP(sigma=0.9,start=fresh)",
        "AHANP(sigma=0.3,start=cold)",
        "AHANP(sigma=0.9,start=cold)",
    ]
    assert PoolConfig.from_dict({"ahanp_start": "fresh"}).ahanp() == [
        f"AHANP(sigma={s},start=fresh)" for s in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    ]
    # the paper's pool with every start: 105 AHAP, then 7 literal AHANP at Fig. 10's 106..112
    names = expand(["AHAP", "AHANP"], PoolConfig.from_dict({"ahanp_start": list(AHANP_STARTS)}))
    assert len(names) == 105 + 21 and names[105:112] == expand(["AHAP", "AHANP"], PoolConfig())[105:]
    # every expanded name parses back to itself
    for name in names[105:]:
        kind, params = parse(name)
        assert ahanp_name(**params) == name


@pytest.mark.parametrize("value", [[], ["warm"], ["fresh", "fresh"], [0.5], "both", [None]])
def test_bad_pool_ahanp_start_is_named(value):
    with pytest.raises(
        ValueError, match="pool.ahanp_start must be a non-empty list of distinct values among literal, fresh, cold"
    ):
        PoolConfig.from_dict({"ahanp_start": value})
