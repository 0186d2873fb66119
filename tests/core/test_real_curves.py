"""Real learning curves (market/core/real_curves.py, data/core_lcdb_curves.csv): the loader on the
shipped file and on bad files, the piecewise power law at and between anchors, data_to_reach
against brute force, the bundle rule and its config keys, determinism."""

from __future__ import annotations

import codecs
import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from market.common.csv_trace import TraceError
from market.core.curves import LossCurve
from market.core.real_curves import DEFAULT_PATH, RealBundleParams, RealCurve, load_curves, real_bundle
from market.core.threads import Bundle

DATA = Path(__file__).resolve().parents[2] / "data"
_spec = importlib.util.spec_from_file_location("derive_lcdb_curves", DATA / "derive_lcdb_curves.py")
derive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(derive)

HEADER = "curve,openmlid,dataset,learner,anchor,seed,loss,fit_seconds\n"


@pytest.fixture(scope="module")
def shipped():
    return load_curves()


def write(tmp_path, text: str, name="c.csv", raw: bytes | None = None) -> Path:
    path = tmp_path / name
    path.write_bytes(raw if raw is not None else text.encode())
    return path


def rows(*lines: str) -> str:
    return HEADER + "".join(line + "\n" for line in lines)


# --- the shipped file ----------------------------------------------------------------------


def test_shipped_file_counts(shipped):
    assert DEFAULT_PATH == DATA / "core_lcdb_curves.csv"
    assert DEFAULT_PATH.stat().st_size < 2_000_000
    assert len(shipped) == 50
    assert list(shipped) == sorted(shipped)
    assert len({t.dataset for t in shipped.values()}) == 10
    assert {t.learner for t in shipped.values()} == {
        "LogisticRegression",
        "LinearDiscriminantAnalysis",
        "GradientBoostingClassifier",
        "RandomForestClassifier",
        "MLPClassifier",
    }
    assert all(t.seed_ids == (0, 1, 2, 3, 4) for t in shipped.values())
    assert sum(len(s.anchors) for t in shipped.values() for s in t.seeds) == 5180
    lengths = {k: len(t.mean_anchors) for k, t in shipped.items()}
    assert min(lengths.values()) == 18 and max(lengths.values()) == 24
    assert lengths["openml_40996/GradientBoostingClassifier"] == 20  # LCDB stops at 11,585
    assert all(s.fit_seconds is not None and (s.fit_seconds >= 0).all() for t in shipped.values() for s in t.seeds)
    letter = shipped["openml_6/LogisticRegression"]
    assert letter.dataset == "letter" and letter.first_anchor == 16 and letter.last_anchor == 16200


def test_shipped_curves_decrease_over_six_anchors(shipped):
    for table in shipped.values():
        assert derive.longest_decreasing_run(table.mean_loss) >= derive.MIN_RUN, table.curve


def test_shipped_bytes_are_what_the_writer_makes():
    frame = pd.read_csv(DEFAULT_PATH, keep_default_na=False)
    assert derive.csv_bytes(frame) == DEFAULT_PATH.read_bytes()


def test_longest_decreasing_run():
    assert derive.longest_decreasing_run([3, 2, 1]) == 3
    assert derive.longest_decreasing_run([1, 2, 1, 0.5, 0.5, 0.1]) == 3
    assert derive.longest_decreasing_run([1]) == 1


