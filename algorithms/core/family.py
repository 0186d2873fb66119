"""The `core` family as the sweep engine sees it (paper 002, LARA; docs/core/model.md).

The engine passes a plain dict config with the sections
  bundle:     the task bundle and its loss curves (market/core/bundle_config.py: the paper's
              Table 1 / Table 2, Sec. 4.3's scalability bundles, random bundles with staggered
              begins, real learning curves, live scikit-learn learners);
  lara:       Alg. 2's settings (algorithms/core/config.py);
  baselines:  whether LRF and ETF explore first;
  outputs:    side tables beyond the per-thread outcomes (allocation trajectories, predictions);
  mechanisms: LARA, UA, STF, LRF, ETF (algorithms/core/registry.py), OPT and variants such as
              LARA(exploration=4000), and a user's own allocator by import path,
              package.module:Class(key=value,...) (docs/extending.md).
One replicate is one bundle: it draws the threads and their curves, then runs every mechanism on
the same bundle (common random numbers). `utility` is the number of threads that met eps_k by
d_k (the paper's metric); when OPT runs, rows carry `opt_ratio` (OPT's count / the row's, inf
for a row with none) and `of_opt` (the row's count / OPT's).

`starved_by_fit` (every row): the threads starved by their fit, i.e. the threads
that at the end of the bundle have not completed and that at some exploit unit of the mechanism
(a unit split from the predictions, after exploration) were active with a predicted need of 0,
"done by the fit" by eq. 3.6 (S_hat = 0; Remark 2's S_tilde = 0 under UCB) although their
observed loss was not at or below eps_k (being active means no reported loss reached eps_k).
With a need of 0 such a thread gets no data, reports no new loss and its fit never changes
(explore_then_exploit.py). `lara.min_need` > 0 raises every such need to min_need, so no
thread is starved by its fit there (0); `done_by_fit_failed` counts, under any min_need, the
threads the fit called done at some exploit unit that still failed. Both 0 for UA, STF and OPT,
which predict nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from algorithms.common.optimum_columns import add_optimum_columns
from algorithms.common.optional_keys import without_null_keys
from algorithms.core.config import (
    OPTIMUM,
    AllocatorSpec,
    BaselineSettings,
    PredictionSettings,
    allocator_specs,
    check_user_allocators,
    make_allocator,
)
from algorithms.core.offline_optimum import solve_offline_optimum, true_needs
from algorithms.core.simulation import Outcome, simulate
from market.common.fields import as_section, integer, reject_unknown_keys
from market.core.bundle_config import BundleConfig, curve_values, draw_bundle
from market.core.threads import Bundle

NAME = "core"
PAPER = "002: Learning with Adaptive Resource Allocation (CoRE-Learning, LARA)"
QUESTION = "How should one unit of compute be shared among learning threads so that most reach their loss threshold by the deadline?"
UTILITY = "the number of learning threads whose reported loss reaches the threshold by the deadline; higher is better"
SECTIONS = ("bundle", "lara", "baselines", "outputs")
SUMMARY_COLUMNS = ("success_rate", "of_opt", "exploration_end", "starved_by_fit")
TIMING_COLUMNS = ("decision_ms",)
INPUT_FILES = {"bundle.path": curve_values}
# Documented keys listed at null in conf/bundle/<kind>.yaml (each file: the keys its kind uses), so that
# the command line sets them without `+`; null is the code's default (algorithms/common/optional_keys.py).
OPTIONAL_KEYS = (
    # the lara section's explore, delivery and min_need (algorithms/core/config.py)
    "lara.explore",
    "lara.delivery",
    "lara.min_need",
    # parametric kinds (docs/core/calibration.md)
    "bundle.difficulty",
    "bundle.exponent",
    "bundle.jitter",
    "bundle.noise",
    "bundle.noise_cell",
    "bundle.shape",
    "bundle.floor",
    "bundle.bend_at",
    "bundle.bend_ratio",
    "bundle.begin",
    "bundle.deadline",
    "bundle.budget",
    "bundle.threshold",
    "bundle.labels",
    "bundle.threshold_scale",
    "bundle.harder_fraction",
    "bundle.harder_factor",
    "bundle.begin_spread",
    "bundle.deadline_slack",
    # real (docs/core/real_curves.md)
    "bundle.slack",
    "bundle.units_per_sample",
    "bundle.threshold_at",
    "bundle.hard_share",
    "bundle.hard_factor",
    "bundle.deadlines",
    "bundle.head",
    "bundle.curve_ids",
    # live (docs/core/live_learners.md)
    "bundle.batch_size",
    "bundle.learners",
    "bundle.datasets",
    "bundle.target_batches",
    "bundle.hard_fraction",
    "bundle.hard_scale",
    "bundle.window",
    "bundle.chunk",
)
# The sections declared with their keys' defaults, checks and docs (market/common/sections.py): the
# docs/usage.md rows and the comments beside these keys in conf/family/core.yaml come from them
DECLARED_SECTIONS = {"lara": PredictionSettings, "baselines": BaselineSettings}


@dataclass(frozen=True)
class OutputSettings:
    """Config section `outputs`: side tables of the first replicates (they grow with T x K)."""

    trajectories: int = 1  # replicates < this record eta_{k,t} (table `allocations`)
    predictions: int = 1  # replicates < this record the predictors' S_hat (table `predictions`)

    @classmethod
    def from_config(cls, section) -> OutputSettings:
        d = as_section(section, "outputs")
        reject_unknown_keys(cls, d, "outputs")
        return cls(
            integer(d.get("trajectories", 1), "outputs.trajectories", 0),
            integer(d.get("predictions", 1), "outputs.predictions", 0),
        )


@dataclass(frozen=True)
class PreparedCore:
    bundle: BundleConfig
    specs: tuple[AllocatorSpec, ...]
    outputs: OutputSettings


def prepare(config: dict) -> PreparedCore:
    """Validate a config (errors name the key, or a curve file's name and line) and build what
    its replicates share (a loaded curve table)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    config = without_null_keys(config, OPTIONAL_KEYS)
    prepared = PreparedCore(
        BundleConfig.from_config(config.get("bundle")),
        allocator_specs(config),
        OutputSettings.from_config(config.get("outputs")),
    )
    check_user_allocators(prepared.specs)  # a user's own allocators: imported and built once, before any work
    return prepared


def mechanism_names(config: dict) -> list[str]:
    return [spec.name for spec in allocator_specs(without_null_keys(config, OPTIONAL_KEYS))]


def thread_table(bundle: Bundle, needs: np.ndarray, completed, completion, data, last_loss) -> dict:
    arrays = bundle.arrays()
    return {
        "thread": np.arange(1, len(bundle) + 1),
        "label": list(arrays.labels),
        "begin": arrays.begin,
        "deadline": arrays.deadline,
        "budget": arrays.budget,
        "threshold": arrays.threshold,
        "need": needs,
        "completed": np.asarray(completed, dtype=bool),
        "completion_time": np.asarray(completion, dtype=np.int64),
        "data": np.asarray(data, dtype=float),
        "last_loss": np.asarray(last_loss, dtype=float),
    }


def allocation_table(eta: np.ndarray) -> dict:
    t, k = np.nonzero(eta)
    return {"t": t + 1, "thread": k + 1, "eta": eta[t, k]}


def prediction_table(trace: list, needs: np.ndarray) -> dict:
    if not trace:
        return {"t": [], "thread": [], "data": [], "predicted": [], "true_remaining": [], "relative_error": []}
    t, k, data, predicted = (np.array(column) for column in zip(*trace))
    k = k.astype(np.int64)
    remaining = needs[k] - data
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.where((remaining > 0) & np.isfinite(remaining), np.abs(predicted - remaining) / remaining, np.nan)
    return {
        "t": t.astype(np.int64),
        "thread": k + 1,
        "data": data,
        "predicted": predicted,
        "true_remaining": remaining,
        "relative_error": error,
    }


def done_by_fit_failed(allocator, outcome: Outcome) -> int:
    """The threads done by the fit at some exploit unit (the allocator's `done_by_fit`, S_hat = 0)
    that did not complete; 0 for an allocator without predictions."""
    flagged = getattr(allocator, "done_by_fit", None)
    if flagged is None:
        return 0
    return int(np.count_nonzero(np.asarray(flagged, dtype=bool) & ~np.asarray(outcome.completed, dtype=bool)))


def starved_by_fit(allocator, outcome: Outcome) -> int:
    """`done_by_fit_failed` where the allocation used those zero needs as they are (`min_need`
    0); with `min_need` > 0 no need is 0, so no thread is starved by its fit (module docstring)."""
    return done_by_fit_failed(allocator, outcome) if getattr(allocator, "min_need", 0.0) == 0.0 else 0


def _row(name: str, bundle: Bundle, needs, outcome: Outcome, tables: dict) -> dict:
    k = len(bundle)
    end = getattr(outcome, "exploration_end", None)
    return {
        "mechanism": name,
        "utility": float(outcome.successes),
        "threads": k,
        "success_rate": outcome.successes / k,
        "decision_ms": 1000.0 * outcome.decision_seconds / max(outcome.decisions, 1),
        "exploration_end": float("nan") if end is None else float(end),
        "starved_by_fit": int(getattr(outcome, "starved_by_fit", 0)),
        "done_by_fit_failed": int(getattr(outcome, "done_by_fit_failed", 0)),
        "tables": {
            "threads": thread_table(
                bundle, needs, outcome.completed, outcome.completion_time, outcome.data, outcome.last_loss
            ),
            **tables,
        },
    }


def simulate_replicate(prepared: PreparedCore, replicate: int, rng: np.random.Generator) -> list[dict]:
    bundle = draw_bundle(prepared.bundle, rng)
    needs = true_needs(bundle)
    arrays = bundle.arrays()
    trajectories = replicate < prepared.outputs.trajectories
    predictions = replicate < prepared.outputs.predictions
    rows = []
    proven = None
    for spec in prepared.specs:
        if spec.kind == OPTIMUM:
            result = solve_offline_optimum(arrays.begin, arrays.deadline, needs / arrays.budget)
            proven = result.status == "OPTIMAL"
            served = result.selected
            data = np.where(served, needs, 0.0)
            completion = np.where(served, result.finish_time, 0)
            outcome = Outcome(
                served,
                completion,
                data,
                np.full(len(bundle), np.nan),
                result.schedule if trajectories else None,
                result.solve_seconds,
                1,
            )
        else:
            allocator = make_allocator(spec, log_predictions=predictions)
            outcome = simulate(bundle, allocator, record_eta=trajectories)
            outcome.exploration_end = getattr(allocator, "exploration_end", None)
            outcome.starved_by_fit = starved_by_fit(allocator, outcome)
            outcome.done_by_fit_failed = done_by_fit_failed(allocator, outcome)
        tables = {}
        if outcome.eta is not None:
            tables["allocations"] = allocation_table(outcome.eta)
        if predictions and spec.kind != OPTIMUM and spec.settings is not None:
            tables["predictions"] = prediction_table(outcome.allocator_trace, needs)
        rows.append(_row(spec.name, bundle, needs, outcome, tables))
    add_optimum_columns(rows, OPTIMUM, ratio=True, proven=proven)
    best = next((row["utility"] for row in rows if row["mechanism"] == OPTIMUM), None)
    if best is not None:
        for row in rows:  # the share of OPT's count (nan when OPT serves none)
            row["of_opt"] = row["utility"] / best if best > 0 else math.nan
    return rows
