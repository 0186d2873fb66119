"""The birth-sequence generators of paper 004's world (Sec. 1-2; docs/sow/world.md)."""

import math
from pathlib import Path

import numpy as np
import pytest

from market.common.csv_trace import TraceError
from market.sow.birth_sequences import (
    KINDS,
    AdversarialParams,
    BirthParams,
    BlockingParams,
    RecurringParams,
    ToyParams,
    binomial_offsets,
    bounds_from_config,
    draw_births,
)
from market.sow.statement_of_work import Bounds, check_sow

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "sow_example_sows.csv"
BOUNDS = bounds_from_config({})


def births(config=None, seed=0, bounds=BOUNDS):
    config = dict(config or {})
    if config.get("kind") == "trace":
        config.setdefault("path", str(EXAMPLE))
    return draw_births(BirthParams.from_config(config, bounds), bounds, np.random.default_rng(seed))


def test_bounds_defaults_and_errors():
    assert BOUNDS == Bounds(max_concurrency=4, max_duration=4, horizon=16, max_value=16.0)
    assert bounds_from_config({"horizon": 30, "max_value": 64}) == Bounds(4, 4, 30, 64.0)
    for config, message in [
        ({"horizon": 0}, r"^bounds\.horizon must be a positive integer, got 0$"),
        ({"max_concurrency": 2.5}, r"^bounds\.max_concurrency must be a positive integer, got 2\.5$"),
        ({"max_value": 0.9}, r"^bounds\.max_value must be a finite number >= 1, got 0\.9$"),
        ({"max_duration": "3"}, r"^bounds\.max_duration must be a positive integer, got '3'$"),
        ({"S_max": 3}, r"^bounds: unknown key\(s\) 'S_max' \(known: max_concurrency, max_duration, horizon, "),
    ]:
        with pytest.raises(ValueError, match=message):
            bounds_from_config(config)


def test_defaults():
    p = BirthParams.from_config(None, BOUNDS)
    assert (p.kind, p.signal) == ("recurring", "none")
    assert p.generator == RecurringParams(concurrency=(1, 4), duration=(1, 4), value=(1.0, 16.0))
    assert BirthParams.from_config({"kind": "toy"}, BOUNDS).generator == ToyParams(8, 1, 4)
    adversarial = BirthParams.from_config({"kind": "adversarial"}, BOUNDS).generator
    assert adversarial == AdversarialParams(concurrency=(3, 4), duration=(1, 2), value=(1.0, 16.0))
    blocking = BirthParams.from_config({"kind": "blocking"}, BOUNDS).generator
    assert blocking == BlockingParams(concurrency=(3, 4), high_value=16.0, low_duration=4, high_duration=4)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_generator_yields_a_checked_sequence_within_the_bounds(kind, seed):
    seq = births({"kind": kind, "signal": "duration"}, seed)
    assert len(seq) > 0 and seq.signal == "duration" and seq.bounds == BOUNDS
    for j, job in enumerate(seq.jobs):
        check_sow(job, BOUNDS, f"job {j}")
        assert 1 <= job.concurrency <= BOUNDS.max_concurrency
        assert job.duration.max() <= BOUNDS.max_duration and job.values.max() <= BOUNDS.max_value
    assert all(a.birth <= b.birth for a, b in zip(seq.jobs, seq.jobs[1:]))


@pytest.mark.parametrize("kind", ["recurring", "adversarial", "blocking"])
def test_same_rng_same_sequence_other_seed_other_sequence(kind):
    a, b, c = births({"kind": kind}, 7), births({"kind": kind}, 7), births({"kind": kind}, 8)

    def key(seq):
        return [
            (s.birth, s.concurrency, s.values.tolist(), s.arrival.tolist(), s.duration.tolist(), s.probability.tolist())
            for s in seq.jobs
        ]

    assert key(a) == key(b) and key(a) != key(c)


