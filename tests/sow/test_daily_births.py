"""`births.kind: daily` (market/sow/daily_births.py): the daily cycle, the classes' shares and
shapes, the busiest hour's load scaling with N, the experiment's classes against the Helios summary
they are sized on, and validation errors naming the key."""

from __future__ import annotations

import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from market.sow.birth_sequences import BirthParams, bounds_from_config, draw_births
from market.sow.daily_births import DEFAULT_CLASSES, DailyParams
from market.sow.statement_of_work import Bounds
from sweep.api import CONF_DIR
from sweep.cells import make_cell

BOUNDS = bounds_from_config({})  # C_max = 4, D_max = 4, S_max = 16, V_bar = 16
# Three classes told apart by their concurrency.
MARKED = {
    "a": {"share": 0.5, "concurrency": [1, 1], "duration": [1, 1], "density": [2, 4]},
    "b": {
        "share": 0.3,
        "concurrency": [2, 2],
        "duration": [2, 3],
        "density": [1, 2],
        "lead": 1,
        "arrival_jitter": 1,
        "duration_jitter": 1,
        "slack": 2,
    },
    "c": {
        "share": 0.2,
        "concurrency": [3, 3],
        "duration": [4, 4],
        "density": [0.25, 1],
        "lead": 2,
        "arrival_jitter": 2,
        "slack": 5,
    },
}


def params(config, bounds=BOUNDS) -> BirthParams:
    return BirthParams.from_config({"kind": "daily", **config}, bounds)


def births(config, bounds=BOUNDS, seed=0):
    return draw_births(params(config, bounds), bounds, np.random.default_rng(seed))


def demand(sow) -> float:
    """c x E[nominal d]: the support's durations are symmetric around the nominal one unless clipped."""
    return sow.concurrency * sow.expected_duration()


def test_the_profile_peaks_at_peak_load_times_n_and_bottoms_at_the_trough():
    p = params({"nodes_hint": 40, "peak_load": 2.0, "peak": 14, "trough": 0.3}).generator
    assert p.profile(14) == pytest.approx(1.0) and p.profile(2) == pytest.approx(0.3)
    assert p.expected_demand(14) == pytest.approx(80.0) and p.expected_demand(2) == pytest.approx(24.0)
    assert p.expected_demand(np.arange(24)).argmax() == 14
    shifted = params({"nodes_hint": 40, "start": 6}).generator  # round 8 is 14:00
    assert shifted.profile(8) == pytest.approx(1.0)


def test_realised_demand_follows_the_daily_cycle_and_the_class_shares():
    config = {"nodes_hint": 32, "peak_load": 1.5, "days": 60, "classes": MARKED}
    p = params(config).generator
    seq = births(config, seed=1)
    birth = np.array([s.birth for s in seq.jobs])
    nominal = np.array([{1: 1, 2: 2.5, 3: 4}[s.concurrency] * s.concurrency for s in seq.jobs])
    hourly = np.bincount(birth % 24, weights=nominal, minlength=24) / 60
    expected = p.expected_demand(np.arange(24))
    assert np.allclose(hourly, expected, rtol=0.15)
    assert hourly[12:17].mean() > 2.0 * hourly[0:5].mean()  # busy afternoon, quiet night
    concurrency = np.array([s.concurrency for s in seq.jobs])
    for c, share in ((1, 0.5), (2, 0.3), (3, 0.2)):
        assert abs((concurrency == c).mean() - share) < 0.02


@pytest.mark.parametrize("load", [1.0, 1.5, 2.0])
def test_the_busiest_hours_load_scales_with_n(load):
    offered = {}
    for nodes in (32, 128):
        config = {"nodes_hint": nodes, "peak_load": load, "days": 60}
        seq = births(config, seed=2)
        at_peak = [demand(s) for s in seq.jobs if s.birth % 24 == 14]
        offered[nodes] = sum(at_peak) / 60 / nodes  # per day, over N
    for value in offered.values():  # about 3 standard deviations at N = 32
        assert value == pytest.approx(load, rel=0.2)
    assert offered[128] == pytest.approx(offered[32], rel=0.2)


def test_a_jobs_shape_follows_its_class():
    seq = births({"nodes_hint": 16, "classes": MARKED, "days": 3})
    for sow in seq.jobs:
        job = dict(MARKED)[{1: "a", 2: "b", 3: "c"}[sow.concurrency]]
        lead, jitter = job.get("lead", 0), job.get("arrival_jitter", 0)
        offsets = sorted(set((sow.arrival - sow.birth).tolist()))
        assert offsets == sorted({max(lead + o, 0) for o in range(-jitter, jitter + 1)})  # clipped to >= birth
        nominal = int(np.round(np.median(sow.duration)))
        peak = sow.values[0]
        low, high = job["density"]
        assert low * sow.concurrency * nominal - 1e-9 <= peak <= high * sow.concurrency * nominal
        last = lead + jitter + nominal + job.get("slack", 0)  # a deadline: full value, then 0
        assert (sow.values[: last + 1] == peak).all() and (sow.values[last + 1 :] == 0).all()


