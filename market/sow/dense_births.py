"""`births.kind: dense`: a stream of dense jobs whose demand is scaled to the cluster, built to
put Alg. 2's relaxed usage near N' = N (1 - eps/10) (paper 004, Theorem 4.1 and Lemma 4.3;
docs/sow/mechanisms.md, "Theorem 4.1 in its regime").

Why a kind of its own. Under eq. (7) a job of value V, concurrency c and duration d buys a round
only while the unit price p(y) there is below its value density V / (c d) <= V_bar, and
p(y) = V_bar at y = N' log(2 D_max V_bar) / log(4 V_bar D_max). With the family's default bounds
(V_bar = 16, D_max = 4) that is 7/8 of N': no workload whatever pushes the relaxed usage past
about 0.875 N' + C_max, and the recurring pipelines (mostly c d >= 2) stop far below (measured:
0.62 N' at twice the load). The relaxed usage nears N' only with jobs whose
density is close to V_bar (c = d = 1 and V near V_bar) and bounds with a large 4 V_bar D_max (the
ceiling is 1 - log 2 / log(4 V_bar D_max) of N'). This generator makes such jobs, as many as the
cluster can take and more:

- Rounds 0..rounds-1 each get jobs born in that round whose total nominal demand, the sum of
  c x (nominal d), first reaches load x nodes_hint (the last job may overshoot it by less than one
  job): the offered load is `load` times the `nodes_hint` nodes (pass `${cluster.nodes}`).
- A job's nominal arrival is birth + lead; its support is the arrival offsets -J..+J (J =
  `arrival_jitter`, clipped to >= birth) times the duration offsets -J'..+J' around its nominal
  duration (J' = `duration_jitter`, clipped to [1, D_max]), with the binomial weights of the
  recurring kind (market/sow/birth_sequences.binomial_offsets; merged points add their weights).
- Its value is `peak` (uniform in `value`, floored to 3 decimals) for a finish up to its earliest
  possible finish, then halves every `half_life` rounds (floored to 3 decimals, 0 once below 1,
  and 0 at birth + S_max). A short half-life makes every arrival worth starting on at once: the
  realised load is then as random as the arrivals, which is what Lemma 4.3's concentration is
  about (with flat values a job waits for its last possible arrival and its load is certain).

Draws, from the Generator passed in, in this order: one (rounds, m) array of concurrencies
(integers in `concurrency`), one of nominal durations (integers in `duration`) and one of peaks
(uniforms in `value`), m = ceil(load x nodes_hint / (lowest concurrency x lowest duration)). Round
i takes the shortest prefix of row i whose sum of c x d reaches load x nodes_hint. Nothing else
is drawn. Jobs are listed by birth, then by position in the row.

Pure numpy and the standard library (no Ray, MLflow, Hydra or OmegaConf).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from market.common.fields import integer, interval, real
from market.sow.statement_of_work import Bounds, StatementOfWork

__all__ = ["DenseParams", "dense_births", "decaying_values", "jittered_support", "weighted_offsets"]

VALUE_DECIMALS = 3  # as the other kinds (market/sow/birth_sequences.py): values floored to 3 decimals


def _floor(x) -> np.ndarray:
    scale = 10**VALUE_DECIMALS
    return np.floor(np.asarray(x, dtype=float) * scale) / scale


def weighted_offsets(jitter: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets -J..J with weights C(2J, J + o) / 4^J (the binomial bell of the recurring kind)."""
    weights = np.array([math.comb(2 * jitter, i) / 4**jitter for i in range(2 * jitter + 1)])
    offsets = np.arange(-jitter, jitter + 1, dtype=np.int64)
    keep = weights > 0
    return offsets[keep], weights[keep]


