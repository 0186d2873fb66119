"""Forecast, noise, job-sampling and selection sections of the spot family's config."""

import numpy as np
import pandas as pd
import pytest

from algorithms.spot import family
from algorithms.spot.config import ForecastConfig, JobSampling, NoiseConfig, SelectionConfig


def test_noise_phases_follow_fig10():
    noise = NoiseConfig.from_dict(
        {
            "phases": [
                {"start": 0, "kind": "fixed_uniform", "level": 0.1},
                {"start": 800, "kind": "fixed_heavy", "level": 0.3},
                {"start": 1600, "kind": "fixed_uniform", "level": 0.5},
                {"start": 2400, "kind": "fixed_uniform", "level": 2.0},
            ]
        }
    )
    assert noise.at(0) == ("fixed_uniform", 0.1)
    assert noise.at(799) == ("fixed_uniform", 0.1)
    assert noise.at(800) == ("fixed_heavy", 0.3)
    assert noise.at(3599) == ("fixed_uniform", 2.0)
    assert NoiseConfig.from_dict({"kind": "mag_dep_heavy", "level": 0.3}).at(5) == ("mag_dep_heavy", 0.3)


@pytest.mark.parametrize(
    "section, cls, value, message",
    [
        ("noise", NoiseConfig, {"kind": "gaussian"}, "noise.kind"),
        ("noise", NoiseConfig, {"level": -1}, "noise.level"),
        (
            "noise",
            NoiseConfig,
            {"phases": [{"start": 5, "kind": "none", "level": 0}]},
            r"noise.phases\[0\].start must be 0",
        ),
        (
            "noise",
            NoiseConfig,
            {"phases": [{"start": 0, "kind": "none"}, {"start": 0, "kind": "none"}]},
            r"noise.phases\[1\].start",
        ),
        ("forecast", ForecastConfig, {"kind": "prophet"}, "forecast.kind"),
        ("forecast", ForecastConfig, {"horizon": -1}, "forecast.horizon"),
        ("forecast", ForecastConfig, {"lags": 3}, "forecast: unknown key"),
        ("job_sampling", JobSampling, {"workload": [120, 70]}, "job_sampling.workload"),
        ("job_sampling", JobSampling, {"n_min": [1, 14], "n_max": [12, 16]}, "job_sampling.n_min"),
        ("selection", SelectionConfig, {"mechanisms": "AHAP"}, "selection.mechanisms"),
    ],
)
def test_bad_values_name_their_key(section, cls, value, message):
    with pytest.raises(ValueError, match=message):
        cls.from_dict(value)


def base(**extra):
    return {"job": {}, "market": {"kind": "synthetic"}, "mechanisms": ["OD-Only", "UP"], **extra}


def test_horizon_must_cover_the_widest_window():
    with pytest.raises(ValueError, match=r"forecast.horizon \(2\) must cover the largest AHAP window \(3\)"):
        family.prepare(base(mechanisms=["AHAP(w=3,v=1,sigma=0.5)"], forecast={"horizon": 2}))


def test_selection_mechanisms_must_run_in_the_cell():
    with pytest.raises(ValueError, match="selection.mechanisms: MSU"):
        family.prepare(base(selection={"mechanisms": ["MSU"]}))


def test_fig9_job_sampling_draws_within_ranges_and_is_reported():
    prepared = family.prepare(base(job_sampling={"workload": [70, 120], "n_min": [1, 4], "n_max": [12, 16]}))
    rows = [family.simulate_replicate(prepared, r, np.random.default_rng(r)) for r in range(30)]
    workloads = {row[0]["job_workload"] for row in rows}
    assert len(workloads) == 30 and all(70 <= w <= 120 for w in workloads)
    assert {row[0]["job_n_min"] for row in rows} <= {1, 2, 3, 4}
    assert {row[0]["job_n_max"] for row in rows} <= {12, 13, 14, 15, 16}


def test_worlds_do_not_depend_on_the_mechanisms_listed():
    a = family.prepare(base(mechanisms=["UP"]))
    b = family.prepare(base(mechanisms=["OD-Only", "UP", "AHAP(w=2,v=1,sigma=0.7)"]))
    up_a = family.simulate_replicate(a, 3, np.random.default_rng(7))[0]
    up_b = family.simulate_replicate(b, 3, np.random.default_rng(7))[1]
    assert up_a == up_b


def test_selection_over_a_cells_jobs():
    names = ["AHAP(w=1,v=1,sigma=0.5)", "AHAP(w=2,v=1,sigma=0.9)", "AHANP(sigma=0.7)", "UP"]
    config = base(mechanisms=names, selection={"mechanisms": names[:3]})
    prepared = family.prepare(config)
    rows = []
    for r in range(40):
        for row in family.simulate_replicate(prepared, r, np.random.default_rng(r)):
            rows.append({"replicate": r, **row})
    out = family.cell_outputs(config, pd.DataFrame(rows))
    weights = out["tables"]["policy_weights"]
    assert weights.shape == (41, 3)
    assert np.allclose(weights.sum(axis=1), 1.0)
    assert len(out["series"]["selection/cumulative_regret"]) == 40
    lower, upper = family.utility_bounds(prepared)
    assert lower < min(row["utility"] for row in rows) and max(row["utility"] for row in rows) <= upper
    metrics = out["metrics"]
    assert metrics["selection/final_regret"] <= metrics["selection/regret_bound"]
    assert out["figures"] == {"policy_weights.png": ("heatmap", "policy_weights")}
    assert family.cell_outputs(base(), pd.DataFrame(rows)) == {}


@pytest.mark.parametrize("normalisation", ["job_minmax", "job_opt"])
def test_selection_normalised_job_by_job(normalisation):
    names = ["AHAP(w=1,v=1,sigma=0.5)", "AHANP(sigma=0.7)", "UP", "OPT"]
    config = base(mechanisms=names, selection={"mechanisms": names[:3], "normalisation": normalisation})
    prepared = family.prepare(config)
    rows = [
        {"replicate": r, **row}
        for r in range(30)
        for row in family.simulate_replicate(prepared, r, np.random.default_rng(r))
    ]
    metrics = family.cell_outputs(config, pd.DataFrame(rows))["metrics"]
    assert metrics["selection/final_regret_normalised"] <= metrics["selection/regret_bound_normalised"]
    assert "selection/regret_bound" not in metrics and "selection/lower_bound" not in metrics


def test_job_opt_needs_opt_among_the_mechanisms():
    names = ["AHANP(sigma=0.7)", "UP"]
    with pytest.raises(ValueError, match="selection.normalisation: job_opt needs OPT"):
        family.prepare(base(mechanisms=names, selection={"mechanisms": names, "normalisation": "job_opt"}))
    with pytest.raises(ValueError, match="selection.normalisation must be one of"):
        family.prepare(base(mechanisms=names, selection={"mechanisms": names, "normalisation": "opt"}))
