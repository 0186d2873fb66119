"""Regenerate the real traces in data/ from the public raw files they were derived from.

The raw files are not shipped (about 1.2 MB and 2 MB); download them, then run, from the
repository root:

    python data/derive_traces.py market \\
        --availability us-west-2a_v100_1.json --prices v100_spot_prices.json
    python data/derive_traces.py arrivals --requests lora_request_trace.csv
    python data/derive_traces.py check \\
        --availability us-west-2a_v100_1.json --prices v100_spot_prices.json \\
        --requests lora_request_trace.csv      # byte-compare with the shipped CSVs

Raw sources (the commit is the one whose copy was checked; see data/README.md,
"How the files were made", for what was verified and how):

- availability: https://github.com/skypilot-org/spot-traces, file
  availability/16-node/aws-08-27-2023/us-west-2a_v100_1.json (commit b2663138),
  {"metadata": {"gap_seconds": 300}, "data": [instances obtainable out of 16, one per probe]}.
- spot price: https://github.com/andylizf/skynomad-artifact, file data/v100_spot_prices.json
  (commit 4dc5ecbc), {"<zone>_v100_1": [USD/h, one per 195 s tick from 2023-02-15], ...};
  the series used is "us-east-1f_v100_1".
- requests: https://github.com/alibaba/clusterdata, file
  cluster-trace-v2026-GenAI/lora_request_trace.csv (commit 7a6c496e), one row per request,
  column gmt_create = "YYYY-MM-DD HH:MM:SS".

Derivation (market_slots, arrival_counts below):

- market: slot k pairs availability probes 6k..6k+5 (300 s each, so 30 minutes from
  2023-08-27T00:00:00) with price ticks 9k..9k+8 of the us-east-1f series, both from the start
  of their own series; the two were measured in different zones and months, so the pairing is
  by index, not by time. 9 = int(1800 / 195): a slot averages 9 ticks, 29 min 15 s of price
  history, not 30 minutes. availability = minimum of the 6 probes; spot_price = mean of the 9
  ticks divided by the on-demand price 3.06 USD/h, rounded to 4 decimals. The number of slots
  is what both series fill, min(4736 // 6, 20158 // 9) = 789; the 2 probes left over are
  dropped. timestamp = 2023-08-27T00:00:00 + 30 min * slot (the availability clock).
- arrivals: every row of the request trace (any predict_status) counted in the 10-minute bin
  of its gmt_create; the bins run from the first request's bin to the last one's, empty bins
  included (3,317 bins, 2024-11-15T16:50 to 2024-12-08T17:30).

Held-out traces (data/README.md, "Held-out market traces"): the same `market` command on the
other two availability files of the same folder, us-east-2b_v100_1.json and
us-west-2c_v100_1.json, with `-o data/market_aws_<zone>_v100.csv`. Their prices are the
us-east-1f series as in the shipped file; the raw price file was not re-read for them, so
`--prices-from data/market_aws_us-west-2a_v100.csv` rebuilds the price side from the shipped
file's own slot means (each repeated over its 9 ticks, times 3.06), which gives the same
spot_price column as the raw ticks slot by slot:

    python data/derive_traces.py market --availability us-east-2b_v100_1.json \
        --prices-from data/market_aws_us-west-2a_v100.csv -o data/market_aws_us-east-2b_v100.csv

Output format, as the shipped files: header row, comma-separated, ISO timestamps, floats as
Python's shortest repr (0.382, not 0.3820), CRLF line endings, a final CRLF, no BOM.
Needs pandas and numpy only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parent
MARKET_CSV = DATA / "market_aws_us-west-2a_v100.csv"
ARRIVALS_CSV = DATA / "arrivals_alibaba_lora_10min.csv"

PROBES_PER_SLOT = 6  # 1800 s / 300 s availability probes
TICKS_PER_SLOT = 9  # int(1800 s / 195 s) price ticks
ON_DEMAND_USD_H = 3.06  # AWS p3.2xlarge on demand
PRICE_ZONE = "us-east-1f_v100_1"
MARKET_START = "2023-08-27T00:00:00"
SLOT_MARKET = "30min"
SLOT_ARRIVALS = "10min"


def market_slots(
    probes,
    prices,
    start=MARKET_START,
    probes_per_slot=PROBES_PER_SLOT,
    ticks_per_slot=TICKS_PER_SLOT,
    on_demand=ON_DEMAND_USD_H,
) -> pd.DataFrame:
    """slot, timestamp, spot_price, availability from the probe and price-tick series."""
    probes = np.asarray(probes, dtype=np.int64)
    prices = np.asarray(prices, dtype=np.float64)
    n = min(len(probes) // probes_per_slot, len(prices) // ticks_per_slot)
    if n == 0:
        raise ValueError("the inputs do not fill a single slot")
    avail = probes[: n * probes_per_slot].reshape(n, probes_per_slot).min(axis=1)
    mean = prices[: n * ticks_per_slot].reshape(n, ticks_per_slot).mean(axis=1)
    stamps = pd.date_range(start, periods=n, freq=SLOT_MARKET)
    return pd.DataFrame(
        {
            "slot": np.arange(n),
            "timestamp": stamps.strftime("%Y-%m-%dT%H:%M:%S"),
            "spot_price": np.round(mean / on_demand, 4),
            "availability": avail,
        }
    )


def arrival_counts(times, freq=SLOT_ARRIVALS) -> pd.DataFrame:
    """slot, timestamp, arrivals: requests per bin from the first request's bin to the last's."""
    bins = pd.to_datetime(pd.Series(times)).dt.floor(freq)
    counts = bins.value_counts()
    index = pd.date_range(bins.min(), bins.max(), freq=freq)
    return pd.DataFrame(
        {
            "slot": np.arange(len(index)),
            "timestamp": index.strftime("%Y-%m-%dT%H:%M:%S"),
            "arrivals": counts.reindex(index, fill_value=0).to_numpy(dtype=np.int64),
        }
    )


def _cell(value) -> str:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The shipped files' bytes: header, comma-separated rows, CRLF after every line."""
    lines = [",".join(frame.columns)]
    lines += [",".join(_cell(v) for v in row) for row in frame.itertuples(index=False)]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def read_availability(path) -> list[int]:
    with open(path) as f:
        raw = json.load(f)
    gap = raw.get("metadata", {}).get("gap_seconds")
    if gap != 300:
        raise ValueError(f"{path}: gap_seconds {gap!r}, expected 300")
    return raw["data"]