def jittered_support(
    birth: int, nominal_arrival: int, duration: int, arrival_jitter: int, duration_jitter: int, bounds: Bounds
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(arrivals, durations, probabilities): every arrival offset with every duration offset, weights
    multiplied; arrivals clipped to >= birth, durations to [1, D_max], equal points merged."""
    a_off, a_w = weighted_offsets(arrival_jitter)
    d_off, d_w = weighted_offsets(duration_jitter)
    arrival = np.maximum(nominal_arrival + a_off, birth)
    durations = np.clip(duration + d_off, 1, bounds.max_duration)
    pairs = np.stack([np.repeat(arrival, d_off.size), np.tile(durations, a_off.size)], axis=1)
    unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
    return unique[:, 0], unique[:, 1], np.bincount(inverse.ravel(), weights=np.outer(a_w, d_w).ravel())


def decaying_values(peak: float, first_finish: int, half_life: float, bounds: Bounds) -> np.ndarray:
    """values[k] = V(birth + k): `peak` for k <= first_finish, then halved every `half_life` rounds,
    floored to 3 decimals, 0 below 1 and at k = S_max (non-increasing by construction)."""
    k = np.arange(bounds.horizon + 1)
    values = _floor(peak * 0.5 ** (np.maximum(k - first_finish, 0) / half_life))
    values[values < 1.0] = 0.0
    values[bounds.horizon] = 0.0
    return values


@dataclass(frozen=True)
class DenseParams:
    """`births.kind: dense` (module docstring). Null ranges take: concurrency [1, 1], duration
    [1, 1] (unit jobs, the densest), value [0.75 V_bar, V_bar]."""

    rounds: int = 4  # jobs born in rounds 0..rounds-1
    nodes_hint: int = 16  # the cluster the demand is sized for: pass ${cluster.nodes}
    load: float = 1.5  # each round's births ask for load x nodes_hint node-rounds (nominal)
    concurrency: tuple | None = None
    duration: tuple | None = None  # the nominal duration
    value: tuple | None = None  # the peak value
    lead: int = 1  # rounds from birth to the nominal arrival
    arrival_jitter: int = 1  # J: arrival offsets -J..+J
    duration_jitter: int = 0  # J': duration offsets -J'..+J'
    half_life: int = 1  # the value halves every half_life rounds after the earliest finish

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> DenseParams:
        def get(key):  # a value the config leaves out is the class default
            return d.get(key, getattr(cls, key))

        lead = integer(get("lead"), "births.lead", minimum=0)
        jitter = integer(get("arrival_jitter"), "births.arrival_jitter", minimum=0)
        if lead + jitter >= bounds.horizon:
            raise ValueError(
                f"births.lead + births.arrival_jitter must be < bounds.horizon = {bounds.horizon} "
                f"(arrivals lie before birth + S_max), got {lead} + {jitter}"
            )
        nodes = integer(get("nodes_hint"), "births.nodes_hint", minimum=1)
        concurrency = _range(
            get("concurrency"),
            "births.concurrency",
            (1, 1),
            1,
            bounds.max_concurrency,
            f"bounds.max_concurrency = {bounds.max_concurrency}",
            int,
        )
        if concurrency[1] > nodes:
            raise ValueError(
                f"births.nodes_hint must be >= the highest concurrency {concurrency[1]} "
                f"(births.concurrency), got {nodes}"
            )
        v_bar = bounds.max_value
        return cls(
            rounds=integer(get("rounds"), "births.rounds", minimum=1),
            nodes_hint=nodes,
            load=real(get("load"), "births.load", minimum=0.0, strict_min=True),
            concurrency=concurrency,
            duration=_range(
                get("duration"),
                "births.duration",
                (1, 1),
                1,
                bounds.max_duration,
                f"bounds.max_duration = {bounds.max_duration}",
                int,
            ),
            value=_range(
                get("value"),
                "births.value",
                (max(1.0, 0.75 * v_bar), v_bar),
                1.0,
                v_bar,
                f"bounds.max_value = {v_bar:g}",
                float,
            ),
            lead=lead,
            arrival_jitter=jitter,
            duration_jitter=integer(
                get("duration_jitter"), "births.duration_jitter", minimum=0, maximum=bounds.max_duration - 1
            ),
            half_life=integer(get("half_life"), "births.half_life", minimum=1),
        )

    def target(self) -> float:
        """A round's nominal demand, sum of c x d: at least load x nodes_hint."""
        return self.load * self.nodes_hint


def _range(raw, key: str, default: tuple, low, high, what: str, kind) -> tuple:
    """A [low, high] pair read from `raw` (null: `default`) inside [low, high] of the bounds."""
    raw = default if raw is None else raw
    value = interval(raw, key, kind=kind, minimum=low)
    if value[0] < low or value[1] > high:
        raise ValueError(f"{key} must lie within [{low:g}, {high:g}] ({what}), got {raw!r}")
    return value


def dense_births(p: DenseParams, bounds: Bounds, rng: np.random.Generator) -> list[StatementOfWork]:
    """The jobs of `p` (module docstring for the construction and the draw order)."""
    target = p.target()
    width = max(1, math.ceil(target / (p.concurrency[0] * p.duration[0])))
    shape = (p.rounds, width)
    concurrency = rng.integers(p.concurrency[0], p.concurrency[1] + 1, shape)
    duration = rng.integers(p.duration[0], p.duration[1] + 1, shape)
    peak = _floor(rng.uniform(p.value[0], p.value[1], shape))
    reached = np.cumsum(concurrency * duration, axis=1) >= target - 1e-9
    jobs = []
    cache: dict[int, tuple] = {}
    for birth in range(p.rounds):
        count = int(np.argmax(reached[birth])) + 1
        for n in range(count):
            d = int(duration[birth, n])
            if d not in cache:  # support and earliest finish relative to birth 0, per nominal duration
                a, dd, prob = jittered_support(0, p.lead, d, p.arrival_jitter, p.duration_jitter, bounds)
                cache[d] = (a, dd, prob, int((a + dd).min()))
            a, dd, prob, first = cache[d]
            jobs.append(
                StatementOfWork(
                    birth,
                    int(concurrency[birth, n]),
                    decaying_values(float(peak[birth, n]), first, p.half_life, bounds),
                    a + birth,
                    dd.copy(),
                    prob.copy(),
                )
            )
    return jobs
