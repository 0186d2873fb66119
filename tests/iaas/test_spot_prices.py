"""Spot prices of the iaas family (paper 003, Sec. III-A and V-A)."""

import math
from pathlib import Path

import numpy as np
import pytest

from market.common.csv_trace import TraceError
from market.iaas.spot_prices import PriceParams, draw_prices, load_price_trace, survival_table, surviving_fraction

REAL = Path(__file__).resolve().parents[2] / "data" / "market_aws_us-west-2a_v100.csv"
HEADER = "slot,timestamp,spot_price,availability\n"


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_defaults():
    p = PriceParams.from_config({})
    assert (p.kind, p.mean, p.on_demand, p.trace_slot_minutes, p.start) == ("exponential", 0.11, 0.25, 30, None)
    assert p.path == "data/market_aws_us-west-2a_v100.csv"


@pytest.mark.parametrize(
    "config, message",
    [
        ({"kind": "normal"}, r"^prices\.kind must be one of exponential, trace, got 'normal'$"),
        ({"mean": 0}, r"^prices\.mean must be a finite number > 0, got 0$"),
        ({"mean": -1.1}, r"^prices\.mean must be a finite number > 0, got -1\.1$"),
        ({"on_demand": 0}, r"^prices\.on_demand must be a finite number > 0, got 0$"),
        (
            {"trace_slot_minutes": 7},
            r"^prices\.trace_slot_minutes must be a multiple of the slot length 5 minutes, got 7$",
        ),
        ({"trace_slot_minutes": 0}, r"^prices\.trace_slot_minutes must be a positive integer, got 0$"),
        ({"start": -1}, r"^prices\.start must be null or an integer >= 0, got -1$"),
        ({"path": ""}, r"^prices\.path must be a non-empty string"),
        ({"seed": 1}, r"^prices: unknown key\(s\) 'seed' \(known: kind, "),
    ],
)
def test_bad_config_names_the_key(config, message):
    with pytest.raises(ValueError, match=message):
        PriceParams.from_config(config)


def test_exponential_does_not_read_the_trace(tmp_path):
    p = PriceParams.from_config({"path": str(tmp_path / "nope.csv")})
    assert len(draw_prices(p, 10, np.random.default_rng(0))) == 10


def expect_trace_error(path, line, pattern):
    with pytest.raises(TraceError, match=pattern) as info:
        PriceParams.from_config({"kind": "trace", "path": str(path)})
    assert info.value.path == str(path) and info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: " if line else f"{path}: ")
    assert path.name in str(info.value)


def test_missing_trace_file_fails_at_config(tmp_path):
    expect_trace_error(tmp_path / "nope.csv", None, "file not found")


def test_trace_gap_names_file_and_line(tmp_path):
    p = write(tmp_path, HEADER + "0,a,0.5,1\n1,b,0.5,1\n3,c,0.5,1\n", "gap.csv")
    expect_trace_error(p, 4, r"slot '3', expected 2 \(slots must be consecutive")


@pytest.mark.parametrize("price", ["0", "-0.1", "nan", "inf"])
def test_trace_non_positive_price_names_file_and_line(tmp_path, price):
    p = write(tmp_path, HEADER + f"0,a,0.5,1\n1,b,{price},1\n", "zero.csv")
    expect_trace_error(p, 3, f"spot_price '{price}' must be > 0")


def test_trace_non_numeric_price(tmp_path):
    p = write(tmp_path, "slot,spot_price\n0,cheap\n", "word.csv")
    expect_trace_error(p, 2, "spot_price 'cheap' is not a number")


def test_trace_start_beyond_the_trace(tmp_path):
    p = write(tmp_path, "slot,spot_price\n0,0.5\n1,0.25\n")
    with pytest.raises(ValueError, match=r"^prices\.start must be null or an integer in \[0, 1\] .* got 2$"):
        PriceParams.from_config({"kind": "trace", "path": str(p), "start": 2})


def test_real_trace_loads():
    ratios = load_price_trace(REAL)
    assert len(ratios) == 789 and ratios[0] == 0.4063 and np.all(ratios > 0)


def test_exponential_same_seed_same_prices_and_mean():
    p = PriceParams.from_config({})
    a = draw_prices(p, 100_000, np.random.default_rng(5))
    assert np.array_equal(a, draw_prices(p, 100_000, np.random.default_rng(5)))
    assert not np.array_equal(a[:100], draw_prices(p, 100, np.random.default_rng(6)))
    assert a.dtype == np.float64 and a.shape == (100_000,) and a.min() > 0
    assert abs(a.mean() - 0.11) < 4 * 0.11 / math.sqrt(len(a))  # exponential: sd = mean
    q = 1 - math.exp(-0.19 / 0.11)
    assert abs(np.mean(a <= 0.19) - q) < 4 * math.sqrt(q * (1 - q) / len(a))


