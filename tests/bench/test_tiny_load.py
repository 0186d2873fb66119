"""bench/tiny_load.py's own logic (not its timings): the experiments, the order, the summary."""

from __future__ import annotations

import json

import pytest

from bench import tiny_load


def test_every_experiment_file_is_listed_as_experiment_takes_it():
    names = tiny_load.experiments()
    assert {
        "demo",
        "smoke",
        "spot/fig5",
        "core/table1",
        "auction/fig8",
        "iaas/table2",
        "sow/theorem52",
        "arena/synthetic",
    } <= set(names)
    assert len(names) == len(list(tiny_load.EXPERIMENT_DIR.rglob("*.yaml")))


def test_only_keeps_its_order_and_refuses_an_unknown_experiment():
    names = ["a/x", "b/y", "demo"]
    assert tiny_load.selected(names, None) == names
    assert tiny_load.selected(names, "demo, a/x") == ["demo", "a/x"]
    with pytest.raises(ValueError, match="c/z"):
        tiny_load.selected(names, "a/x,c/z")


def test_the_pair_alternates_which_condition_runs_first():
    assert [tiny_load.conditions(i) for i in range(3)] == [
        ("quiet", "loaded"),
        ("loaded", "quiet"),
        ("quiet", "loaded"),
    ]


def test_the_done_line_gives_the_engine_and_simulating_seconds():
    line = (
        "Done: 16 cells, 576 simulations in 14.1 s; simulating 7.2 s (80 simulations/s on 2 workers); "
        "before the first simulation (start-up, composing, Ray) 6.0 s"
    )
    assert tiny_load.parse_done("noise\n" + line) == {
        "simulations": 576,
        "engine_seconds": 14.1,
        "simulating_seconds": 7.2,
    }
    assert tiny_load.parse_done("no line")["engine_seconds"] is None


def test_phases_read_timing_json_and_tolerate_its_absence(tmp_path):
    assert tiny_load.phases(tmp_path) == dict.fromkeys(tiny_load.PHASES)
    (tmp_path / "timing.json").write_text(json.dumps({"ray_ready": {"epoch": 1.0, "seconds_after_start": 4.5}}))
    assert tiny_load.phases(tmp_path)["ray_ready"] == 4.5


def test_the_summary_counts_slow_runs_and_large_ratios():
    seconds = {
        "a": {"quiet": 10.0, "loaded": 20.0},
        "b": {"quiet": 10.0, "loaded": 35.0},
        "c": {"quiet": 5.0, "loaded": 10.0},
    }
    summary = tiny_load.summarize(seconds, limit=30, max_ratio=3)
    assert summary["ratios"] == {"a": 2.0, "b": 3.5, "c": 2.0}
    assert summary["median_ratio"] == 2.0
    assert summary["max_ratio"] == {"experiment": "b", "ratio": 3.5}
    assert summary["over_limit"]["experiments"] == ["b"] and summary["over_ratio"]["count"] == 1
    assert "| b | 10.0 | 35.0 | 3.50 |" in tiny_load.table(seconds, summary)


def test_the_command_names_the_temporary_folder_and_runs_tiny_without_tracking(tmp_path):
    argv = tiny_load.command("spot/fig5", tmp_path / "sweep")
    assert argv[1:] == [
        "-m",
        "sweep",
        "-m",
        "experiment=spot/fig5",
        "debug=tiny",
        "tracking=off",
        "runner.progress=false",
        f"hydra.sweep.dir={tmp_path}/sweep",
    ]
    assert tiny_load.shown(argv, tmp_path).endswith("'hydra.sweep.dir=<tmp>/sweep'")


def test_busy_loops_start_and_are_stopped():
    loops = tiny_load.start_busy(2)
    assert all(loop.poll() is None for loop in loops)
    tiny_load.stop_busy(loops)
    assert all(loop.returncode is not None for loop in loops)
