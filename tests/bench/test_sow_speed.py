"""bench/sow_speed.py on a tiny workload: the report's structure and that its numbers are
positive and consistent. No timing assertion (speed is measured by the benchmark, never here)."""

import json
import math

from bench.sow_speed import benchmark, main

ROW_KEYS = {
    "label",
    "jobs",
    "pipelines",
    "nodes",
    "samples",
    "arrival_jitter",
    "duration_jitter",
    "nominal_support",
    "mean_support",
    "birth_rounds",
    "rounds",
    "active_at_birth",
    "offered_load_per_node",
    "busy_window",
    "mean_busy_nodes",
    "utilisation",
    "peak_busy_nodes",
    "completions",
    "evictions",
    "cancellations",
    "welfare",
    "seconds",
    "median_seconds",
    "ms_per_job",
    "draw_seconds",
    "median_draw_seconds",
    "same_outcome_across_repeats",
    "load_average_first_repeat_before",
    "load_average_last_repeat_after",
}


def check_row(row, jobs, repeats):
    assert ROW_KEYS <= set(row)
    assert row["jobs"] == jobs
    assert len(row["seconds"]) == len(row["draw_seconds"]) == repeats
    assert all(s > 0 for s in row["seconds"] + row["draw_seconds"])
    assert row["median_seconds"] > 0 and row["ms_per_job"] > 0 and row["median_draw_seconds"] > 0
    assert 1 <= row["mean_support"] <= row["nominal_support"]
    assert row["active_at_birth"]["mean"] >= 0 and row["active_at_birth"]["max"] >= row["active_at_birth"]["mean"]
    assert row["offered_load_per_node"] > 0 and row["completions"] > 0
    assert 0 <= row["utilisation"] <= 1 and row["peak_busy_nodes"] <= row["nodes"]
    assert row["same_outcome_across_repeats"]  # same world and seed every repeat: the same work


def test_benchmark_report_on_a_tiny_workload():
    report = benchmark(
        jobs=40,
        nodes=12,
        repeats=2,
        sweep_repeats=2,
        samples=20,
        samples_sweep="10,20",
        nodes_sweep="8,12",
        support_sweep="0x0,1x0,2x1",
    )
    json.dumps(report)  # serialisable as written
    assert report["settings"]["hoeffding_samples"] == 324  # Lemma F.1 at eps0 = delta0 = 0.1, D_max 4, S_max 16
    head = report["headline"]
    check_row(head, 40, 2)
    assert head["samples"] == 20 and head["nodes"] == 12 and head["pipelines"] == 24
    assert report["goal_met"] == (head["median_seconds"] <= 60)
    assert set(report["sweeps"]) == {"samples", "nodes", "support"}
    expected = {
        "samples": ["R=10", "R=20"],
        "nodes": ["N=8", "N=12"],
        "support": ["jitter=0x0", "jitter=1x0", "jitter=2x1"],
    }
    for name, sweep in report["sweeps"].items():
        assert [row["label"] for row in sweep["points"]] == expected[name]
        for row in sweep["points"]:
            check_row(row, 40, 2)
            assert row["median_ratio_to_reference"] > 0
        assert sweep["reference"] == expected[name][-1]  # the point at the headline's values
        assert math.isfinite(sweep["exponent"])
        assert len(sweep["local_exponents"]) == len(sweep["points"]) - 1
    assert [row["nominal_support"] for row in report["sweeps"]["support"]["points"]] == [1, 3, 15]
    assert report["sweeps"]["support"]["points"][0]["mean_support"] == 1
    assert [row["pipelines"] for row in report["sweeps"]["nodes"]["points"]] == [16, 24]


def test_main_writes_the_json(tmp_path):
    out = tmp_path / "sow_speed.json"
    assert (
        main(
            [
                "--quick",
                "--jobs",
                "30",
                "--nodes",
                "10",
                "--samples-sweep",
                "5,10",
                "--nodes-sweep",
                "6,10",
                "--support-sweep",
                "0x0,2x1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads(out.read_text())
    assert report["quick"] and report["command"].startswith("python -m bench.sow_speed --quick")
    assert report["settings"]["repeats"] == report["settings"]["sweep_repeats"] == 1
    check_row(report["headline"], 30, 1)
    assert report["sweeps"]["samples"]["reference"] is None  # R = 324 is not in the sweep
    assert report["sweeps"]["nodes"]["reference"] == "N=10"
    assert all(len(s["points"]) == 2 for s in report["sweeps"].values())