def test_literal_mean_option():
    a = draw_prices(PriceParams.from_config({"mean": 1.1}), 100_000, np.random.default_rng(1))
    assert abs(a.mean() - 1.1) < 4 * 1.1 / math.sqrt(len(a))


def trace_params(tmp_path, **config):
    p = write(tmp_path, "slot,spot_price\n0,0.5\n1,0.25\n2,1.0\n")
    return PriceParams.from_config({"kind": "trace", "path": str(p), "on_demand": 0.2, **config})


def test_trace_values_held_six_slots_from_start_with_wraparound(tmp_path):
    prices = draw_prices(trace_params(tmp_path, start=1), 20, np.random.default_rng(0))
    # trace slots 1, 2, 0, 1 (wrapped), each 30 minutes = 6 slots, times on_demand 0.2
    expected = [0.05] * 6 + [0.2] * 6 + [0.1] * 6 + [0.05] * 2
    np.testing.assert_allclose(prices, expected, rtol=1e-12)


def test_trace_hold_follows_trace_slot_minutes(tmp_path):
    prices = draw_prices(trace_params(tmp_path, start=0, trace_slot_minutes=10), 7, np.random.default_rng(0))
    np.testing.assert_allclose(prices, [0.1, 0.1, 0.05, 0.05, 0.2, 0.2, 0.1], rtol=1e-12)


def test_trace_random_start_is_one_draw(tmp_path):
    free = draw_prices(trace_params(tmp_path), 12, np.random.default_rng(4))
    start = int(np.random.default_rng(4).integers(3))
    assert np.array_equal(free, draw_prices(trace_params(tmp_path, start=start), 12, np.random.default_rng(0)))
    starts = {draw_prices(trace_params(tmp_path), 1, np.random.default_rng(s))[0] for s in range(20)}
    assert starts == {0.1, 0.05, 0.2}


def test_real_trace_replay():
    p = PriceParams.from_config({"kind": "trace", "path": str(REAL), "start": 0})
    prices = draw_prices(p, 789 * 6 + 12, np.random.default_rng(0))
    ratios = load_price_trace(REAL)
    np.testing.assert_allclose(prices[: 789 * 6], np.repeat(ratios, 6) * 0.25, rtol=1e-12)
    np.testing.assert_allclose(prices[789 * 6 :], [ratios[0] * 0.25] * 6 + [ratios[1] * 0.25] * 6)


@pytest.mark.parametrize("slots", [0, -3, 2.5])
def test_bad_slot_count(slots):
    with pytest.raises(ValueError, match="^slots must be a positive integer"):
        draw_prices(PriceParams(), slots, np.random.default_rng(0))


def test_surviving_fraction_by_hand():
    # q = 1 - exp(-bid / mean); sum_{k=1..12} q^k / 12 = q (1 - q^12) / (1 - q) / 12
    for bid, mean in ((0.10, 0.11), (0.28, 0.11), (0.19, 1.1)):
        q = 1 - math.exp(-bid / mean)
        assert surviving_fraction(bid, mean) == pytest.approx(q * (1 - q**12) / (1 - q) / 12, rel=1e-12)
    assert surviving_fraction(0.10, 0.11) == pytest.approx(0.123, abs=5e-4)
    assert surviving_fraction(0.28, 0.11) == pytest.approx(0.612, abs=5e-4)
    assert surviving_fraction(0.0, 0.11) == 0.0
    assert surviving_fraction(1.0, 0.11, slots_per_hour=1) == pytest.approx(1 - math.exp(-1 / 0.11))


def test_literal_mean_leaves_every_bid_under_2_5_percent():
    for _, _, fraction in survival_table(means=(1.1,)):
        assert 0 < fraction < 0.025
    spread = [f for _, _, f in survival_table(means=(0.11,))]
    assert spread == sorted(spread) and 0.12 < spread[0] < 0.13 and 0.61 < spread[-1] < 0.62


def test_survival_table_rows():
    rows = survival_table()
    assert len(rows) == 14 and rows[0][:2] == (0.11, 0.10) and rows[-1][:2] == (1.1, 0.28)


@pytest.mark.parametrize("bid, mean", [(0.16, 0.11), (0.28, 1.1)])
def test_surviving_fraction_monte_carlo(bid, mean):
    """200,000 simulated hours of 12 exponential prices: the instance runs until the first price
    above the bid (a price equal to the bid keeps it)."""
    prices = np.random.default_rng(12).exponential(mean, (200_000, 12))
    lost = prices > bid
    run = np.where(lost.any(axis=1), lost.argmax(axis=1), 12) / 12
    se = run.std() / math.sqrt(len(run))
    assert abs(run.mean() - surviving_fraction(bid, mean)) < 4 * se
