"""A test family for tests/engine/test_ray_two_nodes.py: the spot family, with two more columns
saying where each row was simulated.

Every name of the family contract is the spot family's own, so a cell composed with
`family.module=tests.engine.node_family` is the same world (`family.module` is left out of the
hashes, docs/architecture.md) and gives the same rows, plus the Ray node of the actor that ran
the replicate: `node_id` (`ray.get_runtime_context().get_node_id()`) and `node_temp_dir` (that
node's `--temp-dir`, `get_temp_dir()`), which tells apart two nodes started on one machine.
"""

from __future__ import annotations

import ray

from algorithms.spot import family as _spot

NAME = _spot.NAME
SECTIONS = _spot.SECTIONS
SUMMARY_COLUMNS = _spot.SUMMARY_COLUMNS
RATE_COLUMNS = _spot.RATE_COLUMNS
INPUT_FILES = _spot.INPUT_FILES
prepare = _spot.prepare
mechanism_names = _spot.mechanism_names
cell_outputs = _spot.cell_outputs
NODE_COLUMN = "node_id"
TEMP_COLUMN = "node_temp_dir"


def simulate_replicate(prepared, replicate, rng):
    context = ray.get_runtime_context()
    where = {NODE_COLUMN: context.get_node_id(), TEMP_COLUMN: context.get_temp_dir()}
    return [{**row, **where} for row in _spot.simulate_replicate(prepared, replicate, rng)]
