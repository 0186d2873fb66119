"""The sow family's declared sections (algorithms/sow/config.py, `DECLARED_SECTIONS` of
algorithms/sow/family.py): each parses the section conf/family/sow.yaml lists, and the
settings built from them are those the YAML gives."""

from __future__ import annotations

import yaml

from algorithms.sow import family
from algorithms.sow.config import SowSettings
from market.common.sections import parse
from sweep.api import CONF_DIR

DEFAULT = yaml.safe_load((CONF_DIR / "family" / "sow.yaml").read_text(encoding="utf-8"))


def test_each_declared_section_parses_the_default_yaml_section():
    assert set(family.DECLARED_SECTIONS) == {"cluster", "reduction", "oracle", "prices", "optimum"}
    for name, cls in family.DECLARED_SECTIONS.items():
        parsed = parse(cls, DEFAULT[name], name)
        for key, value in DEFAULT[name].items():
            assert getattr(parsed, key) == (cls.__dataclass_fields__[key].default if value is None else value)


def test_the_settings_of_the_default_yaml():
    settings = SowSettings.from_config(DEFAULT)
    assert (settings.nodes, settings.epsilon, settings.slack, settings.eviction) == (40, 0.1, True, "lifo")
    assert (settings.oracle.kind, settings.oracle.samples, settings.oracle.max_outcomes) == (
        "sampled",
        "hoeffding",
        200_000,
    )
    assert (settings.price_start, settings.time_limit) == ("paper", 20.0)
