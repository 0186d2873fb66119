"""Small random birth sequences for the sow tests (not a generator of the family: see
market/sow/birth_sequences.py for those)."""

from __future__ import annotations

import numpy as np

from market.sow.statement_of_work import BirthSequence, Bounds, StatementOfWork


def random_sow(rng: np.random.Generator, birth: int, bounds: Bounds, points: int = 3) -> StatementOfWork:
    """A SoW born at `birth` with up to `points` support points and a random non-increasing value
    function in {0} U [1, V_bar] that reaches 0 at birth + S_max."""
    S = bounds.horizon
    cut = int(rng.integers(2, S + 1))  # values positive for finish k < cut
    positive = np.sort(rng.uniform(1.0, bounds.max_value, size=cut))[::-1]
    values = np.zeros(S + 1)
    values[:cut] = positive
    values[S] = 0.0
    pairs: set = set()
    while len(pairs) < points:
        a = birth + int(rng.integers(0, max(1, S // 2)))
        d = int(rng.integers(1, bounds.max_duration + 1))
        pairs.add((a, d))
        if len(pairs) >= (S // 2) * bounds.max_duration:
            break
    a, d = map(np.array, zip(*sorted(pairs)))
    p = rng.dirichlet(np.ones(len(a)))
    return StatementOfWork(birth, int(rng.integers(1, bounds.max_concurrency + 1)), values, a, d, p)


def random_sequence(
    rng: np.random.Generator,
    jobs: int,
    bounds: Bounds,
    signal: str = "none",
    births_per_round: float = 1.0,
    points: int = 3,
) -> BirthSequence:
    """`jobs` random SoWs, born at non-decreasing rounds (about `births_per_round` a round)."""
    births = np.sort(rng.integers(0, max(1, int(np.ceil(jobs / births_per_round))), size=jobs))
    return BirthSequence(tuple(random_sow(rng, int(b), bounds, points) for b in births), bounds, signal).check()
