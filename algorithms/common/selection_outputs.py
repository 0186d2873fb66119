"""Online policy selection over a cell's jobs, as a family's `cell_outputs` returns it
(docs/architecture.md, "Cell outputs"): paper 000 Alg. 2 (Sec. V) run by
`policy_selection.exponentiated_gradient` on the cell's utility matrix, with the weight
trajectory (Fig. 10's data and heatmap), cumulative regret against the best fixed policy in
hindsight and against the offline optimum, and the final top-5 policies' weights as step series.

Written once for every family that selects among its mechanisms online: spot (Alg. 2) today;
the iaas family's OptiLearning (paper 003 Alg. 3) passes `delay`, its delayed feedback.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from algorithms.common.policy_selection import exponentiated_gradient, job_bounds, regret_bound, weights_frame


def selection_outputs(
    frame: pd.DataFrame,
    policies: Sequence[str],
    lower: float,
    upper: float,
    *,
    optimum: str | None = "OPT",
    delay: int | np.ndarray = 0,
    normalisation: str = "worst_case",
) -> dict:
    """Run online selection among `policies` over the cell's jobs (replicates, in order) and
    return `cell_outputs`' tables, series, metrics and figures. `frame` holds the cell's rows
    (`replicate`, `mechanism`, `utility`); [lower, upper] bounds every utility (the family
    guarantees it); `optimum` names the offline optimum's rows if the cell has them;
    `normalisation` maps each job's utilities into [0, 1] (`policy_selection.job_bounds`:
    worst_case with [lower, upper], or per job by the pool's min-max or by the optimum)."""
    names = list(policies)
    table = frame.pivot(index="replicate", columns="mechanism", values="utility").sort_index()
    utilities = table[names].to_numpy(dtype=float)
    best_possible = table[optimum].to_numpy(dtype=float) if optimum and optimum in table else None
    lo, hi = job_bounds(utilities, normalisation, lower, upper, best_possible)
    run = exponentiated_gradient(utilities, lo, hi, optimum=best_possible, delay=delay)
    jobs = np.arange(1, run.n_jobs + 1)
    series = {
        "selection/cumulative_regret": run.regret,
        "selection/average_regret": run.regret / jobs,
        "selection/expected_utility": run.expected_utility,
    }
    if run.regret_vs_optimum is not None:
        series["selection/cumulative_regret_vs_opt"] = run.regret_vs_optimum
    for index in run.top_policies(5):
        series[f"weight/{names[index]}"] = run.weights[1:, index]
    means = utilities.mean(axis=0)
    best = run.best_fixed
    near_best = np.abs(means - means[best]) <= 0.02 * abs(means[best])
    metrics = {
        "selection/final_regret": float(run.regret[-1]),
        "selection/average_regret": float(run.regret[-1] / run.n_jobs),
        "selection/final_regret_normalised": float(run.normalised_regret()[-1]),
        "selection/regret_bound_normalised": regret_bound(len(names), run.n_jobs),
        "selection/best_fixed_mean_utility": float(means[best]),
        "selection/expected_utility_mean": float(run.expected_utility.mean()),
        "selection/final_weight_of_best_fixed": float(run.final_weights[best]),
        "selection/final_weight_within_2pct": float(run.final_weights[near_best].sum()),
        "selection/eta": float(np.mean(run.eta)),
    }
    if normalisation == "worst_case":  # one affine map: the bound holds in the family's units
        metrics.update(
            {
                "selection/regret_bound": regret_bound(len(names), run.n_jobs) * (upper - lower),
                "selection/lower_bound": lower,
                "selection/upper_bound": upper,
            }
        )
    if run.regret_vs_optimum is not None:
        metrics["selection/final_regret_vs_opt"] = float(run.regret_vs_optimum[-1])
    return {
        "tables": {
            "policy_weights": weights_frame(run, names).set_index("job"),
            "policy_selection": pd.DataFrame(
                {
                    "policy": names,
                    "mean_utility": means,
                    "final_weight": run.final_weights,
                    "within_2pct_of_best": near_best,
                }
            ),
        },
        "series": series,
        "metrics": metrics,
        "figures": {"policy_weights.png": ("heatmap", "policy_weights")},
    }
