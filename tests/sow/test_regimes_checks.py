"""reproduction/sow/regimes.py: its ratios are ratios of means with paired intervals, and its
checks on hand-made results can fail."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reproduction.experiment import Context
from reproduction.sow.regimes import REGIMES_EXPERIMENTS, USAGE_FLOOR, _cell_table, checks


def _results(rates: dict[int, list[float]], peak: float) -> pd.DataFrame:
    """Two replicates per N of one Reduction variant, FirstComeGreedy and OPT; `rates[N]` the
    evicted + cancelled counts of the two replicates out of 100 jobs each."""
    rows = []
    for nodes, lost in rates.items():
        for replicate, k in enumerate(lost):
            welfare = 90.0 + replicate * 10
            rows += [
                {
                    "cluster.nodes": nodes,
                    "replicate": replicate,
                    "mechanism": "Reduction(epsilon=0.2)",
                    "welfare": welfare,
                    "relaxed_value": welfare + 5,
                    "relaxed_peak": peak,
                    "completions": 100.0 - k,
                    "evictions": 0.0,
                    "cancellations": float(k),
                },
                {
                    "cluster.nodes": nodes,
                    "replicate": replicate,
                    "mechanism": "FirstComeGreedy",
                    "welfare": welfare / 2,
                    "completions": 100.0,
                    "evictions": 0.0,
                    "cancellations": 0.0,
                },
                {
                    "cluster.nodes": nodes,
                    "replicate": replicate,
                    "mechanism": "OPT",
                    "welfare": 2 * welfare,
                    "opt_proven": True,
                },
            ]
    return pd.DataFrame(rows)


def _checks(frame: pd.DataFrame) -> dict:
    table = _cell_table(frame, ["cluster.nodes"])
    return {
        c.check.split(":")[1].strip().split(" (")[0] if ":" in c.check else c.check: c
        for c in checks(Context(Path("."), Path("."), {"theorem41": table}))
        if c.experiment == "theorem41"
    }


def test_ratios_are_ratios_of_means_not_means_of_ratios():
    frame = _results({32: [10, 30]}, 0.95)
    row = _cell_table(frame, ["cluster.nodes"]).set_index("mechanism").loc["Reduction(epsilon=0.2)"]
    assert row["eviction_rate"] == pytest.approx(40 / 200)  # the per-run rates 0.1, 0.3 have the same mean here
    assert row["welfare_over_relaxed"] == pytest.approx((90 + 100) / (95 + 105))
    assert row["welfare_over_relaxed"] != pytest.approx(np.mean([90 / 95, 100 / 105]))
    assert row["opt_ratio"] == pytest.approx(2.0) and row["over_fcg"] == pytest.approx(2.0)
    assert row["relaxed_peak_min"] == 0.95 and row["epsilon"] == 0.2


def test_the_usage_and_eviction_checks_can_fail():
    good = _checks(_results({32: [20, 24], 64: [2, 4], 128: [0, 0]}, 0.92))
    usage = next(c for k, c in good.items() if "smallest peak relaxed usage" in k)
    falls = next(c for k, c in good.items() if "eviction rate falls" in k)
    assert usage.holds and usage.ours == pytest.approx(0.92) and usage.rule == f">= {USAGE_FLOOR:g}"
    assert falls.holds and falls.ours == pytest.approx(0.22)
    bad = _checks(_results({32: [0, 0], 64: [20, 22], 128: [1, 1]}, 0.85))
    usage = next(c for k, c in bad.items() if "smallest peak relaxed usage" in k)
    falls = next(c for k, c in bad.items() if "eviction rate falls" in k)
    assert usage.holds is False and falls.holds is False


def test_the_experiments_are_the_two_regimes():
    assert [(e.name, e.experiment) for e in REGIMES_EXPERIMENTS] == [
        ("theorem41", "sow/theorem41"),
        ("daily", "sow/daily"),
    ]
