"""The arena's mechanism names and the config sections that parametrise them (docs/arena.md,
"Mechanisms"): `pool`, `policies`, `adapt` and `learning`.

Names (the grammar of algorithms/common/mechanism_names.py):
- paper 000 (algorithms/spot/registry.py): `OD-Only`, `MSU`, `UP`, `UP-track`,
  `AHAP(w=W,v=V,sigma=S)`, `AHANP(sigma=S)`, and the groups `AHAP` / `AHANP`, which expand
  over `pool` (window, commitment, threshold), as in the spot family; windows in hours; AHAP
  plans with an oracle forecast, `AHAP(w=W,v=V,sigma=S,forecast=persistence)` with the
  hour's observed price and availability held for the whole window;
- paper 003: `Dynalloc(beta=B,b=P)` (Dynalloc without self-owned instances: Proportion, Alg.
  1, with Proposition 4; algorithms/iaas/job_execution.py) and `Theta(theta=T,b=P)` (the theta
  policies of [6], [7], read as `policies.theta_reading` says), bids relative to the on-demand
  price, and the groups `Dynalloc` / `Theta`, which expand over `policies` (betas x bids,
  thetas x bids, bids outermost as in paper 003's Fig. 4);
- a user's own spot policy, `package.module:Class(key=value,...)` (docs/extending.md), run as
  paper 000's policies are (its rows' `paper` is `user`);
- `Meta`: the meta-learner over `learning.candidates` (arena/meta_learner.py), its costs
  normalised as `learning.normalisation` says, or `Meta(normalisation=bound|job_minmax)`.
A mechanism listed twice, also through a group, is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from algorithms.common.mechanism_names import MechanismName, check_unique, listed_names, parse_name
from algorithms.common.user_mechanisms import build, is_import_path
from algorithms.iaas.config import BETA_GRID, BID_GRID, THETA_GRID, PolicySettings
from algorithms.iaas.policies import BETAS, THETA_READINGS, THETAS, Policy
from algorithms.iaas.registry import REGISTRY as IAAS_REGISTRY
from algorithms.spot import registry as spot_names
from algorithms.spot.config import PoolConfig
from algorithms.spot.registry import REGISTRY as SPOT_REGISTRY
from algorithms.spot.simulation import SpotPolicy
from market.common.fields import choice, real, reject_unknown_keys
from market.common.sections import checked, key, parse

SPOT_GROUPS = ("AHAP", "AHANP")
IAAS_GROUPS = ("Dynalloc", "Theta")  # the groups over `policies`; with parameters, one policy
META = "Meta"
DEFAULT_BIDS = (0.5, 0.75, 1.0)  # policies.bids when left out: relative to on-demand
FEEDBACK = ("deadline", "immediate", "max_deadline")
NORMALISATIONS = ("bound", "job_minmax")
FORECASTS = ("oracle", "persistence")  # what AHAP plans with (arena/spot_policies.py)
DEFAULT_CANDIDATES = ("OD-Only", "MSU", "UP", "AHAP", "AHANP", "Dynalloc", "Theta")
PAPER_000, PAPER_003, LEARNER = "000", "003", "meta"
USER = "user"  # a user's own spot policy named by import path (docs/extending.md)


@dataclass(frozen=True)
class Spec:
    """One mechanism: its name, the paper it comes from, and what runs it (a spot kind and its
    parameters, or a paper-003 Policy)."""

    name: str
    paper: str
    kind: str
    params: tuple = ()
    policy: Policy | None = None


def _names(value, where: str) -> tuple[str, ...]:
    """`learning.candidates`: a non-empty list of mechanism names (groups expand in Settings)."""
    return tuple(listed_names({"mechanisms": value}, where))


@dataclass(frozen=True)
class ArenaPoliciesConfig:
    """Section `policies`: paper 003's grids (Sec. V-A) the groups Dynalloc and Theta expand to, bids
    relative to the on-demand price; no beta0 or beta*(b), as the arena has no self-owned instances."""

    betas: tuple[float, ...] = key(BETAS, BETA_GRID, "Dynalloc's beta")
    bids: tuple[float, ...] = key(DEFAULT_BIDS, BID_GRID, "bids of Dynalloc and Theta, relative to on-demand")
    thetas: tuple[float, ...] = key(THETAS, THETA_GRID, "Theta's theta")
    theta_reading: str = key("once", checked(choice, THETA_READINGS), "once | rebid (docs/iaas/mechanisms.md)")


@dataclass(frozen=True)
class AdaptConfig:
    """Section `adapt`: how paper 000's policies bid on the arena's market (arena/spot_policies.py)."""

    bid: float = key(
        1.0, checked(real, minimum=0.0, strict_min=True), "the bid of paper 000's policies, relative to on-demand"
    )


@dataclass(frozen=True)
class MetaLearningConfig:
    """Section `learning`: the meta-learner (arena/meta_learner.py), its candidates, feedback and cost
    normalisation."""

    candidates: tuple[str, ...] = key(DEFAULT_CANDIDATES, _names, "what the meta-learner chooses among")
    feedback: str = key("deadline", checked(choice, FEEDBACK), "deadline | max_deadline | immediate")
    normalisation: str = key(
        "bound", checked(choice, NORMALISATIONS), "bound (a cost no candidate exceeds) | job_minmax"
    )


@dataclass(frozen=True)
class Settings:
    """Sections `pool`, `policies`, `adapt` and `learning`."""

    pool: PoolConfig
    policies: PolicySettings
    bid: float = 1.0
    candidates: tuple[str, ...] = ()
    feedback: str = "deadline"
    normalisation: str = "bound"

    @classmethod
    def from_config(cls, config: Mapping) -> Settings:
        pool = PoolConfig.from_dict(config.get("pool"))
        grids = parse(ArenaPoliciesConfig, config.get("policies"), "policies")
        policies = PolicySettings(
            betas=grids.betas, bids=grids.bids, thetas=grids.thetas, theta_reading=grids.theta_reading
        )
        bid = parse(AdaptConfig, config.get("adapt"), "adapt").bid
        learning = parse(MetaLearningConfig, config.get("learning"), "learning")
        feedback, normalisation = learning.feedback, learning.normalisation
        settings = cls(pool, policies, bid, (), feedback, normalisation)
        candidates = expand(list(learning.candidates), settings, "learning.candidates")
        if any(spec_of(name, settings).kind == META for name in candidates):
            raise ValueError("learning.candidates: the meta-learner cannot be its own candidate")
        if len(candidates) < 2:
            raise ValueError(f"learning.candidates must name at least two policies, got {candidates!r}")
        return cls(pool, policies, bid, tuple(candidates), feedback, normalisation)

    def max_bid(self) -> float:
        """The highest bid any candidate places: the meta-learner's cost bound needs it."""
        bids = [self.bid]
        bids += [s.policy.bid for s in map(lambda n: spec_of(n, self), self.candidates) if s.policy is not None]
        return max(bids)


