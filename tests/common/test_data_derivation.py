"""data/derive_traces.py: the aggregation on hand-made raw inputs, and the shipped files' format.

The raw sources are not shipped; what was checked against them is in data/README.md.
"""

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

DATA = Path(__file__).resolve().parents[2] / "data"
_spec = importlib.util.spec_from_file_location("derive_traces", DATA / "derive_traces.py")
derive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(derive)

# 19 probes (3 slots of 6, one probe left over) and 29 ticks (3 slots of 9, two left over).
PROBES = [0, 0, 0, 0, 0, 0, 16, 16, 16, 16, 16, 16, 16, 16, 5, 16, 16, 16, 7]
PRICES = [3.06] * 9 + [1.53] * 9 + [3.06] * 3 + [1.53] * 6 + [9.99, 9.99]
MARKET_BYTES = (
    b"slot,timestamp,spot_price,availability\r\n"
    b"0,2023-08-27T00:00:00,1.0,0\r\n"  # nine ticks at the on-demand price; a 0 probe
    b"1,2023-08-27T00:30:00,0.5,16\r\n"  # half price; all probes 16
    b"2,2023-08-27T01:00:00,0.6667,5\r\n"  # (3 * 3.06 + 6 * 1.53) / 9 / 3.06 = 2/3; min 5
)


def test_market_slots_by_hand():
    frame = derive.market_slots(PROBES, PRICES)
    assert frame["availability"].tolist() == [0, 16, 5]
    assert frame["spot_price"].tolist() == [1.0, 0.5, 0.6667]
    assert frame["timestamp"].tolist() == ["2023-08-27T00:00:00", "2023-08-27T00:30:00", "2023-08-27T01:00:00"]
    assert derive.csv_bytes(frame) == MARKET_BYTES


def test_market_slots_stop_at_the_shorter_series():
    assert len(derive.market_slots(PROBES, PRICES[:18])) == 2  # prices fill 2 slots
    assert len(derive.market_slots(PROBES[:17], PRICES)) == 2  # probes fill 2 slots
    with pytest.raises(ValueError):
        derive.market_slots(PROBES[:5], PRICES)


def test_arrival_counts_by_hand():
    times = ["2024-11-15 16:57:50", "2024-11-15 17:21:00", "2024-11-15 17:29:59", "2024-11-15 17:30:00"]
    assert derive.csv_bytes(derive.arrival_counts(times)) == (
        b"slot,timestamp,arrivals\r\n"
        b"0,2024-11-15T16:50:00,1\r\n"
        b"1,2024-11-15T17:00:00,0\r\n"  # empty bins between the first and last are kept
        b"2,2024-11-15T17:10:00,0\r\n"
        b"3,2024-11-15T17:20:00,2\r\n"
        b"4,2024-11-15T17:30:00,1\r\n"  # a bin is [start, start + 10 min)
    )


def test_command_line_on_raw_files(tmp_path, capsys):
    avail = tmp_path / "us-west-2a_v100_1.json"
    avail.write_text(json.dumps({"metadata": {"gap_seconds": 300}, "data": PROBES}))
    prices = tmp_path / "v100_spot_prices.json"
    prices.write_text(json.dumps({"us-east-1a_v100_1": [1.0] * 27, "us-east-1f_v100_1": PRICES}))
    requests = tmp_path / "lora_request_trace.csv"
    requests.write_text(
        "gmt_create,predict_type,predict_status\n"
        "2024-11-15 16:57:50,TXT_2_IMG,SUCCEED\n"
        "2024-11-15 17:01:00,TXT_2_IMG,FAILED\n"  # every status counts
        ",TXT_2_IMG,SUCCEED\n"
    )  # no time: skipped, and said so
    out = tmp_path / "market.csv"
    assert derive.main(["market", "--availability", str(avail), "--prices", str(prices), "-o", str(out)]) == 0
    assert out.read_bytes() == MARKET_BYTES
    out = tmp_path / "arrivals.csv"
    assert derive.main(["arrivals", "--requests", str(requests), "-o", str(out)]) == 0
    assert out.read_bytes() == (b"slot,timestamp,arrivals\r\n0,2024-11-15T16:50:00,1\r\n1,2024-11-15T17:00:00,1\r\n")
    assert "1 rows without a readable gmt_create" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["market_aws_us-west-2a_v100.csv", "arrivals_alibaba_lora_10min.csv"])
def test_writer_gives_the_shipped_bytes(name):
    """The shipped files' own values, written by csv_bytes, are the shipped bytes."""
    shipped = (DATA / name).read_bytes()
    assert derive.csv_bytes(pd.read_csv(DATA / name)) == shipped
