"""The failure probabilities q^t(t', c, d) of a job born at round t (paper 004, Lemma 3.1,
Alg. 2 line 6, Appendix F).

Under LIFO the new job is the first to go whenever the jobs born before it overload the
nodes: it fails iff, in some round s from its birth to its last round,

    s <  t':  L(s) > N          (cancelled before it starts: Remark 2 covers idle jobs), or
    s >= t':  L(s) + c > N      (evicted while it runs, rounds t'..t'+d-1),

where L(s) is the committed load of the earlier jobs in round s *before* that round's
evictions, those earlier jobs being evicted among themselves by the same LIFO rule. L depends
only on the earlier jobs' plans and on the residual randomness of their arrivals and durations
given the history H^t (Lemma 3.1), so every q^t(., c, .) follows from the distribution of the
path L(t), L(t+1), ...:
- `sampled_paths` replays that randomness R times (Appendix F); `hoeffding_samples` is Lemma
  F.1's R = ceil(log(D_max S_max / delta0) / (2 eps0^2)), which makes every estimate
  eps0-accurate with probability 1 - delta0;
- `exact_paths` enumerates every joint outcome (small instances only).

The residual randomness of an active earlier job (`Candidates`) is its reported distribution
conditioned on what the history shows: not arrived yet (a >= t), or arrived at a (and, with the
duration signal, d) and scheduled at s, or running since s < t (so d >= t - s + 1); each
candidate point carries the start its launch plan gives it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .eviction import removed_jobs

__all__ = ["Candidates", "LoadPaths", "exact_paths", "hoeffding_samples", "sampled_paths", "zero_paths"]


def hoeffding_samples(eps0: float, delta0: float, max_duration: int, horizon: int) -> int:
    """Lemma F.1: R = ceil(log(D_max S_max / delta0) / (2 eps0^2))."""
    if not 0 < eps0 < 1 or not 0 < delta0 < 1:
        raise ValueError(f"oracle.eps0 and oracle.delta0 must be in (0, 1), got {eps0!r}, {delta0!r}")
    return int(math.ceil(math.log(max_duration * horizon / delta0) / (2.0 * eps0 * eps0)))


@dataclass(frozen=True)
class Candidates:
    """The active earlier jobs (rows, birth order) and their possible runs (columns, padded):
    start round (-1: no run), last round (start + d - 1), probability (rows sum to 1)."""

    start: np.ndarray  # [J, K] int
    last: np.ndarray  # [J, K] int
    probability: np.ndarray  # [J, K] float, 0 for padding
    concurrency: np.ndarray  # [J] int

    @classmethod
    def build(cls, runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]], concurrency) -> Candidates:
        """`runs[j] = (start, duration, weight)` arrays of one job (weights need not be normalised)."""
        width = max((len(r[0]) for r in runs), default=1)
        J = len(runs)
        start = np.full((J, width), -1, np.int64)
        last = np.full((J, width), -2, np.int64)
        prob = np.zeros((J, width))
        for j, (s, d, w) in enumerate(runs):
            n = len(s)
            start[j, :n] = s
            last[j, :n] = np.where(np.asarray(s) >= 0, np.asarray(s) + np.asarray(d) - 1, -2)
            prob[j, :n] = np.asarray(w, float) / float(np.sum(w))
        return cls(start, last, prob, np.asarray(concurrency, np.int64).reshape(J))

    def __len__(self) -> int:
        return self.start.shape[0]


@dataclass(frozen=True)
class LoadPaths:
    """Paths of the earlier jobs' pre-eviction load L(s), s = first..first + width - 1, with weights."""

    first: int
    load: np.ndarray  # [R, width]
    weight: np.ndarray  # [R], summing to 1

    def failure(self, concurrency: int, nodes: int, starts: int, max_duration: int) -> np.ndarray:
        """q(t', c, d) for t' = first..first + starts - 1 and d = 1..D_max: array [t' - first, d - 1]."""
        R, width = self.load.shape
        need = starts + max_duration - 1
        load = self.load if width >= need else np.pad(self.load, ((0, 0), (0, need - width)))
        over = load > nodes
        before = np.zeros((R, starts), bool)  # some s in [first, t') overloaded
        if starts > 1:
            before[:, 1:] = np.logical_or.accumulate(over[:, : starts - 1], axis=1)
        fail = np.empty((R, starts, max_duration), bool)
        window = np.full((R, starts), -np.inf)
        for d in range(max_duration):
            window = np.maximum(window, load[:, d : d + starts])
            fail[:, :, d] = before | (window + concurrency > nodes)
        return np.tensordot(self.weight, fail, axes=(0, 0))


def _forward(
    start: np.ndarray, last: np.ndarray, concurrency: np.ndarray, first: int, width: int, nodes: int
) -> np.ndarray:
    """Pre-eviction load of the earlier jobs per path (rows), rounds first..first+width-1."""
    active = np.ones(start.shape, bool)
    load = np.zeros((start.shape[0], width))
    for k in range(width):
        s = first + k
        running = (start <= s) & (s <= last)
        if not running.any():
            continue
        removed, before = removed_jobs(np.where(running, concurrency, 0), active, nodes, "lifo")
        load[:, k] = before
        active &= ~removed
    return load


def zero_paths(first: int, width: int) -> LoadPaths:
    """No earlier job: every failure probability is 0."""
    return LoadPaths(first, np.zeros((1, width)), np.ones(1))


def sampled_paths(
    candidates: Candidates, first: int, width: int, nodes: int, samples: int, rng: np.random.Generator
) -> LoadPaths:
    """Appendix F: `samples` replays of the earlier jobs' residual randomness (one uniform per
    replay and job, drawn as a [samples, J] block)."""
    if len(candidates) == 0:
        return zero_paths(first, width)
    u = rng.random((samples, len(candidates)))
    cdf = np.cumsum(candidates.probability, axis=1)
    real = np.count_nonzero(candidates.probability > 0, axis=1)
    cdf[np.arange(len(candidates)), real - 1] = np.inf  # rounding: each row's last point catches u near 1
    pick = (u[:, :, None] >= cdf[None, :, :]).sum(axis=2)
    pick = np.minimum(pick, candidates.start.shape[1] - 1)
    rows = np.arange(len(candidates))[None, :]
    start = candidates.start[rows, pick]
    last = candidates.last[rows, pick]
    return LoadPaths(
        first, _forward(start, last, candidates.concurrency, first, width, nodes), np.full(samples, 1.0 / samples)
    )


def exact_paths(candidates: Candidates, first: int, width: int, nodes: int, max_outcomes: int) -> LoadPaths:
    """Every joint outcome of the earlier jobs with its probability (the exact oracle)."""
    if len(candidates) == 0:
        return zero_paths(first, width)
    choices = [np.flatnonzero(row > 0) for row in candidates.probability]
    outcomes = math.prod(len(c) for c in choices)
    if outcomes > max_outcomes:
        raise ValueError(
            f"oracle.kind=exact: {outcomes} joint outcomes of {len(choices)} active jobs exceed "
            f"oracle.max_outcomes = {max_outcomes}; use oracle.kind=sampled or a smaller world"
        )
    grid = np.stack(np.meshgrid(*choices, indexing="ij"), axis=-1).reshape(-1, len(choices))
    rows = np.arange(len(choices))[None, :]
    weight = np.prod(candidates.probability[rows, grid], axis=1)
    start = candidates.start[rows, grid]
    last = candidates.last[rows, grid]
    return LoadPaths(first, _forward(start, last, candidates.concurrency, first, width, nodes), weight / weight.sum())
