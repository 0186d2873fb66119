"""Stable hashes of configs and the seeds derived from them (docs/architecture.md, "Cells,
seeds and hashes").

Every simulation's randomness comes from a ``numpy.random.SeedSequence`` built from a hash of
its cell's resolved world config and its replicate index, so results do not depend on the
number of workers, the chunk size or the order of completion. An input file (a key the family
lists in ``INPUT_FILES``) enters the hash by its parsed content, the values the world is built
from, never its path or its bytes: the same data gives the same numbers wherever the checkout
lives and whatever its line endings or byte-order mark.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

# `family.module` says where the family's code lives, not what a cell computes.
UNHASHED = (("family", "module"),)


def stable_hash(obj: Any) -> str:
    """SHA-256 of the canonical JSON form of ``obj`` (sorted keys, no whitespace)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def get_dotted(config: Mapping, key: str) -> Any:
    """The value at a dotted key (``market.path``), or None where any part is missing."""
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def set_dotted(config: dict, key: str, value: Any) -> None:
    """Set the value at a dotted key, copying each dict on the way instead of changing it: the
    cells of a grid share the parts of their configs that they do not override."""
    *parents, last = key.split(".")
    node = config
    for part in parents:
        node[part] = dict(node[part])
        node = node[part]
    node[last] = value


def hashed_view(world: Mapping, input_files: Mapping[str, Callable[[str], Any]] | None = None) -> dict:
    """The config as its hashes see it: without ``family.module`` (and ``seed_excludes`` when
    empty), and each input file named by one of ``input_files``' keys replaced by a digest of
    what its reader parses."""
    view = dict(world)  # set_dotted and the loop below copy what they change
    if not view.get("seed_excludes"):  # the default, []: as if absent (the hashes of before)
        view.pop("seed_excludes", None)
    for path in UNHASHED:
        parent = ".".join(path[:-1])
        node = get_dotted(view, parent)
        if isinstance(node, Mapping):
            set_dotted(view, parent, {k: v for k, v in node.items() if k != path[-1]})
    for key, reader in (input_files or {}).items():
        value = get_dotted(view, key)
        if isinstance(value, str) and os.path.isfile(value):  # a file the cell does not read may be absent
            set_dotted(view, key, file_content_digest(value, reader))
    return view


def without_dotted(config: Mapping, keys) -> dict:
    """A copy of `config` without the dotted `keys` (the dicts on each key's way are copied)."""
    view = dict(config)
    for key in keys:
        *parents, last = key.split(".")
        node = get_dotted(view, ".".join(parents)) if parents else view
        if isinstance(node, Mapping) and last in node:
            if parents:
                set_dotted(view, ".".join(parents), {k: v for k, v in node.items() if k != last})
            else:
                view.pop(last)
    return view


def file_content_digest(path: str, reader: Callable[[str], Any]) -> str:
    stat = os.stat(path)
    return _content_digest(os.path.abspath(path), stat.st_size, stat.st_mtime_ns, reader)


@functools.lru_cache(maxsize=256)
def _content_digest(path: str, size: int, mtime_ns: int, reader: Callable[[str], Any]) -> str:
    digest = hashlib.sha256()
    _feed(digest, reader(path))
    return f"content-sha256:{digest.hexdigest()}"


def _feed(digest, value: Any) -> None:
    """Feed a parsed value into ``digest``: mappings by sorted key, arrays by dtype, shape and
    their bytes in C order (little-endian), sequences item by item, anything else by repr."""
    if isinstance(value, Mapping):
        digest.update(b"{")
        for key in sorted(value, key=str):
            digest.update(repr(str(key)).encode())
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        digest.update(f"ndarray:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.tobytes() if array.dtype != object else repr(array.tolist()).encode())
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(repr(value).encode())


def replicate_rng(world_hash: str, replicate: int) -> np.random.Generator:
    """The generator of one replicate: entropy from the world hash, the replicate as spawn key."""
    entropy = [int(world_hash[i : i + 8], 16) for i in range(0, 32, 8)]
    seq = np.random.SeedSequence(entropy=entropy, spawn_key=(int(replicate),))
    return np.random.default_rng(seq)
