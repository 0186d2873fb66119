"""The config sections of the `iaas` family's policies (paper 003, Sec. IV-C, V-A): `policies`
(the grids of beta, beta0, bids and theta), `self_owned` (R) and `learning` (OptiLearning's cost
normalisation), and the mechanism names:

- `BestOurs`: the cheapest of our policies {beta0, beta, b} over the grid, in hindsight (the
  paper's alpha, Tables II-III);
- `BestTheta`: the cheapest theta policy of [6], [7] (with R > 0 the self-owned instances by
  the naive eq. (2)); the paper's alpha';
- `BestNaive`: the cheapest of eq. (2) + Proportion over beta x b (Sec. V-B, Experiment 2's
  other reading of "the policies defined by (2)");
- `OptiLearning`, `OptiLearning(grid=theta)`: Alg. 3 over our grid or the theta grid;
- `Ours(beta0=...,beta=...,b=...)` (beta0 a number or `naive`), `Theta(theta=...,b=...)`: one
  policy.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from algorithms.common.mechanism_names import check_unique, listed_names, parse_name
from algorithms.iaas.opti_learning import NORMALISATIONS
from algorithms.iaas.policies import BETAS, BIDS, NAIVE, THETAS, Policy, ours_grid, theta_grid
from market.common.fields import as_section, choice, integer, number_list, real, reject_unknown_keys

BEST = ("BestOurs", "BestTheta", "BestNaive")
# The theta policies' reading (policies.theta_reading): on-demand from their first spot loss
# (`once`, the default: it reproduces Table II's rho, docs/iaas/mechanisms.md) or a new bid every
# hour while the job has flexibility (`rebid`).
THETA_READINGS = {"once": "theta_once", "rebid": "theta"}
LEARNING = "OptiLearning"
SINGLE = ("Ours", "Theta")
KINDS = (*BEST, LEARNING, *SINGLE)


@dataclass(frozen=True)
class PolicySettings:
    """Sections `policies`, `self_owned` and `learning`."""

    betas: tuple = BETAS
    bids: tuple = BIDS
    thetas: tuple = THETAS
    theta_reading: str = "once"
    beta0s: tuple = BETAS
    instances: int = 0
    normalisation: str = "bound"

    @classmethod
    def from_config(cls, config: Mapping) -> "PolicySettings":
        grids = as_section(config.get("policies"), "policies")
        reject_unknown_keys(("betas", "bids", "thetas", "beta0s", "theta_reading"), grids, "policies")
        own = as_section(config.get("self_owned"), "self_owned")
        reject_unknown_keys(("instances",), own, "self_owned")
        learning = as_section(config.get("learning"), "learning")
        reject_unknown_keys(("normalisation",), learning, "learning")

        def grid(key, default, high, strict_high):
            if key not in grids:
                return default
            values = number_list(grids[key], f"policies.{key}", minimum=0.0)
            for v in values:
                if v > high or (strict_high and v == high):
                    raise ValueError(f"policies.{key} must hold numbers in [0, {high:g}{')' if strict_high else ']'}, "
                                     f"got {list(values)}")
            return tuple(float(v) for v in values)

        return cls(betas=grid("betas", BETAS, 1.0, True), bids=grid("bids", BIDS, float("inf"), False),
                   thetas=grid("thetas", THETAS, 1.0, False), beta0s=grid("beta0s", BETAS, 1.0, True),
                   theta_reading=choice(grids.get("theta_reading", "once"), "policies.theta_reading", THETA_READINGS),
                   instances=integer(own.get("instances", 0), "self_owned.instances", 0),
                   normalisation=choice(learning.get("normalisation", "bound"), "learning.normalisation",
                                        NORMALISATIONS))

    def ours(self) -> list[Policy]:
        """Our grid: beta0 over `beta0s` when there are self-owned instances (Sec. V-B, Exp. 2)."""
        return ours_grid(self.betas, self.bids, self.beta0s if self.instances > 0 else (NAIVE,))

    def naive(self) -> list[Policy]:
        return ours_grid(self.betas, self.bids, (NAIVE,))

    def theta(self) -> list[Policy]:
        return theta_grid(self.thetas, self.bids, THETA_READINGS[self.theta_reading])


@dataclass(frozen=True)
class MechanismSpec:
    """One row of a cell: its name, its kind and (for one policy, or a learner's grid) what it runs."""

    name: str
    kind: str
    policy: Policy | None = None
    grid: str = "ours"


def _bid(value, name: str) -> float:
    return real(value, f"mechanisms: {name}: b", minimum=0.0, strict_min=True)


def mechanism_specs(config: Mapping, settings: PolicySettings) -> tuple[MechanismSpec, ...]:
    names = listed_names(config)
    specs = []
    for name in check_unique(names):
        parsed = parse_name(name)
        p = parsed.params
        if parsed.kind not in KINDS:
            raise ValueError(f"mechanisms: unknown mechanism {name!r} for family iaas (known: {', '.join(KINDS)})")
        if parsed.kind in BEST:
            if p:
                raise ValueError(f"mechanisms: {name!r}: {parsed.kind} takes no parameters")
            specs.append(MechanismSpec(name, parsed.kind))
        elif parsed.kind == LEARNING:
            reject_unknown_keys(("grid",), p, f"mechanisms: {name}")
            grid = choice(p.get("grid", "ours"), f"mechanisms: {name}: grid", ("ours", "theta"))
            if settings.instances > 0:
                raise ValueError(f"mechanisms: {name}: OptiLearning with self-owned instances "
                                 f"(self_owned.instances = {settings.instances}) is not implemented yet; "
                                 "use self_owned.instances=0 (docs/iaas/mechanisms.md)")
            specs.append(MechanismSpec(name, LEARNING, grid=grid))
        elif parsed.kind == "Ours":
            reject_unknown_keys(("beta0", "beta", "b"), p, f"mechanisms: {name}")
            beta0 = p.get("beta0", "naive")
            beta0 = NAIVE if beta0 == "naive" else real(beta0, f"mechanisms: {name}: beta0", 0.0, 1.0,
                                                         strict_max=True)
            beta = real(p.get("beta", 0.0), f"mechanisms: {name}: beta", 0.0, 1.0, strict_max=True)
            specs.append(MechanismSpec(name, "Ours", Policy("ours", _bid(p.get("b", 0.19), name), beta, beta0)))
        else:
            reject_unknown_keys(("theta", "b"), p, f"mechanisms: {name}")
            theta = real(p.get("theta", 0.0), f"mechanisms: {name}: theta", 0.0, 1.0)
            specs.append(MechanismSpec(name, "Theta", Policy(THETA_READINGS[settings.theta_reading],
                                                             _bid(p.get("b", 0.19), name), theta=theta)))
    return tuple(specs)
