"""The sow family's mechanism sections and names (docs/sow/mechanisms.md).

Sections (every key optional, defaults in brackets):
  cluster:   nodes [100]: N;
  reduction: epsilon [0.1] (Alg. 2: N' = N (1 - eps/10), estimates <= eps/10 set to 0),
             slack [true] (false: N' = N), eviction [lifo] (lifo | fifo | all);
  oracle:    kind [sampled] (sampled | exact | none), samples [hoeffding] (an integer R or
             `hoeffding`: Lemma F.1's R from eps0 and delta0), eps0 [0.1], delta0 [0.1],
             max_outcomes [200000] (the exact oracle's limit);
  prices:    start [paper] (paper: p(0) = 1/(2 D_max) | concurrency: 1/(2 C_max D_max));
  optimum:   time_limit [20] (CP-SAT deterministic time per realisation).
Mechanism names:
  Reduction, or Reduction(key=value,...) with keys epsilon, slack (on|off), eviction, oracle,
    samples, start overriding the sections: Alg. 1 + Alg. 2 + Alg. 3;
  ReserveWorstCase, FirstComeGreedy: the baselines;
  OPT (hindsight CP-SAT), LP (its LP relaxation), ExAnte (the relaxed problem's optimum, an
    upper bound on the expected hindsight optimum);
  TruthAudit(...), PrefixAudit(...) (same keys as Reduction): the Reduction's truthful run with
    every birth audited for Theorem 3.2 (truthfulness.audit_run), and Lemma 3.1 run by run
    (prefix_invariance.prefix_changes).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from algorithms.common.mechanism_names import check_unique, listed_names, parse_name
from market.common.fields import as_section, choice, integer, real, reject_unknown_keys

from .eviction import RULES
from .exponential_prices import STARTS
from .failure_oracle import hoeffding_samples
from .scheduler_framework import ORACLES, FrameworkSettings

__all__ = ["AUDITS", "BASELINES", "BOUNDS", "MechanismSpec", "SowSettings", "mechanism_specs"]

BASELINES = ("ReserveWorstCase", "FirstComeGreedy")
BOUNDS = ("OPT", "LP", "ExAnte")
REDUCTION = "Reduction"
AUDITS = ("TruthAudit", "PrefixAudit")
SWITCHES = {"on": True, "off": False}


@dataclass(frozen=True)
class OracleSection:
    kind: str = "sampled"
    samples: object = "hoeffding"
    eps0: float = 0.1
    delta0: float = 0.1
    max_outcomes: int = 200_000


@dataclass(frozen=True)
class SowSettings:
    """The sections above, checked; `framework(max_duration, horizon)` gives Alg. 1's settings."""

    nodes: int = 100
    epsilon: float = 0.1
    slack: bool = True
    eviction: str = "lifo"
    oracle: OracleSection = OracleSection()
    price_start: str = "paper"
    time_limit: float = 20.0

    @classmethod
    def from_config(cls, config: Mapping) -> "SowSettings":
        cluster = as_section(config.get("cluster"), "cluster")
        reject_unknown_keys(["nodes"], cluster, "cluster")
        reduction = as_section(config.get("reduction"), "reduction")
        reject_unknown_keys(["epsilon", "slack", "eviction"], reduction, "reduction")
        oracle = as_section(config.get("oracle"), "oracle")
        reject_unknown_keys(OracleSection, oracle, "oracle")
        prices = as_section(config.get("prices"), "prices")
        reject_unknown_keys(["start"], prices, "prices")
        optimum = as_section(config.get("optimum"), "optimum")
        reject_unknown_keys(["time_limit"], optimum, "optimum")
        slack = reduction.get("slack", True)
        if not isinstance(slack, bool):
            raise ValueError(f"reduction.slack must be true or false, got {slack!r}")
        samples = oracle.get("samples", "hoeffding")
        if samples != "hoeffding":
            samples = integer(samples, "oracle.samples", minimum=1)
        section = OracleSection(
            kind=choice(oracle.get("kind", "sampled"), "oracle.kind", ORACLES), samples=samples,
            eps0=real(oracle.get("eps0", 0.1), "oracle.eps0", 0.0, 1.0, strict_min=True, strict_max=True),
            delta0=real(oracle.get("delta0", 0.1), "oracle.delta0", 0.0, 1.0, strict_min=True, strict_max=True),
            max_outcomes=integer(oracle.get("max_outcomes", 200_000), "oracle.max_outcomes", minimum=1))
        return cls(
            nodes=integer(cluster.get("nodes", 100), "cluster.nodes", minimum=1),
            epsilon=real(reduction.get("epsilon", 0.1), "reduction.epsilon", 0.0, 1.0, strict_min=True,
                         strict_max=True),
            slack=slack, eviction=choice(reduction.get("eviction", "lifo"), "reduction.eviction", RULES),
            oracle=section, price_start=choice(prices.get("start", "paper"), "prices.start", STARTS),
            time_limit=real(optimum.get("time_limit", 20.0), "optimum.time_limit", 0.0, strict_min=True))

    def samples(self, max_duration: int, horizon: int) -> int:
        o = self.oracle
        if o.samples == "hoeffding":
            return hoeffding_samples(o.eps0, o.delta0, max_duration, horizon)
        return int(o.samples)

    def framework(self, max_duration: int, horizon: int) -> FrameworkSettings:
        return FrameworkSettings(nodes=self.nodes, epsilon=self.epsilon, slack=self.slack, eviction=self.eviction,
                                 oracle=self.oracle.kind, samples=self.samples(max_duration, horizon),
                                 max_outcomes=self.oracle.max_outcomes, price_start=self.price_start)