# --- bad files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("c,1,d,l,32,0,nan,0.1", "loss must be a finite number > 0, got 'nan'"),
        ("c,1,d,l,32,0,-0.5,0.1", "loss must be a finite number > 0, got '-0.5'"),
        ("c,1,d,l,32,0,0,0.1", "loss must be a finite number > 0, got '0'"),
        ("c,1,d,l,32,0,inf,0.1", "loss must be a finite number > 0, got 'inf'"),
        ("c,1,d,l,32,0,abc,0.1", "loss must be a finite number > 0, got 'abc'"),
        ("c,1,d,l,3.5,0,0.5,0.1", "anchor must be an integer >= 1, got '3.5'"),
        ("c,1,d,l,0,0,0.5,0.1", "anchor must be an integer >= 1, got '0'"),
        ("c,1,d,l,32,x,0.5,0.1", "seed must be an integer, got 'x'"),
        ("c,1,d,l,32,0,0.5,-1", "fit_seconds must be a finite number >= 0, got '-1'"),
        ("c,1,d,l,32,0,,0.1", "missing value for column 'loss'"),
        ("c,1,d,l,16,0,0.5,0.1", "duplicate row: curve 'c' seed 0 anchor 16 is already on line 2"),
        ("c,1,d,l,8,0,0.5,0.1", "anchors must increase within curve 'c' seed 0: 8 after 16 (line 2)"),
        ("c,1,other,l,32,0,0.5,0.1", "curve 'c': dataset 'other' differs from 'd' on line 2"),
    ],
)
def test_a_bad_row_names_file_and_line(tmp_path, line, fragment):
    path = write(tmp_path, rows("c,1,d,l,16,0,1.0,0.1", line, "c,1,d,l,64,0,0.2,0.1"))
    with pytest.raises(TraceError) as info:
        load_curves(path)
    assert info.value.path == str(path) and info.value.line == 3
    assert str(info.value) == f"{path}:3: {fragment}"


def test_missing_column_names_the_header(tmp_path):
    path = write(tmp_path, "curve,anchor,seed,fit_seconds\nc,16,0,0.1\n")
    with pytest.raises(TraceError) as info:
        load_curves(path)
    assert info.value.line == 1 and "missing column(s) 'loss'" in str(info.value)
    assert str(info.value).startswith(f"{path}:1: ")


def test_a_single_anchor_is_not_a_curve(tmp_path):
    path = write(tmp_path, rows("c,1,d,l,16,0,1.0,0.1", "c,1,d,l,32,0,0.5,0.1", "c,1,d,l,16,1,1.0,0.1"))
    with pytest.raises(TraceError, match=r":4: curve 'c' seed 1 has a single anchor"):
        load_curves(path)


def test_the_whole_file_is_checked_before_returning(tmp_path):
    good = [f"c,1,d,l,{a},0,{1 / a},0.1" for a in (16, 32, 64)]
    path = write(tmp_path, rows(*good, "e,1,d,l,16,0,1.0,0.1", "e,1,d,l,32,0,nan,0.1"))
    with pytest.raises(TraceError, match=r":6: loss"):
        load_curves(path)


def test_missing_file_is_a_trace_error(tmp_path):
    with pytest.raises(TraceError, match="file not found"):
        load_curves(tmp_path / "nope.csv")


def test_bom_crlf_and_minimal_columns_load(tmp_path):
    text = rows("c,1,d,l,16,0,1.0,0.1", "c,1,d,l,32,0,0.5,0.2")
    plain = load_curves(write(tmp_path, text, "plain.csv"))
    crlf = load_curves(write(tmp_path, "", "bom.csv", raw=codecs.BOM_UTF8 + text.replace("\n", "\r\n").encode()))
    for tables in (plain, crlf):
        (table,) = tables.values()
        assert table.curve == "c" and table.dataset == "d" and table.learner == "l"
        assert table.seeds[0].anchors.tolist() == [16, 32]
        assert table.seeds[0].loss.tolist() == [1.0, 0.5]
        assert table.seeds[0].fit_seconds.tolist() == [0.1, 0.2]
    minimal = load_curves(write(tmp_path, "seed,anchor,loss,curve\n3,10,2,x\n3,20.0,1,x\n", "min.csv"))
    table = minimal["x"]
    assert table.dataset == "" and table.seed_ids == (3,) and table.seeds[0].fit_seconds is None


# --- interpolation ------------------------------------------------------------------------------


def table_of(tmp_path, *lines):
    return next(iter(load_curves(write(tmp_path, rows(*lines), "t.csv")).values()))


