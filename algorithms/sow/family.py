"""The `sow` family as the sweep engine sees it (paper 004; docs/sow/mechanisms.md).

Sections: `bounds` (C_max, D_max, S_max, V_bar), `births` (the birth-sequence generator or a
CSV of SoWs, market/sow/birth_sequences.py), and the mechanism sections of config.py
(`cluster`, `reduction`, `oracle`, `prices`, `optimum`); the mechanism names are registry.py's,
each built-in run by its entry's function (`REGISTRY.build`). One replicate
draws one birth sequence and one realisation of every job's (arrival, duration) and runs every
mechanism on them (common random numbers). `utility` is the welfare, sum_j V_j(f_j) (Sec. 2);
`opt_ratio` is OPT's welfare over the row's (the empirical competitive ratio) when OPT is listed;
`node_rounds` the capacity a mechanism held (reserved blocks, or the rounds its jobs ran).
Reduction rows add `relaxed_peak`, the largest relaxed usage y_t of ALG over N' (Theorem 4.1's
regime needs it near 1). ValueDensityGreedy: value_density_greedy.py.
Side table `jobs`: one row per job and mechanism (reported and true SoW summary, the plan's
start for the realised arrival, start, finish, evicted, cancelled, paid, value, utility).

Audits (registry.py's `AUDITS`): `TruthAudit` rows are the Reduction's truthful run plus Theorem
3.2's audit (`misreports`, `max_gain`, `max_gain_same_c` over the reports that keep the
concurrency, `max_mu`, `over_bound_mu` and `over_bound_plans`: reports whose gain exceeds
2 mu V_bar or the per-plan bound, `concurrency_gains`) and the side table `misreports` (one row
per job and report, truthfulness.audit_birth's columns); `PrefixAudit` rows are the Reduction's
run plus Lemma 3.1's counts (`cuts`, `compared`, `changed`, `cuts_changed`).

Stochastic (Sec. 5's variant, stochastic_menu.py; births.kind: prior): its rows add `lp_value`,
`fua_value`, `fua_share` (V(z_FUA) / V_LP), `bundles`, `lanes`, `relaxed_peak`; StochasticAudit
rows add TruthAudit's columns too. Every framework row (Reduction, Stochastic, the audits) has
`receptive_breaks`, the allocations x_j(L_j) that break Alg. 2's receptive condition
(scheduler_framework.py). Section `report`: numbers a reproduction report reads (`ratio_limit`,
reproduction/sow/theorem52.py); no simulation reads it.

A user's own scheduler, named by import path (`package.module:Class(key=value,...)`,
docs/extending.md): a `scheduler.Scheduler` subclass, built once in `prepare` (before any work)
and once per replicate; its start rounds are accounted by `scheduler.account` (price-free, no
evictions), its rows carry the name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from algorithms.common.optimum_columns import add_optimum_columns
from algorithms.common.optional_keys import without_null_keys
from algorithms.common.streams import mechanism_stream
from algorithms.common.user_mechanisms import build, is_import_path
from market.common.fields import real
from market.common.sections import checked, key, parse
from market.sow.birth_sequences import BirthParams, bounds_from_config, draw_births
from market.sow.sow_trace import load_sow_trace
from market.sow.statement_of_work import BirthSequence, Bounds, Realisation, realise

from .config import MECHANISM_SECTIONS, MechanismSpec, SowSettings, mechanism_specs, warn_oracle_accuracy
from .offline_optimum import ex_ante_bound, hindsight_lp_bound, hindsight_optimum
from .outcome import JobOutcomes
from .prefix_invariance import cut_points, prefix_changes
from .registry import REGISTRY, STOCHASTIC
from .scheduler import Scheduler, account
from .scheduler_framework import FrameworkSettings
from .stochastic_menu import StochasticRun, audit_stochastic, check_stochastic, stochastic_columns
from .truthfulness import TOLERANCE, audit_run

NAME = "sow"
PAPER = "004: Truthful Online Scheduling of Cloud Workloads under Uncertainty"
QUESTION = "How much welfare does a truthful posted-price scheduler keep for stochastic statements of work, against the hindsight optimum?"
UTILITY = "welfare: the sum of V_j(f_j), each statement of work's value at its completion (Sec. 2), in the value units of its births; higher is better"
SECTIONS = ("bounds", "births", "cluster", "reduction", "oracle", "prices", "optimum")
SECTIONS += ("report",)  # read by reproduction reports only (`_check_report`)
SUMMARY_COLUMNS = (
    "welfare",
    "payments",
    "agent_utility",
    "completions",
    "evictions",
    "cancellations",
    "eviction_rate",
    "relaxed_value",
    "opt_ratio",
    "max_gain",
    "max_gain_same_c",
    "max_mu",
    "over_bound_mu",
    "over_bound_plans",
    "changed",
    "node_rounds",
)
SUMMARY_COLUMNS += ("receptive_breaks", "fua_share")
SUMMARY_COLUMNS += ("relaxed_peak",)  # Reduction rows: max_t y_t / N' (Theorem 4.1's regime)
INPUT_FILES = {"births.path": load_sow_trace}
# Documented keys listed at null in conf/family/sow.yaml and conf/births/,
# so that the command line sets them without `+`; null is the code's default
# (algorithms/common/optional_keys.py).
OPTIONAL_KEYS = (
    "births.period",
    "births.concurrency",
    "births.duration",
    "births.value",
    "births.lead",
    "births.arrival_jitter",
    "births.duration_jitter",
    "births.deadline",
    "births.shape_mix",
    "births.half_life",
    "births.window",
    "births.slack",
    "births.low_duration",
    "births.high_duration",
    "oracle.max_outcomes",
)
# The bounds (market/sow/statement_of_work.py) and the mechanism sections (config.py): their keys' docs are
# the comments of conf/family/sow.yaml.
DECLARED_SECTIONS = {"bounds": Bounds, **MECHANISM_SECTIONS}


@dataclass(frozen=True)
class PreparedSow:
    bounds: Bounds
    births: BirthParams
    settings: SowSettings
    specs: tuple[MechanismSpec, ...]


def prepare(config: dict) -> PreparedSow:
    """Validate a config (errors name the key, or the SoW file and line)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    config = without_null_keys(config, OPTIONAL_KEYS)
    bounds = bounds_from_config(config.get("bounds"))
    settings = SowSettings.from_config(config)
    if bounds.max_concurrency > settings.nodes:
        raise ValueError(
            f"bounds.max_concurrency ({bounds.max_concurrency}) is above cluster.nodes "
            f"({settings.nodes}): a job may not need more nodes than there are"
        )
    births = BirthParams.from_config(config.get("births"), bounds)
    specs = mechanism_specs(config, settings)
    for spec in specs:  # a user's own schedulers: imported and built once here, before any work
        if is_import_path(spec.kind):
            build(spec.kind, dict(spec.params), Scheduler)
    for n, spec in enumerate(specs):  # Sec. 5's variant: known priors, and one lane (stochastic_menu.py)
        if spec.kind in STOCHASTIC:
            if births.kind != "prior":
                raise ValueError(
                    f"mechanisms[{n}]: {spec.name} needs the priors of births.kind: prior (Sec. 5's "
                    f"stochastic variant), got births.kind: {births.kind}"
                )
            check_stochastic(
                spec.settings.nodes,
                spec.settings.epsilon,
                spec.settings.slack,
                bounds.max_concurrency,
                f"mechanisms[{n}] {spec.name}",
            )
    warn_oracle_accuracy(specs, bounds.max_duration, bounds.horizon)
    _check_report(config)
    return PreparedSow(bounds, births, settings, specs)