@dataclass(frozen=True)
class MechanismSpec:
    name: str
    kind: str                     # Reduction | a baseline | a bound | an audit
    settings: SowSettings


def _reduction(params: dict, base: SowSettings, where: str) -> SowSettings:
    known = ("epsilon", "slack", "eviction", "oracle", "samples", "start")
    reject_unknown_keys(known, params, where)
    s = base
    if "epsilon" in params:
        s = replace(s, epsilon=real(params["epsilon"], f"{where}: epsilon", 0.0, 1.0, strict_min=True,
                                    strict_max=True))
    if "slack" in params:
        s = replace(s, slack=SWITCHES[choice(params["slack"], f"{where}: slack", tuple(SWITCHES))])
    if "eviction" in params:
        s = replace(s, eviction=choice(params["eviction"], f"{where}: eviction", RULES))
    if "start" in params:
        s = replace(s, price_start=choice(params["start"], f"{where}: start", STARTS))
    if "oracle" in params or "samples" in params:
        kind = choice(params.get("oracle", s.oracle.kind), f"{where}: oracle", ORACLES)
        samples = params.get("samples", s.oracle.samples)
        if samples != "hoeffding":
            samples = integer(samples, f"{where}: samples", minimum=1)
        s = replace(s, oracle=replace(s.oracle, kind=kind, samples=samples))
    return s


def mechanism_specs(config: Mapping, base: SowSettings) -> tuple[MechanismSpec, ...]:
    """The `mechanisms` list, parsed (errors name the entry)."""
    specs = []
    for n, text in enumerate(listed_names(config)):
        where = f"mechanisms[{n}]"
        name = parse_name(text, where)
        if name.kind in (REDUCTION,) + AUDITS:
            specs.append(MechanismSpec(name.format(), name.kind, _reduction(dict(name.params), base, f"{where} {text}")))
        elif name.kind in BASELINES + BOUNDS:
            if name.params:
                raise ValueError(f"{where}: {text!r}: {name.kind} takes no parameters")
            specs.append(MechanismSpec(name.kind, name.kind, base))
        else:
            raise ValueError(f"{where}: unknown mechanism {text!r} "
                             f"(known: {', '.join((REDUCTION,) + BASELINES + BOUNDS + AUDITS)})")
    check_unique([s.name for s in specs])
    return tuple(specs)

