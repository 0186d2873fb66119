"""Stable hashes of configs and the seeds derived from them (docs/architecture.md, "Determinism").

Every simulation's randomness comes from a ``numpy.random.SeedSequence`` built from
a hash of its cell's resolved world config and its replicate index, so results do
not depend on the number of workers, the chunk size or the order of completion. An
input file enters the hash by its content, not its path, so they do not depend on
where the checkout lives either.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from typing import Any

import numpy as np


def stable_hash(obj: Any) -> str:
    """SHA-256 of the canonical JSON form of ``obj`` (sorted keys, no whitespace)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def is_file_key(key: Any, value: Any) -> bool:
    """Config values of keys named ``path`` or ``*_path`` are input files."""
    return isinstance(key, str) and (key == "path" or key.endswith("_path")) and isinstance(value, str) and bool(value)


def hashed_view(node: Any) -> Any:
    """The config as its hashes see it: each input file named by a path key stands for the
    SHA-256 of its content (a file that cannot be read keeps its path)."""
    if isinstance(node, dict):
        return {key: _file_digest(value) if is_file_key(key, value) else hashed_view(value) for key, value in node.items()}
    if isinstance(node, list):
        return [hashed_view(item) for item in node]
    return node


def _file_digest(path: str) -> str:
    try:
        stat = os.stat(path)
    except OSError:
        return path
    return _digest(os.path.abspath(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def replicate_rng(world_hash: str, replicate: int) -> np.random.Generator:
    """The generator of one replicate: entropy from the world hash, the replicate as spawn key."""
    entropy = [int(world_hash[i : i + 8], 16) for i in range(0, 32, 8)]
    seq = np.random.SeedSequence(entropy=entropy, spawn_key=(int(replicate),))
    return np.random.default_rng(seq)