@dataclass(frozen=True)
class ReportSection:
    """Section `report`, read by reproduction reports only (reproduction/sow/theorem52.py); the
    simulation ignores it. Not in DECLARED_SECTIONS: conf/family/sow.yaml does not list it."""

    ratio_limit: float | None = key(
        None, checked(real, minimum=1.0), "the largest E[OPT] / E[welfare] a reproduction check accepts (>= 1)"
    )


def _check_report(config: Mapping) -> None:
    """Section `report` (ReportSection), checked."""
    parse(ReportSection, config.get("report"), "report")


def mechanism_names(config: dict) -> list[str]:
    return [spec.name for spec in prepare(config).specs]


def _job_table(sequence: BirthSequence, real: Realisation, out: JobOutcomes) -> dict:
    jobs = sequence.jobs
    planned = out.extra.get("planned_start")
    return {
        "job": np.arange(len(jobs)),
        "birth": [s.birth for s in jobs],
        "concurrency": [s.concurrency for s in jobs],
        "support": [s.arrival.size for s in jobs],
        "durations": [int(np.unique(s.duration).size) for s in jobs],
        "expected_duration": [s.expected_duration() for s in jobs],
        "peak_value": [float(s.values.max()) for s in jobs],
        "arrival": real.arrival,
        "duration": real.duration,
        "planned_start": planned if planned is not None else np.full(len(jobs), -1),
        "start": out.start,
        "finish": out.finish,
        "completed": out.completed,
        "evicted": out.evicted,
        "cancelled": out.cancelled,
        "paid": out.payment,
        "value": out.value,
        "utility": out.utility,
    }