def read_prices(path, zone=PRICE_ZONE) -> list[float]:
    with open(path) as f:
        return json.load(f)[zone]


def slot_mean_ticks(path, ticks_per_slot=TICKS_PER_SLOT, on_demand=ON_DEMAND_USD_H) -> np.ndarray:
    """Price ticks (USD/h) that give back a market CSV's spot_price column under market_slots:
    each slot's value times the on-demand price, repeated over its ticks_per_slot ticks."""
    prices = pd.read_csv(path)["spot_price"].to_numpy(dtype=np.float64)
    return np.repeat(prices * on_demand, ticks_per_slot)


def read_request_times(path) -> pd.Series:
    times = pd.read_csv(path, usecols=["gmt_create"])["gmt_create"]
    parsed = pd.to_datetime(times, format="%Y-%m-%d %H:%M:%S", errors="coerce")
    if parsed.isna().any():
        print(f"{path}: {int(parsed.isna().sum())} rows without a readable gmt_create, skipped", file=sys.stderr)
    return parsed.dropna()


def _market(args) -> bytes:
    if getattr(args, "prices_from", None):
        prices = slot_mean_ticks(args.prices_from)
    else:
        prices = read_prices(args.prices, args.zone)
    return csv_bytes(market_slots(read_availability(args.availability), prices))


def _arrivals(args) -> bytes:
    return csv_bytes(arrival_counts(read_request_times(args.requests)))


def _compare(name, made: bytes, shipped: Path) -> bool:
    old = shipped.read_bytes()
    if made == old:
        print(f"{name}: identical to {shipped.name} ({len(old)} bytes)")
        return True
    a, b = made.split(b"\r\n"), old.split(b"\r\n")
    line = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    print(
        f"{name}: differs from {shipped.name} at line {line + 1}: "
        f"made {a[line] if line < len(a) else b'<end>'!r}, "
        f"shipped {b[line] if line < len(b) else b'<end>'!r}"
    )
    return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="raw files:\n"
        "  https://github.com/skypilot-org/spot-traces"
        "  availability/16-node/aws-08-27-2023/us-west-2a_v100_1.json\n"
        "  https://github.com/andylizf/skynomad-artifact  data/v100_spot_prices.json\n"
        "  https://github.com/alibaba/clusterdata"
        "  cluster-trace-v2026-GenAI/lora_request_trace.csv\n"
        "The derivation is in this file's docstring and data/README.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    market = sub.add_parser("market", help="write the market trace")
    arrivals = sub.add_parser("arrivals", help="write the arrival trace")
    check = sub.add_parser("check", help="byte-compare what the raw files give with data/*.csv")
    for p in (market, check):
        p.add_argument("--availability", required=p is market, help="us-west-2a_v100_1.json")
        p.add_argument(
            "--prices", help="v100_spot_prices.json" + (" (market: this or --prices-from)" if p is market else "")
        )
        p.add_argument("--zone", default=PRICE_ZONE, help=f"price series (default {PRICE_ZONE})")
    for p in (arrivals, check):
        p.add_argument("--requests", required=p is arrivals, help="lora_request_trace.csv")
    market.add_argument(
        "--prices-from",
        type=Path,
        metavar="MARKET_CSV",
        help="instead of --prices: the price ticks a market CSV's spot_price "
        "column stands for (its slot means; the held-out traces)",
    )
    market.add_argument("-o", "--output", type=Path, default=MARKET_CSV)
    arrivals.add_argument("-o", "--output", type=Path, default=ARRIVALS_CSV)
    args = parser.parse_args(argv)
    if args.command == "market" and (args.prices is None) == (args.prices_from is None):
        parser.error("market: give exactly one of --prices and --prices-from")

    if args.command == "check":
        ok = True
        if args.availability and args.prices:
            ok &= _compare("market", _market(args), MARKET_CSV)
        if args.requests:
            ok &= _compare("arrivals", _arrivals(args), ARRIVALS_CSV)
        return 0 if ok else 1
    made = _market(args) if args.command == "market" else _arrivals(args)
    args.output.write_bytes(made)
    print(f"wrote {args.output} ({len(made)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
