"""The sow family's settings built from its declared sections (algorithms/sow/config.py) are those
conf/family/sow.yaml gives (each section's own parse: tests/engine/test_usage_keys.py)."""

from __future__ import annotations

import yaml

from algorithms.sow.config import SowSettings
from sweep.api import CONF_DIR

DEFAULT = yaml.safe_load((CONF_DIR / "family" / "sow.yaml").read_text(encoding="utf-8"))


def test_the_settings_of_the_default_yaml():
    settings = SowSettings.from_config(DEFAULT)
    assert (settings.nodes, settings.epsilon, settings.slack, settings.eviction) == (40, 0.1, True, "lifo")
    assert (settings.oracle.kind, settings.oracle.samples, settings.oracle.max_outcomes) == (
        "sampled",
        "hoeffding",
        200_000,
    )
    assert (settings.price_start, settings.time_limit) == ("paper", 20.0)
