"""The job stream of the iaas family (paper 003, Sec. III-B and V-A)."""

import math

import numpy as np
import pytest
from scipy import stats

from market.iaas.jobs import LEN, SLOT_MINUTES, JobParams, JobStream, draw_jobs


def jobs(seed=0, **config):
    return draw_jobs(JobParams.from_config(config), np.random.default_rng(seed))


def test_defaults_are_the_papers_setup():
    p = JobParams.from_config(None)
    assert (SLOT_MINUTES, LEN) == (5, 12)
    assert p == JobParams(1.0, 20, 1.01, 1 / 6, (0.5, 10.0), 3.0, 2000)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"arrival_rate": 0}, r"^jobs\.arrival_rate must be a finite number > 0, got 0$"),
        ({"arrival_rate": -1}, r"^jobs\.arrival_rate must be a finite number > 0, got -1$"),
        ({"parallelism": 0}, r"^jobs\.parallelism must be a positive integer, got 0$"),
        ({"parallelism": 2.5}, r"^jobs\.parallelism must be a positive integer, got 2\.5$"),
        ({"pareto_shape": 0}, r"^jobs\.pareto_shape must be a finite number > 0"),
        ({"pareto_scale": -1}, r"^jobs\.pareto_scale must be a finite number > 0"),
        ({"size_hours": [2, 1]}, r"^jobs\.size_hours must satisfy 0 < low <= high, got \[2, 1\]$"),
        ({"size_hours": [0.1, 10]}, r"^jobs\.size_hours must have low >= jobs\.pareto_scale \(0\.166667\)"),
        ({"size_hours": [1, math.inf]}, r"^jobs\.size_hours must have a finite high"),
        ({"size_hours": 3}, r"^jobs\.size_hours must be a pair \[low, high\]"),
        ({"slackness_max": 0.5}, r"^jobs\.slackness_max must be a finite number >= 1, got 0\.5$"),
        ({"slots": 0}, r"^jobs\.slots must be a positive integer, got 0$"),
        ({"arrival": 1}, r"^jobs: unknown key\(s\) 'arrival' \(known: arrival_rate, "),
    ],
)
def test_bad_config_names_the_key(config, message):
    with pytest.raises(ValueError, match=message):
        JobParams.from_config(config)


def test_section_must_be_a_mapping():
    with pytest.raises(ValueError, match="^jobs: must be a mapping, got list$"):
        JobParams.from_config([1])


