"""The compiled AHANP pool (algorithms/spot/ahanp_batch.py), the fast path of
`family.simulate_replicate`, against the reference: `simulate` with `AHANP` (paper 000,
Appendix A-A, Alg. 3) one threshold at a time, for every reading of the start (literal,
fresh, cold; mixed in one pool); outcomes equal bit for bit on edge cases (deadlines 1-2,
N_min > 1, mu1 != mu2 < 1, beta != 0, availability dropping to 0, outages, spot dearer than
on-demand) and random worlds."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot.ahanp import AHANP
from algorithms.spot.ahanp_batch import AHANPPool
from algorithms.spot.registry import AHANP_STARTS, ahanp_name
from algorithms.spot.simulation import simulate
from market.spot.finetune_job import FineTuneJob
from market.spot.spot_market import SpotMarket, SyntheticMarketParams
from tests.spot.test_spot_ahap_batch import fields

PROPS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIGMAS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.5]


# every sigma under every start, in one pool (literal first, as pool.ahanp_start expands)
MIXED = [(s, start) for start in AHANP_STARTS for s in SIGMAS]


def assert_same_as_reference(job, market, sigmas, starts=None):
    starts = ["literal"] * len(sigmas) if starts is None else starts
    want = [simulate(job, market, AHANP(s, start)) for s, start in zip(sigmas, starts)]
    pool = AHANPPool(sigmas) if set(starts) == {"literal"} else AHANPPool(sigmas, starts)
    result = pool.run(job, market)
    assert [fields(o) for o in result.outcomes()] == [fields(o) for o in want]
    for q, (o, s, start) in enumerate(zip(want, sigmas, starts)):
        name = ahanp_name(s, start)
        assert pool.names[q] == name
        assert repr(result.record(q, name)) == repr(o.record(name))


def assert_mixed_same_as_reference(job, market):
    assert_same_as_reference(job, market, [s for s, _ in MIXED], [start for _, start in MIXED])


@pytest.mark.parametrize(
    "job",
    [
        FineTuneJob(workload=4.0, deadline=1, n_max=4),
        FineTuneJob(workload=9.0, deadline=2, n_min=2, n_max=6, mu1=0.6, mu2=0.8),
        FineTuneJob(workload=80.0, deadline=10, n_min=4, n_max=12, mu1=0.7, mu2=0.9),
        FineTuneJob(workload=95.0, deadline=10, n_min=1, n_max=16, beta=0.5, mu1=0.9, mu2=0.6),
        FineTuneJob(workload=200.0, deadline=8, n_min=2, n_max=12, gamma=1.5),
    ],
)
def test_edge_case_jobs(job):
    for seed in range(5):
        market = SyntheticMarketParams().sample(np.random.default_rng(seed), job.deadline + 5)
        assert_same_as_reference(job, market, SIGMAS)
        assert_mixed_same_as_reference(job, market)
        # paper_like-style spells of zero availability and spot around on-demand
        outages = SyntheticMarketParams(mean_price=1.0, outage_fraction=0.3, outage_slots=2.0)
        assert_mixed_same_as_reference(job, outages.sample(np.random.default_rng(seed), job.deadline + 5))


@pytest.mark.parametrize("start", AHANP_STARTS)
def test_one_start_per_pool(start):
    job = FineTuneJob()
    for seed in range(5):
        market = SyntheticMarketParams(mean_price=1.0, outage_fraction=0.2).sample(np.random.default_rng(seed), 15)
        assert_same_as_reference(job, market, SIGMAS, [start] * len(SIGMAS))


@PROPS
@given(st.integers(1, 10), st.integers(1, 4), st.data())
def test_random_worlds(deadline, n_min, data):
    n_max = n_min + data.draw(st.integers(0, 10))
    job = FineTuneJob(
        workload=data.draw(st.floats(1.0, 14.0 * deadline)),
        deadline=deadline,
        n_min=n_min,
        n_max=n_max,
        mu1=data.draw(st.sampled_from([1.0, 0.9, 0.6])),
        mu2=data.draw(st.sampled_from([1.0, 0.8])),
        beta=data.draw(st.sampled_from([0.0, 0.25])),
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    price = rng.uniform(0.1, 1.5, deadline)
    avail = rng.integers(0, n_max + 3, deadline) * rng.integers(0, 2, deadline)  # zeros often
    p_o = data.draw(st.sampled_from([1.0, 0.6]))
    market = SpotMarket(price, avail, on_demand_price=p_o, capacity=int(avail.max()))
    assert_same_as_reference(job, market, SIGMAS)
    assert_mixed_same_as_reference(job, market)


def test_checks():
    job = FineTuneJob()
    market = SpotMarket(np.full(9, 0.5), np.full(9, 8))
    with pytest.raises(ValueError, match="the job's deadline needs 10"):
        AHANPPool([0.5]).run(job, market)
    with pytest.raises(ValueError, match="threshold"):
        AHANPPool([0.0])
    with pytest.raises(ValueError, match="start must be one of literal, fresh, cold"):
        AHANPPool([0.5], ["warm"])
    with pytest.raises(ValueError, match="2 thresholds but 1 starts"):
        AHANPPool([0.5, 0.6], ["cold"])
    assert AHANPPool([0.5, 0.5], ["literal", "fresh"]).names == ["AHANP(sigma=0.5)", "AHANP(sigma=0.5,start=fresh)"]
    assert AHANPPool([]).run(job, SpotMarket(np.full(10, 0.5), np.full(10, 8))).outcomes() == []
