"""The computations behind the core family's pinned numbers. tests/core/test_pinned_numbers.py and
`python -m tests.pinned_numbers` both call these functions, so the numbers the script writes are
the numbers the tests compare against; the numbers themselves live in pinned_numbers.json next to
this module. They are counts, compared exactly: there is no tolerance."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from algorithms.core.config import allocator_specs, make_allocator
from algorithms.core.simulation import simulate
from market.core.bundle_config import BundleConfig, draw_bundle

PINNED_FILE = Path(__file__).with_name("pinned_numbers.json")
MECHANISMS = ["LARA", "UA", "STF", "LRF", "ETF"]
SEEDS = range(5)

# case name: (bundle config, LARA config)
BUNDLES = {
    "table1": ({"kind": "table1"}, {}),
    "table2-eps1": ({"kind": "table2", "epsilon_set": 1}, {}),
    "table2-eps2": ({"kind": "table2", "epsilon_set": 2}, {}),
    # conf/experiment/core/scalability.yaml at 25 threads: recording spread 0.1, H_k = 400
    "scalability-25": ({"kind": "scalability", "threads": 25, "recording_spread": 0.1}, {"exploration": 400}),
}


def threads_completed(case: str) -> dict:
    """Threads completed by each mechanism, summed over the bundles drawn from SEEDS."""
    bundle, lara = BUNDLES[case]
    config = BundleConfig.from_config(bundle)
    specs = allocator_specs({"mechanisms": MECHANISMS, "lara": lara})
    totals = dict.fromkeys(MECHANISMS, 0)
    for seed in SEEDS:
        world = draw_bundle(config, np.random.default_rng(seed))
        for spec in specs:
            totals[spec.name] += int(simulate(world, make_allocator(spec)).successes)
    return {"threads_completed_over_five_bundles": totals}


# every entry of pinned_numbers.json, in file order, with the function that computes it
CASES = {case: (lambda case=case: threads_completed(case)) for case in BUNDLES}


def load_pinned() -> dict:
    """The pinned numbers as last written by `python -m tests.pinned_numbers --write`."""
    return json.loads(PINNED_FILE.read_text())
