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
from market.common.fields import as_section, choice, integer, interval, number_list, real, reject_unknown_keys
from market.spot.prediction_noise import GROWTH_LAWS, NOISE_KINDS

FORECAST_KINDS = ("oracle", "arima")
SIGMA_READINGS = ("ahead", "line")  # pool.sigma_reading (ahap.py)


def _strict(section: str, d: Mapping | None, cls: type) -> dict:
    d = as_section(d, section)
    reject_unknown_keys(cls, d, section)
    return d


def _starts(value) -> tuple[str, ...]:
    """`pool.ahanp_start`: a non-empty list of AHANP_STARTS without repeats (a single word is a list
    of one), in AHANP_STARTS order."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items or not all(isinstance(x, str) and x in AHANP_STARTS for x in items) or len(set(items)) < len(items):
        raise ValueError(
            f"pool.ahanp_start must be a non-empty list of distinct values among "
            f"{', '.join(AHANP_STARTS)}, got {items!r}"
        )
    return tuple(start for start in AHANP_STARTS if start in items)


@dataclass(frozen=True)
class PoolConfig:
    """`pool.window`, `pool.commitment` (null: every v in 1..omega) and `pool.threshold` (Sec. VI-A);
    `pool.sigma_reading`: where sigma acts in AHAP, "ahead" (Alg. 1 lines 6-11 only) or "line"
    (also in problem (10): algorithms/spot/window_problem.py, "Reading of sigma");
    `pool.ahanp_start`: the readings of AHANP's start the group `AHANP` expands to (AHANP_STARTS,
    algorithms/spot/ahanp.py; null: literal only)."""

    window: tuple[int, ...] = (1, 2, 3, 4, 5)
    commitment: tuple[int, ...] | None = None
    threshold: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    sigma_reading: str = "ahead"
    ahanp_start: tuple[str, ...] = ("literal",)

    @classmethod
    def from_dict(cls, d: Mapping | None) -> PoolConfig:
        d = as_section(d, "pool")
        reject_unknown_keys(cls, d, "pool")
        return cls(
            window=number_list(d.get("window", cls.window), "pool.window", int, 1),
            commitment=None if d.get("commitment") is None else number_list(d["commitment"], "pool.commitment", int, 1),
            threshold=number_list(d.get("threshold", cls.threshold), "pool.threshold", float, 0, strict_min=True),
            sigma_reading=choice(d.get("sigma_reading", cls.sigma_reading), "pool.sigma_reading", SIGMA_READINGS),
            ahanp_start=cls.ahanp_start if d.get("ahanp_start") is None else _starts(d["ahanp_start"]),
        )

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


@dataclass(frozen=True)
class ForecastConfig:
    """`forecast.kind` oracle | arima; `horizon`: slots predicted ahead (covers the largest
    AHAP window); `history`: slots observed before the job starts (ARIMA's first fit); ARIMA
    `order` and `refit_every` (slots between refits)."""

    kind: str = "oracle"
    horizon: int = 5
    history: int = 96
    order: tuple[int, int, int] = (2, 0, 1)
    refit_every: int = 10

    @classmethod
    def from_dict(cls, d: Mapping | None) -> ForecastConfig:
        d = _strict("forecast", d, cls)
        kind = choice(d.get("kind", cls.kind), "forecast.kind", FORECAST_KINDS)
        order = tuple(d.get("order", cls.order))
        if len(order) != 3:
            raise ValueError(f"forecast.order must be [p, d, q], got {list(order)!r}")
        return cls(
            kind=kind,
            horizon=integer(d.get("horizon", cls.horizon), "forecast.horizon", minimum=0, allow_float=False),
            history=integer(d.get("history", cls.history), "forecast.history", minimum=0, allow_float=False),
            order=tuple(integer(x, "forecast.order", minimum=0, allow_float=False) for x in order),
            refit_every=integer(
                d.get("refit_every", cls.refit_every), "forecast.refit_every", minimum=1, allow_float=False
            ),
        )


@dataclass(frozen=True)
class NoisePhase:
    start: int
    kind: str
    level: float


@dataclass(frozen=True)
class NoiseConfig:
    """`noise.kind` and `noise.level` (Sec. VI-A), or `noise.phases`: a list of
    {start, kind, level} switching the setting at given job (replicate) indices (Fig. 10);
    `noise.growth`: how the error grows with the look-ahead (market/spot/prediction_noise.py)."""

    kind: str = "none"
    level: float = 0.0
    phases: tuple[NoisePhase, ...] | None = None
    growth: str = "flat"

    @classmethod
    def from_dict(cls, d: Mapping | None) -> NoiseConfig:
        d = _strict("noise", d, cls)
        kind, level = _kind_level(d.get("kind", cls.kind), d.get("level", cls.level), "noise")
        growth = choice(d.get("growth", cls.growth), "noise.growth", GROWTH_LAWS)
        phases = d.get("phases")
        if phases is None:
            return cls(kind, level, None, growth)
        if isinstance(phases, (str, bytes)) or not isinstance(phases, Sequence) or not phases:
            raise ValueError(f"noise.phases must be a non-empty list of {{start, kind, level}}, got {phases!r}")
        parsed = []
        for i, phase in enumerate(phases):
            key = f"noise.phases[{i}]"
            if not isinstance(phase, Mapping) or set(phase) - {"start", "kind", "level"}:
                raise ValueError(f"{key} must be a mapping with keys start, kind, level, got {phase!r}")
            start = integer(phase.get("start"), f"{key}.start", minimum=0, allow_float=False)
            p_kind, p_level = _kind_level(phase.get("kind"), phase.get("level", 0.0), key)
            if parsed and start <= parsed[-1].start:
                raise ValueError(f"{key}.start ({start}) must be greater than the previous phase's start")
            parsed.append(NoisePhase(start, p_kind, p_level))
        if parsed[0].start != 0:
            raise ValueError("noise.phases[0].start must be 0")
        return cls(kind, level, tuple(parsed), growth)

    def at(self, job_index: int) -> tuple[str, float]:
        """The (kind, level) in force for job (replicate) ``job_index``."""
        if self.phases is None:
            return self.kind, self.level
        current = self.phases[0]
        for phase in self.phases:
            if phase.start <= job_index:
                current = phase
        return current.kind, current.level


def _kind_level(kind, level, key: str) -> tuple[str, float]:
    choice(kind, f"{key}.kind", NOISE_KINDS)
    return kind, real(level, f"{key}.level", minimum=0, finite=False)


@dataclass(frozen=True)
class JobSampling:
    """Per-job parameters drawn per replicate (Fig. 9): `workload` [low, high] uniform,
    `n_min` and `n_max` [low, high] integers inclusive; null keeps the job's value."""

    workload: tuple[float, float] | None = None
    n_min: tuple[int, int] | None = None
    n_max: tuple[int, int] | None = None

    @classmethod
    def from_dict(cls, d: Mapping | None) -> JobSampling:
        d = _strict("job_sampling", d, cls)
        out = {}
        for name in ("workload", "n_min", "n_max"):
            value = d.get(name)
            if value is None:
                continue
            if name == "workload":
                out[name] = interval(value, "job_sampling.workload", minimum=0, strict_min=True)
            else:
                out[name] = interval(value, f"job_sampling.{name}", kind=int, minimum=1, allow_float=False)
        sampling = cls(**out)
        if sampling.n_min and sampling.n_max and sampling.n_min[1] > sampling.n_max[0]:
            raise ValueError(
                f"job_sampling.n_min {list(sampling.n_min)} can exceed job_sampling.n_max {list(sampling.n_max)}"
            )
        return sampling

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.workload, self.n_min, self.n_max))


@dataclass(frozen=True)
class SelectionConfig:
    """`selection.mechanisms`: the pool Alg. 2 selects from over a cell's jobs (names or the
    groups AHAP / AHANP); empty: no selection. `selection.normalisation`: how each job's
    utilities are mapped into [0, 1] (algorithms/common/policy_selection.py, `job_bounds`)."""

    mechanisms: tuple[str, ...] = ()
    normalisation: str = "worst_case"

    @classmethod
    def from_dict(cls, d: Mapping | None) -> SelectionConfig:
        d = _strict("selection", d, cls)
        names = d.get("mechanisms") or ()
        if isinstance(names, str) or not isinstance(names, Sequence):
            raise ValueError(f"selection.mechanisms must be a list of mechanism names, got {names!r}")
        normalisation = choice(d.get("normalisation", cls.normalisation), "selection.normalisation", NORMALISATIONS)
        return cls(tuple(names), normalisation)
