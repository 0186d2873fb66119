"""Config sections of the spot family beyond the job and the market: forecasts,
prediction noise (with phases), per-job sampling and online policy selection.

Paper 000_17f647b6e3bf630a.txt: forecasts by ARIMA or an oracle (Sec. II-C, VI-A),
the four noise settings with an error level (Sec. VI-A, Figs. 9-10), the Fig. 9
job distribution (L ~ U[70, 120], N_min in [1, 4], N_max in [12, 16]) and the
policy pool Alg. 2 selects from (Sec. V, VI-A).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, fields
from typing import Mapping, Sequence

NOISE_KINDS = ("none", "mag_dep_uniform", "fixed_uniform", "mag_dep_heavy", "fixed_heavy")
FORECAST_KINDS = ("oracle", "arima")


def _strict(section: str, d: Mapping | None, cls: type) -> dict:
    d = dict(d or {})
    known = [f.name for f in fields(cls)]
    unknown = sorted(set(map(str, d)) - set(known))
    if unknown:
        raise ValueError(f"{section}: unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(known)})")
    return d


def _int(value, key: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{key} must be an integer >= {minimum}, got {value!r}")
    return int(value)


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
    def from_dict(cls, d: Mapping | None) -> "ForecastConfig":
        d = _strict("forecast", d, cls)
        kind = d.get("kind", cls.kind)
        if kind not in FORECAST_KINDS:
            raise ValueError(f"forecast.kind must be one of {', '.join(FORECAST_KINDS)}, got {kind!r}")
        order = tuple(d.get("order", cls.order))
        if len(order) != 3:
            raise ValueError(f"forecast.order must be [p, d, q], got {list(order)!r}")
        return cls(
            kind=kind,
            horizon=_int(d.get("horizon", cls.horizon), "forecast.horizon", 0),
            history=_int(d.get("history", cls.history), "forecast.history", 0),
            order=tuple(_int(x, "forecast.order", 0) for x in order),
            refit_every=_int(d.get("refit_every", cls.refit_every), "forecast.refit_every", 1),
        )


@dataclass(frozen=True)
class NoisePhase:
    start: int
    kind: str
    level: float


@dataclass(frozen=True)
class NoiseConfig:
    """`noise.kind` and `noise.level` (Sec. VI-A), or `noise.phases`: a list of
    {start, kind, level} switching the setting at given job (replicate) indices (Fig. 10)."""

    kind: str = "none"
    level: float = 0.0
    phases: tuple[NoisePhase, ...] | None = None

    @classmethod
    def from_dict(cls, d: Mapping | None) -> "NoiseConfig":
        d = _strict("noise", d, cls)
        kind, level = _kind_level(d.get("kind", cls.kind), d.get("level", cls.level), "noise")
        phases = d.get("phases")
        if phases is None:
            return cls(kind, level, None)
        if isinstance(phases, (str, bytes)) or not isinstance(phases, Sequence) or not phases:
            raise ValueError(f"noise.phases must be a non-empty list of {{start, kind, level}}, got {phases!r}")
        parsed = []
        for i, phase in enumerate(phases):
            key = f"noise.phases[{i}]"
            if not isinstance(phase, Mapping) or set(phase) - {"start", "kind", "level"}:
                raise ValueError(f"{key} must be a mapping with keys start, kind, level, got {phase!r}")
            start = _int(phase.get("start"), f"{key}.start", 0)
            p_kind, p_level = _kind_level(phase.get("kind"), phase.get("level", 0.0), key)
            if parsed and start <= parsed[-1].start:
                raise ValueError(f"{key}.start ({start}) must be greater than the previous phase's start")
            parsed.append(NoisePhase(start, p_kind, p_level))
        if parsed[0].start != 0:
            raise ValueError("noise.phases[0].start must be 0")
        return cls(kind, level, tuple(parsed))

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
    if kind not in NOISE_KINDS:
        raise ValueError(f"{key}.kind must be one of {', '.join(NOISE_KINDS)}, got {kind!r}")
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or level < 0:
        raise ValueError(f"{key}.level must be a number >= 0, got {level!r}")
    return kind, float(level)


@dataclass(frozen=True)
class JobSampling:
    """Per-job parameters drawn per replicate (Fig. 9): `workload` [low, high] uniform,
    `n_min` and `n_max` [low, high] integers inclusive; null keeps the job's value."""

    workload: tuple[float, float] | None = None
    n_min: tuple[int, int] | None = None
    n_max: tuple[int, int] | None = None

    @classmethod
    def from_dict(cls, d: Mapping | None) -> "JobSampling":
        d = _strict("job_sampling", d, cls)
        out = {}
        for name in ("workload", "n_min", "n_max"):
            value = d.get(name)
            if value is None:
                continue
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2 or value[0] > value[1]:
                raise ValueError(f"job_sampling.{name} must be [low, high] with low <= high, got {value!r}")
            if name == "workload":
                if not value[0] > 0:
                    raise ValueError(f"job_sampling.workload must be positive, got {value!r}")
                out[name] = (float(value[0]), float(value[1]))
            else:
                out[name] = (_int(value[0], f"job_sampling.{name}", 1), _int(value[1], f"job_sampling.{name}", 1))
        sampling = cls(**out)
        if sampling.n_min and sampling.n_max and sampling.n_min[1] > sampling.n_max[0]:
            raise ValueError(f"job_sampling.n_min {list(sampling.n_min)} can exceed job_sampling.n_max {list(sampling.n_max)}")
        return sampling

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.workload, self.n_min, self.n_max))


@dataclass(frozen=True)
class SelectionConfig:
    """`selection.mechanisms`: the pool Alg. 2 selects from over a cell's jobs (names or the
    groups AHAP / AHANP); empty: no selection."""

    mechanisms: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping | None) -> "SelectionConfig":
        d = _strict("selection", d, cls)
        names = d.get("mechanisms") or ()
        if isinstance(names, str) or not isinstance(names, Sequence):
            raise ValueError(f"selection.mechanisms must be a list of mechanism names, got {names!r}")
        return cls(tuple(names))
