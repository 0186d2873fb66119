"""A fractional unit allocation (paper 004, Appendix E, Definition 1) built from the LP's solution.

Definition 1 (the copy, decoded): "An LP solution (z) is a fractional unit allocation if there
exists a partition of the multiset of resources (where each resource in round t has multiplicity
C) into bundles {B_1, B_2, ...} and a corresponding partition of job outcomes omega with z_omega > 0
into sets {A_1, A_2, ...} such that:
  (1) for each k and omega in A_k, x(omega) is contained in B_k;
  (2) for each k, sum_{omega in A_k} w(omega) z_omega <= C_max;
  (3) for each k and t, if B_k contains any units of resource from round t, then B_k contains at
      least C_max units from round t."
Here C is the LP's supply C' = N'/2 (algorithms/sow/stochastic_lp.py) and w(omega) = lambda_i c_v,
the width of the task's relaxed allocation (Lemma E.2 prices w(x) p_k and checks w(x) + R_k <=
2 C_max).

The paper takes the allocation from Theorem E.1 ("implicit in the proof of [Chawla et al.]
Theorem 1.2") and gives no construction. Ours, from the LP's z (every step deterministic):

1. Lanes. A round's C' units hold L = floor(C' / C_max) lanes of C_max units each (condition 3
   with equality); the rest, C' - L C_max < C_max units of every round, is assigned in step 4.
   L = 0 (C' < C_max) leaves no bundle: `build_fractional_unit_allocation` refuses it.
2. Groups (the sets A_k). The outcomes with z > 0, sorted by (start, stop, index), are put one
   after another into groups: an outcome joins the open group whose span [first, stop) it
   overlaps and whose mass sum w(omega) z_omega stays <= C_max with it (condition 2), choosing the
   one whose span grows least (ties: the earliest-opened group); if none, it opens a group with its
   own interval. A group's span is the union hull of its outcomes' intervals (condition 1).
3. Bundles (the sets B_k). A group with span [first, stop) needs one lane over those rounds.
   Groups are taken in decreasing value density V(A_k) / (stop - first) (ties: earlier first, then
   lower index) and kept while no round is covered by more than L kept groups; kept groups get
   lanes by interval colouring in order of their first round (a lane is free once its last group
   has stopped), which never needs more than L lanes since interval graphs are perfect. Outcomes of
   dropped groups get z_FUA = 0: z_FUA <= z is still feasible for the LP.
4. The partition. B_k is C_max units of its lane in each round of its span. In each round the
   units no kept bundle holds (C' - n_t C_max with n_t bundles active) join the bundle of lowest
   lane active in that round (a bundle may hold more than C_max units of a round: condition 3 says
   at least), or, in a round with no bundle, form an empty bundle of C' >= C_max units. So every
   round's C' units are partitioned and every bundle holds 0 or >= C_max units of each round.

What it keeps is `share` = V(z_FUA) / V_LP, reported per run (the row column `fua_share`). The
construction is ours and comes with no Theorem E.1 guarantee: it loses where outcomes of small mass
spread over time (a group over many rounds holds at most C_max of mass in all) and where more
than L groups overlap; both show in the share.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from .stochastic_lp import StochasticLP

__all__ = ["FractionalUnitAllocation", "Z_TOLERANCE", "build_fractional_unit_allocation", "definition1_violations"]

Z_TOLERANCE = 1e-12  # z below this counts as 0 (HiGHS's primal noise)
MASS_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class FractionalUnitAllocation:
    """Bundles k = 0..K-1 (kept groups): lane, span [first, stop), V(A_k), W(A_k); per outcome of
    the LP, its bundle (-1: none) and z_FUA; `lp_value` V_LP and `value` V(z_FUA)."""

    capacity: float  # C'
    unit: int  # C_max
    lanes: int  # L = floor(C' / C_max)
    rounds: int  # T: rounds 0..T-1 of the resource multiset
    lane: np.ndarray
    first: np.ndarray
    stop: np.ndarray
    bundle_value: np.ndarray  # V(A_k) = sum lambda V z over A_k
    bundle_weight: np.ndarray  # W(A_k) = sum lambda c z over A_k
    bundle: np.ndarray  # per outcome
    z: np.ndarray  # z_FUA per outcome
    lp_value: float
    value: float

    def __len__(self) -> int:
        return self.lane.size

    @property
    def share(self) -> float:
        """V(z_FUA) / V_LP (1 when the LP is worth 0)."""
        return self.value / self.lp_value if self.lp_value > 0 else 1.0

    def units(self) -> tuple[np.ndarray, np.ndarray]:
        """Step 4's partition: (units [K, T] of each bundle in each round, units [T] of the empty
        bundle of rounds with no bundle)."""
        held = np.zeros((len(self), self.rounds))
        for k, (a, b) in enumerate(zip(self.first.tolist(), self.stop.tolist())):
            held[k, a:b] = self.unit
        empty = np.zeros(self.rounds)
        for t in range(self.rounds):
            active = np.flatnonzero(held[:, t] > 0)
            rest = self.capacity - active.size * self.unit
            if active.size:
                host = active[np.argmin(self.lane[active])]
                held[host, t] += rest
            else:
                empty[t] = self.capacity
        return held, empty


def build_fractional_unit_allocation(
    lp: StochasticLP, max_concurrency: int, rounds: int | None = None
) -> FractionalUnitAllocation:
    """Steps 1-4 of the module docstring on the LP's z (capacity lp.capacity = C')."""
    unit = int(max_concurrency)
    lanes = int(np.floor(lp.capacity / unit + 1e-9))
    if lanes < 1:
        raise ValueError(
            f"the halved relaxed capacity C' = N'/2 = {lp.capacity:g} is below C_max = {unit}: "
            "Definition 1 has no bundle (Theorem 5.2 wants N > C_max log D_max)"
        )
    stop_all = lp.stop
    rounds = int(max(stop_all.max(initial=0), 1)) if rounds is None else int(rounds)
    live = np.flatnonzero(lp.z > Z_TOLERANCE)
    mass = lp.width * lp.z
    worth = lp.relaxed_value * lp.z
    order = live[np.lexsort((live, stop_all[live], lp.start[live]))]
    # step 2: groups
    g_first: list[int] = []
    g_stop: list[int] = []
    g_mass: list[float] = []
    group = np.full(lp.z.size, -1, np.int64)
    open_groups: list[int] = []
    for o in order.tolist():
        s, e, m = int(lp.start[o]), int(stop_all[o]), float(mass[o])
        open_groups = [g for g in open_groups if g_stop[g] > s]
        best, growth = -1, None
        for g in open_groups:
            if g_mass[g] + m <= unit + MASS_TOLERANCE:
                grow = max(0, e - g_stop[g])
                if growth is None or grow < growth:
                    best, growth = g, grow
        if best < 0:
            best = len(g_first)
            g_first.append(s)
            g_stop.append(e)
            g_mass.append(0.0)
            open_groups.append(best)
        g_stop[best] = max(g_stop[best], e)
        g_mass[best] += m
        group[o] = best
    G = len(g_first)
    first, stop = np.array(g_first, np.int64), np.array(g_stop, np.int64)
    value = np.bincount(group[live], weights=worth[live], minlength=G) if G else np.zeros(0)
    # step 3: keep groups by value density while at most L overlap; lanes by interval colouring
    density = value / np.maximum(stop - first, 1)
    kept = []
    cover = np.zeros(max(rounds, int(stop.max(initial=0))), np.int64)
    for g in np.lexsort((np.arange(G), first, -density)).tolist():
        if cover[first[g] : stop[g]].max(initial=0) < lanes:
            cover[first[g] : stop[g]] += 1
            kept.append(g)
    kept.sort(key=lambda g: (first[g], g))
    free = [(0, lane) for lane in range(lanes)]  # (round the lane is free from, lane)
    heapq.heapify(free)
    lane_of = {}
    for g in kept:
        at, lane = heapq.heappop(free)
        if at > first[g]:  # cannot happen: at most L kept groups overlap (module docstring, step 3)
            raise RuntimeError("interval colouring needed more than L lanes")
        lane_of[g] = lane
        heapq.heappush(free, (int(stop[g]), lane))
    index = {g: k for k, g in enumerate(kept)}
    bundle = np.array([index.get(int(g), -1) if g >= 0 else -1 for g in group], np.int64)
    z = np.where(bundle >= 0, lp.z, 0.0)
    K = len(kept)
    in_bundle = np.flatnonzero(bundle >= 0)
    b_value = np.bincount(bundle[in_bundle], weights=worth[in_bundle], minlength=K)
    b_weight = np.bincount(bundle[in_bundle], weights=mass[in_bundle], minlength=K)
    return FractionalUnitAllocation(
        capacity=float(lp.capacity),
        unit=unit,
        lanes=lanes,
        rounds=max(rounds, int(stop.max(initial=0))),
        lane=np.array([lane_of[g] for g in kept], np.int64),
        first=first[kept] if K else np.zeros(0, np.int64),
        stop=stop[kept] if K else np.zeros(0, np.int64),
        bundle_value=b_value,
        bundle_weight=b_weight,
        bundle=bundle,
        z=z,
        lp_value=float(lp.objective),
        value=float((lp.relaxed_value * z).sum()),
    )


def definition1_violations(fua: FractionalUnitAllocation, lp: StochasticLP, tolerance: float = 1e-9) -> list[str]:
    """What in `fua` breaks Definition 1 (empty: it is a fractional unit allocation of z_FUA), and
    whether z_FUA is an LP solution (0 <= z_FUA <= z). Checks the partition of every round's C'
    units, conditions (1)-(3), and that each outcome with z_FUA > 0 is in exactly one A_k."""
    out = []
    held, empty = fua.units()
    total = held.sum(axis=0) + empty
    if np.any(np.abs(total - fua.capacity) > tolerance):
        t = int(np.argmax(np.abs(total - fua.capacity)))
        out.append(f"round {t}: the bundles hold {total[t]:g} units, not C' = {fua.capacity:g}")
    small = (held > tolerance) & (held < fua.unit - tolerance)
    if small.any() or np.any((empty > tolerance) & (empty < fua.unit - tolerance)):
        out.append("condition 3: a bundle holds some but fewer than C_max units of a round")
    lanes_used = np.zeros((fua.lanes, fua.rounds), np.int64)
    for k in range(len(fua)):
        lanes_used[fua.lane[k], fua.first[k] : fua.stop[k]] += 1
    if lanes_used.max(initial=0) > 1:
        out.append("two bundles share a lane in one round")
    if np.any(fua.z < -tolerance) or np.any(fua.z > lp.z + tolerance):
        out.append("z_FUA is not within [0, z]")
    live = np.flatnonzero(fua.z > Z_TOLERANCE)
    if np.any(fua.bundle[live] < 0):
        out.append("an outcome with z_FUA > 0 is in no A_k")
    for o in live.tolist():
        k = int(fua.bundle[o])
        if k >= 0 and not (fua.first[k] <= lp.start[o] and lp.stop[o] <= fua.stop[k]):
            out.append(
                f"condition 1: outcome {o} [{lp.start[o]}, {lp.stop[o]}) is not inside bundle {k} "
                f"[{fua.first[k]}, {fua.stop[k]})"
            )
            break
        if k >= 0 and np.any(held[k, lp.start[o] : lp.stop[o]] < fua.unit - tolerance):
            out.append(f"condition 1: bundle {k} lacks units in a round of outcome {o}")
            break
    weight = np.bincount(fua.bundle[live], weights=(lp.width * fua.z)[live], minlength=len(fua))
    if np.any(weight > fua.unit + 1e-7):
        out.append(f"condition 2: a bundle's sum w z is {weight.max():g} > C_max = {fua.unit}")
    return out