def test_exact_at_anchors_and_log_log_between(tmp_path):
    table = table_of(tmp_path, "c,1,d,l,10,0,1.0,0", "c,1,d,l,100,0,0.1,0", "c,1,d,l,1000,0,0.05,0")
    curve = RealCurve(table, 1.0, seed=0)
    assert isinstance(curve, LossCurve)
    assert [curve.loss(a) for a in (10, 100, 1000)] == [1.0, 0.1, 0.05]  # exactly
    assert curve.loss(math.sqrt(10 * 100)) == pytest.approx(math.sqrt(1.0 * 0.1), rel=1e-12)
    assert curve.loss(20) == pytest.approx(1.0 * 2**-1, rel=1e-12)  # slope -1 on [10, 100]
    # slope log(0.5)/log(10) on [100, 1000]
    assert curve.loss(300) == pytest.approx(0.1 * 3 ** (math.log(0.5) / math.log(10)), rel=1e-12)
    assert curve.loss(1) == curve.loss(1e-9) == 1.0  # held below the first anchor
    assert curve.loss(5000) == curve.loss(1e12) == 0.05  # held beyond the last
    scaled = RealCurve(table, 0.5, seed=0)  # half a data unit per sample
    assert scaled.loss(50) == 0.1 and scaled.loss(10) == pytest.approx(curve.loss(20), rel=1e-12)
    assert scaled.span == (5.0, 500.0)
    grid = np.geomspace(0.5, 5000, 301)
    assert scaled.losses(grid).tolist() == pytest.approx([scaled.loss(s) for s in grid], rel=1e-13)
    with pytest.raises(ValueError):
        curve.loss(float("nan"))


def test_the_head_is_held_at_the_peak(tmp_path):
    table = table_of(tmp_path, "c,1,d,l,10,0,1.0,0", "c,1,d,l,20,0,3.0,0", "c,1,d,l,100,0,0.5,0")
    peak = RealCurve(table, 1.0, seed=0)  # default head="peak"
    clamp = RealCurve(table, 1.0, seed=0, head="clamp")
    assert peak.loss(5) == peak.loss(15) == peak.loss(20) == 3.0
    assert clamp.loss(5) == 1.0 and clamp.loss(15) == pytest.approx(15 ** math.log2(3) / 10 ** math.log2(3))
    assert peak.data_to_reach(2.0) == pytest.approx(20 * (2 / 3) ** (1 / (math.log(0.5 / 3) / math.log(5))))
    assert clamp.data_to_reach(2.0) == 0.0  # any positive amount: 1.0 below 10
    assert peak.span == (20.0, 100.0) and clamp.span == (10.0, 100.0)


def test_true_loss_is_the_mean_over_seeds(tmp_path):
    table = table_of(
        tmp_path, "c,1,d,l,10,0,1.0,0", "c,1,d,l,100,0,0.1,0", "c,1,d,l,10,1,2.0,0", "c,1,d,l,1000,1,0.2,0"
    )
    assert table.mean_anchors.tolist() == [10, 100, 1000]
    seed1_at_100 = 2.0 * 10 ** (math.log(0.1) / math.log(100))  # seed 1 interpolated at 100
    assert table.mean_loss.tolist() == pytest.approx([1.5, (0.1 + seed1_at_100) / 2, (0.1 + 0.2) / 2])
    curve = RealCurve(table, 1.0, seed=1)
    assert curve.loss(100) == pytest.approx(seed1_at_100)
    assert curve.true_loss(100) == pytest.approx(table.mean_loss[1])
    assert curve.true_loss(1000) == pytest.approx(0.15)
    mean = RealCurve(table, 1.0, noise="none")
    assert mean.seed is None and mean.loss(333) == mean.true_loss(333)


# --- data_to_reach -------------------------------------------------------------------------------


def test_data_to_reach_against_brute_force(shipped):
    rng = np.random.default_rng(5)
    ids = sorted(shipped)
    for case in range(40):
        table = shipped[ids[case % len(ids)]]
        curve = RealCurve(table, float(rng.choice([1.0, 0.25, 3.0])), rng, head=("peak", "clamp")[case % 2])
        low, high = curve.span
        grid = np.geomspace(low / 4, high * 2, 20_001)
        values = curve.losses(grid)
        for threshold in rng.uniform(values.min() * 0.9, values.max() * 1.1, size=6):
            need = curve.data_to_reach(threshold)
            hits = np.flatnonzero(values <= threshold)
            if need == math.inf:
                assert hits.size == 0
                continue
            assert hits.size > 0
            brute = grid[hits[0]]
            assert need <= brute + 1e-9 * brute  # least: no grid point before it
            if need > 0:
                assert curve.loss(need) <= threshold  # reaches it
                assert curve.loss(need * (1 - 1e-9)) > threshold  # and not before
                assert brute <= need * (grid[1] / grid[0]) * (1 + 1e-12)
                assert curve.data_to_reach(threshold, need) == need
                assert curve.data_to_reach(threshold, need * (1 - 1e-9)) == math.inf
            else:
                assert curve.loss(1e-6) <= threshold
    curve = RealCurve(shipped[ids[0]], 1.0, seed=0)
    assert curve.data_to_reach(0.0) == math.inf
    assert curve.data_to_reach(min(curve.table.seeds[0].loss) * 0.999) == math.inf  # held: never