# --- toy ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("x", [1, 2, 4])
def test_toy_probabilities_values_and_expected_value(x):
    seq = births({"kind": "toy", "X": x, "jobs": 3, "spacing": 5})
    assert [s.birth for s in seq.jobs] == [0, 5, 10]
    for s in seq.jobs:
        k = s.arrival - s.birth
        assert k.tolist() == list(range(x + 1)) and s.duration.tolist() == [1] * (x + 1) and s.concurrency == 1
        assert s.probability.tolist() == [2.0 ** (i - x) for i in range(x)] + [2.0**-x]
        assert s.values[1 : x + 2].tolist() == [2.0 ** (x - i) for i in range(x + 1)]
        assert s.values[0] == 2.0**x and not s.values[x + 2 :].any()
        on_arrival = float(s.probability @ s.value(s.arrival + 1))  # start at a, finish at a + 1
        assert on_arrival == pytest.approx(x + 2.0**-x)  # X terms of 1, plus 2^-X * 1
        for block in range(1, x + 1):  # rounds b..b+block-1 reserved at birth
            reserved = k < block
            assert float(s.probability[reserved] @ s.value(s.arrival + 1)[reserved]) == pytest.approx(block)


def test_toy_needs_room_in_the_bounds():
    with pytest.raises(
        ValueError,
        match=r"^births\.X = 4 needs bounds\.horizon >= X \+ 2 = 6 and bounds\.max_value "
        r">= 2\^X = 16, got 5 and 16$",
    ):
        BirthParams.from_config({"kind": "toy"}, Bounds(4, 4, 5, 16.0))
    with pytest.raises(ValueError, match=r"^births\.X = 5 needs .* got 16 and 16$"):
        BirthParams.from_config({"kind": "toy", "X": 5}, BOUNDS)
    with pytest.raises(ValueError, match=r"^births\.X must be a positive integer, got 0$"):
        BirthParams.from_config({"kind": "toy", "X": 0}, BOUNDS)


def test_toy_draws_nothing():
    rng = np.random.default_rng(3)
    draw_births(BirthParams.from_config({"kind": "toy"}, BOUNDS), BOUNDS, rng)
    assert rng.random() == np.random.default_rng(3).random()


# --- recurring ---------------------------------------------------------------------------------


def recurring(seed=0, **config):
    base = {
        "pipelines": 1,
        "period": [10, 10],
        "duration": [2, 2],
        "lead": 4,
        "arrival_jitter": 2,
        "duration_jitter": 1,
        "rounds": 60,
    }
    return births({**base, **config}, seed)


def test_binomial_offsets():
    offsets, weights = binomial_offsets(2)
    assert offsets.tolist() == [-2, -1, 0, 1, 2] and weights.tolist() == [1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16]
    assert binomial_offsets(0)[1].tolist() == [1.0]
    offsets, weights = binomial_offsets(600)  # no overflow; the far tails underflow and are left out
    assert 0 < offsets.size < 1201 and weights.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_recurring_instances_are_a_period_apart_and_jitter_as_configured(seed):
    seq = recurring(seed)
    unclipped = [s for s in seq.jobs if s.birth > 0]
    assert len(unclipped) >= 4 and np.all(np.diff([s.birth for s in unclipped]) == 10)
    assert max(s.birth for s in seq.jobs) < 60
    for s in unclipped:
        nominal = s.birth + 4
        arrivals, a_inverse = np.unique(s.arrival, return_inverse=True)
        assert arrivals.tolist() == list(range(nominal - 2, nominal + 3))
        assert np.bincount(a_inverse, weights=s.probability).tolist() == [1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16]
        durations, d_inverse = np.unique(s.duration, return_inverse=True)
        assert durations.tolist() == [1, 2, 3]
        assert np.bincount(d_inverse, weights=s.probability).tolist() == [0.25, 0.5, 0.25]
        assert s.arrival.size == 15  # the full product, nothing merged


def test_recurring_clips_arrivals_at_birth_and_durations_at_d_max():
    seq = recurring(0, lead=1, arrival_jitter=3, duration=[4, 4], duration_jitter=2)
    for s in seq.jobs:
        assert s.arrival.min() >= s.birth and s.duration.max() == 4 and s.duration.min() == 2
        assert s.probability.sum() == pytest.approx(1.0, abs=1e-12)
    second = seq.jobs[1]  # born at nominal - 1 > 0: arrivals nominal-3..nominal-1 are clipped to the birth
    arrivals, inverse = np.unique(second.arrival, return_inverse=True)
    assert arrivals.tolist() == list(range(second.birth, second.birth + 5))
    assert np.bincount(inverse, weights=second.probability).tolist() == [22 / 64, 20 / 64, 15 / 64, 6 / 64, 1 / 64]


def test_recurring_deadline_shape():
    seq = recurring(1, shape_mix=1.0, deadline=[3, 3], value=[5, 5])
    for s in seq.jobs:
        nominal = s.arrival.max() - 2
        last = nominal - s.birth + 2 + 3  # nominal arrival + nominal duration + slack, as k = f - birth
        expected = [5.0 if k <= last else 0.0 for k in range(BOUNDS.horizon)] + [0.0]
        assert s.values.tolist() == expected


