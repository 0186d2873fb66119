"""Config sections of the spot family beyond the job and the market: the policy pool, forecasts,
prediction noise (with phases), per-job sampling and online policy selection.

Paper 000: the policy pool of Sec. VI-A ("Policy Pool": AHAP policies vary the window omega,
the commitment v in 1..omega and the price threshold sigma, AHANP policies sigma; the paper's
omega in 1..5 and sigma in 0.3..0.9 give 15 x 7 = 105 AHAP and 7 AHANP policies, indexed 1..112
in Fig. 10), forecasts by ARIMA or an oracle (Sec. II-C, VI-A), the four noise settings with an
error level (Sec. VI-A, Figs. 9-10), the Fig. 9 job distribution (L ~ U[70, 120], N_min in
[1, 4], N_max in [12, 16]) and the policy pool Alg. 2 selects from (Sec. V, VI-A).
`pool.ahanp_start` lists the starts the group `AHANP` expands to: sigma x start, start-major in
AHANP_STARTS order (literal first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from algorithms.common.policy_selection import NORMALISATIONS
from algorithms.spot.registry import AHANP_STARTS, ahanp_name, ahap_name
from market.common.fields import choice, integer, interval, number_list, real
from market.common.sections import checked, key, parse
from market.spot.prediction_noise import GROWTH_LAWS, NOISE_KINDS

FORECAST_KINDS = ("oracle", "arima")
SIGMA_READINGS = ("ahead", "line")  # pool.sigma_reading (ahap.py)


def _starts(value, where: str) -> tuple[str, ...]:
    """`pool.ahanp_start`: a non-empty list of AHANP_STARTS without repeats (a single word is a list
    of one), in AHANP_STARTS order."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items or not all(isinstance(x, str) and x in AHANP_STARTS for x in items) or len(set(items)) < len(items):
        raise ValueError(
            f"{where} must be a non-empty list of distinct values among {', '.join(AHANP_STARTS)}, got {items!r}"
        )
    return tuple(start for start in AHANP_STARTS if start in items)


NULL_KEY = "A null key stays out of the cell's config, hash and seeds."


@dataclass(frozen=True)
class PoolConfig:
    """The policy pool the groups AHAP and AHANP expand to (Sec. VI-A, "Policy Pool")."""

    window: tuple[int, ...] = key((1, 2, 3, 4, 5), checked(number_list, int, 1), "omega (Sec. VI-A)")
    commitment: tuple[int, ...] | None = key(None, checked(number_list, int, 1), "v in 1..omega when null (Sec. VI-A)")
    threshold: tuple[float, ...] = key(
        (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), checked(number_list, float, 0, strict_min=True), "sigma (Sec. VI-A)"
    )
    sigma_reading: str = key(
        "ahead",
        checked(choice, SIGMA_READINGS),
        f'ahead (null) | line: where sigma acts in AHAP (docs/spot/model.md, "Reading of sigma"). {NULL_KEY}',
        optional=True,
    )
    ahanp_start: tuple[str, ...] = key(
        ("literal",),
        _starts,
        "[literal] (null) | a list of literal, fresh, cold: the readings of AHANP's start the group AHANP "
        f"expands to, sigma x start (algorithms/spot/ahanp.py). {NULL_KEY}",
        optional=True,
    )

    @classmethod
    def from_dict(cls, d: Mapping | None) -> PoolConfig:
        return parse(cls, d, "pool")

    def ahap(self) -> list[str]:
        names = []
        for window in self.window:
            commitments = (
                range(1, window + 1) if self.commitment is None else [v for v in self.commitment if v <= window]
            )
            for commitment in commitments:
                names.extend(ahap_name(window, commitment, sigma) for sigma in self.threshold)
        return names

    def ahanp(self) -> list[str]:
        """sigma x start, start-major: the literal policies first, as without the readings."""
        return [ahanp_name(sigma, start) for start in self.ahanp_start for sigma in self.threshold]


def _order(value, where: str) -> tuple[int, int, int]:
    order = tuple(value) if isinstance(value, (list, tuple)) else ()
    if len(order) != 3:
        raise ValueError(f"{where} must be [p, d, q], got {value!r}")
    return tuple(integer(x, where, minimum=0, allow_float=False) for x in order)


@dataclass(frozen=True)
class ForecastConfig:
    """Forecasts AHAP plans with (Sec. II-C: ARIMA; an oracle for perfect foresight)."""

    kind: str = key("oracle", checked(choice, FORECAST_KINDS), "oracle | arima")
    horizon: int = key(
        5,
        checked(integer, minimum=0, allow_float=False),
        "slots predicted ahead: covers the largest window (omega <= 5, Sec. VI-A)",
    )
    history: int = key(
        96,
        checked(integer, minimum=0, allow_float=False),
        "slots observed before each job starts (2 days): ARIMA's first fit",
    )
    order: tuple[int, int, int] = key((2, 0, 1), _order, "ARIMA (p, d, q); the paper does not give it")
    refit_every: int = key(
        10,
        checked(integer, minimum=1, allow_float=False),
        "slots between ARIMA refits: one fit per job of 10 slots; in between, new observations are "
        "appended with the same parameters (about 80 ms per job)",
    )

    @classmethod
    def from_dict(cls, d: Mapping | None) -> ForecastConfig:
        return parse(cls, d, "forecast")


