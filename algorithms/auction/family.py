"""The `auction` family as the sweep engine sees it (paper 001).

Config keys (conf/family/auction.yaml, docs/auction/model.md):
  cluster:    market/auction/gpu_cluster.py ClusterParams;
  tasks:      market/auction/lora_tasks.py TaskParams (tasks.trace_path is read once per cell);
  vendors:    market/auction/labor_vendors.py VendorParams;
  pdftsp:     alpha, beta (lemma2, lemma2_tight or a number), kappa (the unit of bbar: a number
              or `lemma`), work_unit (ksamples or samples), price_scale (multiplies alpha and
              beta: the same effect as kappa, and multiplied with it),
              payment, schedule_space, prices (on or off), selector (dp, or exact for one
              node type) (algorithms/auction/pdftsp.py; algorithms/auction/config.py PdftspParams);
  titan:      time_limit (CP-SAT deterministic time per slot: algorithms/auction/titan.py);
  mechanisms: names of algorithms/auction/registry.py (parsed by algorithms/auction/config.py)
              among pdFTSP, Titan, EFT, NTM, ZeroPrice, and OPT (small worlds only), Titan variants
              `Titan(start=earliest|cheapest,solve=on|off,objective=welfare|throughput)` (the
              greedy start's placement, whether CP-SAT runs, and what the MILP maximises:
              problem (4)'s welfare, the default and plain `Titan`, or bid-blind, the most
              admitted tasks then the least cost: algorithms/auction/titan.py), ZeroPrice (the
              ablation pdFTSP(prices=off,schedule_space=fitting): admit when b_il > 0 on the
              cheapest fitting schedule), EFT(admit=positive) (EFT that admits only tasks with
              b_i above their vendor and operating cost), and pdFTSP variants
              `pdFTSP(key=value,...)` whose keys override the `pdftsp` section, e.g.
              `pdFTSP(beta=lemma2_tight,price_scale=0.1,schedule_space=fitting)`, and a
              user's own mechanism by import path, package.module:Class(key=value,...) (any
              class with the `AuctionMechanism` method of algorithms/auction/mechanism.py, built
              with the name's parameters: docs/extending.md).
The engine rejects any other top-level key but its own (seed, replicates, mechanisms, family).

One replicate is one day: it draws the world (tasks, then vendors' offers) from rng, then
runs every mechanism on that same world (common random numbers); mechanisms that
randomise (NTM's and Titan's vendors) get a stream of their own, derived from the replicate's
seed and the mechanism's name (algorithms/common/streams.py), so a mechanism's numbers do not
depend on which others run beside it. Each row's `utility` is the social welfare
(eq. 3) and `cost` the operating plus vendor cost; its `tables` entry holds one row per
task for tasks.parquet.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from algorithms.auction import config as auction_config
from algorithms.auction.config import PdftspParams, PdftspSection, TitanSection
from algorithms.auction.mechanism import AuctionMechanism
from algorithms.auction.registry import REGISTRY
from algorithms.common.optimum_columns import add_optimum_columns
from algorithms.common.optional_keys import without_null_keys
from algorithms.common.streams import mechanism_stream
from algorithms.common.user_mechanisms import build, is_import_path
from market.auction.arrival_trace import load_arrival_trace
from market.auction.gpu_cluster import ClusterParams
from market.auction.labor_vendors import VendorParams
from market.auction.lora_instance import LoraInstance, draw_instance
from market.auction.lora_tasks import TaskParams

NAME = "auction"
PAPER = "001: Online Scheduling and Pricing for Multi-LoRA Fine-Tuning Tasks"
QUESTION = "Which tasks should a GPU provider admit, schedule and price online when LoRA fine-tuning tasks bid for its cluster?"
UTILITY = "social welfare of a day (eq. 3): admitted tasks' values minus the cluster's and labor vendors' costs, in cents; higher is better"
OPT_MAX_NODES = 8
OPT_MAX_SIZE = 200  # nodes x expected tasks: 4 nodes x 48 tasks (Fig. 12) or 2 x 96 (congested)
OPT_TIME_LIMIT = 60.0  # CP-SAT deterministic time per world; rows say whether it proved optimality
SECTIONS = ("cluster", "tasks", "vendors", "pdftsp", "titan")
MAX_REPLICATES_PER_CHUNK = 1  # a replicate is a day of auctions (seconds): one per Ray call
# measured, not simulated (rows and tasks.parquet): they differ run to run
TIMING_COLUMNS = ("decision_ms_per_task", "decision_seconds")
# summary.csv and MLflow get mean, std and 95% CI of these too (utility is the welfare)
SUMMARY_COLUMNS = (
    "cost",
    "completion_time",
    "welfare",
    "provider_utility",
    "users_utility",
    "payments",
    "admitted",
    "admission_rate",
    "utilisation",
    "decision_ms_per_task",
    "opt_ratio",
)
INPUT_FILES = {"tasks.trace_path": load_arrival_trace}
# Documented keys listed at null in conf/family/auction.yaml, so that the command line sets them
# without `+`; null is the code's default or the calibration group's (algorithms/common/optional_keys.py).
OPTIONAL_KEYS = (
    "cluster.tasks_per_node",
    "cluster.cost_scale",
    "pdftsp.kappa",
    "pdftsp.work_unit",
    "pdftsp.prices",
    "pdftsp.selector",
)
# The sections declared with their keys' defaults, checks and docs (market/common/sections.py): the
# docs/usage.md rows and the comments beside these keys in conf/family/auction.yaml come from them
DECLARED_SECTIONS = {
    "cluster": ClusterParams,
    "tasks": TaskParams,
    "vendors": VendorParams,
    "pdftsp": PdftspSection,
    "titan": TitanSection,
}


@dataclass(frozen=True)
class PreparedAuction:
    cluster: ClusterParams
    tasks: TaskParams
    vendors: VendorParams
    pdftsp: dict[str, PdftspParams]  # by mechanism name (pdFTSP, its variants and ZeroPrice)
    titan_time_limit: float
    mechanisms: tuple[str, ...]
    trace: np.ndarray | None


def check_user_mechanisms(mechanisms: tuple[str, ...]) -> None:
    """Import and build each user's mechanism once, before any work: ValueError naming the
    mechanism for a missing module or class, a class without `AuctionMechanism`'s `run` or
    parameters its constructor refuses (algorithms/common/user_mechanisms.py)."""
    for name in mechanisms:
        kind, params = _parsed(name)
        if is_import_path(kind):
            build(kind, params, AuctionMechanism)


@functools.cache
def _parsed(name: str) -> tuple[str, dict]:
    """`config.parse`, once per name (every day builds the same mechanisms); callers must not
    change the returned dict."""
    return auction_config.parse(name)


def prepare(config: dict) -> PreparedAuction:
    """Validate a config (errors name the key, or the arrival trace's file and line) and build
    what its days share (the trace is read once)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    config = without_null_keys(config, OPTIONAL_KEYS)
    cluster = ClusterParams.from_dict(config.get("cluster"))
    tasks = TaskParams.from_dict(config.get("tasks"))
    vendors = VendorParams.from_dict(config.get("vendors"))
    section = auction_config.pdftsp_section(config)
    mechanisms = auction_config.mechanisms(config)
    check_user_mechanisms(mechanisms)  # a user's own mechanisms: imported and built once, before any work
    pdftsp = auction_config.pdftsp_params(section, mechanisms, tasks, cluster)
    expected = tasks.mean_arrivals * tasks.slots
    if auction_config.OPTIMUM in mechanisms and (
        cluster.nodes > OPT_MAX_NODES or cluster.nodes * expected > OPT_MAX_SIZE
    ):
        raise ValueError(
            f"mechanisms: OPT solves problem (4) exactly and needs a small world: cluster.nodes <= "
            f"{OPT_MAX_NODES} and cluster.nodes x tasks.load x tasks.slots <= {OPT_MAX_SIZE} "
            f"(got {cluster.nodes} nodes, {expected:g} expected tasks)"
        )
    trace = tasks.load_trace()
    if trace is not None and len(trace) < tasks.slots:
        raise ValueError(f"tasks.trace_path: {tasks.trace_path}: {len(trace)} slots, a day needs {tasks.slots}")
    if trace is not None and tasks.trace_start is not None and tasks.trace_start + tasks.slots > len(trace):
        raise ValueError(
            f"tasks.trace_start ({tasks.trace_start}) + tasks.slots ({tasks.slots}) exceeds "
            f"the {len(trace)} slots of {tasks.trace_path}"
        )
    time_limit = auction_config.titan_time_limit(config)
    return PreparedAuction(cluster, tasks, vendors, pdftsp, time_limit, mechanisms, trace)


def mechanism_names(config: dict) -> list[str]:
    return list(auction_config.mechanisms(without_null_keys(config, OPTIONAL_KEYS)))


def make_mechanism(name: str, prepared: PreparedAuction) -> AuctionMechanism:
    """A fresh mechanism for one day (OPT is not an online mechanism: see offline_optimum): a
    built-in one from algorithms/auction/registry.py (a pdFTSP name with its settings resolved
    over the `pdftsp` section), or a user's own, built from its import path with the name's
    parameters."""
    kind, params = _parsed(name)
    if is_import_path(kind):
        return build(kind, params, AuctionMechanism)
    if kind not in REGISTRY:
        raise ValueError(f"no online mechanism named {name!r}")
    if name in prepared.pdftsp:
        params = asdict(prepared.pdftsp[name])
    return REGISTRY.build(kind, params, time_limit=prepared.titan_time_limit)


def draw_world(prepared: PreparedAuction, rng: np.random.Generator) -> LoraInstance:
    return draw_instance(prepared.cluster, prepared.tasks, prepared.vendors, rng, prepared.trace)


def simulate_replicate(prepared: PreparedAuction, replicate: int, rng: np.random.Generator) -> list[dict]:
    instance = draw_world(prepared, rng)
    rows = []
    optimum = {}
    for name in prepared.mechanisms:
        is_titan = _parsed(name)[0] == "Titan"
        if name == auction_config.OPTIMUM:
            from algorithms.auction.offline_optimum import offline_optimum

            result = offline_optimum(instance, OPT_TIME_LIMIT)
            outcome = result.outcome
            # CP-SAT's bound caps the true optimum: OPT / online ratios from an unproven
            # incumbent are at most (bound / incumbent) too low.
            optimum = {"proven": result.optimal, "bound": result.solution.bound}
        else:
            mechanism = make_mechanism(name, prepared)
            # Titan's variants draw Titan's vendors, so that they differ from it by their setting only
            stream = mechanism_stream(rng, "Titan" if is_titan else name)
            outcome = mechanism.run(instance, stream)
        metrics = outcome.metrics()
        if is_titan:
            metrics["titan_limited_slots"] = mechanism.last_stats.limited_slots
            metrics["titan_slots"] = mechanism.last_stats.slots
            metrics["titan_greedy_slots"] = mechanism.last_stats.greedy_slots
        table = outcome.task_table()
        admitted = table["admitted"]
        turnaround = (table["finish_slot"] - table["arrival"] + 1)[admitted]
        rows.append(
            {
                "mechanism": name,
                "utility": metrics["welfare"],
                "cost": metrics["operating_cost"] + metrics["vendor_cost"],
                "completion_time": float(turnaround.mean()) if len(turnaround) else float("nan"),
                **metrics,
                "tables": {"tasks": table},
            }
        )
    add_optimum_columns(rows, "OPT", ratio=True, **optimum)
    return rows