def test_recurring_decaying_shape_halves_every_half_life():
    seq = recurring(1, shape_mix=0.0, value=[16, 16], half_life=2, arrival_jitter=0, duration_jitter=0)
    s = seq.jobs[-1]
    first = int((s.arrival + s.duration).min()) - s.birth
    assert first == 4 + 2
    v = s.values
    assert v[: first + 1].tolist() == [16.0] * (first + 1)
    assert v[first + 2] == 8.0 and v[first + 4] == 4.0 and v[first + 8] == 1.0
    assert v[first + 1] == math.floor(16 * 2**-0.5 * 1000) / 1000
    assert v[first + 9] == 0.0 and v[-1] == 0.0


def test_recurring_pipelines_follow_the_documented_draw_order():
    seq = births({"pipelines": 3, "rounds": 200}, seed=5)
    rng = np.random.default_rng(5)
    period = rng.integers(8, 25, 3)
    phase = rng.integers(0, period)
    concurrency = rng.integers(1, 5, 3)
    rng.integers(1, 5, 3), rng.random(3)  # nominal durations, shapes
    peak = np.floor(rng.uniform(1, 16, 3) * 1000) / 1000
    expected = sorted(
        (max(0, int(phase[k] + n * period[k] - 4)), int(concurrency[k]), float(peak[k]))
        for k in range(3)
        for n in range(30)
        if phase[k] + n * period[k] - 4 < 200
    )
    assert sorted((s.birth, s.concurrency, float(s.values.max())) for s in seq.jobs) == expected


# --- adversarial -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"overload": 3, "nodes_hint": 10},
        {"concurrency": [1, 4], "overload": 0.5},
        {"concurrency": [2, 2], "bursts": 2, "gap": 3},
    ],
)
def test_adversarial_bursts_saturate_the_hint(config):
    seq = births({"kind": "adversarial", **config}, seed=4)
    p = BirthParams.from_config({"kind": "adversarial", **config}, BOUNDS).generator
    target = p.overload * p.nodes_hint
    rounds = sorted({s.birth for s in seq.jobs})
    assert rounds == [i * p.gap for i in range(p.bursts)]
    for b in rounds:
        burst = [s for s in seq.jobs if s.birth == b]
        c = np.array([s.concurrency for s in burst])
        assert target <= c.sum() < target + p.concurrency[1]
        assert c.min() >= p.concurrency[0] and c.max() <= p.concurrency[1]
        peaks = [s.values[0] for s in burst]
        assert peaks == sorted(peaks) and peaks[0] == 1.0
        assert peaks[-1] == pytest.approx(16.0) or len(burst) == 1
        first = burst[0]
        for s in burst:
            assert (s.arrival - s.birth).tolist() == (first.arrival - first.birth).tolist()
            assert s.duration.tolist() == first.duration.tolist()
    seq.check(nodes=p.nodes_hint)


def test_adversarial_draw_order():
    seq = births({"kind": "adversarial", "bursts": 3}, seed=9)
    draws = np.random.default_rng(9).integers(3, 5, (3, math.ceil(32 / 3)))
    for i in range(3):
        c = [s.concurrency for s in seq.jobs if s.birth == 8 * i]
        assert c == draws[i, : len(c)].tolist() and sum(c[:-1]) < 32 <= sum(c)


def test_adversarial_window_and_value_function():
    s = births({"kind": "adversarial", "lead": 2, "window": 3, "duration": [1, 3], "slack": 1}).jobs[0]
    assert sorted(set((s.arrival - s.birth).tolist())) == [2, 3, 4] and sorted(set(s.duration.tolist())) == [1, 2, 3]
    assert s.probability.tolist() == [1 / 9] * 9
    assert s.values.tolist() == [1.0] * (4 + 3 + 1 + 1) + [0.0] * (17 - 9)


# --- blocking ----------------------------------------------------------------------------------


