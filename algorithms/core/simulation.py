"""The allocation loop of the `core` family (paper 002, Sec. 2.1 and Alg. 2 lines 2-16): at the
start of every unit time t the allocator sees the active threads and the losses reported at the
end of unit t-1, and splits one unit of compute; each thread learns eta_{k,t} N_k data and
reports its loss; a thread succeeds, and leaves the active set, when its reported loss is at or
below eps_k at the end of a unit t <= d_k (success is judged on the observed loss, never on a
prediction).

Active set A_t: threads with b_k < t <= d_k that have not succeeded (market/core/threads.py).
An allocation is checked before it is applied: shares finite, >= 0, zero outside A_t, summing to
at most 1 (tolerance 1e-9); a breach raises `AllocationError` naming the allocator and the unit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from market.core.threads import Bundle, ThreadArrays

SHARE_TOL = 1e-9


class AllocationError(ValueError):
    """An allocator returned shares that break the budget constraints of problem (2.1)."""


@dataclass(frozen=True)
class UnitView:
    """What an allocator sees at the start of unit t (1-based)."""

    t: int
    active: np.ndarray  # bool (K,): A_t
    data: np.ndarray  # float (K,): data learned so far, s_k
    new: np.ndarray  # int (m,): threads that reported a loss at the end of unit t-1
    new_loss: np.ndarray  # float (m,): those losses, at data[new]
    completed: np.ndarray  # bool (K,): threads that have succeeded


@runtime_checkable
class Allocator(Protocol):
    """A resource-allocation policy: `reset` once per bundle (it sees the threads, not their
    curves), then `allocate` at the start of every unit time that has an active thread."""

    name: str

    def reset(self, threads: ThreadArrays) -> None: ...

    def allocate(self, view: UnitView) -> np.ndarray:
        """The shares eta_{k,t} for every thread (K,): >= 0, zero outside view.active, sum <= 1."""


@dataclass
class Outcome:
    """One allocator on one bundle."""

    completed: np.ndarray  # bool (K,)
    completion_time: np.ndarray  # int (K,): the unit in which it succeeded, 0 if it did not
    data: np.ndarray  # float (K,): data learned
    last_loss: np.ndarray  # float (K,): the last loss reported (nan if none)
    eta: np.ndarray | None  # float (T, K): eta[t-1, k], when recorded
    decision_seconds: float  # wall time inside `allocate` (all units)
    decisions: int  # calls of `allocate`
    allocator_trace: list = field(default_factory=list)  # what the allocator logged (its `trace`)

    @property
    def successes(self) -> int:
        return int(self.completed.sum())


def check_shares(eta, view: UnitView, name: str) -> np.ndarray:
    """`eta` as a float array, or AllocationError naming `name` and the unit."""
    k = view.active.size
    shares = np.asarray(eta, dtype=float)
    where = f"{name} at unit {view.t}"
    if shares.shape != (k,):
        raise AllocationError(f"{where}: expected {k} shares, got shape {shares.shape}")
    if not np.all(np.isfinite(shares)):
        raise AllocationError(f"{where}: shares must be finite, got {shares.tolist()}")
    if np.any(shares < -SHARE_TOL):
        raise AllocationError(f"{where}: shares must be >= 0, got {shares.tolist()}")
    outside = ~view.active & (shares > SHARE_TOL)
    if outside.any():
        raise AllocationError(
            f"{where}: threads {np.flatnonzero(outside).tolist()} are not active "
            f"but got shares {shares[outside].tolist()}"
        )
    total = float(shares.sum())
    if total > 1.0 + SHARE_TOL:
        raise AllocationError(f"{where}: shares sum to {total!r} > 1")
    shares = np.where(view.active, np.maximum(shares, 0.0), 0.0)
    return shares


def simulate(bundle: Bundle, allocator: Allocator, record_eta: bool = False) -> Outcome:
    """Run `allocator` on `bundle` from t = 1 to the last deadline (Alg. 2's loop for any
    allocator)."""
    arrays = bundle.arrays()
    k = len(arrays)
    horizon = bundle.horizon
    allocator.reset(arrays)
    data = np.zeros(k)
    completed = np.zeros(k, dtype=bool)
    completion = np.zeros(k, dtype=np.int64)
    last_loss = np.full(k, np.nan)
    eta_log = np.zeros((horizon, k)) if record_eta else None
    new = np.empty(0, dtype=np.int64)
    new_loss = np.empty(0)
    spent = 0.0
    decisions = 0
    name = getattr(allocator, "name", type(allocator).__name__)
    for t in range(1, horizon + 1):
        active = (arrays.begin < t) & (t <= arrays.deadline) & ~completed
        if not active.any():
            new = np.empty(0, dtype=np.int64)
            new_loss = np.empty(0)
            continue
        view = UnitView(t, active, data.copy(), new, new_loss, completed.copy())
        start = time.perf_counter()
        eta = allocator.allocate(view)
        spent += time.perf_counter() - start
        decisions += 1
        shares = check_shares(eta, view, name)
        if eta_log is not None:
            eta_log[t - 1] = shares
        got = np.flatnonzero(shares > 0.0)
        data[got] += shares[got] * arrays.budget[got]
        losses = np.array([bundle.curves[j].loss(float(data[j])) for j in got], dtype=float)
        last_loss[got] = losses
        done = got[losses <= arrays.threshold[got]]
        completed[done] = True
        completion[done] = t
        new, new_loss = got, losses
    return Outcome(
        completed, completion, data, last_loss, eta_log, spent, decisions, list(getattr(allocator, "trace", []) or [])
    )
