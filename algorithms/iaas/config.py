"""The config sections of the `iaas` family's policies (paper 003, Sec. IV-C, V-A): `policies`
(the grids of beta, beta0, bids and theta), `self_owned` (R) and `learning` (OptiLearning's cost
normalisation), and the mechanism names:

- `BestDynalloc`: the cheapest of Dynalloc policies {beta0, beta, b} over the grid, in hindsight (the
  paper's alpha, Tables II-III). `policies.beta_per_bid: best` is Sec. V-B's Experiment 2 grid:
  each bid keeps only its best beta without self-owned instances on the same stream (beta*(b),
  "computed in advance"), so that the grid is beta0 x b (91 policies; 7 without self-owned
  instances); `grid` (default) crosses every beta with every bid;
- `BestTheta`: the cheapest theta policy of [6], [7] (with R > 0 the self-owned instances by
  the naive eq. (2)); the paper's alpha';
- `BestNaive`: the cheapest of eq. (2) + Proportion over beta x b, or over b with beta*(b)
  (Table III's 7 "policies defined by (2)");
- `OptiLearning`, `OptiLearning(grid=theta)`: Alg. 3 over the Dynalloc grid or the theta grid (with R > 0
  the theta policies take their self-owned instances by eq. (2): Table IV's baseline);
- `Dynalloc(beta0=...,beta=...,b=...)` (beta0 a number or `naive`), `Theta(theta=...,b=...)`: one
  policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from algorithms.common.mechanism_names import check_unique, listed_names, parse_name
from algorithms.iaas.opti_learning import NORMALISATIONS
from algorithms.iaas.policies import BETAS, BIDS, NAIVE, THETA_READINGS, THETAS, Policy, dynalloc_grid, theta_grid
from algorithms.iaas.registry import REGISTRY
from market.common.fields import choice, integer, number_list, reject_unknown_keys
from market.common.sections import Check, checked, key, parse

BEST = ("BestDynalloc", "BestTheta", "BestNaive")
BETA_PER_BID = ("grid", "best")
LEARNING = "OptiLearning"


def grid_check(high: float, strict_high: bool) -> Check:
    """A grid of `policies`: a non-empty list of numbers in [0, high] ([0, high) when `strict_high`),
    as a tuple of floats."""

    def check(value, where: str) -> tuple[float, ...]:
        values = number_list(value, where, minimum=0.0)
        for v in values:
            if v > high or (strict_high and v == high):
                raise ValueError(
                    f"{where} must hold numbers in [0, {high:g}{')' if strict_high else ']'}, got {list(values)}"
                )
        return tuple(float(v) for v in values)

    return check


BETA_GRID = grid_check(1.0, True)  # beta, beta0 in [0, 1)
BID_GRID = grid_check(float("inf"), False)
THETA_GRID = grid_check(1.0, False)  # theta in [0, 1]


@dataclass(frozen=True)
class PoliciesConfig:
    """Section `policies`: the grids of Sec. V-A (beta, beta0 in {i/12} U {0.9999}, bids 0.10..0.28
    by 0.03, theta 0.0..1.0 by 0.1) when a key is left out, and the reading of theta."""

    betas: tuple[float, ...] = key(BETAS, BETA_GRID, "null: the grids above (docs/iaas/mechanisms.md)", optional=True)
    bids: tuple[float, ...] = key(BIDS, BID_GRID, "null: the grid above", optional=True)
    thetas: tuple[float, ...] = key(THETAS, THETA_GRID, "null: the grid above", optional=True)
    beta0s: tuple[float, ...] = key(BETAS, BETA_GRID, "null: the grid above", optional=True)
    theta_reading: str = key(
        "once", checked(choice, THETA_READINGS), "once | rebid: what a theta policy does after a spot loss"
    )
    beta_per_bid: str = key(
        "grid",
        checked(choice, BETA_PER_BID),
        "grid (null) | best: each bid keeps its best beta (Sec. V-B, Experiment 2)",
        optional=True,
    )


@dataclass(frozen=True)
class SelfOwnedConfig:
    """Section `self_owned`: R self-owned instances (Sec. V-B, Experiment 2: 200-800)."""

    instances: int = key(0, checked(integer, minimum=0), "R: self-owned instances")


@dataclass(frozen=True)
class LearningConfig:
    """Section `learning`: OptiLearning's cost normalisation (algorithms/iaas/opti_learning.py)."""

    normalisation: str = key("bound", checked(choice, NORMALISATIONS), "bound | job_minmax | none")