def test_data_to_reach_hits_an_anchor_value_exactly(shipped):
    table = shipped["openml_752/RandomForestClassifier"]
    curve = RealCurve(table, 1.0, seed=2)
    seed = table.seed_curve(2)
    for anchor, value in zip(seed.anchors[1:], seed.loss[1:]):
        need = curve.data_to_reach(value)
        assert need <= anchor and curve.loss(need) <= value


# --- bundles --------------------------------------------------------------------------------


def solo_units(curve, threshold, budget):
    """Units alone at full compute, the data added unit by unit as algorithms/core/simulation.py does."""
    u, data = 0, 0.0
    while data <= curve.span[1]:  # beyond the last anchor the loss is held: never
        u += 1
        data += budget
        if curve.loss(data) <= threshold:
            return u
    return math.inf


def test_bundle_rule(shipped):
    bundle = real_bundle(shipped, np.random.default_rng(11), 12)
    easy = real_bundle(shipped, np.random.default_rng(11), 12, hard_share=0.0)  # same draws
    assert isinstance(bundle, Bundle) and len(bundle) == 12
    hard = [th.label.endswith(" hard") for th in bundle.threads]
    assert sum(hard) == 4  # round(12 / 3)
    assert not any(th.label.endswith(" hard") for th in easy.threads)
    deadlines = [th.deadline for th in bundle.threads]
    assert deadlines == sorted(deadlines)  # cumulative: the paper's Sec. 4.3
    elapsed = 0
    for th, before, curve, is_hard in zip(bundle.threads, easy.threads, bundle.curves, hard):
        assert th.begin == 0 and 55 <= th.budget <= 375
        assert th.label.startswith(f"{curve.curve}#{curve.seed}")
        assert (th.deadline, th.budget) == (before.deadline, before.budget)
        # alone at full compute after the threads before it, the unmodified threshold is met in time
        elapsed += solo_units(curve, before.threshold, th.budget)
        assert elapsed == th.deadline
        if is_hard:  # a tenth of it: the real curve never gets there
            assert th.threshold == before.threshold * 0.1
            assert curve.data_to_reach(th.threshold) == math.inf
        else:
            assert th.threshold == before.threshold


def test_calibrate_on_the_mean_curve(shipped):
    bundle = real_bundle(shipped, np.random.default_rng(4), 10, calibrate="mean", hard_share=0.0)
    elapsed, late = 0, 0
    for th, curve in zip(bundle.threads, bundle.curves):
        assert curve.seed is not None  # the thread still reports a seed curve
        mean = RealCurve(curve.table, 1.0, noise="none")
        elapsed += solo_units(mean, th.threshold, th.budget)
        assert elapsed == th.deadline  # deadlines from the mean curve
        late += solo_units(curve, th.threshold, th.budget) > solo_units(mean, th.threshold, th.budget)
    assert 0 < late < 10  # the seed is slower for some, not all


def test_solo_deadlines_and_slack(shipped):
    bundle = real_bundle(
        shipped,
        np.random.default_rng(2),
        8,
        deadlines="solo",
        slack=2.0,
        hard_share=0.0,
        curve_ids=["openml_6/LogisticRegression"],
    )
    for th, curve in zip(bundle.threads, bundle.curves):
        assert curve.curve == "openml_6/LogisticRegression"
        assert th.deadline == math.ceil(2.0 * solo_units(curve, th.threshold, th.budget))
        assert curve.data_to_reach(th.threshold) <= th.data_limit


def test_bundles_are_deterministic(shipped):
    def summary(b):
        return [(th.deadline, th.budget, th.threshold, th.label) for th in b.threads]

    params = RealBundleParams(threads=20)
    one, two = params.bundle(np.random.default_rng(7), shipped), params.bundle(np.random.default_rng(7), shipped)
    assert summary(one) == summary(two)
    assert summary(one) != summary(params.bundle(np.random.default_rng(8), shipped))
    assert summary(params.bundle(np.random.default_rng(7))) == summary(one)  # loads the file
    curve = one.curves[0]
    assert [curve.loss(s) for s in (1.0, 333.3, 1e5)] == [curve.loss(s) for s in (1.0, 333.3, 1e5)]


