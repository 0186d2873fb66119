"""Which active jobs go when the committed load exceeds the N nodes (paper 004, Alg. 1 lines 6-7).

Sec. 3, "Cancellations and evictions" and Remark 2: while the current committed load (the
concurrency of the active jobs running or scheduled to start this round) is above N, the most
recently born active job is evicted (running) or cancelled (not started) - over *all* active
jobs, also those that hold no node this round. Popping from the top until the load fits keeps
exactly the jobs whose load prefix (in birth order) is at most N:

    removed = active and (cumulative committed load up to and including the job) > N.

Two orders the paper argues against (Sec. 1, "Posted-Price Mechanisms with Eviction"), as
baselines: `fifo` removes the oldest active jobs first (kept: suffix load <= N), `all` removes
every active job once the load exceeds N.

Arrays may carry leading axes (one row per Monte-Carlo replay of the failure oracle); the last
axis is the jobs in birth order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RULES", "removed_jobs"]

RULES = ("lifo", "fifo", "all")


def removed_jobs(load: np.ndarray, active: np.ndarray, nodes: int, rule: str = "lifo") -> tuple[np.ndarray, np.ndarray]:
    """(removed mask, committed load before removal) for one round.

    `load[..., j]` is job j's committed load this round (c_j if it runs or starts now, else 0),
    `active[..., j]` whether it is active; jobs in birth order along the last axis."""
    committed = np.where(active, load, 0)
    if rule == "lifo":
        prefix = np.cumsum(committed, axis=-1)
        return active & (prefix > nodes), prefix[..., -1] if prefix.shape[-1] else np.zeros(prefix.shape[:-1])
    total = committed.sum(axis=-1)
    if rule == "fifo":
        suffix = np.cumsum(committed[..., ::-1], axis=-1)[..., ::-1]
        return active & (suffix > nodes), total
    if rule == "all":
        return active & (total > nodes)[..., None], total
    raise ValueError(f"eviction must be one of {', '.join(RULES)}, got {rule!r}")
