"""An input file enters the seeds and the config hash by its parsed content (sweep/seeding.py,
the family's INPUT_FILES): the bundled traces saved with LF instead of CRLF endings, with a BOM,
or with their numbers written differently give the same hashes and the same numbers; a changed
value does not."""

from __future__ import annotations

import codecs
import shutil

import pytest
from hydra import compose, initialize_config_dir

from sweep.api import CONF_DIR
from sweep.cells import make_cell
from sweep.seeding import replicate_rng

ROOT = CONF_DIR.parent
CASES = {  # experiment, its input-file key, the bundled file, an override that makes the cell read it
    "spot": ("spot/trace", "market.path", "data/market_aws_us-west-2a_v100.csv", "forecast.kind=oracle"),
    "auction": ("auction/fig7", "tasks.trace_path", "data/arrivals_alibaba_lora_10min.csv", "tasks.arrivals=trace"),
}


def variants(original: bytes) -> dict[str, bytes]:
    lf = original.replace(b"\r\n", b"\n")
    lines = lf.decode().splitlines()
    # the same values written otherwise: 0.5 as 0.50, and a column the loaders do not read
    reformatted = "\n".join(f"{line},x" if i else f"{line},note" for i, line in enumerate(lines)).replace(".5,", ".50,")
    return {"crlf": original, "lf": lf, "bom": codecs.BOM_UTF8 + lf, "reformatted": reformatted.encode() + b"\n"}


def cell_for(experiment: str, key: str, path, extra: str):
    overrides = [f"{key}={path}", extra, "debug=tiny"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={experiment}", "tracking=off", *overrides])
    return make_cell(cfg, overrides, 0, "0")


def rows(cell):
    prepared = cell.spec.prepare(cell.world)
    out = cell.spec.simulate_replicate(prepared, 0, replicate_rng(cell.world_hash, 0))
    return [{k: v for k, v in row.items() if k not in cell.spec.timing_columns and k != "tables"} for row in out]


@pytest.mark.parametrize("family", sorted(CASES))
def test_line_endings_a_bom_and_number_formatting_change_nothing(tmp_path, family):
    experiment, key, bundled, extra = CASES[family]
    original = (ROOT / bundled).read_bytes()
    assert b"\r\n" in original  # the shipped files have CRLF endings
    cells = {}
    for name, content in variants(original).items():
        (tmp_path / name).mkdir()
        path = tmp_path / name / "trace.csv"  # a different folder too: the path is not hashed either
        path.write_bytes(content)
        cells[name] = cell_for(experiment, key, path, extra)
    hashes = {(c.config_hash, c.world_hash) for c in cells.values()}
    assert len(hashes) == 1, {name: c.world_hash[:12] for name, c in cells.items()}
    assert rows(cells["crlf"]) == rows(cells["bom"])


@pytest.mark.parametrize("family", sorted(CASES))
def test_a_changed_value_changes_the_seeds(tmp_path, family):
    experiment, key, bundled, extra = CASES[family]
    lines = (ROOT / bundled).read_bytes().decode().split("\r\n")
    slot, stamp, *rest = lines[7].split(",")
    count = int(float(rest[-1]))
    rest[-1] = str(count + 1 if count < 16 else count - 1)  # one instance or arrival more (or fewer) in slot 6
    changed = tmp_path / "changed.csv"
    changed.write_text("\r\n".join(lines[:7] + [",".join([slot, stamp, *rest])] + lines[8:]), newline="")
    same = tmp_path / "same.csv"
    shutil.copyfile(ROOT / bundled, same)
    assert cell_for(experiment, key, changed, extra).world_hash != cell_for(experiment, key, same, extra).world_hash
