"""Stable hashes of configs and the seeds derived from them (docs/architecture.md, "Determinism").

Every simulation's randomness comes from a ``numpy.random.SeedSequence`` built from
a hash of its cell's resolved world config and its replicate index, so results do
not depend on the number of workers, the chunk size or the order of completion.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np


def stable_hash(obj: Any) -> str:
    """SHA-256 of the canonical JSON form of ``obj`` (sorted keys, no whitespace)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def replicate_rng(world_hash: str, replicate: int) -> np.random.Generator:
    """The generator of one replicate: entropy from the world hash, the replicate as spawn key."""
    entropy = [int(world_hash[i : i + 8], 16) for i in range(0, 32, 8)]
    seq = np.random.SeedSequence(entropy=entropy, spawn_key=(int(replicate),))
    return np.random.default_rng(seq)