def test_blocking_tiny_config_by_hand():
    # nodes_hint 8, concurrency 4: a low wave (demand 1.0) is 8 / 4 = 2 jobs, a high wave (demand
    # 1.5) is 12 / 4 = 3 jobs. Wave i: low jobs born 10 i, arrive at 10 i + 1 (lead 1), run 4 rounds
    # (D_max), worth 1.5 for f - b <= 1 + 4 + 8 = 13; high jobs born 10 i + 1 (delay 1), arrive at
    # b + 1, b + 2 or b + 3 (jitter 2, 1/3 each), run 3 rounds, worth 12 for f - b <= 1 + 2 + 3 = 6.
    seq = births(
        {
            "kind": "blocking",
            "waves": 2,
            "gap": 10,
            "nodes_hint": 8,
            "concurrency": [4, 4],
            "low_demand": 1.0,
            "high_demand": 1.5,
            "low_value": 1.5,
            "high_value": 12,
            "high_duration": 3,
            "lead": 1,
            "delay": 1,
            "jitter": 2,
            "low_slack": 8,
        }
    )
    assert [s.birth for s in seq.jobs] == [0, 0, 1, 1, 1, 10, 10, 11, 11, 11]
    assert {s.concurrency for s in seq.jobs} == {4}
    for s in seq.jobs:
        if s.birth % 10 == 0:  # low
            assert (s.arrival - s.birth).tolist() == [1] and s.duration.tolist() == [4]
            assert s.probability.tolist() == [1.0]
            assert s.values.tolist() == [1.5] * 14 + [0.0] * 3
        else:  # high
            assert (s.arrival - s.birth).tolist() == [1, 2, 3] and s.duration.tolist() == [3, 3, 3]
            assert s.probability.tolist() == [1 / 3] * 3
            assert s.values.tolist() == [12.0] * 7 + [0.0] * 10
    seq.check(nodes=8)


@pytest.mark.parametrize(
    "config",
    [{}, {"low_demand": 2.0, "high_demand": 0.5, "nodes_hint": 10}, {"concurrency": [1, 4], "jitter": 0, "delay": 0}],
)
def test_blocking_waves_ask_for_their_demand(config):
    seq = births({"kind": "blocking", **config}, seed=5)
    p = BirthParams.from_config({"kind": "blocking", **config}, BOUNDS).generator
    for i in range(p.waves):
        for birth, demand, value in [
            (i * p.gap, p.low_demand, p.low_value),
            (i * p.gap + p.delay, p.high_demand, p.high_value),
        ]:
            wave = [s for s in seq.jobs if s.birth == birth and s.values[0] == value]
            c = np.array([s.concurrency for s in wave])
            target = demand * p.nodes_hint
            assert c[:-1].sum() < target <= c.sum() < target + p.concurrency[1]
            assert c.min() >= p.concurrency[0] and c.max() <= p.concurrency[1]
    assert len(seq) == sum(1 for s in seq.jobs if s.values[0] in (p.low_value, p.high_value))
    seq.check(nodes=p.nodes_hint)


def test_blocking_greedy_is_blocked_by_construction():
    # Defaults: the low jobs hold their nodes in rounds b + 1 .. b + 4; the high jobs' last start
    # with value is b + delay + lead + jitter = b + 4 (finish <= b + 1 + 1 + 2 + 4 = b + 8), so no
    # high job can wait for the low jobs to finish (delay + jitter = 3 < low_duration = 4).
    seq = births({"kind": "blocking", "waves": 1})
    low = [s for s in seq.jobs if s.birth == 0]
    high = [s for s in seq.jobs if s.birth == 1]
    hold = {int(s.arrival[0]) + k for s in low for k in range(int(s.duration[0]))}
    assert hold == {1, 2, 3, 4}
    for s in high:
        last_finish = s.birth + int(np.flatnonzero(s.values > 0)[-1])
        assert last_finish == 8 and {int(a) for a in s.arrival} == {2, 3, 4}
        assert {last_finish - int(d) for d in s.duration} == {4} and 4 in hold


def test_blocking_lists_jobs_by_birth_when_waves_interleave():
    # gap 1 < delay 2: wave 1's low jobs (born 1) come before wave 0's high jobs (born 2).
    seq = births({"kind": "blocking", "waves": 3, "gap": 1, "delay": 2, "nodes_hint": 4, "concurrency": [4, 4]})
    assert [(s.birth, s.values[0]) for s in seq.jobs] == [(0, 1.0), (1, 1.0), (2, 16.0), (2, 1.0), (3, 16.0), (4, 16.0)]


def test_blocking_draw_order():
    seq = births({"kind": "blocking", "waves": 3}, seed=9)
    rng = np.random.default_rng(9)
    low, high = rng.integers(3, 5, (3, math.ceil(16 / 3))), rng.integers(3, 5, (3, math.ceil(16 / 3)))
    for i in range(3):
        for birth, draws in [(12 * i, low), (12 * i + 1, high)]:
            c = [s.concurrency for s in seq.jobs if s.birth == birth]
            assert c == draws[i, : len(c)].tolist() and sum(c[:-1]) < 16 <= sum(c)


