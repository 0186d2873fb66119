"""The sow family's mechanism sections, and its `mechanisms` list parsed with the names of
algorithms/sow/registry.py (docs/sow/mechanisms.md).

Sections, declared below (each key's default, check and doc: market/common/sections.py; every key
has a default): `cluster` (N), `reduction` (Alg. 2, Sec. 4.2: N' = N (1 - eps/10), estimates
<= eps/10 set to 0; `slack: false`: N' = N; the eviction rule, Sec. 3), `oracle` (the failure
oracle: Appendix F's replays, `samples: hoeffding` is Lemma F.1's R from eps0 and delta0, or
`exact`), `prices` (Alg. 3, eq. (7): p(0) = 1/(2 D_max) | concurrency: 1/(2 C_max D_max)) and
`optimum` (OPT's CP-SAT time per realisation).
A mechanism that runs Alg. 1 (Reduction, Stochastic, the audits: registry.py) takes the keys
epsilon, slack (on|off), eviction, oracle, samples and, but for Stochastic and StochasticAudit,
start, overriding the sections for itself: `Reduction(epsilon=0.05,eviction=fifo)`.
Oracle accuracy (`oracle_accuracy_warnings`): an OracleAccuracyWarning, not an error, when the
sampled oracle's eps0 exceeds reduction.epsilon / 10.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from algorithms.common.mechanism_names import check_unique, listed_names, parse_name
from algorithms.common.user_mechanisms import is_import_path
from market.common.fields import integer, real
from market.common.sections import checked, key, parse

from .eviction import RULES
from .exponential_prices import STARTS
from .failure_oracle import hoeffding_samples
from .registry import (
    AUDITS,
    BOUNDS,
    EPSILON,
    EVICTION,
    ORACLE_KIND,
    PRICE_START,
    REGISTRY,
    check_samples,
    known_text,
    takes_settings,
)
from .scheduler_framework import ORACLES, FrameworkSettings

__all__ = ["MECHANISM_SECTIONS", "MechanismSpec", "OracleAccuracyWarning", "SowSettings", "mechanism_specs"]

MAX_OUTCOMES = 200_000  # the exact oracle's limit when oracle.max_outcomes is null
_PROBABILITY = checked(real, 0.0, 1.0, strict_min=True, strict_max=True)  # in (0, 1)


def _boolean(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false, got {value!r}")
    return value


@dataclass(frozen=True)
class ClusterSection:
    """`cluster`: the N nodes of the cluster (Sec. 2)."""

    nodes: int = key(100, checked(integer, minimum=1), "N")


@dataclass(frozen=True)
class ReductionSection:
    """`reduction`: Alg. 2's relaxed capacity N' = N (1 - eps/10) and its zeroed estimates (Sec. 4.2),
    and the eviction rule (Sec. 3)."""

    epsilon: float = key(0.1, EPSILON, "Alg. 2's epsilon")
    slack: bool = key(True, _boolean, "false: N' = N, and no estimate is set to 0")
    eviction: str = key("lifo", EVICTION, " | ".join(RULES))


@dataclass(frozen=True)
class OracleSection:
    """`oracle`: the failure oracle, Appendix F's Monte-Carlo replays (Lemma F.1) or exact."""

    kind: str = key("sampled", ORACLE_KIND, " | ".join(ORACLES))
    samples: object = key("hoeffding", check_samples, "R: hoeffding (Lemma F.1 from eps0, delta0) or an integer")
    eps0: float = key(0.1, _PROBABILITY, "Lemma F.1's accuracy")
    delta0: float = key(0.1, _PROBABILITY, "Lemma F.1's failure probability")
    max_outcomes: int = key(
        MAX_OUTCOMES,
        checked(integer, minimum=1),
        f"the exact oracle's limit; null: {MAX_OUTCOMES} (a null key stays out of the cell's hash)",
        optional=True,
    )


@dataclass(frozen=True)
class PricesSection:
    """`prices`: the start of Alg. 3's prices, eq. (7)."""

    start: str = key("paper", PRICE_START, " | ".join(STARTS))


@dataclass(frozen=True)
class OptimumSection:
    """`optimum`: the hindsight optimum OPT (offline_optimum.py)."""

    time_limit: float = key(20.0, checked(real, 0.0, strict_min=True), "OPT: CP-SAT deterministic time per realisation")


MECHANISM_SECTIONS = {  # the sections a mechanism reads (family.py: DECLARED_SECTIONS)
    "cluster": ClusterSection,
    "reduction": ReductionSection,
    "oracle": OracleSection,
    "prices": PricesSection,
    "optimum": OptimumSection,
}