@dataclass(frozen=True)
class PolicySettings:
    """Sections `policies`, `self_owned` and `learning`, as the rest of the family reads them."""

    betas: tuple = BETAS
    bids: tuple = BIDS
    thetas: tuple = THETAS
    theta_reading: str = "once"
    beta0s: tuple = BETAS
    beta_per_bid: str = "grid"
    instances: int = 0
    normalisation: str = "bound"

    @classmethod
    def from_config(cls, config: Mapping) -> PolicySettings:
        grids = parse(PoliciesConfig, config.get("policies"), "policies")
        own = parse(SelfOwnedConfig, config.get("self_owned"), "self_owned")
        learning = parse(LearningConfig, config.get("learning"), "learning")
        return cls(
            betas=grids.betas,
            bids=grids.bids,
            thetas=grids.thetas,
            theta_reading=grids.theta_reading,
            beta0s=grids.beta0s,
            beta_per_bid=grids.beta_per_bid,
            instances=own.instances,
            normalisation=learning.normalisation,
        )

    def dynalloc(self, beta_star: Mapping | None = None) -> list[Policy]:
        """Our grid: beta0 over `beta0s` when there are self-owned instances (Sec. V-B, Exp. 2);
        with `beta_star` (bid -> beta*(b)) one beta per bid."""
        beta0s = self.beta0s if self.instances > 0 else (NAIVE,)
        if beta_star is None:
            return dynalloc_grid(self.betas, self.bids, beta0s)
        return [Policy("dynalloc", b, beta_star[b], beta0) for b in self.bids for beta0 in beta0s]

    def naive(self, beta_star: Mapping | None = None) -> list[Policy]:
        if beta_star is None:
            return dynalloc_grid(self.betas, self.bids, (NAIVE,))
        return [Policy("dynalloc", b, beta_star[b], NAIVE) for b in self.bids]

    def spot_only(self) -> list[Policy]:
        """The Dynalloc policies without self-owned instances, beta x b: where beta*(b) is chosen."""
        return dynalloc_grid(self.betas, self.bids, (NAIVE,))

    def theta(self) -> list[Policy]:
        return theta_grid(self.thetas, self.bids, THETA_READINGS[self.theta_reading])


@dataclass(frozen=True)
class MechanismSpec:
    """One row of a cell: its name, its kind and (for one policy, or a learner's grid) what it runs."""

    name: str
    kind: str
    policy: Policy | None = None
    grid: str = "dynalloc"


def mechanism_specs(config: Mapping, settings: PolicySettings) -> tuple[MechanismSpec, ...]:
    specs = []
    for name in check_unique(listed_names(config)):
        parsed = parse_name(name)
        if parsed.kind in REGISTRY:
            policy = REGISTRY.build(parsed.kind, REGISTRY.params(parsed), theta_reading=settings.theta_reading)
            specs.append(MechanismSpec(name, parsed.kind, policy))
        elif parsed.kind in BEST:
            if parsed.params:
                raise ValueError(f"mechanisms: {name!r}: {parsed.kind} takes no parameters")
            specs.append(MechanismSpec(name, parsed.kind))
        elif parsed.kind == LEARNING:
            reject_unknown_keys(("grid",), parsed.params, f"mechanisms: {name}")
            grid = choice(parsed.params.get("grid", "dynalloc"), f"mechanisms: {name}: grid", ("dynalloc", "theta"))
            specs.append(MechanismSpec(name, LEARNING, grid=grid))
        else:
            known = ", ".join([*BEST, LEARNING, f"{LEARNING}(grid=theta)", *REGISTRY.names(), *REGISTRY.examples()])
            raise ValueError(f"mechanisms: unknown mechanism {name!r} for family iaas (known: {known})")
    return tuple(specs)
