"""Measured alternatives behind docs/core/reproduction.md (paper 002): readings of the LRF / ETF
baselines, curve shapes, and LARA's H_k on Sec. 4.3 bundles. Not part of `make
reproduce-core`; run it on its own, whole or in parts (baselines, shapes, exploration, spread, live, real,
random):

    python -m reproduction.core.alternatives [part ...]
"""

from __future__ import annotations

import numpy as np

from algorithms.core import easiest_thread_first, least_resources_first
from algorithms.core.config import allocator_specs, make_allocator
from algorithms.core.easiest_thread_first import EasiestThreadFirst
from algorithms.core.explore_then_exploit import priority_cascade
from algorithms.core.lara_kernel import CompiledLARA
from algorithms.core.least_resources_first import LeastResourcesFirst
from algorithms.core.shortest_thread_first import ShortestThreadFirst
from algorithms.core.simulation import simulate
from algorithms.core.uniform_allocation import UniformAllocation
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
                counts = {
                    a.name: np.mean(
                        [
                            simulate(draw_bundle(config, np.random.default_rng(r)), a(explore=explore)).successes
                            for r in range(bundles)
                        ]
                    )
                    for a in (LeastResourcesFirst, EasiestThreadFirst)
                }
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


def exploration_on_chains(sizes=(10, 25, 50), seeds=range(100, 110), spread: float = 0.1) -> None:
    """LARA's H_k on Sec. 4.3 bundles (recording spread 0.1), on seeds outside the reproduction's
    (replicates 0-4): how the scalability experiment's H_k = 400 was chosen."""
    for threads in sizes:
        config = BundleConfig.from_config({"kind": "scalability", "threads": threads, "recording_spread": spread})
        worlds = [draw_bundle(config, np.random.default_rng(r)) for r in seeds]
        counts = {"STF": np.mean([simulate(w, ShortestThreadFirst()).successes for w in worlds])}
        for h in (0, 100, 200, 400, 800, 1600, 4000, 8000):
            counts[f"LARA H={h}"] = np.mean([simulate(w, CompiledLARA(exploration=h)).successes for w in worlds])
        print(
            f"scalability K={threads} recording_spread={spread} seeds {seeds.start}-{seeds.stop - 1}: {counts}",
            flush=True,
        )


def recording_spread_on_chains(sizes=(25, 100), seeds=range(100, 105)) -> None:
    """STF against LARA as the recording run drifts from the evaluated one (Sec. 4.3)."""
    for threads in sizes:
        for spread in (0.0, 0.05, 0.1, 0.2):
            config = BundleConfig.from_config({"kind": "scalability", "threads": threads, "recording_spread": spread})
            worlds = [draw_bundle(config, np.random.default_rng(r)) for r in seeds]
            counts = {"STF": np.mean([simulate(w, ShortestThreadFirst()).successes for w in worlds])}
            for h in (400, 8000):
                counts[f"LARA H={h}"] = np.mean([simulate(w, CompiledLARA(exploration=h)).successes for w in worlds])
            print(f"scalability K={threads} recording_spread={spread}: {counts}", flush=True)


def exploration_on_live(seeds=range(100, 106)) -> None:
    """LARA's H_k on live learners (N_k of 1-8 batches a unit, so H_k = 8000 is never reached)."""
    config = BundleConfig.from_config({"kind": "live"})
    counts = {"STF": [], "UA": []}
    for r in seeds:
        counts["STF"].append(simulate(draw_bundle(config, np.random.default_rng(r)), ShortestThreadFirst()).successes)
        counts["UA"].append(simulate(draw_bundle(config, np.random.default_rng(r)), UniformAllocation()).successes)
        for h in (0, 50, 200, 800, 8000):
            world = draw_bundle(config, np.random.default_rng(r))  # a live world is trained as it runs: fresh
            counts.setdefault(f"LARA H={h}", []).append(simulate(world, CompiledLARA(exploration=h)).successes)
    print(f"live K=6 seeds {seeds.start}-{seeds.stop - 1}: { {k: np.mean(v) for k, v in counts.items()} }", flush=True)


def exploration_on_real(seeds=range(100, 120)) -> None:
    """STF, UA and LARA with H_k 0-8000 on real LCDB bundles (K = 10), deadlines and thresholds
    set on the thread's own seed curve (`observed`) or on the mean curve (`mean`)."""
    for calibrate in ("observed", "mean"):
        config = BundleConfig.from_config({"kind": "real", "calibrate": calibrate})
        worlds = [draw_bundle(config, np.random.default_rng(r)) for r in seeds]
        counts = {
            name: np.mean([simulate(w, allocator()).successes for w in worlds])
            for name, allocator in (("STF", ShortestThreadFirst), ("UA", UniformAllocation))
        }
        for h in (0, 200, 1000, 8000):
            counts[f"LARA H={h}"] = np.mean([simulate(w, CompiledLARA(exploration=h)).successes for w in worlds])
        print(f"real K=10 calibrate={calibrate} seeds {seeds.start}-{seeds.stop - 1}: {counts}", flush=True)


def exploration_on_random(seeds=range(100, 120)) -> None:
    """STF and LARA with H_k 0-8000 on random bundles with staggered begins (bundle=random)."""
    config = BundleConfig.from_config({"kind": "random"})
    worlds = [draw_bundle(config, np.random.default_rng(r)) for r in seeds]
    counts = {"STF": np.mean([simulate(w, ShortestThreadFirst()).successes for w in worlds])}
    for h in (0, 200, 400, 1000, 4000, 8000):
        counts[f"LARA H={h}"] = np.mean([simulate(w, CompiledLARA(exploration=h)).successes for w in worlds])
    print(f"random K=10 seeds {seeds.start}-{seeds.stop - 1}: {counts}", flush=True)


PARTS = {
    "baselines": baseline_readings,
    "shapes": shapes,
    "exploration": exploration_on_chains,
    "spread": recording_spread_on_chains,
    "live": exploration_on_live,
    "real": exploration_on_real,
    "random": exploration_on_random,
}

if __name__ == "__main__":
    import sys

    for part in sys.argv[1:] or PARTS:
        PARTS[part]()
