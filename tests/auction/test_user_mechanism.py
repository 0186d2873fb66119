"""A user's own auction mechanism named by import path (docs/extending.md, "auction: a mechanism"):
the worked example of the doc, run from a folder outside the project, checked against EFT, on the
local Ray pool with 1 and 2 workers, and each kind of mistake refused before any work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from algorithms.auction import family
from algorithms.auction.config import parse
from algorithms.auction.eft import EFT
from algorithms.auction.mechanism import AuctionMechanism
from algorithms.auction.ntm import NTM
from algorithms.auction.pdftsp import PdFTSP
from algorithms.auction.titan import Titan
from algorithms.common.mechanism_names import parse_name
from algorithms.common.streams import mechanism_stream
from algorithms.common.user_mechanisms import is_import_path
from tests.user_mechanism_checks import assert_refused, example_source, outside_folder, results_on_1_and_2_workers

pytestmark = pytest.mark.sweeps
EXAMPLE = "my_auctions:ReservePrice"
SMALL = {"cluster": {"nodes": 6}, "tasks": {"load": 3, "slots": 24}}
TIMING = ("decision_ms_per_task",)


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A folder outside the project holding the doc's example as `my_auctions.py`, on sys.path."""
    return outside_folder(
        tmp_path,
        monkeypatch,
        {
            "my_auctions.py": example_source("auction"),
            "not_a_mechanism.py": "class Plain:\n    def decide(self, instance):\n        pass\n",
        },
    )


def rows_of(mechanisms: list[str], replicate: int = 0) -> list[dict]:
    prepared = family.prepare({**SMALL, "mechanisms": mechanisms})
    return family.simulate_replicate(prepared, replicate, np.random.default_rng([replicate, 11]))


def without(row: dict, skip=("mechanism", *TIMING)) -> dict:
    return {k: v for k, v in row.items() if k not in skip and k != "tables"}


def test_the_built_in_mechanisms_fit_the_interface():
    for cls in (EFT, NTM, PdFTSP, Titan):
        assert callable(getattr(cls, "run", None))
    assert isinstance(EFT(), AuctionMechanism) and isinstance(NTM(), AuctionMechanism)


def test_auction_takes_an_import_path_with_its_parameters_and_the_name_as_written(folder):
    name = f"{EXAMPLE}(reserve=7.5)"
    parsed = parse_name(name)
    assert is_import_path(parsed.kind) and parsed.params == {"reserve": 7.5}
    assert parse(name) == (EXAMPLE, {"reserve": 7.5})
    assert parse("EFT(admit=positive)") == ("EFT", {"admit": "positive"}) and parse("pdFTSP") == ("pdFTSP", {})
    config = {**SMALL, "mechanisms": ["EFT", name]}
    assert family.mechanism_names(config) == ["EFT", name]
    mechanism = family.make_mechanism(name, family.prepare(config))
    assert isinstance(mechanism, AuctionMechanism) and mechanism.reserve == 7.5
    assert [row["mechanism"] for row in rows_of(["EFT", name])] == ["EFT", name]


def test_reserve_0_is_eft_exactly_on_the_same_stream(folder):
    """The family gives each name its own stream; run both on one world with equal generators."""
    from my_auctions import ReservePrice

    prepared = family.prepare({**SMALL, "mechanisms": ["EFT"]})
    for replicate in range(3):
        rng = np.random.default_rng([replicate, 11])
        instance = family.draw_world(prepared, rng)
        eft = EFT().run(instance, mechanism_stream(rng, "x"))
        mine = ReservePrice(reserve=0).run(instance, mechanism_stream(rng, "x"))
        assert eft.admitted.any() and np.array_equal(eft.admitted, mine.admitted)
        assert eft.schedules.keys() == mine.schedules.keys()
        for i, s in eft.schedules.items():
            t = mine.schedules[i]
            assert s.vendor == t.vendor and np.array_equal(s.slots, t.slots) and np.array_equal(s.nodes, t.nodes)
        a, b = eft.metrics(), mine.metrics()
        assert {k: v for k, v in a.items() if k not in TIMING} == {k: v for k, v in b.items() if k not in TIMING}
        ta, tb = eft.task_table(), mine.task_table()
        assert ta.keys() == tb.keys()
        assert all(np.array_equal(ta[k], tb[k]) for k in ta if k != "decision_seconds")


def test_in_the_family_reserve_0_gives_eft_rows_and_a_reserve_admits_fewer(folder):
    rows = rows_of(["EFT", f"{EXAMPLE}(reserve=0)", f"{EXAMPLE}(reserve=1000)", EXAMPLE], replicate=2)
    eft, zero, high, default = rows
    assert without(zero) == without(eft)
    tables = eft["tables"]["tasks"], zero["tables"]["tasks"]
    assert all(np.array_equal(tables[0][k], tables[1][k]) for k in tables[0] if k != "decision_seconds")
    assert high["admitted"] == 0 and high["welfare"] == 0.0
    assert default["mechanism"] == EXAMPLE and default["admitted"] <= eft["admitted"]


def test_a_bad_name_is_refused_in_prepare(folder):
    with pytest.raises(ValueError, match=r"^mechanisms: my_auctions:ReservePrice: its constructor refused reserve=-1"):
        family.prepare({**SMALL, "mechanisms": ["EFT", f"{EXAMPLE}(reserve=-1)"]})
    with pytest.raises(ValueError, match=r"package.module:Class\(key=value,...\)"):
        family.prepare({**SMALL, "mechanisms": ["NoSuch"]})


@pytest.mark.parametrize(
    ("mechanism", "says"),
    [
        ("nowhere_module:ReservePrice", "cannot import the module 'nowhere_module'"),
        ("my_auctions:Missing", "the module 'my_auctions' defines no 'Missing'"),
        (
            "not_a_mechanism:Plain",
            "'Plain' does not implement algorithms.auction.mechanism.AuctionMechanism, the family's mechanism "
            "interface (it defines no run;",
        ),
        (f"{EXAMPLE}(reserve=-1)", "its constructor refused reserve=-1 (reserve must be a number >= 0, got -1)"),
        (f"{EXAMPLE}(price=2)", "its constructor refused price=2"),
    ],
)
def test_a_bad_user_mechanism_is_one_error_line_before_any_work(folder, tmp_path, mechanism, says):
    mechanisms = f'mechanisms=[EFT,"{mechanism}"]'
    assert_refused(folder, tmp_path / "run", ["family=auction", mechanisms], says)


@pytest.mark.slow
def test_a_sweep_with_the_example_gives_the_same_numbers_on_1_and_2_workers(folder, tmp_path):
    one, two = results_on_1_and_2_workers(
        folder,
        tmp_path,
        [
            "family=auction",
            "cluster.nodes=6",
            "tasks.load=2,3",
            "tasks.slots=24",
            f'mechanisms=[EFT,NTM,"{EXAMPLE}(reserve=20)"]',
            "replicates=2",
        ],
    )
    one, two = (frame.drop(columns=list(family.TIMING_COLUMNS), errors="ignore") for frame in (one, two))
    pd.testing.assert_frame_equal(one, two)
    mine = one[one["mechanism"] == f"{EXAMPLE}(reserve=20)"]
    assert len(mine) == 4 and mine["utility"].notna().all()
