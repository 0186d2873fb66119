"""The audit mechanisms of the sow family: Lemma 3.1 run by run (prefix_invariance.py), Theorem
3.2 over a whole run (truthfulness.audit_run), and how the family reports them."""

import numpy as np
import pytest

from algorithms.sow.family import _node_rounds, prepare, simulate_replicate
from algorithms.sow.prefix_invariance import cut_points, prefix_changes
from algorithms.sow.reserve_worst_case import reserve_worst_case
from algorithms.sow.scheduler_framework import FrameworkSettings, run_framework
from algorithms.sow.truthfulness import audit_run
from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, StatementOfWork, realise

from .worlds import random_sequence

HAND = Bounds(max_concurrency=1, max_duration=2, horizon=6, max_value=16.0)


def _collision() -> tuple[BirthSequence, Realisation]:
    """Job 0 (born 0) arrives at 1 or 3 (1/2 each) and runs 2 rounds; it draws arrival 1, so it runs
    rounds 1-2. Job 1 (born 1) arrives at 2 for 1 round and is worth 16 only if done by round 3.
    On N = 1 with no oracle (q = 0) job 1 must start on arrival: the price of round 2 after job
    0's expected allocation 1/2 is p(1/2) = 1/4 * 128^(0.5/0.99) ~ 2.9 < 16. Round 2 then
    carries load 2 > 1."""
    job0 = StatementOfWork(0, 1, np.array([16.0] * 6 + [0.0]), np.array([1, 3]), np.array([2, 2]), np.array([0.5, 0.5]))
    job1 = StatementOfWork(1, 1, np.array([16.0] * 3 + [0.0] * 4), np.array([2]), np.array([1]), np.array([1.0]))
    sequence = BirthSequence((job0, job1), HAND).check(nodes=1)
    return sequence, Realisation(np.array([0, 0]), np.array([1, 2]), np.array([2, 1]))


@pytest.mark.parametrize("rule, changed", [("lifo", 0), ("fifo", 1), ("all", 1)])
def test_hand_collision_lifo_keeps_the_earlier_job_fifo_and_evict_all_do_not(rule, changed):
    sequence, real = _collision()
    settings = FrameworkSettings(nodes=1, oracle="none", eviction=rule)
    full, counts = prefix_changes(sequence, real, settings, seed=0, cuts=(0,))
    # Alone, job 0 completes at 3. LIFO cancels job 1 at round 2; FIFO evicts job 0 (job 1 then
    # completes); evict-all stops both.
    assert full.completed.tolist() == {"lifo": [True, False], "fifo": [False, True], "all": [False, False]}[rule]
    assert counts == {"cuts": 1, "compared": 1, "changed": changed, "cuts_changed": changed}


def test_cut_points_are_the_tenths_of_the_sequence():
    assert cut_points(100) == tuple(range(10, 100, 10))
    assert cut_points(5) == (0, 1, 2, 3)
    assert cut_points(1) == ()


@pytest.mark.parametrize("oracle", ["sampled", "exact"])
def test_lifo_changes_nothing_on_random_congested_worlds(oracle):
    bounds = Bounds(max_concurrency=2, max_duration=3, horizon=8, max_value=8.0)
    for seed in range(5):
        sequence = random_sequence(np.random.default_rng(seed), 16, bounds, births_per_round=3.0, points=2)
        real = realise(sequence, np.random.default_rng(seed + 100))
        settings = FrameworkSettings(nodes=2, oracle=oracle, samples=40)
        full, counts = prefix_changes(sequence, real, settings, seed, cut_points(len(sequence)))
        assert counts["changed"] == 0 and counts["compared"] > 0
        same = run_framework(sequence, real, settings, np.random.default_rng(seed))
        assert np.array_equal(full.completed, same.completed) and np.array_equal(full.payment, same.payment)


