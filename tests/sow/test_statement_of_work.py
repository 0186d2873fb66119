"""Statements of work, birth sequences and their checks (paper 004, Sec. 2)."""

import pickle

import numpy as np
import pytest
from scipy import stats

from market.sow.statement_of_work import BirthSequence, Bounds, StatementOfWork, check_sow, realise, sow_from_lists
from tests.sow.worlds import random_sequence

BOUNDS = Bounds(max_concurrency=3, max_duration=3, horizon=6, max_value=10.0)
VALUES = [10, 10, 6, 2, 1, 0, 0]  # V(b + 0..6), S_max = 6
POINTS = [(5, 1, 0.25), (5, 2, 0.25), (7, 3, 0.5)]


def sow(birth=4, concurrency=2, values=VALUES, points=POINTS):
    return sow_from_lists(birth, concurrency, values, points)


def test_a_valid_sow_passes_and_reads_its_values():
    s = sow()
    check_sow(s, BOUNDS, "here")
    check_sow(s, BOUNDS, "here", nodes=2)
    assert s.value([3, 4, 5, 6, 10, 11]).tolist() == [0, 10, 10, 6, 0, 0]
    assert s.expected_duration() == pytest.approx(0.25 + 0.5 + 1.5)
    assert s.replace(concurrency=1).concurrency == 1 and s.concurrency == 2
    assert pickle.loads(pickle.dumps(s)).values.tolist() == VALUES


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"values": [10, 10, 6, 7, 1, 0, 0]}, r"increases from 6 at birth\+2 to 7 at birth\+3"),
        ({"values": [10, 10, 6, 0.5, 0, 0, 0]}, r"value at finish birth\+3 is 0\.5, outside \{0\} U \[1, V_bar = 10\]"),
        ({"values": [-1, 0, 0, 0, 0, 0, 0]}, r"value at finish birth\+0 is -1, outside"),
        ({"values": [12, 10, 6, 2, 1, 0, 0]}, r"value at finish birth\+0 is 12, outside \{0\} U \[1, V_bar = 10\]"),
        ({"values": [10, 10, 6, 2, 1, 1, 1]}, r"V\(birth \+ S_max\) must be 0, got 1"),
        ({"values": [10, 10, 6, 2, 1, 0]}, r"must have S_max \+ 1 = 7 values .*got 6"),
        ({"values": [10, np.nan, 6, 2, 1, 0, 0]}, r"not finite"),
        ({"points": [(5, 1, 0.25), (5, 2, 0.25), (7, 3, 0.4)]}, r"probabilities sum to 0\.9, not 1"),
        ({"points": [(5, 1, 0.5), (5, 2, 0.5), (7, 3, 0.0)]}, r"probabilities must be positive"),
        ({"points": [(5, 1, 0.5), (5, 2, 0.75), (7, 3, -0.25)]}, r"probabilities must be positive"),
        ({"points": []}, r"equal, non-empty lists"),
        ({"points": [(5, 1, 0.5), (5, 4, 0.5)]}, r"duration 4 is outside \[1, D_max = 3\]"),
        ({"points": [(5, 1, 0.5), (5, 0, 0.5)]}, r"duration 0 is outside \[1, D_max = 3\]"),
        ({"points": [(3, 1, 0.5), (5, 1, 0.5)]}, r"arrival 3 is outside \[birth, birth \+ S_max\) = \[4, 10\)"),
        ({"points": [(10, 1, 0.5), (5, 1, 0.5)]}, r"arrival 10 is outside \[birth, birth \+ S_max\) = \[4, 10\)"),
        ({"points": [(5, 1, 0.5), (5, 1, 0.5)]}, r"lists an \(arrival, duration\) pair twice"),
        ({"concurrency": 4}, r"concurrency 4 is above C_max = 3"),
        ({"concurrency": 0}, r"concurrency must be a positive integer, got 0"),
        ({"birth": -1, "points": [(0, 1, 1.0)]}, r"birth must be a non-negative integer, got -1"),
    ],
)
def test_check_sow_rejects_and_names_the_place(changes, message):
    with pytest.raises(ValueError, match=r"^data/x\.csv:12: .*" + message):
        check_sow(sow(**changes), BOUNDS, "data/x.csv:12")


