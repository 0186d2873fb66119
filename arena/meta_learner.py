"""The meta-learner of the arena (docs/arena.md, "The meta-learner"): the shared exponentiated
gradient (algorithms/common/policy_selection.py; paper 000 Sec. V, Alg. 2) choosing, job by
job, among the mechanisms of both papers, with feedback delayed as paper 003's OptiLearning
has it (Sec. IV-D, Alg. 3: a job's cost is known only once it has run).

Utilities are minus each candidate's cost of the job, mapped into [0, 1] (`normalisation`, as
OptiLearning's `learning.normalisation`):
- `bound`: by B_j = delta_j ceil(d_j / Len) (p_o + b_max)
  (algorithms.iaas.opti_learning.cost_bound), a cost no candidate exceeds: on the arena's
  billing every candidate pays at most delta_j instance-hours of on-demand per hour of the
  job's window and as many spot instance-hours at no more than its bid (arena/hourly_billing.py,
  algorithms/iaas/job_execution.py);
- `job_minmax`: by job j's cheapest and dearest candidate (the shared module's `job_bounds`).
The learning rate is Theorem 2's default (`learning_rate(M, K)`). `learning.feedback`:
- `deadline`: job j's cost enters the weights once every job arriving by its deadline
  a_j + d_j - 1 has been assigned (the cost is known when the job is done or due);
- `max_deadline`: OptiLearning's lag, the largest relative deadline of the stream, for all;
- `immediate`: Alg. 2 of paper 000 (the cost is known before the next job is assigned).
Each job's mechanism is drawn from its weight row with the learner's own random stream
(algorithms/common/streams.py), so the row does not depend on the other mechanisms of a cell.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from algorithms.common.policy_selection import delays_from_arrivals, draw_policies, exponentiated_gradient, job_bounds
from algorithms.iaas.opti_learning import cost_bound
from arena.outcome import StreamOutcome
from arena.world import LEN, ON_DEMAND, World


def feedback_delays(arrival: np.ndarray, deadline: np.ndarray, feedback: str) -> np.ndarray:
    """Per-job delays, in jobs, of `learning.feedback` (module docstring)."""
    arrival = np.asarray(arrival, dtype=np.int64)
    if feedback == "immediate":
        return np.zeros(arrival.size, dtype=np.int64)
    if feedback == "max_deadline":
        return delays_from_arrivals(arrival, int(np.max(deadline)))
    known_at = arrival + np.asarray(deadline, dtype=np.int64) - 1
    return np.searchsorted(arrival, known_at, side="right") - np.arange(1, arrival.size + 1)


def meta_learner(
    world: World,
    names: Sequence[str],
    outcomes: Sequence[StreamOutcome],
    feedback: str,
    max_bid: float,
    rng: np.random.Generator,
    normalisation: str = "bound",
) -> tuple[StreamOutcome, dict]:
    """The realised outcome of the learner's choices, and its row's extra columns and side table."""
    jobs = world.jobs
    k = len(jobs)
    unit = [o.unit_cost() for o in outcomes]
    best, worst = int(np.argmin(unit)), int(np.argmax(unit))
    extra = {"best_fixed": names[best], "best_fixed_unit_cost": unit[best], "worst_fixed_unit_cost": unit[worst]}
    if k == 0:
        chosen = np.zeros(0, dtype=np.int64)
        weights = np.full(len(names), 1.0 / len(names))
        expected = 0.0
    else:
        costs = np.column_stack([o.cost for o in outcomes])
        if normalisation == "bound":
            lower, upper = -cost_bound(jobs, max_bid, ON_DEMAND), np.zeros(k)
        else:
            lower, upper = job_bounds(-costs, "job_minmax", 0.0, 1.0)
        run = exponentiated_gradient(-costs, lower, upper, delay=feedback_delays(jobs.arrival, jobs.deadline, feedback))
        chosen = draw_policies(run.weights[:-1], rng)
        weights = run.final_weights
        expected = float(-run.expected_utility.sum() / float(jobs.size.sum()) * LEN)
    rows = np.arange(k)

    def pick(field: str) -> np.ndarray:
        return np.column_stack([getattr(o, field) for o in outcomes])[rows, chosen] if k else np.zeros(0)

    realised = StreamOutcome(
        pick("spot_cost"),
        pick("on_demand_cost"),
        pick("spot_work"),
        pick("on_demand_work"),
        pick("finish").astype(np.int64),
        pick("fell_back").astype(np.int64),
    )
    extra["expected_unit_cost"] = expected
    extra["top_candidate"] = names[int(np.argmax(weights))]
    table = {
        "candidate": list(names),
        "final_weight": np.asarray(weights, dtype=float),
        "unit_cost": np.asarray(unit, dtype=float),
        "chosen_jobs": np.bincount(chosen, minlength=len(names)).astype(np.int64),
    }
    return realised, {"extra": extra, "table": table}