def test_audit_run_audits_every_birth_and_leaves_the_run_as_it_was():
    bounds = Bounds(max_concurrency=2, max_duration=3, horizon=8, max_value=8.0)
    sequence = random_sequence(np.random.default_rng(3), 10, bounds, signal="duration", births_per_round=3.0, points=2)
    real = realise(sequence, np.random.default_rng(4))
    settings = FrameworkSettings(nodes=2, oracle="exact")
    out, rows = audit_run(sequence, real, settings, np.random.default_rng(0))
    plain = run_framework(sequence, real, settings, np.random.default_rng(0))
    assert np.array_equal(out.completed, plain.completed) and np.array_equal(out.payment, plain.payment)
    assert sorted(r["job"] for r in rows if r["kind"] == "truthful") == list(range(10))
    # exact oracle, duration signal: no walk-away option, mu only from the eps/10 threshold
    assert all(r["option"] == 0.0 and r["mu"] <= settings.threshold + 1e-12 for r in rows)
    assert all(r["within_mu"] and r["within_plans"] for r in rows)


def _config(mechanisms, **births) -> dict:
    return {
        "bounds": {"max_concurrency": 2, "max_duration": 2, "horizon": 8, "max_value": 8.0},
        "births": {
            "kind": "recurring",
            "pipelines": 5,
            "rounds": 24,
            "arrival_jitter": 1,
            "duration_jitter": 0,
            **births,
        },
        "cluster": {"nodes": 3},
        "oracle": {"samples": 30},
        "mechanisms": mechanisms,
    }


def test_the_family_reports_both_audits_beside_the_reduction_it_audits():
    config = _config(
        [
            "Reduction(oracle=exact)",
            "TruthAudit(oracle=exact)",
            "PrefixAudit(oracle=exact)",
            "PrefixAudit(eviction=fifo)",
        ]
    )
    rows = simulate_replicate(prepare(config), 0, np.random.default_rng(5))
    plain, truth, prefix, fifo = rows
    for row in (truth, prefix):  # the exact oracle draws nothing: the same run as the Reduction's
        assert row["welfare"] == plain["welfare"] and row["payments"] == plain["payments"]
    table = truth["tables"]["misreports"]
    assert table["kind"].count("truthful") == truth["jobs"]
    assert truth["misreports"] == len(table["kind"]) - truth["jobs"]
    assert truth["over_bound_plans"] == 0 and truth["max_mu"] <= 0.01 + 1e-12
    assert prefix["changed"] == 0 and prefix["cuts"] == len(cut_points(prefix["jobs"]))
    assert {"compared", "changed", "cuts_changed"} <= set(fifo)


def test_node_rounds_count_what_each_mechanism_held():
    sequence, real = _collision()
    fifo = run_framework(
        sequence, real, FrameworkSettings(nodes=1, oracle="none", eviction="fifo"), np.random.default_rng(0)
    )
    # job 0 ran round 1 and was evicted at round 2 (1 node-round); job 1 ran round 2 (1)
    assert _node_rounds(sequence, fifo) == 2.0
    lifo = run_framework(sequence, real, FrameworkSettings(nodes=1, oracle="none"), np.random.default_rng(0))
    assert _node_rounds(sequence, lifo) == 2.0  # job 0 ran rounds 1-2; job 1 was cancelled
    # job 0 reserves its worst-case window, rounds 1-4 (arrival 1 or 3, 2 rounds); job 1's round 2
    # is taken, so it reserves nothing
    assert _node_rounds(sequence, reserve_worst_case(sequence, real, 1)) == 4.0


def test_audit_names_are_checked_like_the_reductions():
    with pytest.raises(
        ValueError, match=r"^mechanisms\[0\]: TruthAudit\(colour=red\): .*TruthAudit takes the optional keys epsilon, "
    ):
        prepare(_config(["TruthAudit(colour=red)"]))
    with pytest.raises(ValueError, match="PrefixAudit"):
        prepare(_config(["Audit"]))