def _node_rounds(sequence: BirthSequence, out: JobOutcomes) -> float:
    """Capacity held: the reserved blocks (ReserveWorstCase), else c_j times the rounds each job ran
    (to completion, or to its eviction)."""
    if "reserved" in out.extra:
        return float(out.extra["reserved"].sum())
    concurrency = np.array([s.concurrency for s in sequence.jobs])
    end = np.where(out.completed, out.finish, out.extra.get("stopped", out.finish))
    ran = np.where(out.start >= 0, np.maximum(end - out.start, 0), 0)
    return float((concurrency * ran).sum())


def _outcome_row(name: str, sequence: BirthSequence, real: Realisation, out: JobOutcomes) -> dict:
    row = {"mechanism": name, **out.summary(), "node_rounds": _node_rounds(sequence, out)}
    row["utility"] = row["welfare"]
    started = int((out.start >= 0).sum())
    row["eviction_rate"] = (row["evictions"] + row["cancellations"]) / max(1, started + row["cancellations"])
    if "relaxed_value" in out.extra:
        row["relaxed_value"] = float(out.extra["relaxed_value"].sum())
    if "receptive_break" in out.extra:
        row["receptive_breaks"] = int(out.extra["receptive_break"].sum())
    row["tables"] = {"jobs": _job_table(sequence, real, out)}
    return row


def _audit_columns(audit: list[dict]) -> dict:
    """Theorem 3.2's summary of a TruthAudit run (family docstring) over the misreports."""
    lies = [r for r in audit if r["kind"] != "truthful"]
    same_c = [r["gain"] for r in lies if r["kind"] != "concurrency"]
    return {
        "misreports": len(lies),
        "max_gain": max((r["gain"] for r in lies), default=0.0),
        "max_gain_same_c": max(same_c, default=0.0),
        "max_mu": max((r["mu"] for r in audit), default=0.0),
        "mean_mu": float(np.mean([r["mu"] for r in audit])) if audit else 0.0,
        "over_bound_mu": sum(not r["within_mu"] for r in lies),
        "over_bound_plans": sum(not r["within_plans"] for r in lies),
        "concurrency_gains": sum(r["kind"] == "concurrency" and r["gain"] > TOLERANCE for r in lies),
    }


def _misreport_table(audit: list[dict]) -> dict:
    columns = (
        "job",
        "kind",
        "parameter",
        "concurrency",
        "utility",
        "estimated",
        "gain",
        "mu",
        "bound_mu",
        "err_truthful",
        "err_report",
        "option",
        "bound_plans",
        "within_mu",
        "within_plans",
    )
    return {column: [r[column] for r in audit] for column in columns}