def test_same_seed_same_stream_other_seed_other_stream():
    a, b, c = jobs(7), jobs(7), jobs(8)
    for name in ("arrival", "size", "deadline", "parallelism"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert len(a) != len(c) or not np.array_equal(a.size, c.size)


def test_documented_draw_order():
    """Counts, then one uniform per job (size), then one U[1, x0] per job (slackness)."""
    p = JobParams.from_config({"slots": 300, "slackness_max": 5, "parallelism": 4})
    s = draw_jobs(p, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    counts = rng.poisson(1.0, 300)
    u = rng.random(counts.sum())
    x_prime = rng.uniform(1, 5, counts.sum())
    a = 1.01
    x = (0.5**-a - u * (0.5**-a - 10**-a)) ** (-1 / a)
    assert s.arrival.tolist() == [t + 1 for t, c in enumerate(counts) for _ in range(c)]
    np.testing.assert_allclose(s.size, 12 * 4 * x, rtol=1e-12)
    assert s.deadline.tolist() == [math.ceil(xp * z / 4) for xp, z in zip(x_prime, s.size)]
    assert s.parallelism.tolist() == [4] * len(s)


def test_stream_shape_and_types():
    s = jobs(1, slots=500)
    assert s.arrival.dtype == np.int64 and s.deadline.dtype == np.int64
    assert s.parallelism.dtype == np.int64 and s.size.dtype == np.float64
    assert len(s) == len(s.size) == len(s.deadline) > 0
    assert np.all(np.diff(s.arrival) >= 0) and s.arrival.min() >= 1 and s.arrival.max() <= 500
    assert np.all(s.parallelism == 20)
    assert s.horizon() == int((s.arrival + s.deadline - 1).max())
    with pytest.raises(ValueError):
        s.size[0] = 1.0  # read-only


def test_empty_stream():
    s = jobs(0, arrival_rate=1e-9, slots=3)
    assert len(s) == 0 and s.horizon() == 0 and s.slackness().shape == (0,)


def test_wrong_lengths_rejected():
    with pytest.raises(ValueError, match=r"JobStream\.size must have shape \(2,\)"):
        JobStream(arrival=[1, 2], size=[1.0], deadline=[1, 1], parallelism=[1, 1])


@pytest.mark.parametrize("rate", [1.0, 2.5])
def test_mean_arrivals_per_slot(rate):
    slots = 20000
    s = jobs(11, arrival_rate=rate, slots=slots)
    se = math.sqrt(rate / slots)  # Poisson: variance = mean
    assert abs(len(s) / slots - rate) < 4 * se
    per_slot = np.bincount(s.arrival, minlength=slots + 1)[1:]
    assert abs(per_slot.var() - rate) < 0.05 * rate  # dispersion of a Poisson


def test_sizes_inside_bounds():
    s = jobs(2, slots=20000)
    assert s.size.min() >= LEN * 20 * 0.5 and s.size.max() <= LEN * 20 * 10
    assert s.size.min() < LEN * 20 * 0.51 and s.size.max() > LEN * 20 * 5  # the range is used


def test_size_law_is_the_papers_bounded_generalized_pareto():
    """x = z / (Len delta) follows the paper's literal law: a generalized Pareto (shape k = 1/1.01,
    scale sigma = 1/6.06, location mu = 1/6) truncated to [0.5, 10]."""
    s = jobs(4, slots=20000)
    x = s.size / (LEN * 20)
    g = stats.genpareto(c=1 / 1.01, loc=1 / 6, scale=1 / 6.06)
    lo, hi = g.cdf(0.5), g.cdf(10)
    ks = stats.kstest(x, lambda v: (g.cdf(v) - lo) / (hi - lo)).statistic
    assert ks < 1.95 / math.sqrt(len(x))  # the 0.1% critical value
    # and not the untruncated Pareto's law
    assert stats.kstest(x, g.cdf).statistic > 0.3


def test_size_law_quantiles_by_hand():
    """Truncated Pareto CDF (0.5^-a - v^-a) / (0.5^-a - 10^-a), a = 1.01: 2^1.01 = 2.01391,
    10^-1.01 = 0.09772, 3^-1.01 = 0.32969, so F(1) = 0.5291 and F(3) = 0.8789."""
    x = jobs(5, slots=20000).size / (LEN * 20)
    for v, expected in ((1.0, 0.5291), (3.0, 0.8789)):
        se = math.sqrt(expected * (1 - expected) / len(x))
        assert abs(np.mean(x <= v) - expected) < 4 * se + 1e-4


def test_pareto_scale_below_low_does_not_change_the_law():
    a = jobs(6, pareto_scale=1 / 6, slots=200)
    b = jobs(6, pareto_scale=0.4, slots=200)
    np.testing.assert_allclose(a.size, b.size, rtol=1e-12)


@pytest.mark.parametrize("x0", [1.0, 3.0, 5.0, 13.0])
def test_deadlines_feasible_and_slackness_bounded(x0):
    s = jobs(8, slackness_max=x0, slots=5000)
    assert np.all(s.deadline >= np.ceil(s.size / s.parallelism))
    slack = s.slackness()
    assert slack.min() >= 1.0
    assert np.all(slack < x0 + s.parallelism / s.size + 1e-12)  # ceil adds less than one slot
    assert slack.max() <= x0 + 1 / 6 + 1e-12  # z / delta = 12 x >= 6 slots


@pytest.mark.parametrize("x0, expected", [(3.0, 2.0), (13.0, 7.0)])
def test_mean_slackness_matches_the_paper(x0, expected):
    """Sec. V-A: "an expected slackness of 2 and 7"; the ceiling adds a little (< 1/6)."""
    slack = jobs(9, slackness_max=x0, slots=20000).slackness()
    se = slack.std() / math.sqrt(len(slack))
    assert expected - 4 * se < slack.mean() < expected + 0.1
