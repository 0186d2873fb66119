"""The `bundle` config section of the `core` family: which source draws a replicate's task
bundle, by `bundle.kind`:
  table1 | table2 | scalability | random | custom: parametric power-law curves
      (market/core/bundle_generators.py, docs/core/calibration.md);
  real: learning curves of the LCDB (market/core/real_curves.py, docs/core/real_curves.md);
  live: scikit-learn learners trained as the simulation advances (market/core/live_learners.py).
Each source checks its own keys (errors name `bundle.<key>`); a real-curve file is read and
validated once, when the cell is prepared (errors name the file and line)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from market.common.fields import as_section, choice
from market.core import bundle_generators
from market.core.bundle_generators import BundleParams
from market.core.live_learners import LiveBundleParams, live_bundle
from market.core.real_curves import RealBundleParams, load_curves
from market.core.threads import Bundle

KINDS = (*bundle_generators.KINDS, "real", "live")


@dataclass(frozen=True)
class BundleConfig:
    """A checked `bundle` section: its kind, the source's parameters, and for `real` the
    curve table it draws from."""

    kind: str
    params: Any
    curves: Mapping | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_config(cls, section) -> BundleConfig:
        d = as_section(section, "bundle")
        kind = choice(d.get("kind", "table1"), "bundle.kind", KINDS)
        if kind == "real":
            params = RealBundleParams.from_config(d, also_known=("kind",))
            return cls(kind, params, params.load())
        if kind == "live":
            return cls(kind, LiveBundleParams.from_config(d, also_known=("kind",)))
        return cls(kind, BundleParams.from_config(d))


def draw_bundle(config: BundleConfig, rng: np.random.Generator) -> Bundle:
    """One replicate's bundle, drawn from `rng`."""
    if config.kind == "real":
        return config.params.bundle(rng, config.curves)
    if config.kind == "live":
        return live_bundle(rng, config.params)
    return bundle_generators.draw_bundle(config.params, rng)


def curve_values(path) -> dict[str, dict[str, np.ndarray]]:
    """What a real-curve file's seeds hash (the family's INPUT_FILES): per curve id, the seeds,
    anchors and losses read from it, whatever the file's bytes."""
    out = {}
    for curve_id, table in load_curves(path).items():
        out[curve_id] = {
            "seed": np.concatenate([np.full(s.anchors.size, s.seed, dtype=np.int64) for s in table.seeds]),
            "anchor": np.concatenate([np.asarray(s.anchors, dtype=np.int64) for s in table.seeds]),
            "loss": np.concatenate([np.asarray(s.loss, dtype=float) for s in table.seeds]),
        }
    return out