@dataclass(frozen=True)
class SowSettings:
    """The sections above, checked; `framework(max_duration, horizon)` gives Alg. 1's settings."""

    nodes: int = ClusterSection.nodes
    epsilon: float = ReductionSection.epsilon
    slack: bool = ReductionSection.slack
    eviction: str = ReductionSection.eviction
    oracle: OracleSection = OracleSection()
    price_start: str = PricesSection.start
    time_limit: float = OptimumSection.time_limit

    @classmethod
    def from_config(cls, config: Mapping) -> SowSettings:
        cluster, reduction, oracle, prices, optimum = (
            parse(section, config.get(name), name) for name, section in MECHANISM_SECTIONS.items()
        )
        return cls(
            nodes=cluster.nodes,
            epsilon=reduction.epsilon,
            slack=reduction.slack,
            eviction=reduction.eviction,
            oracle=oracle,
            price_start=prices.start,
            time_limit=optimum.time_limit,
        )

    def overridden(self, oracle_kind: str | None = None, samples=None, **keys) -> SowSettings:
        """These settings with a mechanism name's keys (checked by registry.py) put over them."""
        oracle = {"kind": oracle_kind, "samples": samples}
        return replace(self, oracle=replace(self.oracle, **{k: v for k, v in oracle.items() if v is not None}), **keys)

    def samples(self, max_duration: int, horizon: int) -> int:
        o = self.oracle
        if o.samples == "hoeffding":
            return hoeffding_samples(o.eps0, o.delta0, max_duration, horizon)
        return int(o.samples)

    def framework(self, max_duration: int, horizon: int) -> FrameworkSettings:
        return FrameworkSettings(
            nodes=self.nodes,
            epsilon=self.epsilon,
            slack=self.slack,
            eviction=self.eviction,
            oracle=self.oracle.kind,
            samples=self.samples(max_duration, horizon),
            max_outcomes=self.oracle.max_outcomes,
            price_start=self.price_start,
        )


@dataclass(frozen=True)
class MechanismSpec:
    name: str
    kind: str  # an entry of registry.py, a bound, or a user's import path
    settings: SowSettings  # the sections, with the name's keys over them for a mechanism that runs Alg. 1
    params: tuple = ()  # the (key, value) pairs its function or a user's constructor takes


def mechanism_specs(config: Mapping, base: SowSettings) -> tuple[MechanismSpec, ...]:
    """The `mechanisms` list, parsed with registry.py's tables (errors name the entry)."""
    specs = []
    for n, text in enumerate(listed_names(config)):
        where = f"mechanisms[{n}]"
        name = parse_name(text, where)
        table = REGISTRY if name.kind in REGISTRY else AUDITS if name.kind in AUDITS else None
        if is_import_path(name.kind):  # a user's own Scheduler: checked by family.prepare
            specs.append(MechanismSpec(name.format(), name.kind, base, tuple(name.params.items())))
        elif table is not None and takes_settings(name.kind):
            specs.append(MechanismSpec(name.format(), name.kind, base.overridden(**table.params(name, where))))
        elif table is not None:
            params = table.params(name, where)
            specs.append(MechanismSpec(table.canonical(name.kind, params), name.kind, base, tuple(params.items())))
        elif name.kind in BOUNDS:
            if name.params:
                raise ValueError(f"{where}: {text!r}: {name.kind} takes no parameters")
            specs.append(MechanismSpec(name.kind, name.kind, base))
        else:
            raise ValueError(f"{where}: unknown mechanism {text!r} (known: {known_text()})")
    check_unique([s.name for s in specs])
    return tuple(specs)


class OracleAccuracyWarning(UserWarning):
    """The sampled failure oracle is less accurate than Alg. 2's threshold eps/10 (below)."""


def oracle_accuracy_warnings(specs: tuple[MechanismSpec, ...], max_duration: int, horizon: int) -> list[str]:
    """The mechanisms whose sampled oracle has eps0 > epsilon / 10: eps0 is `oracle.eps0` with
    `samples: hoeffding`, else the accuracy Lemma F.1 gives R replays at delta0,
    sqrt(log(D_max S_max / delta0) / (2 R)).

    A warning, not an error. Alg. 2 zeroes the estimates at or below eps/10 (line 6); with an
    estimator error eps0 above that threshold, sampling noise alone can lift a zero failure
    probability over it (and hide a true one up to eps/10 + eps0), so Claim 4.2's tie-breaking
    holds for fewer jobs. But the paper asks only eps0 = delta0 = Theta(eps) (Sec. 4.2) and its proof
    moves the threshold to eps/10 + eps0 for an approximate oracle (Sec. 4.3, after Lemma 4.3):
    eps0 > eps/10 keeps Theorem 4.1's O(eps) guarantees. And eps0 <= eps/10 costs Lemma F.1's
    R ~ 100 times more replays (R = 32,308 at eps = 0.1 with the family's bounds, against 324): the
    family's own defaults (eps0 = eps = 0.1) are a choice the paper allows, not a mistake."""
    import math

    out = []
    for spec in specs:
        s = spec.settings
        if not takes_settings(spec.kind) or s.oracle.kind != "sampled":
            continue
        if s.oracle.samples == "hoeffding":
            eps0, what = s.oracle.eps0, "oracle.eps0"
        else:
            eps0 = math.sqrt(math.log(max_duration * horizon / s.oracle.delta0) / (2.0 * int(s.oracle.samples)))
            what = f"Lemma F.1's eps0 for R = {int(s.oracle.samples)} at oracle.delta0 = {s.oracle.delta0:g}"
        if eps0 > s.epsilon / 10.0 + 1e-12:
            out.append(f"{spec.name}: {what} = {eps0:.3g} > reduction.epsilon / 10 = {s.epsilon / 10.0:g}")
    return out


def warn_oracle_accuracy(specs: tuple[MechanismSpec, ...], max_duration: int, horizon: int) -> None:
    """One OracleAccuracyWarning listing `oracle_accuracy_warnings` (none if it is empty)."""
    import warnings

    found = oracle_accuracy_warnings(specs, max_duration, horizon)
    if found:
        warnings.warn(
            "the sampled failure oracle is less accurate than Alg. 2's threshold eps/10 (allowed: "
            "Sec. 4.2 asks eps0 = Theta(eps); docs/sow/mechanisms.md): " + "; ".join(found),
            OracleAccuracyWarning,
            stacklevel=3,
        )
