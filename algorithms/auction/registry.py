"""The auction family's built-in mechanisms, one line each (algorithms/common/registry.py): the names
a config's `mechanisms` takes, the class that runs each, and the section of paper 001 it
implements. The offline optimum `OPT` (algorithms/auction/offline_optimum.py) solves a whole day
at once, is not an online mechanism and is not listed here (algorithms/auction/config.py names it).

A result row carries the name as the config writes it (`Titan(objective=welfare)` and `Titan` are
two rows of the same mechanism). pdFTSP's keys are settings over the config's `pdftsp` section, not
defaults of their own (Param default None: the section's value stands): config.py merges a name's
keys over the section and resolves them on the world (Lemma 2's alpha and beta, kappa) into
PdFTSP's arguments, which the family hands to `REGISTRY.build`; `ZeroPrice` is pdFTSP with the fixed
settings ZERO_PRICE over the same section. The section's keys are checked by the same Params.
Titan takes `time_limit` from the `titan` section (its context).

Adding a baseline is one new module in algorithms/auction/ with a class whose `run(instance, rng)`
returns an `AuctionOutcome` (algorithms/auction/mechanism.py) and one line below; the family, its
parser and its error text see it from here.
"""

from __future__ import annotations

import math

from algorithms.auction.eft import ADMITS
from algorithms.auction.pdftsp import PAYMENTS, SCHEDULE_SPACES, SELECTORS
from algorithms.common.registry import Entry, Param, Registry, one_of
from market.common.fields import choice, is_real, real

ALPHA_BOUNDS = ("lemma2",)  # alpha of Lemma 2 (config.PdftspParams)
BETA_BOUNDS = ("lemma2", "lemma2_tight")  # beta of Lemma 2, or its tighter reading (config.PdftspParams)
# the unit of bbar's computation (pdftsp.py, "The unit of bbar"); the world counts ksamples
WORK_UNITS = {"ksamples": 1.0, "samples": 1000.0}
ZERO_PRICE = {"prices": "off", "schedule_space": "fitting"}  # ZeroPrice's settings over the `pdftsp` section
# titan.py's STARTS and OBJECTIVES, not imported from it: titan.py loads OR-Tools (tests/auction/test_registry.py)
TITAN_STARTS = ("earliest", "cheapest")
TITAN_OBJECTIVES = ("welfare", "throughput")


def switch(name: str):
    """An on / off setting (a YAML boolean, or `on` / `off` in a mechanism's name), as a bool."""

    def check(value) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value in ("on", "off"):
            return value == "on"
        raise ValueError(f"{name} must be on or off, got {value!r}")

    return check


def _bound(name: str, readings: tuple[str, ...]):
    """Lemma 2's bound by name (`readings`) or a number > 0 (returned as a float)."""

    def check(value):
        if isinstance(value, str) and value in readings:
            return value
        if not isinstance(value, str) and is_real(value) and math.isfinite(value) and value > 0:
            return float(value)
        allowed = ", ".join(repr(reading) for reading in readings)
        raise ValueError(f"{name} must be {allowed} or a number > 0, got {value!r}")

    return check


def _kappa(value):
    """`lemma` (1 / TaskParams.gross_bbar_floor) or a number > 0."""
    if isinstance(value, str):
        if value == "lemma":
            return value
        raise ValueError(f"kappa must be 'lemma' or a number > 0, got {value!r}")
    return real(value, "kappa", 0, strict_min=True)


def _setting(key: str, check, placeholder: str) -> Param:
    """A pdFTSP key: no default of its own (None), so a name's value always overrides the section's."""
    return Param(key, check, default=None, placeholder=placeholder)


def _choice(key: str, choices) -> Param:
    return _setting(key, lambda value: choice(value, key, tuple(choices)), "|".join(choices))


PDFTSP_SETTINGS = (
    _setting("alpha", _bound("alpha", ALPHA_BOUNDS), "lemma2|A"),
    _setting("beta", _bound("beta", BETA_BOUNDS), "lemma2|lemma2_tight|B"),
    _setting("kappa", _kappa, "lemma|K"),
    _choice("work_unit", WORK_UNITS),
    _setting("price_scale", lambda value: real(value, "price_scale", 0, strict_min=True), "S"),
    _choice("payment", PAYMENTS),
    _choice("schedule_space", SCHEDULE_SPACES),
    _setting("prices", switch("prices"), "on|off"),
    _choice("selector", SELECTORS),
)

REGISTRY = Registry(
    "auction",
    [
        Entry("pdFTSP", "algorithms.auction.pdftsp:PdFTSP", "Sec. 3.3-3.4, Alg. 1-2", PDFTSP_SETTINGS),
        Entry(
            "Titan",
            "algorithms.auction.titan:Titan",
            "Sec. 5.1, baseline i",
            (
                Param("start", one_of("start", TITAN_STARTS), default="earliest", placeholder="earliest|cheapest"),
                Param("solve", switch("solve"), default=True, placeholder="on|off"),
                Param(
                    "objective",
                    one_of("objective", TITAN_OBJECTIVES),
                    default="welfare",
                    placeholder="welfare|throughput",
                ),
            ),
            context=("time_limit",),
        ),
        Entry(
            "EFT",
            "algorithms.auction.eft:EFT",
            "Sec. 5.1, baseline ii",
            (Param("admit", one_of("admit", ADMITS), default="all", placeholder="|".join(ADMITS)),),
        ),
        Entry("NTM", "algorithms.auction.ntm:NTM", "Sec. 5.1, baseline iii"),
        Entry("ZeroPrice", "algorithms.auction.pdftsp:PdFTSP", "Sec. 3.3, ablation (ours): pdFTSP without prices"),
    ],
)
