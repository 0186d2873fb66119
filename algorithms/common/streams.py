"""Random streams of a replicate (docs/architecture.md, "Cells, seeds and hashes").

A replicate's generator draws the world first; a mechanism that randomises (a random vendor,
a tie-break) gets a stream of its own, derived from the replicate's seed and the mechanism's
name only. So a mechanism's numbers do not depend on which other mechanisms run beside it or
in which order, and every mechanism meets the same world (common random numbers).
"""

from __future__ import annotations

import hashlib

import numpy as np

_MECHANISM_STREAMS = 0x6D656368  # "mech": keeps these seeds apart from rng.spawn()'s children


def mechanism_stream(rng: np.random.Generator, name: str) -> np.random.Generator:
    """The stream of mechanism `name` in the replicate whose generator is `rng` (not advanced)."""
    seq = rng.bit_generator.seed_seq
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    child = np.random.SeedSequence(entropy=seq.entropy, spawn_key=(*seq.spawn_key, _MECHANISM_STREAMS, key))
    return np.random.default_rng(child)
