"""CSV trace loader and windows (format of data/README.md)."""

from pathlib import Path

import numpy as np
import pytest

from market.spot.spot_market import SpotMarket
from market.spot.spot_trace import TraceError, load_spot_trace, sample_window

REAL = Path(__file__).resolve().parents[2] / "data" / "market_aws_us-west-2a_v100.csv"
HEADER = "slot,timestamp,spot_price,availability\n"


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_real_trace_loads():
    m = load_spot_trace(REAL)
    assert len(m) == 789
    assert m.capacity == 16 and m.on_demand_price == 1.0
    assert m.price[0] == pytest.approx(0.4063)
    assert m.availability[0] == 0
    assert m.availability.max() == 16 and 0.3 < m.price.mean() < 0.5


def test_extra_columns_and_missing_timestamp_are_fine(tmp_path):
    p = write(tmp_path, "availability,spot_price,slot,zone\n3,0.5,0,a\n4,0.25,1,b\n")
    m = load_spot_trace(p, capacity=8, on_demand_price=2.0)
    assert m.availability.tolist() == [3, 4]
    assert m.price.tolist() == [1.0, 0.5]  # spot_price is relative to on-demand
    assert m.capacity == 8 and m.on_demand_price == 2.0


def expect(path, line, pattern, **kw):
    with pytest.raises(TraceError, match=pattern) as info:
        load_spot_trace(path, **kw)
    assert info.value.path == str(path)
    assert info.value.line == line
    return info.value


def test_missing_file(tmp_path):
    p = tmp_path / "nope.csv"
    err = expect(p, None, "file not found")
    assert str(err) == f"{p}: file not found"
    assert isinstance(err, ValueError)


def test_empty_file(tmp_path):
    expect(write(tmp_path, ""), None, "empty file")


def test_header_only(tmp_path):
    expect(write(tmp_path, HEADER), None, "no data rows")


def test_missing_columns_are_named(tmp_path):
    p = write(tmp_path, "slot,timestamp,price\n0,x,0.5\n")
    err = expect(p, 1, r"missing column\(s\) 'spot_price', 'availability'")
    assert str(err).startswith(f"{p}:1: ")


def test_non_numeric_price(tmp_path):
    p = write(tmp_path, HEADER + "0,a,0.5,1\n1,b,cheap,1\n")
    assert str(expect(p, 3, "spot_price 'cheap' is not a number")).startswith(f"{p}:3: ")


@pytest.mark.parametrize("price", ["0", "-0.2", "nan", "inf"])
def test_non_positive_price(tmp_path, price):
    expect(write(tmp_path, HEADER + f"0,a,{price},1\n"), 2, "must be > 0")


@pytest.mark.parametrize("avail", ["17", "-1", "2.5", "many"])
def test_bad_availability(tmp_path, avail):
    p = write(tmp_path, HEADER + "0,a,0.5,1\n1,b,0.5,2\n" + f"2,c,0.5,{avail}\n")
    expect(p, 4, r"availability .* must be an integer in \[0, 16\]")


def test_availability_bound_follows_capacity(tmp_path):
    p = write(tmp_path, HEADER + "0,a,0.5,9\n")
    expect(p, 2, r"in \[0, 8\]", capacity=8)
    assert load_spot_trace(p, capacity=9).availability.tolist() == [9]


def test_integral_float_availability_is_accepted(tmp_path):
    assert load_spot_trace(write(tmp_path, HEADER + "0,a,0.5,3.0\n")).availability.tolist() == [3]


@pytest.mark.parametrize("slots, line", [("1,2", 2), ("0,2", 3), ("0,0", 3), ("0,x", 3)])
def test_slots_must_be_consecutive_from_zero(tmp_path, slots, line):
    a, b = slots.split(",")
    p = write(tmp_path, HEADER + f"{a},t,0.5,1\n{b},t,0.5,1\n")
    expect(p, line, "consecutive integers from 0")


def test_short_row(tmp_path):
    expect(write(tmp_path, HEADER + "0,a,0.5\n"), 2, "missing value for column 'availability'")


def test_sample_window_fits_and_is_deterministic():
    m = load_spot_trace(REAL)
    w1 = sample_window(m, np.random.default_rng(3), 10)
    w2 = sample_window(m, np.random.default_rng(3), 10)
    assert len(w1) == 10 and np.array_equal(w1.price, w2.price)


def test_sample_window_starts_cover_every_fitting_offset():
    m = SpotMarket(np.arange(1, 13, dtype=float), np.zeros(12, dtype=int))
    rng = np.random.default_rng(0)
    starts = {int(sample_window(m, rng, 9).price[0]) - 1 for _ in range(300)}
    assert starts == {0, 1, 2, 3}


def test_sample_window_with_start():
    m = load_spot_trace(REAL)
    w = sample_window(m, np.random.default_rng(0), 5, start=779)
    assert np.array_equal(w.price, m.price[779:784])
    with pytest.raises(ValueError, match=r"start must be in \[0, 784\]"):
        sample_window(m, np.random.default_rng(0), 5, start=785)


def test_sample_window_longer_than_trace():
    m = load_spot_trace(REAL)
    with pytest.raises(ValueError, match="trace has 789 slots, shorter than the window length 800"):
        sample_window(m, np.random.default_rng(0), 800)
