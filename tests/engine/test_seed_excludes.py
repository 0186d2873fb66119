"""`seed_excludes` (sweep/cells.py, sweep/schema.py): cells that differ only in an excluded key
draw the same worlds; the default changes no hash; bad values are one-line errors."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir

from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.errors import ConfigError


def cell(*overrides):
    overrides = ["tracking=off", *overrides]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return make_cell(compose("config", overrides=overrides), overrides, 0, "0")


def test_an_excluded_key_leaves_the_world_hash_and_keeps_the_config_hash_apart():
    a, b = cell("job.deadline=8"), cell("job.deadline=10")
    assert a.world_hash != b.world_hash
    a, b = (cell(f"job.deadline={d}", "seed_excludes=[job.deadline]") for d in (8, 10))
    assert a.world_hash == b.world_hash and a.config_hash != b.config_hash
    assert cell("job.deadline=8", "seed_excludes=[mechanisms]").world_hash != a.world_hash


def test_the_empty_default_changes_no_hash():
    default = cell()
    assert default.world["seed_excludes"] == []
    view = dict(default.world)
    view.pop("seed_excludes")
    from sweep.cells import cell_hashes

    assert cell_hashes(view, default.spec) == (default.config_hash, default.world_hash)


@pytest.mark.parametrize(
    "value, message",
    [
        ("seed_excludes=job.deadline", "seed_excludes must be a list of dotted keys"),
        ("seed_excludes=[seed]", "'seed' cannot be excluded"),
        ("seed_excludes=[job.nonsense]", "'job.nonsense' is not a key of this cell's config"),
    ],
)
def test_bad_values_are_errors_naming_the_key(value, message):
    with pytest.raises(ConfigError, match=message):
        cell(value)