def expand(names, settings: Settings, where: str = "mechanisms") -> list[str]:
    """Config names -> the names of the results, groups expanded, order kept."""
    out: list[str] = []
    p = settings.policies
    for name in names:
        if name in SPOT_GROUPS:
            out.extend(settings.pool.ahap() if name == "AHAP" else settings.pool.ahanp())
        elif name == "Dynalloc":
            out.extend(f"Dynalloc(beta={beta:g},b={bid:g})" for bid in p.bids for beta in p.betas)
        elif name == "Theta":
            out.extend(f"Theta(theta={theta:g},b={bid:g})" for bid in p.bids for theta in p.thetas)
        else:
            out.append(spec_of(name, settings, where).name)
    return check_unique(out, where)


def spec_of(name: str, settings: Settings, where: str = "mechanisms") -> Spec:
    """The Spec of one (non-group) name; ValueError naming `where` and the name otherwise."""
    parsed = parse_name(name, where)
    kind, params = parsed.kind, parsed.params
    if kind == META:
        reject_unknown_keys(("normalisation",), params, f"{where}: {name}")
        if not params:
            return Spec(META, LEARNER, META)
        scheme = choice(params["normalisation"], f"{where}: {name}: normalisation", NORMALISATIONS)
        return Spec(f"Meta(normalisation={scheme})", LEARNER, META, (("normalisation", scheme),))
    if kind in IAAS_REGISTRY and (params or kind not in IAAS_GROUPS):
        # the arena's paper-003 policies bid relative to the on-demand price, so b has no default
        # (the iaas default is in paper 003's dollars) and there are no self-owned instances
        if "b" not in params or "beta0" in params:
            raise ValueError(
                f"{where}: {name}: the arena takes {iaas_example(IAAS_REGISTRY.entries[kind])} (b required)"
            )
        checked = IAAS_REGISTRY.params(parsed, where)
        written = MechanismName(
            kind, {p.key: params[p.key] for p in IAAS_REGISTRY.entries[kind].params if p.key in params}
        )
        policy = IAAS_REGISTRY.build(kind, checked, theta_reading=settings.policies.theta_reading)
        return Spec(written.format(), PAPER_003, kind, tuple(written.params.items()), policy)
    forecast = "oracle"
    if kind == "AHAP" and "forecast" in params:
        forecast = choice(params["forecast"], f"{where}: {name}: forecast", FORECASTS)
        name = MechanismName(kind, {k: v for k, v in params.items() if k != "forecast"}).format()
    if kind not in SPOT_REGISTRY and kind != spot_names.OPTIMUM and not is_import_path(kind):
        raise ValueError(f"{where}: unknown mechanism {name!r} for the arena (known: {known_names()})")
    spot_kind, spot_params = spot_names.parse(name, where)
    if spot_kind == spot_names.OPTIMUM:
        raise ValueError(f"{where}: {name}: the arena has no offline optimum (docs/arena.md, 'Not done')")
    if is_import_path(spot_kind):  # checked here, before any work, as the spot family does
        build(spot_kind, spot_params, SpotPolicy, where)
        return Spec(name, USER, spot_kind, tuple(spot_params.items()))
    canonical = SPOT_REGISTRY.canonical(spot_kind, spot_params)
    if forecast != "oracle":
        canonical = f"{canonical[:-1]},forecast={forecast})"
        spot_params = {**spot_params, "forecast": forecast}
    return Spec(canonical, PAPER_000, spot_kind, tuple(spot_params.items()))


def iaas_example(entry) -> str:
    """A paper-003 policy as the arena takes it: `Dynalloc(beta=B,b=P)`, no self-owned instances."""
    return f"{entry.name}({','.join(f'{p.key}={p.placeholder}' for p in entry.params if p.key != 'beta0')})"


def known_names() -> str:
    """The names the arena takes, from the spot and iaas registries and its own groups."""
    return ", ".join(
        [
            *(example for example in SPOT_REGISTRY.examples() if "(" not in example),
            *SPOT_GROUPS,
            *(example for example in SPOT_REGISTRY.examples() if "(" in example),
            *IAAS_GROUPS,
            *(iaas_example(entry) for entry in IAAS_REGISTRY),
            META,
        ]
    )


def mechanism_specs(config: Mapping, settings: Settings) -> tuple[Spec, ...]:
    return tuple(spec_of(name, settings) for name in expand(listed_names(config), settings))
