"""OptiLearning (algorithms/iaas/opti_learning.py, paper 003 Alg. 3) on the shared exponentiated
gradient: delayed feedback, the learning rate of line 9, costs inside their bound, convergence to
the best fixed policy, and Proposition 6."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.iaas.job_execution import ON_DEMAND_PRICE
from algorithms.iaas.opti_learning import (
    NORMALISATIONS,
    _opti_learning_self_owned,
    cost_bound,
    learning_rates,
    opti_learning,
    proposition6_bound,
)
from algorithms.iaas.policies import Policy, dynalloc_grid, stream_cost
from algorithms.iaas.self_owned import wanted_instances
from market.iaas.jobs import JobParams, JobStream, draw_jobs
from market.iaas.spot_prices import PriceParams, draw_prices


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(3)
    jobs = draw_jobs(JobParams.from_config({"slots": 3000, "slackness_max": 5}), rng)
    return jobs, draw_prices(PriceParams.from_config({}), jobs.horizon(), rng)


def test_no_policy_costs_more_than_the_bound(world):
    jobs, prices = world
    bound = cost_bound(jobs, 0.28)
    for policy in dynalloc_grid()[::9] + [Policy("theta", 0.28, theta=t) for t in (0.0, 0.5, 1.0)]:
        assert np.all(stream_cost(jobs, prices, policy).cost <= bound + 1e-12)


def test_learning_rate_of_line_9():
    # feedback of a job arriving at a_j comes at t = a_j + d: eta = sqrt(2 ln n / (d (t - d)))
    assert learning_rates(np.array([1, 4]), 10, 7).tolist() == pytest.approx(
        [math.sqrt(2 * math.log(7) / 10), math.sqrt(2 * math.log(7) / 40)]
    )


def test_weights_stay_uniform_until_the_first_feedback_and_then_favour_the_cheapest(world):
    jobs, prices = world
    # a clearly bad policy (all on-demand) beside two spot-heavy ones
    policies = [
        Policy("theta", 0.28, theta=0.0),
        Policy("dynalloc", 0.28, beta=0.9999),
        Policy("dynalloc", 0.10, beta=0.0),
    ]
    run = opti_learning(jobs, prices, policies, np.random.default_rng(0))
    first_release = int(np.searchsorted(jobs.arrival, jobs.arrival[0] + run.lag, side="right"))
    assert np.allclose(run.selection.weights[:first_release], 1 / 3)
    totals = run.costs.sum(axis=0)
    assert int(np.argmax(run.selection.final_weights)) == int(np.argmin(totals)) == 1
    assert run.selection.final_weights[0] < run.selection.weights[first_release + 1][0]


def test_regret_stays_inside_proposition6_and_the_weights_learn(world):
    jobs, prices = world
    run = opti_learning(jobs, prices, dynalloc_grid(), np.random.default_rng(1))
    z = run.costs / cost_bound(jobs, 0.28)[:, None]
    n = len(jobs)
    best = int(np.argmin(z.sum(axis=0)))
    regret = (z[np.arange(n), run.chosen].sum() - z[:, best].sum()) / n
    bound = proposition6_bound(len(run.policies), run.lag, n)
    assert regret <= bound
    # with d in the hundreds of slots the bound exceeds 1 (vacuous on costs in [0, 1]) for
    # this world as for the paper's 30,000 jobs (d near 580): the learning shows elsewhere:
    assert bound > 1
    # the expected normalised cost above the best fixed policy falls from the first tenth of
    # the jobs to the last (0.041 -> 0.029 on this world)
    excess = (run.selection.weights[:-1] * z).sum(axis=1) - z[:, best]
    assert excess[-n // 10 :].mean() < 0.8 * excess[: n // 10].mean()
    assert run.realised_cost.sum() < run.costs.mean(axis=1).sum()


def test_an_unknown_normalisation_is_rejected(world):
    jobs, prices = world
    with pytest.raises(ValueError, match="normalisation must be one of bound, job_minmax, none"):
        opti_learning(jobs, prices, dynalloc_grid()[:2], np.random.default_rng(0), "minmax")


def test_job_by_job_play_without_self_owned_instances_is_the_batch_run(world):
    # the path that self-owned instances need (weights learnt job by job, one draw per job)
    # gives the same weights, draws and costs as one exponentiated_gradient call when r_j = 0
    jobs, prices = world
    policies = dynalloc_grid(betas=(0.5, 0.9999), bids=(0.13, 0.22, 0.28))
    for normalisation in NORMALISATIONS:
        batch = opti_learning(jobs, prices, policies, np.random.default_rng(4), normalisation)
        played = _opti_learning_self_owned(
            jobs, prices, tuple(policies), np.random.default_rng(4), normalisation, ON_DEMAND_PRICE, 0
        )
        assert np.array_equal(played.costs, batch.costs)
        assert np.array_equal(played.selection.weights, batch.selection.weights)
        assert np.array_equal(played.chosen, batch.chosen)


def test_with_one_policy_and_self_owned_instances_the_learner_is_that_policy(world):
    jobs, prices = world
    policy = Policy("dynalloc", 0.19, beta=0.9999, beta0=3 / 12)
    run = opti_learning(jobs, prices, [policy], np.random.default_rng(0), instances=300)
    alone = stream_cost(jobs, prices, policy, 300)
    assert np.array_equal(run.self_owned, alone.self_owned)
    assert np.allclose(run.realised_cost, alone.cost, rtol=0, atol=1e-12)
    assert run.utilisation == pytest.approx(alone.utilisation)
    assert run.self_owned.sum() > 0 and run.missed == 0


def test_counterfactuals_take_the_idle_instances_the_drawn_policies_left(world):
    # two policies that want every self-owned instance (eq. 2) or none (beta0 = 0.9999 asks
    # for at most what the deadline forces): a job's counterfactual under eq. (2) sees the
    # instances that the jobs before it really took, not those eq. (2) alone would have left
    jobs, prices = world
    greedy, shy = Policy("dynalloc", 0.19, beta=0.9999), Policy("dynalloc", 0.19, beta=0.9999, beta0=0.9999)
    run = opti_learning(jobs, prices, [greedy, shy], np.random.default_rng(0), instances=300)
    idle = np.full(jobs.horizon(), 300)
    want = wanted_instances(jobs.size, jobs.deadline, jobs.parallelism, None)
    for j in range(len(jobs)):
        a, d = jobs.arrival[j], jobs.deadline[j]
        r_greedy = min(want[j], idle[a - 1 : a + d - 1].min())
        if run.chosen[j] == 0:
            assert run.self_owned[j] == r_greedy
        idle[a - 1 : a + d - 1] -= run.self_owned[j]
    assert 0 < np.count_nonzero(run.chosen == 0) < len(jobs)


def test_alg3_as_printed_is_bound_with_eta_times_the_common_bound(world):
    # `none` weighs the raw dollar costs, w <- w exp(-eta c_j) (Alg. 3 lines 11-12); `bound`
    # weighs c_j / B_j. When every job has the same B, the log-weight gaps of `none` are B
    # times those of `bound`, row by row, under the same eta schedule and delays
    jobs, prices = world
    n = 400
    same = JobStream(
        jobs.arrival[:n],
        jobs.size[:n],
        np.full(n, int(jobs.deadline[:n].max())),
        np.full(n, int(jobs.parallelism[:n].max())),
    )
    policies = dynalloc_grid(betas=(0.5, 0.9999), bids=(0.13, 0.28))
    bound = float(cost_bound(same, 0.28)[0])
    assert np.all(cost_bound(same, 0.28) == bound)
    raw = opti_learning(same, prices, policies, np.random.default_rng(5), "none").selection.weights
    scaled = opti_learning(same, prices, policies, np.random.default_rng(5), "bound").selection.weights
    finite = np.all(raw > 1e-250, axis=1) & np.all(scaled > 1e-250, axis=1)
    assert finite.sum() > n // 2
    gaps_raw = np.log(raw[finite]) - np.log(raw[finite][:, :1])
    gaps_scaled = np.log(scaled[finite]) - np.log(scaled[finite][:, :1])
    assert np.abs(gaps_raw).max() > 1e-3  # the weights did learn
    assert np.allclose(gaps_raw, bound * gaps_scaled, rtol=1e-9, atol=1e-9)


def test_alg3_as_printed_learns_faster_on_dollar_costs(world):
    # the raw update moves the weights by eta c_j, and c_j runs to dollars: its final weight on
    # the best fixed policy is at least the normalised update's
    jobs, prices = world
    policies = dynalloc_grid(betas=(0.5, 0.9999), bids=(0.13, 0.22, 0.28))
    runs = {norm: opti_learning(jobs, prices, policies, np.random.default_rng(6), norm) for norm in ("none", "bound")}
    best = int(np.argmin(runs["bound"].costs.sum(axis=0)))
    assert runs["none"].selection.final_weights[best] >= runs["bound"].selection.final_weights[best]
