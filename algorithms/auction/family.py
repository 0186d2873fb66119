"""The `auction` family as the sweep engine sees it (paper 001).

Config keys (conf/family/auction.yaml, docs/auction/model.md):
  cluster:    market/auction/gpu_cluster.py ClusterParams;
  tasks:      market/auction/lora_tasks.py TaskParams (tasks.trace_path is read once per cell);
  vendors:    market/auction/labor_vendors.py VendorParams;
  pdftsp:     alpha, beta (lemma2, lemma2_tight or a number), kappa (the unit of bbar: a number
              or `lemma`), work_unit (ksamples or samples), price_scale (multiplies alpha and
              beta: the same effect as kappa, and multiplied with it),
              payment, schedule_space, prices (on or off), selector (dp, or exact for one
              node type) (algorithms/auction/pdftsp.py, PdftspParams below);
  titan:      time_limit (CP-SAT deterministic time per slot: algorithms/auction/titan.py);
  mechanisms: names among pdFTSP, Titan, EFT, NTM, OPT (OPT: small worlds only), Titan variants
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

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from algorithms.auction.eft import EFT
from algorithms.auction.mechanism import AuctionMechanism
from algorithms.auction.ntm import NTM
from algorithms.auction.pdftsp import PAYMENTS, SCHEDULE_SPACES, SELECTORS, PdFTSP
from algorithms.common.mechanism_names import check_unique, listed_names, parse_name
from algorithms.common.optimum_columns import add_optimum_columns
from algorithms.common.optional_keys import without_null_keys
from algorithms.common.streams import mechanism_stream
from algorithms.common.user_mechanisms import build, is_import_path
from market.auction.arrival_trace import load_arrival_trace
from market.auction.gpu_cluster import ClusterParams
from market.auction.labor_vendors import VendorParams
from market.auction.lora_instance import LoraInstance, draw_instance
from market.auction.lora_tasks import TaskParams
from market.common.fields import as_section, choice, is_real, real, reject_unknown_keys

NAME = "auction"
PAPER = "001: Online Scheduling and Pricing for Multi-LoRA Fine-Tuning Tasks"
QUESTION = "Which tasks should a GPU provider admit, schedule and price online when LoRA fine-tuning tasks bid for its cluster?"
UTILITY = "social welfare of a day (eq. 3): admitted tasks' values minus the cluster's and labor vendors' costs, in cents; higher is better"
MECHANISMS = ("pdFTSP", "Titan", "EFT", "NTM", "OPT", "ZeroPrice", "EFT(admit=positive)")
ZERO_PRICE = {"prices": "off", "schedule_space": "fitting"}
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


PDFTSP_KEYS = ("alpha", "beta", "kappa", "work_unit", "price_scale", "payment", "schedule_space", "prices", "selector")
BOUNDS = ("lemma2", "lemma2_tight")
WORK_UNITS = {"ksamples": 1.0, "samples": 1000.0}  # the world's computation is in ksamples


def _switch(raw, key: str) -> bool:
    """An on / off setting (a YAML boolean, or `on` / `off` in a mechanism's name)."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw in ("on", "off"):
        return raw == "on"
    raise ValueError(f"{key} must be on or off, got {raw!r}")


def _pdftsp_settings(d: Mapping, where: str) -> dict:
    """Check a pdFTSP setting mapping (the `pdftsp` section or a name's parameters)."""
    reject_unknown_keys(PDFTSP_KEYS, d, where)
    for key in ("alpha", "beta"):
        raw = d.get(key, "lemma2")
        ok = raw in BOUNDS if isinstance(raw, str) else is_real(raw) and np.isfinite(raw) and raw > 0
        if not ok or (key == "alpha" and raw == "lemma2_tight"):
            allowed = "'lemma2' or a number > 0" if key == "alpha" else "'lemma2', 'lemma2_tight' or a number > 0"
            raise ValueError(f"{where}.{key} must be {allowed}, got {raw!r}")
    real(d.get("price_scale", 1.0), f"{where}.price_scale", 0, strict_min=True)
    kappa = d.get("kappa", 1.0)
    if kappa != "lemma":
        if isinstance(kappa, str):
            raise ValueError(f"{where}.kappa must be 'lemma' or a number > 0, got {kappa!r}")
        real(kappa, f"{where}.kappa", 0, strict_min=True)
    choice(d.get("work_unit", "ksamples"), f"{where}.work_unit", tuple(WORK_UNITS))
    _switch(d.get("prices", "on"), f"{where}.prices")
    choice(d.get("payment", "critical"), f"{where}.payment", PAYMENTS)
    choice(d.get("selector", "dp"), f"{where}.selector", SELECTORS)
    choice(d.get("schedule_space", "paper"), f"{where}.schedule_space", SCHEDULE_SPACES)
    return dict(d)


@dataclass(frozen=True)
class PdftspParams:
    """pdFTSP's settings: alpha and beta of Lemma 2 (`lemma2`: max b_i / M_i and max b_i / r_i
    from the workload's bounds; beta `lemma2_tight`: max b_i / (r_i n_i), n_i the fewest
    slots task i can run in, which Lemma 2's proof allows since sum_t r_kt(il) >= r_i n_i; or
    numbers), both multiplied by `price_scale`; `kappa` and `work_unit`, the unit of bbar in eq.
    7-8 (docs/auction/model.md; kappa `lemma` = 1 / TaskParams.gross_bbar_floor, so that every
    task's bbar on its gross value is >= 1); `prices` off: the zero-price ablation."""

    alpha: float
    beta: float
    payment: str = "critical"
    schedule_space: str = "paper"
    kappa: float = 1.0
    work_unit: float = 1.0
    prices: bool = True
    selector: str = "dp"

    def build(self, cls: type[PdFTSP] = PdFTSP, **overrides) -> PdFTSP:
        """The mechanism with these settings (`overrides` replace some, e.g. payment="eq14")."""
        return cls(**{**asdict(self), **overrides})

    @classmethod
    def from_dict(
        cls, d: Mapping | None, tasks: TaskParams, cluster: ClusterParams, where: str = "pdftsp"
    ) -> PdftspParams:
        d = _pdftsp_settings(dict(d or {}), where)
        fastest = max(t.task_rate for t in cluster.build(1).types)
        bounds = {
            "lemma2": {"alpha": tasks.value_density_bound, "beta": tasks.value_per_memory_bound},
            "lemma2_tight": {"beta": tasks.value_per_memory_slot_bound(fastest)},
        }
        values = {}
        for key in ("alpha", "beta"):
            raw = d.get(key, "lemma2")
            values[key] = bounds[raw][key] if isinstance(raw, str) else float(raw)
        scale = float(d.get("price_scale", 1.0))
        work_unit = WORK_UNITS[d.get("work_unit", "ksamples")]
        kappa = d.get("kappa", 1.0)
        if kappa == "lemma":
            floor = tasks.gross_bbar_floor(work_unit)
            if not floor > 0:
                raise ValueError(
                    f"{where}.kappa=lemma needs a positive lowest value per ksample "
                    f"(tasks.value_per_ksample), got {list(tasks.value_per_ksample)}"
                )
            kappa = 1.0 / floor
        selector = d.get("selector", "dp")
        if selector == "exact" and len(cluster.build(1).types) != 1:
            raise ValueError(
                f"{where}.selector=exact needs one node type, got cluster.node_type="
                f"{cluster.node_type} with {cluster.nodes} nodes"
            )
        return cls(
            values["alpha"] * scale,
            values["beta"] * scale,
            d.get("payment", "critical"),
            d.get("schedule_space", "paper"),
            float(kappa),
            work_unit,
            _switch(d.get("prices", "on"), f"{where}.prices"),
            selector,
        )


def parse_variant(name: str) -> dict | None:
    """`pdFTSP(key=value,...)` -> its settings (the grammar of
    algorithms/common/mechanism_names.py), ZeroPrice -> ZERO_PRICE; None for any other name."""
    if name == "ZeroPrice":
        return dict(ZERO_PRICE)
    parsed = parse_name(name)
    if parsed.kind != "pdFTSP" or not parsed.params:
        return None
    return _pdftsp_settings(parsed.params, f"mechanisms: {name}")


@dataclass(frozen=True)
class PreparedAuction:
    cluster: ClusterParams
    tasks: TaskParams
    vendors: VendorParams
    pdftsp: dict[str, PdftspParams]  # by mechanism name (pdFTSP and its variants)
    titan_time_limit: float
    mechanisms: tuple[str, ...]
    trace: np.ndarray | None


TITAN_STARTS = ("earliest", "cheapest")
TITAN_OBJECTIVES = ("welfare", "throughput")


def titan_variant(name: str) -> dict | None:
    """`Titan` and `Titan(start=earliest|cheapest,solve=on|off,objective=welfare|throughput)` ->
    their settings (defaults: earliest, on, welfare); None for any other name (errors name the
    entry)."""
    parsed = parse_name(name)
    if parsed.kind != "Titan":
        return None
    params = dict(parsed.params)
    where = f"mechanisms: {name}"
    reject_unknown_keys(("start", "solve", "objective"), params, where)
    start = choice(params.get("start", "earliest"), f"{where}: start", TITAN_STARTS)
    objective = choice(params.get("objective", "welfare"), f"{where}: objective", TITAN_OBJECTIVES)
    return {"start": start, "solve": _switch(params.get("solve", "on"), f"{where}: solve"), "objective": objective}


def _merged(section: dict, variant: dict) -> dict:
    """The `pdftsp` section with a variant's keys over it; kappa and price_scale are one
    quantity (the unit of money in eq. 7-8), so a variant that sets either replaces both of the
    section's."""
    base = dict(section)
    if {"kappa", "price_scale"} & set(variant):
        base.pop("kappa", None)
        base.pop("price_scale", None)
    return {**base, **variant}


def user_mechanism(name: str) -> tuple[str, dict] | None:
    """A user's own mechanism `package.module:Class(key=value,...)` -> (its import path, its
    parameters); None for any other name."""
    if name in MECHANISMS:
        return None
    parsed = parse_name(name)
    return (parsed.kind, dict(parsed.params)) if is_import_path(parsed.kind) else None


def _mechanisms(config: Mapping) -> tuple[str, ...]:
    names = listed_names(config)
    for name in names:
        if (
            name not in MECHANISMS
            and user_mechanism(name) is None
            and parse_variant(name) is None
            and titan_variant(name) is None
        ):
            raise ValueError(
                f"mechanisms: unknown mechanism {name!r} for family auction "
                f"(known: {', '.join(MECHANISMS)}, or pdFTSP(key=value,...), "
                f"Titan(start=earliest|cheapest,solve=on|off,objective=welfare|throughput), "
                f"or package.module:Class(key=value,...): docs/extending.md)"
            )
    return tuple(check_unique(names))


def check_user_mechanisms(mechanisms: tuple[str, ...]) -> None:
    """Import and build each user's mechanism once, before any work: ValueError naming the
    mechanism for a missing module or class, a class without `AuctionMechanism`'s `run` or
    parameters its constructor refuses (algorithms/common/user_mechanisms.py)."""
    for name in mechanisms:
        user = user_mechanism(name)
        if user is not None:
            build(*user, AuctionMechanism)


def _titan_time_limit(config: Mapping) -> float:
    section = as_section(config.get("titan"), "titan")
    reject_unknown_keys(("time_limit",), section, "titan")
    return real(section.get("time_limit", 2.0), "titan.time_limit", 0, strict_min=True)


def prepare(config: dict) -> PreparedAuction:
    """Validate a config (errors name the key, or the arrival trace's file and line) and build
    what its days share (the trace is read once)."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping, got {type(config).__name__}")
    config = without_null_keys(config, OPTIONAL_KEYS)
    cluster = ClusterParams.from_dict(config.get("cluster"))
    tasks = TaskParams.from_dict(config.get("tasks"))
    vendors = VendorParams.from_dict(config.get("vendors"))
    section = _pdftsp_settings(as_section(config.get("pdftsp"), "pdftsp"), "pdftsp")
    mechanisms = _mechanisms(config)
    check_user_mechanisms(mechanisms)  # a user's own mechanisms: imported and built once, before any work
    pdftsp = {
        name: PdftspParams.from_dict(
            _merged(section, parse_variant(name) or {}),
            tasks,
            cluster,
            "pdftsp" if name == "pdFTSP" else f"mechanisms: {name}",
        )
        for name in mechanisms
        if name == "pdFTSP" or parse_variant(name) is not None
    }
    expected = tasks.mean_arrivals * tasks.slots
    if "OPT" in mechanisms and (cluster.nodes > OPT_MAX_NODES or cluster.nodes * expected > OPT_MAX_SIZE):
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
    return PreparedAuction(cluster, tasks, vendors, pdftsp, _titan_time_limit(config), mechanisms, trace)


def mechanism_names(config: dict) -> list[str]:
    return list(_mechanisms(without_null_keys(config, OPTIONAL_KEYS)))


def make_mechanism(name: str, prepared: PreparedAuction) -> AuctionMechanism:
    """A fresh mechanism for one day (OPT is not an online mechanism: see offline_optimum); a
    user's own is built from its import path with the name's parameters."""
    user = user_mechanism(name)
    if user is not None:
        return build(*user, AuctionMechanism)
    if name in prepared.pdftsp:
        return prepared.pdftsp[name].build()
    if name == "EFT":
        return EFT()
    if name == "EFT(admit=positive)":
        return EFT(admit="positive")
    if name == "NTM":
        return NTM()
    titan = titan_variant(name)
    if titan is not None:
        from algorithms.auction.titan import Titan

        return Titan(time_limit=prepared.titan_time_limit, **titan)
    raise ValueError(f"no online mechanism named {name!r}")


def draw_world(prepared: PreparedAuction, rng: np.random.Generator) -> LoraInstance:
    return draw_instance(prepared.cluster, prepared.tasks, prepared.vendors, rng, prepared.trace)


def simulate_replicate(prepared: PreparedAuction, replicate: int, rng: np.random.Generator) -> list[dict]:
    instance = draw_world(prepared, rng)
    rows = []
    optimum = {}
    for name in prepared.mechanisms:
        is_titan = titan_variant(name) is not None
        if name == "OPT":
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
