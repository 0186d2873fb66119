"""Measured alternatives behind docs/core/reproduction.md (paper 002): readings of the LRF / ETF
baselines, curve shapes, and LARA's H_k on Sec. 4.3 bundles. Not part of `make
reproduce-core`; run it on its own (about two minutes on the 2-core machine):

    python -m reproduction.core_alternatives
"""
from __future__ import annotations

import numpy as np

from algorithms.core import easiest_thread_first, least_resources_first
from algorithms.core.allocator_config import allocator_specs, make_allocator
from algorithms.core.easiest_thread_first import EasiestThreadFirst
from algorithms.core.explore_then_exploit import priority_cascade
from algorithms.core.lara import LARA
from algorithms.core.least_resources_first import LeastResourcesFirst
from algorithms.core.shortest_thread_first import ShortestThreadFirst
from algorithms.core.simulation import simulate
from market.core.bundle_config import BundleConfig, draw_bundle

TABLES = ({"kind": "table1"}, {"kind": "table2", "epsilon_set": 1}, {"kind": "table2", "epsilon_set": 2})


def whole_unit(view, need, budget, key):
    """The other reading of LRF / ETF: the whole unit to the top-ranked thread."""
    shares = np.zeros(view.active.size)
    shares[min(np.flatnonzero(view.active), key=lambda j: (key[j], j))] = 1.0
    return shares


def baseline_readings(bundles: int = 10) -> None:
    for bundle in TABLES:
        config = BundleConfig.from_config(bundle)
        for split, cascade in (("predicted need", priority_cascade), ("whole unit", whole_unit)):
            least_resources_first.priority_cascade = easiest_thread_first.priority_cascade = cascade
            for explore in (True, False):
                counts = {a.name: np.mean([simulate(draw_bundle(config, np.random.default_rng(r)),
                                                    a(explore=explore)).successes for r in range(bundles)])
                          for a in (LeastResourcesFirst, EasiestThreadFirst)}
                print(f"{bundle} split={split} explore={explore}: {counts}", flush=True)
    least_resources_first.priority_cascade = easiest_thread_first.priority_cascade = priority_cascade


def shapes(bundles: int = 10) -> None:
    specs = allocator_specs({"mechanisms": ["LARA", "UA", "STF", "LRF", "ETF"]})
    for bundle in TABLES:
        for shape in ("power", "bend", "floor"):
            config = BundleConfig.from_config({**bundle, "shape": shape})
            worlds = [draw_bundle(config, np.random.default_rng(r)) for r in range(bundles)]
            counts = {s.name: np.mean([simulate(w, make_allocator(s)).successes for w in worlds]) for s in specs}
            print(f"{bundle} shape={shape}: {counts}", flush=True)


def exploration_on_chains(threads: int = 25, bundles: int = 3) -> None:
    config = BundleConfig.from_config({"kind": "scalability", "threads": threads})
    for r in range(bundles):
        world = draw_bundle(config, np.random.default_rng(r))
        counts = {"STF": simulate(world, ShortestThreadFirst()).successes}
        for h in (0, 200, 1000, 4000, 8000):
            counts[f"LARA H={h}"] = simulate(world, LARA(exploration=h)).successes
        print(f"scalability K={threads} bundle {r}: {counts}", flush=True)


if __name__ == "__main__":
    baseline_readings()
    shapes()
    exploration_on_chains()