@dataclass(frozen=True)
class NoisePhase:
    start: int
    kind: str
    level: float


def _phases(phases, where: str) -> tuple[NoisePhase, ...]:
    if isinstance(phases, (str, bytes)) or not isinstance(phases, Sequence) or not phases:
        raise ValueError(f"{where} must be a non-empty list of {{start, kind, level}}, got {phases!r}")
    parsed: list[NoisePhase] = []
    for i, phase in enumerate(phases):
        at = f"{where}[{i}]"
        if not isinstance(phase, Mapping) or set(phase) - {"start", "kind", "level"}:
            raise ValueError(f"{at} must be a mapping with keys start, kind, level, got {phase!r}")
        start = integer(phase.get("start"), f"{at}.start", minimum=0, allow_float=False)
        kind = choice(phase.get("kind"), f"{at}.kind", NOISE_KINDS)
        level = real(phase.get("level", 0.0), f"{at}.level", minimum=0, finite=False)
        if parsed and start <= parsed[-1].start:
            raise ValueError(f"{at}.start ({start}) must be greater than the previous phase's start")
        parsed.append(NoisePhase(start, kind, level))
    if parsed[0].start != 0:
        raise ValueError(f"{where}[0].start must be 0")
    return tuple(parsed)


@dataclass(frozen=True)
class NoiseConfig:
    """Prediction noise added to the forecasts (Sec. VI-A, Figs. 9-10)."""

    kind: str = key("none", checked(choice, NOISE_KINDS), " | ".join(NOISE_KINDS))
    level: float = key(0.0, checked(real, minimum=0, finite=False), "error level e (0.1 = 10%, 2.0 = 200%)")
    phases: tuple[NoisePhase, ...] | None = key(
        None, _phases, "or [{start: 0, kind: ..., level: ...}, ...] by job (replicate) index (Fig. 10)"
    )
    growth: str = key(
        "flat",
        checked(choice, GROWTH_LAWS),
        f"flat (null) | sqrt: the error of a k-slot look-ahead times sqrt(k). {NULL_KEY}",
        optional=True,
    )

    @classmethod
    def from_dict(cls, d: Mapping | None) -> NoiseConfig:
        return parse(cls, d, "noise")

    def at(self, job_index: int) -> tuple[str, float]:
        """The (kind, level) in force for job (replicate) ``job_index``."""
        if self.phases is None:
            return self.kind, self.level
        current = self.phases[0]
        for phase in self.phases:
            if phase.start <= job_index:
                current = phase
        return current.kind, current.level


@dataclass(frozen=True)
class JobSampling:
    """Per-job parameters drawn for each replicate (Fig. 9: L ~ U[70, 120], N_min in [1, 4], N_max
    in [12, 16]); null keeps the job's value."""

    workload: tuple[float, float] | None = key(
        None, checked(interval, minimum=0, strict_min=True), "[low, high]: L ~ U[low, high] per job (Fig. 9: [70, 120])"
    )
    n_min: tuple[int, int] | None = key(
        None,
        checked(interval, kind=int, minimum=1, allow_float=False),
        "[low, high]: N^min drawn per job (Fig. 9: [1, 4])",
    )
    n_max: tuple[int, int] | None = key(
        None,
        checked(interval, kind=int, minimum=1, allow_float=False),
        "[low, high]: N^max drawn per job (Fig. 9: [12, 16])",
    )

    @classmethod
    def from_dict(cls, d: Mapping | None) -> JobSampling:
        return parse(cls, d, "job_sampling")

    def check(self) -> None:
        if self.n_min and self.n_max and self.n_min[1] > self.n_max[0]:
            raise ValueError(f"job_sampling.n_min {list(self.n_min)} can exceed job_sampling.n_max {list(self.n_max)}")

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.workload, self.n_min, self.n_max))


def _names(names, where: str) -> tuple[str, ...]:
    names = names or ()
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise ValueError(f"{where} must be a list of mechanism names, got {names!r}")
    return tuple(names)


@dataclass(frozen=True)
class SelectionConfig:
    """Online policy selection (Alg. 2) over a cell's jobs, from these mechanisms (names or the
    groups AHAP / AHANP); [] for none."""

    mechanisms: tuple[str, ...] = key((), _names, "the candidates of policy selection; [] runs none")
    normalisation: str = key(
        "worst_case",
        checked(choice, NORMALISATIONS),
        f"worst_case (null) | job_minmax | job_opt (docs/spot/policy-selection.md). {NULL_KEY}",
        optional=True,
    )

    @classmethod
    def from_dict(cls, d: Mapping | None) -> SelectionConfig:
        return parse(cls, d, "selection")