def test_the_draws_depend_on_the_seed_only():
    a, b = births({"nodes_hint": 20}, seed=3), births({"nodes_hint": 20}, seed=3)
    assert [(s.birth, s.concurrency, s.values[0]) for s in a.jobs] == [
        (s.birth, s.concurrency, s.values[0]) for s in b.jobs
    ]


def test_the_defaults_fit_the_family_bounds_and_mirror_the_births_file():
    p = params({}).generator
    assert p.classes == DEFAULT_CLASSES and p.names() == ("interactive", "finetune", "training")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["family=sow", "births=daily", "tracking=off"])
    cell = make_cell(cfg, [], 0, "0")
    section = {k: v for k, v in cell.world["births"].items() if k not in ("kind", "signal")}
    assert DailyParams.from_config(section, BOUNDS).classes == DEFAULT_CLASSES


def test_the_experiments_classes_keep_the_helios_summary():
    # HeliosArtifact helios_cluster_summary.csv (docstring of market/sow/daily_births.py): the median
    # GPU job uses 1 GPU; the mean GPU job 2.101-6.736 GPUs and 1.43-3.62 h (one round = one hour);
    # a minority of long multi-GPU jobs holds most of the GPU time.
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=sow/daily", "tracking=off"])
    world = make_cell(cfg, [], 0, "0").world
    bounds = bounds_from_config(world["bounds"])
    p = params({k: v for k, v in world["births"].items() if k not in ("kind", "signal")}, bounds).generator
    share = p.shares()
    jobs = p.jobs()
    gpus = share @ [sum(j.concurrency) / 2 for j in jobs]
    hours = share @ [sum(j.duration) / 2 for j in jobs]
    node_rounds = share * [j.mean_node_rounds() for j in jobs]
    one_gpu = sum(s for s, j in zip(share, jobs) if j.concurrency == (1, 1))
    assert one_gpu > 0.5
    assert 2.101 <= gpus <= 6.736 and 1.43 <= hours <= 3.62
    assert node_rounds[-1] / node_rounds.sum() > 0.5 and share[-1] <= 0.1 + 1e-12
    assert (gpus, hours) == pytest.approx((2.15, 2.2))


BAD = [
    ({"peak_load": 0}, r"^births\.peak_load must be a finite number > 0, got 0$"),
    ({"trough": 1.5}, r"^births\.trough must be in \[0, 1\], got 1\.5$"),
    ({"peak": 24}, r"^births\.peak must be in \[0, 24\), got 24$"),
    ({"start": 24}, r"^births\.start must be an integer in \[0, 23\], got 24$"),
    ({"days": 0}, r"^births\.days must be a positive integer, got 0$"),
    ({"classes": {}}, r"^births\.classes must name at least one job class, got an empty mapping$"),
    (
        {"classes": {"x": {"share": 1, "concurrency": [1, 1], "duration": [1, 1]}}},
        r"^births\.classes\.x: missing key\(s\) density$",
    ),
    ({"classes": {"x": {**MARKED["a"], "colour": 1}}}, r"^births\.classes\.x: unknown key\(s\) 'colour' "),
    (
        {"classes": {"x": {**MARKED["a"], "share": 0}}},
        r"^births\.classes\.x\.share must be a finite number > 0, got 0$",
    ),
    (
        {"classes": {"x": {**MARKED["a"], "concurrency": [1, 5]}}},
        r"^births\.classes\.x\.concurrency must lie within \[1, 4\] \(bounds\.max_concurrency = 4\), got \[1, 5\]$",
    ),
    (
        {"classes": {"x": {**MARKED["a"], "duration": [0, 1]}}},
        r"^births\.classes\.x\.duration must satisfy 1 <= low <= high, got \[0, 1\]$",
    ),
    (
        {"classes": {"x": {**MARKED["a"], "density": [2, 20]}}},
        r"^births\.classes\.x: peak values density x concurrency x duration span \[2, 20\], outside \[1, V_bar = 16\]",
    ),
    (
        {"classes": {"x": {**MARKED["a"], "slack": 15}}},
        r"^births\.classes\.x\.lead \+ \.arrival_jitter \+ \.duration high \+ \.slack must be < bounds\.horizon = 16 ",
    ),
    (
        {"classes": {"x": {**MARKED["a"], "duration_jitter": 4}}},
        r"^births\.classes\.x\.duration_jitter must be an integer in \[0, 3\], got 4$",
    ),
    ({"classes": MARKED, "nodes_hint": 2}, r"^births\.nodes_hint must be >= the highest class concurrency 3, got 2$"),
    ({"classes": ["a"]}, r"^births\.classes: must be a mapping, got list$"),
    ({"load": 1}, r"^births: unknown key\(s\) 'load' for kind 'daily' "),
]


@pytest.mark.parametrize("config, message", BAD)
def test_validation_errors_name_the_key(config, message):
    with pytest.raises(ValueError, match=message):
        params(config)


def test_the_default_classes_are_checked_against_the_bounds():
    with pytest.raises(ValueError, match=r"^births\.classes\.training\.concurrency must lie within \[1, 2\]"):
        params({}, Bounds(max_concurrency=2, max_duration=4, horizon=16, max_value=16.0))
