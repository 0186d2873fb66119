"""FineTuneJob: eq. 1, 2, 4, the termination configuration (Sec. III-E2) and validation."""

import pytest

from market.spot.finetune_job import FineTuneJob


def test_defaults_are_the_papers_evaluation_settings():
    job = FineTuneJob()
    assert (job.workload, job.deadline, job.n_min, job.n_max) == (80, 10, 1, 12)
    assert (job.mu1, job.mu2, job.alpha, job.beta) == (0.9, 0.9, 1.0, 0.0)
    assert (job.value, job.gamma) == (160.0, 2.0)
    # Sec. VI-A calibration: 8 GPUs for 10 slots do L = 80.
    assert 10 * job.throughput(8) == job.workload


def test_throughput_eq1():
    job = FineTuneJob(alpha=1.5, beta=0.5)
    assert job.throughput(0) == 0.0
    assert job.throughput(1) == 2.0
    assert job.throughput(4) == 6.5


def test_effective_fraction_eq2():
    job = FineTuneJob(mu1=0.7, mu2=0.8)
    assert job.effective_fraction(5, 3) == 0.7
    assert job.effective_fraction(3, 5) == 0.8
    assert job.effective_fraction(4, 4) == 1.0
    assert job.effective_fraction(1, 0) == 0.7  # starting is a scale-up
    assert job.slot_work(4, 0) == pytest.approx(0.7 * 4)


def test_value_eq4():
    job = FineTuneJob(value=100.0, deadline=10, gamma=2.0)
    assert job.value_at(1) == 100.0
    assert job.value_at(10) == 100.0
    # d < T < gamma d: v (1 - (T - d) / ((gamma - 1) d)) = 100 (1 - 5 / 10)
    assert job.value_at(15) == pytest.approx(50.0)
    assert job.value_at(19) == pytest.approx(10.0)
    assert job.value_at(20) == 0.0
    assert job.value_at(35) == 0.0


def test_termination_already_done():
    job = FineTuneJob()
    assert job.termination(80.0, 9, 1.0) == (0, 0.0, 10)
    assert job.tilde_value(81.0, 9, 1.0) == 160.0


def test_termination_first_slot_pays_mu_then_full_slots():
    job = FineTuneJob(mu1=0.5, mu2=0.8)
    # 80 - 50 = 30 left, last count 4 < 12: first slot 0.5 * 12 = 6, then 12 per slot:
    # 6 + 12 + 12 = 30 -> 3 slots, T = 13, cost 3 * 12 * 2.0 = 72.
    assert job.termination(50.0, 4, 2.0) == (3, 72.0, 13)
    # V(13) = 160 (1 - 3 / 10) = 112; V~ = 112 - 72 = 40.
    assert job.tilde_value(50.0, 4, 2.0) == pytest.approx(40.0)
    # From n_last = 12, no reconfiguration: 12 + 12 + 12 >= 30 -> 3 slots too;
    # 24.5 left -> 12 + 12 + 0.5 -> 3 slots; 24 left -> exactly 2.
    assert job.termination(50.0, 12, 1.0)[0] == 3
    assert job.termination(55.5, 12, 1.0)[0] == 3
    assert job.termination(56.0, 12, 1.0)[0] == 2
    # Shrinking to N_max from more is impossible, but the mu2 branch works: n_last 14 > 12.
    assert job.termination(70.0, 14, 1.0) == (2, 24.0, 12)  # 0.8 * 12 = 9.6 < 10


def test_termination_beyond_hard_deadline_still_runs_and_pays():
    job = FineTuneJob(workload=100.0, deadline=2, n_max=2, mu1=1.0, mu2=1.0, gamma=1.5)
    # 100 left at 2 per slot: 50 slots, cost 100, V(52) = 0 since 52 >= 1.5 * 2.
    assert job.termination(0.0, 2, 1.0) == (50, 100.0, 52)
    assert job.tilde_value(0.0, 2, 1.0) == -100.0


def test_float_progress_within_tolerance_counts_as_done():
    job = FineTuneJob(workload=0.3, alpha=0.1, n_max=3)
    assert job.is_complete(0.1 + 0.1 + 0.1)


def test_from_dict_accepts_known_keys_and_coerces_numbers():
    job = FineTuneJob.from_dict({"workload": 90, "deadline": 12.0, "mu1": 1})
    assert job.workload == 90.0 and isinstance(job.workload, float)
    assert job.deadline == 12 and isinstance(job.deadline, int)
    assert job.mu1 == 1.0


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(ValueError, match=r"job: unknown key\(s\) 'bogus', 'dead_line'"):
        FineTuneJob.from_dict({"dead_line": 3, "bogus": 1})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"deadline": -1}, "job.deadline must be a positive integer, got -1"),
        ({"deadline": 2.5}, "job.deadline must be a positive integer, got 2.5"),
        ({"n_min": 0}, "job.n_min must be a positive integer"),
        ({"n_max": True}, "job.n_max must be a positive integer"),
        ({"n_min": 5, "n_max": 3}, r"job.n_min \(5\) must not exceed job.n_max \(3\)"),
        ({"workload": 0}, "job.workload must be > 0"),
        ({"workload": "80"}, "job.workload must be a finite number"),
        ({"workload": float("nan")}, "job.workload must be a finite number"),
        ({"mu1": 0.0}, r"job.mu1 must be in \(0, 1\]"),
        ({"mu2": 1.1}, r"job.mu2 must be in \(0, 1\]"),
        ({"value": -5}, "job.value must be > 0"),
        ({"gamma": 1.0}, "job.gamma must be > 1"),
        ({"alpha": -1.0}, "job.alpha must be >= 0"),
        ({"alpha": 1.0, "beta": -1.0}, "job.beta .* H must be positive"),
    ],
)
def test_check_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FineTuneJob(**kwargs)