# --- trace -------------------------------------------------------------------------------------


def test_trace_kind_reads_the_file_and_checks_it_at_config(tmp_path):
    seq = births({"kind": "trace"})
    assert [s.birth for s in seq.jobs] == [0, 8, 16, 24, 32]
    bad = tmp_path / "bad.csv"
    text = EXAMPLE.read_text().splitlines()
    text[3] = text[3].replace(",2,0.25,", ",5,0.25,")  # duration 5 > D_max = 4 on job 0's row 3
    bad.write_text("\n".join(text) + "\n")
    with pytest.raises(TraceError, match=r"bad\.csv:2: duration 5 is outside \[1, D_max = 4\]"):
        BirthParams.from_config({"kind": "trace", "path": str(bad)}, BOUNDS)
    with pytest.raises(TraceError, match=r"nope\.csv: file not found"):
        BirthParams.from_config({"kind": "trace", "path": str(tmp_path / "nope.csv")}, BOUNDS)


# --- config errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config, message",
    [
        (
            {"kind": "poisson"},
            r"^births\.kind must be one of recurring, toy, adversarial, blocking, trace, (.*, )?prior(, .*)?, "
            r"got 'poisson'$",
        ),
        ({"signal": "arrival"}, r"^births\.signal must be one of none, duration, got 'arrival'$"),
        (
            {"periods": [8, 24]},
            r"^births: unknown key\(s\) 'periods' for kind 'recurring' \(known: kind, signal, rounds, ",
        ),
        (
            {"kind": "toy", "pipelines": 2},
            r"^births: unknown key\(s\) 'pipelines' for kind 'toy' \(known: kind, signal, jobs",
        ),
        ({"kind": "adversarial", "X": 2}, r"^births: unknown key\(s\) 'X' for kind 'adversarial'"),
        (
            {"kind": "trace", "rounds": 2},
            r"^births: unknown key\(s\) 'rounds' for kind 'trace' \(known: kind, signal, path\)$",
        ),
        ({"period": [0, 4]}, r"^births\.period must satisfy 1 <= low <= high, got \[0, 4\]$"),
        ({"period": [9, 8]}, r"^births\.period must satisfy 1 <= low <= high, got \[9, 8\]$"),
        ({"period": 8}, r"^births\.period must be a pair \[low, high\] of numbers, got 8$"),
        ({"rounds": 0}, r"^births\.rounds must be a positive integer, got 0$"),
        ({"pipelines": -1}, r"^births\.pipelines must be a positive integer, got -1$"),
        (
            {"concurrency": [1, 5]},
            r"^births\.concurrency must lie within \[1, 4\] \(bounds\.max_concurrency = 4\), "
            r"got \[1, 5\]$",
        ),
        (
            {"duration": [2, 6]},
            r"^births\.duration must lie within \[1, 4\] \(bounds\.max_duration = 4\), got \[2, 6\]$",
        ),
        ({"value": [1, 20]}, r"^births\.value must lie within \[1, 16\] \(bounds\.max_value = 16\), got \[1, 20\]$"),
        ({"value": [0.5, 4]}, r"^births\.value must satisfy 1 <= low <= high, got \[0\.5, 4\]$"),
        ({"lead": 14, "arrival_jitter": 2}, r"^births\.lead \+ births\.arrival_jitter must be < bounds\.horizon = 16"),
        ({"lead": -1}, r"^births\.lead must be an integer >= 0, got -1$"),
        ({"duration_jitter": 0.5}, r"^births\.duration_jitter must be an integer in \[0, 3\], got 0\.5$"),
        ({"duration_jitter": 4}, r"^births\.duration_jitter must be an integer in \[0, 3\], got 4$"),
        ({"deadline": [-1, 3]}, r"^births\.deadline must satisfy 0 <= low <= high"),
        ({"shape_mix": 1.5}, r"^births\.shape_mix must be in \[0, 1\], got 1\.5$"),
        ({"half_life": 0}, r"^births\.half_life must be a positive integer, got 0$"),
        ({"kind": "toy", "spacing": -1}, r"^births\.spacing must be an integer >= 0, got -1$"),
        ({"kind": "toy", "jobs": 0}, r"^births\.jobs must be a positive integer, got 0$"),
        ({"kind": "adversarial", "overload": 0}, r"^births\.overload must be a finite number > 0, got 0$"),
        ({"kind": "adversarial", "nodes_hint": 3}, r"^births\.nodes_hint must be >= the highest concurrency 4 "),
        ({"kind": "adversarial", "concurrency": [0, 4]}, r"^births\.concurrency must satisfy 1 <= low <= high"),
        ({"kind": "adversarial", "concurrency": [2, 8]}, r"^births\.concurrency must lie within \[1, 4\]"),
        ({"kind": "adversarial", "duration": [1, 5]}, r"^births\.duration must lie within \[1, 4\]"),
        ({"kind": "adversarial", "window": 0}, r"^births\.window must be a positive integer, got 0$"),
        (
            {"kind": "adversarial", "lead": 10, "window": 7},
            r"^births\.lead \+ births\.window must be <= bounds\.horizon",
        ),
        ({"kind": "adversarial", "bursts": 0}, r"^births\.bursts must be a positive integer, got 0$"),
        ({"kind": "trace", "path": ""}, r"^births\.path must be a non-empty string, got ''$"),
        (
            {"kind": "blocking", "overload": 2},
            r"^births: unknown key\(s\) 'overload' for kind 'blocking' \(known: kind, "
            r"signal, waves, gap, nodes_hint, low_demand, high_demand, concurrency, ",
        ),
        ({"kind": "blocking", "waves": 0}, r"^births\.waves must be a positive integer, got 0$"),
        ({"kind": "blocking", "gap": -1}, r"^births\.gap must be an integer >= 0, got -1$"),
        ({"kind": "blocking", "nodes_hint": 0}, r"^births\.nodes_hint must be a positive integer, got 0$"),
        (
            {"kind": "blocking", "nodes_hint": 3},
            r"^births\.nodes_hint must be >= the highest concurrency 4 "
            r"\(births\.concurrency\), got 3$",
        ),
        ({"kind": "blocking", "low_demand": 0}, r"^births\.low_demand must be a finite number > 0, got 0$"),
        ({"kind": "blocking", "high_demand": "x"}, r"^births\.high_demand must be a finite number > 0, got 'x'$"),
        (
            {"kind": "blocking", "concurrency": [1, 5]},
            r"^births\.concurrency must lie within \[1, 4\] "
            r"\(bounds\.max_concurrency = 4\), got \[1, 5\]$",
        ),
        (
            {"kind": "blocking", "concurrency": 4},
            r"^births\.concurrency must be a pair \[low, high\] of numbers, got 4$",
        ),
        ({"kind": "blocking", "low_value": 0.5}, r"^births\.low_value must be in \[1, 16\], got 0\.5$"),
        ({"kind": "blocking", "high_value": 17}, r"^births\.high_value must be in \[1, 16\], got 17$"),
        ({"kind": "blocking", "low_duration": 5}, r"^births\.low_duration must be an integer in \[1, 4\], got 5$"),
        ({"kind": "blocking", "high_duration": 0}, r"^births\.high_duration must be an integer in \[1, 4\], got 0$"),
        ({"kind": "blocking", "lead": -1}, r"^births\.lead must be an integer >= 0, got -1$"),
        ({"kind": "blocking", "delay": 1.5}, r"^births\.delay must be an integer >= 0, got 1\.5$"),
        ({"kind": "blocking", "jitter": -1}, r"^births\.jitter must be an integer >= 0, got -1$"),
        ({"kind": "blocking", "low_slack": -2}, r"^births\.low_slack must be an integer >= 0, got -2$"),
        (
            {"kind": "blocking", "low_slack": 11},
            r"^births\.lead \+ births\.low_duration \+ births\.low_slack must be < bounds\.horizon = 16 \(the job must be "
            r"able to finish with value before birth \+ S_max\), got 1 \+ 4 \+ 11$",
        ),
        (
            {"kind": "blocking", "jitter": 11, "low_slack": 0},
            r"^births\.lead \+ births\.jitter \+ births\.high_duration must be < bounds\.horizon = 16 .*got 1 \+ 11 \+ 4$",
        ),
    ],
)
def test_bad_config_names_the_key(config, message):
    with pytest.raises(ValueError, match=message):
        BirthParams.from_config(config, BOUNDS)


def test_section_must_be_a_mapping():
    with pytest.raises(ValueError, match="^births: must be a mapping, got list$"):
        BirthParams.from_config([1], BOUNDS)