def _bound_row(name: str, welfare: float, jobs: int) -> dict:
    return {"mechanism": name, "utility": welfare, "welfare": welfare, "jobs": jobs}


def _run_row(name: str, sequence: BirthSequence, real: Realisation, run, settings: FrameworkSettings) -> dict:
    """The row of a built-in's run: a Stochastic run adds its columns (stochastic_menu.py), a run
    of Alg. 1 with Alg. 3 (the Reduction) its `relaxed_peak`, max_t y_t / N' (Theorem 4.1's regime)."""
    if isinstance(run, StochasticRun):
        return _outcome_row(name, sequence, real, run.out) | stochastic_columns(run, settings)
    row = _outcome_row(name, sequence, real, run)
    if "relaxed_usage" in run.extra:
        row["relaxed_peak"] = float(run.extra["relaxed_usage"].max(initial=0.0)) / settings.relaxed_capacity
    return row


def _audit_row(
    spec: MechanismSpec,
    sequence: BirthSequence,
    real: Realisation,
    settings: FrameworkSettings,
    rng: np.random.Generator,
) -> dict:
    """An audit's row: its mechanism's truthful run, with Theorem 3.2's or Lemma 3.1's columns."""
    stream = mechanism_stream(rng, spec.name)
    if spec.kind == "PrefixAudit":
        out, counts = prefix_changes(sequence, real, settings, int(stream.integers(2**63)), cut_points(len(sequence)))
        return _outcome_row(spec.name, sequence, real, out) | counts
    if spec.kind == "StochasticAudit":
        run, audit = audit_stochastic(sequence, real, settings, stream)
        row = _outcome_row(spec.name, sequence, real, run.out) | stochastic_columns(run, settings)
    else:
        out, audit = audit_run(sequence, real, settings, stream)
        row = _outcome_row(spec.name, sequence, real, out)
    row |= _audit_columns(audit)
    row["tables"]["misreports"] = _misreport_table(audit)
    return row


def simulate_replicate(prepared: PreparedSow, replicate: int, rng: np.random.Generator) -> list[dict]:
    sequence = draw_births(prepared.births, prepared.bounds, rng)
    real = realise(sequence, rng)
    b = prepared.bounds
    rows, optimum = [], None
    for spec in prepared.specs:
        s = spec.settings
        if spec.kind in REGISTRY:
            settings = s.framework(b.max_duration, b.horizon)
            run = REGISTRY.build(
                spec.kind,
                dict(spec.params),
                sequence=sequence,
                realisation=real,
                nodes=s.nodes,
                settings=settings,
                rng=mechanism_stream(rng, spec.name),
            )
            rows.append(_run_row(spec.name, sequence, real, run, settings))
        elif is_import_path(spec.kind):
            starts = build(spec.kind, dict(spec.params), Scheduler).schedule(
                sequence, real, s.nodes, mechanism_stream(rng, spec.name)
            )
            rows.append(_outcome_row(spec.name, sequence, real, account(sequence, real, s.nodes, starts, spec.name)))
        elif spec.kind == "OPT":
            optimum = hindsight_optimum(sequence, real, s.nodes, s.time_limit)
            rows.append(_bound_row(spec.name, optimum.welfare, len(sequence)))
        elif spec.kind == "LP":
            rows.append(_bound_row(spec.name, hindsight_lp_bound(sequence, real, s.nodes), len(sequence)))
        elif spec.kind == "ExAnte":
            rows.append(_bound_row(spec.name, ex_ante_bound(sequence, s.nodes), len(sequence)))
        else:
            rows.append(_audit_row(spec, sequence, real, s.framework(b.max_duration, b.horizon), rng))
    if optimum is not None:
        add_optimum_columns(rows, "OPT", ratio=True, proven=optimum.proven, bound=optimum.bound)
    return rows
