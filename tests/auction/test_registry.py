"""The auction registry (algorithms/auction/registry.py): the parser, the dispatch and the error text
derive from it, the `pdftsp` section is checked by pdFTSP's own keys, and a new baseline is one
module plus one registry line (docs/extending.md, "Adding a built-in mechanism")."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.auction import family, titan
from algorithms.auction.config import OPTIMUM, parse
from algorithms.auction.mechanism import AuctionMechanism
from algorithms.auction.registry import REGISTRY, TITAN_OBJECTIVES, TITAN_STARTS
from tests.registry_checks import add_baseline, project_copy, run_replicate

SMALL = {"cluster": {"nodes": 2}, "tasks": {"load": 2, "slots": 6}}

CHEAP_VENDOR = '''"""CheapVendor: EFT's earliest-finishing placement with the cheapest labor vendor (ties: the
lower index), admitting a task only when its bid exceeds its vendor price and operating cost;
pay-as-bid. A test baseline (paper 001, Sec. 5.1's EFT with another vendor rule)."""

import numpy as np

from algorithms.auction.earliest_finish import earliest_finish
from algorithms.auction.outcome import AuctionOutcome


class CheapVendor:
    def run(self, instance, rng):
        out = AuctionOutcome.empty(instance)
        tasks = instance.tasks
        for i in range(len(tasks)):
            vendor = int(np.argmin(instance.vendor_price[i])) if tasks.preprocess[i] else -1
            schedule = earliest_finish(instance, out.ledger, i, vendor)
            if schedule is not None:
                if tasks.bid[i] > schedule.vendor_cost(instance) + schedule.operating_cost(instance):
                    out.admit(schedule, float(tasks.bid[i]))
        return out
'''
LINE = 'Entry("CheapVendor", "algorithms.auction.cheap_vendor:CheapVendor", "test baseline"),'


def test_every_entry_is_named_in_the_error_text_and_builds():
    with pytest.raises(ValueError, match="unknown mechanism 'Nope' for family auction") as refused:
        parse("Nope")
    text = str(refused.value)
    assert f" {OPTIMUM}," in text and "package.module:Class(key=value,...)" in text
    names = REGISTRY.names()
    prepared = family.prepare({**SMALL, "mechanisms": list(names)})
    for entry in REGISTRY:
        assert entry.example() in text
        for param in entry.params:
            assert f"{param.key}=" in text
        assert isinstance(family.make_mechanism(entry.name, prepared), AuctionMechanism)
    assert {row["mechanism"] for row in family.simulate_replicate(prepared, 0, np.random.default_rng(0))} == set(names)


def test_names_keep_their_spelling_and_defaults_are_dropped_for_dispatch():
    assert parse("EFT(admit=all)") == parse("EFT") == ("EFT", {})
    assert parse("Titan(solve=on)") == ("Titan", {})
    config = {**SMALL, "mechanisms": ["Titan", "Titan(objective=welfare)", "pdFTSP", "pdFTSP(price_scale=1)"]}
    assert family.mechanism_names(config) == config["mechanisms"]  # rows carry the names as written
    # a pdFTSP key has no default of its own: price_scale=1 overrides the section's price_scale
    prepared = family.prepare({**config, "pdftsp": {"price_scale": 0.5}})
    assert prepared.pdftsp["pdFTSP(price_scale=1)"].alpha == pytest.approx(2 * prepared.pdftsp["pdFTSP"].alpha)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("ZeroPrice(prices=on)", "ZeroPrice takes no parameters"),
        ("EFT(admit=some)", "EFT(admit=some): admit must be one of all, positive, got 'some'"),
        ("Titan(solve=maybe)", "Titan(solve=maybe): solve must be on or off, got 'maybe'"),
        ("pdFTSP(alpha=lemma2_tight)", "pdFTSP(alpha=lemma2_tight): alpha must be 'lemma2' or a number > 0"),
        ("pdFTSP(kappa=paper)", "kappa must be 'lemma' or a number > 0, got 'paper'"),
        ("OPT(limit=1)", "unknown mechanism 'OPT(limit=1)'"),
    ],
)
def test_a_bad_name_is_one_error_naming_it(name, says):
    with pytest.raises(ValueError, match="^mechanisms: ") as refused:
        family.prepare({**SMALL, "mechanisms": ["EFT", name]})
    assert says in str(refused.value)


def test_the_pdftsp_section_is_checked_by_pdftsps_keys():
    with pytest.raises(ValueError, match=r"^pdftsp\.beta must be 'lemma2', 'lemma2_tight' or a number > 0, got 0"):
        family.prepare({**SMALL, "pdftsp": {"beta": 0}, "mechanisms": ["EFT"]})
    with pytest.raises(ValueError, match="unknown key"):
        family.prepare({**SMALL, "pdftsp": {"gamma": 1}, "mechanisms": ["EFT"]})


def test_titans_choices_are_titan_modules():
    # registry.py spells them out rather than import titan.py, which loads OR-Tools
    assert (TITAN_STARTS, TITAN_OBJECTIVES) == (titan.STARTS, titan.OBJECTIVES)


@pytest.mark.slow
def test_a_new_baseline_is_one_file_and_one_registry_line(tmp_path):
    project = project_copy(tmp_path)
    add_baseline(project, "auction", "cheap_vendor", CHEAP_VENDOR, LINE)
    rows = dict(run_replicate(project, ["family=auction"], ["EFT", "CheapVendor"]))
    assert set(rows) == {"EFT", "CheapVendor"}
    assert all(isinstance(utility, float) for utility in rows.values())