def test_concurrency_above_the_nodes():
    with pytest.raises(ValueError, match=r"^jobs\[0\]: concurrency 3 is above the 2 nodes$"):
        check_sow(sow(concurrency=3), BOUNDS, "jobs[0]", nodes=2)


def test_probabilities_within_tolerance_pass():
    check_sow(sow(points=[(5, 1, 1 / 3), (5, 2, 1 / 3), (7, 3, 1 / 3)]), BOUNDS, "x")


def test_sequence_names_the_job_and_rejects_births_out_of_order():
    good = BirthSequence((sow(birth=0, points=[(0, 1, 1.0)]), sow(birth=4)), BOUNDS).check()
    assert len(good) == 2 and good.rounds() == 4 + 6 + 3
    with pytest.raises(
        ValueError,
        match=r"^births\[1\]: born at 0, before job 0 \(4\): jobs must be listed in "
        r"submission order$",
    ):
        BirthSequence((sow(birth=4), sow(birth=0, points=[(0, 1, 1.0)])), BOUNDS).check(where="births")
    with pytest.raises(ValueError, match=r"^jobs\[1\]: concurrency 3 is above the 2 nodes$"):
        BirthSequence((sow(concurrency=1), sow(concurrency=3)), BOUNDS).check(nodes=2)
    with pytest.raises(ValueError, match=r"^signal must be one of none, duration, got 'arrival'$"):
        BirthSequence((), BOUNDS, "arrival")


@pytest.mark.parametrize(
    "config, message",
    [
        ({"max_concurrency": 0}, r"^bounds\.max_concurrency must be a positive integer, got 0$"),
        ({"max_duration": 1.5}, r"^bounds\.max_duration must be a positive integer, got 1\.5$"),
        ({"horizon": True}, r"^bounds\.horizon must be a positive integer, got True$"),
        ({"max_value": 0.5}, r"^bounds\.max_value must be a finite number >= 1, got 0\.5$"),
    ],
)
def test_bounds_reject_bad_values(config, message):
    fields = {"max_concurrency": 3, "max_duration": 3, "horizon": 6, "max_value": 10.0, **config}
    with pytest.raises(ValueError, match=message):
        Bounds(**fields)


def test_realise_draws_each_point_with_its_probability():
    """A chi-square test over 20,000 draws of one SoW (seeded, so deterministic)."""
    p = [0.1, 0.2, 0.3, 0.4]
    one = sow(points=[(4, 1, p[0]), (5, 1, p[1]), (5, 3, p[2]), (9, 2, p[3])])
    n = 20_000
    r = realise(BirthSequence((one,) * n, BOUNDS), np.random.default_rng(11))
    counts = np.bincount(r.point, minlength=4)
    assert stats.chisquare(counts, np.asarray(p) * n).pvalue > 0.01
    assert np.array_equal(r.arrival, one.arrival[r.point]) and np.array_equal(r.duration, one.duration[r.point])


def test_realise_is_one_uniform_per_job_in_order():
    seq = random_sequence(np.random.default_rng(2), 30, BOUNDS)
    r = realise(seq, np.random.default_rng(5))
    u = np.random.default_rng(5).random(30)
    for j, job in enumerate(seq.jobs):
        cdf = np.cumsum(job.probability)
        assert cdf[r.point[j] - 1] <= u[j] < cdf[r.point[j]] + 1e-12 if r.point[j] else u[j] < cdf[0]
    assert np.array_equal(r.point, realise(seq, np.random.default_rng(5)).point)


def test_sow_arrays_have_the_documented_types():
    s = StatementOfWork(0, 1, [1, 0], [0], [1], [1])
    assert (s.values.dtype, s.arrival.dtype, s.duration.dtype, s.probability.dtype) == (
        np.float64,
        np.int64,
        np.int64,
        np.float64,
    )