# --- config ----------------------------------------------------------------------------------


def test_from_config_defaults_and_conversion():
    assert RealBundleParams.from_config({}) == RealBundleParams()
    assert RealBundleParams.from_config(None) == RealBundleParams()
    p = RealBundleParams.from_config(
        {"kind": "real", "threads": 25.0, "budget": [10, 20], "threshold_at": [0, 1], "curve_ids": ["a", "b"]}
    )
    assert p.threads == 25 and p.budget == (10.0, 20.0) and p.threshold_at == (0.0, 1.0)
    assert p.curve_ids == ("a", "b")
    assert p.hard_share == pytest.approx(1 / 3) and p.hard_factor == 0.1 and p.deadlines == "cumulative"


@pytest.mark.parametrize(
    "section, message",
    [
        ({"threadz": 3}, "bundle: unknown key(s) 'threadz'"),
        ({"threads": 0}, "bundle.threads must be a positive integer, got 0"),
        ({"slack": 0}, "bundle.slack must be a finite number > 0, got 0"),
        ({"budget": [0, 10]}, "bundle.budget must satisfy 0 < low <= high, got [0, 10]"),
        ({"budget": [1, math.inf]}, "bundle.budget must be finite"),
        ({"units_per_sample": -1}, "bundle.units_per_sample must be a finite number > 0, got -1"),
        ({"threshold_at": [0.5, 1.5]}, "bundle.threshold_at must satisfy 0 <= low <= high <= 1"),
        ({"hard_share": 2}, "bundle.hard_share must be in [0, 1], got 2"),
        ({"hard_factor": 0}, "bundle.hard_factor must be in (0, 1], got 0"),
        ({"deadlines": "edf"}, "bundle.deadlines must be one of cumulative, solo, got 'edf'"),
        ({"noise": "gauss"}, "bundle.noise must be one of seed, none, got 'gauss'"),
        ({"head": "x"}, "bundle.head must be one of peak, clamp, got 'x'"),
        ({"calibrate": "seed"}, "bundle.calibrate must be one of observed, mean, got 'seed'"),
        ({"curve_ids": []}, "bundle.curve_ids must be null or a non-empty list of curve ids"),
        ({"path": ""}, "bundle.path must be null or a file path"),
    ],
)
def test_config_errors_name_the_key(section, message):
    with pytest.raises(ValueError) as info:
        RealBundleParams.from_config(section)
    assert str(info.value).startswith(message)


def test_unknown_curve_id_and_bad_path(shipped, tmp_path):
    with pytest.raises(ValueError, match=r"bundle.curve_ids: unknown curve id\(s\) 'nope'"):
        real_bundle(shipped, np.random.default_rng(0), 3, curve_ids=["nope"])
    with pytest.raises(TraceError, match="file not found"):
        RealBundleParams(path=str(tmp_path / "none.csv")).bundle(np.random.default_rng(0))


def test_data_to_reach_finds_a_crossing_just_past_a_knot():
    """Regression: the closed form landed more than 64 doubles before the crossing and the search
    fell back to the next anchor (8192 instead of about 5926), which let STF beat the offline
    optimum on a real bundle. The case: anchors 5793 (0.0908) and 8192 (0.0906)."""
    from market.core.real_curves import CurveTable, RealCurve, SeedCurve

    anchors = np.array([16, 4096, 5793, 8192, 12150], dtype=np.int64)
    loss = np.array([12.2888, 0.0948, 0.0908, 0.0906, 0.0904])
    curve = RealCurve(CurveTable("x", "d", "l", (SeedCurve(0, anchors, loss, None),)), noise="none")
    threshold = 0.09078683479642824
    s = curve.data_to_reach(threshold, 10_000.0)
    assert 5900 < s < 5950
    assert curve.loss(s) <= threshold < curve.loss(np.nextafter(s, 0.0))
    grid = np.linspace(5793.0, s, 2001)[:-1]
    assert (curve.losses(grid) > threshold).all()
