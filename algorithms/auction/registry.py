"""The auction family's built-in mechanisms, one line each (algorithms/common/registry.py): the names
a config's `mechanisms` takes, the class that runs each, and the section of paper 001 it
implements. The offline optimum `OPT` (algorithms/auction/offline_optimum.py) solves a whole day
at once, is not an online mechanism and is not listed here (algorithms/auction/config.py names it).

A result row carries the name as the config writes it (`Titan(objective=welfare)` and `Titan` are
two rows of the same mechanism). pdFTSP's keys are settings over the config's `pdftsp` section, not
defaults of their own (Param default None: the section's value stands): config.py merges a name's
keys over the section and resolves them on the world (Lemma 2's alpha and beta, kappa) into
PdFTSP's arguments, which the family hands to `REGISTRY.build`; `ZeroPrice` is pdFTSP with the fixed
settings ZERO_PRICE over the same section. The section's keys and the Params are checked by the same
checks, PDFTSP_CHECKS (config.PdftspSection declares the section with them).
Titan takes `time_limit` from the `titan` section (its context).

Adding a baseline is one new module in algorithms/auction/ with a class whose `run(instance, rng)`
returns an `AuctionOutcome` (algorithms/auction/mechanism.py) and one line below; the family, its
parser and its error text see it from here.
"""

from __future__ import annotations

import functools
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


def _bound(value, key: str, readings: tuple[str, ...]):
    """Lemma 2's bound by name (`readings`) or a number > 0 (returned as a float)."""
    if isinstance(value, str) and value in readings:
        return value
    if not isinstance(value, str) and is_real(value) and math.isfinite(value) and value > 0:
        return float(value)
    allowed = ", ".join(repr(reading) for reading in readings)
    raise ValueError(f"{key} must be {allowed} or a number > 0, got {value!r}")


def _kappa(value, key: str):
    """`lemma` (1 / TaskParams.gross_bbar_floor) or a number > 0."""
    if isinstance(value, str):
        if value == "lemma":
            return value
        raise ValueError(f"{key} must be 'lemma' or a number > 0, got {value!r}")
    return real(value, key, 0, strict_min=True)


# The `pdftsp` section's keys, which are also pdFTSP's name keys: check(value, key) returns the value
# or raises ValueError naming `key` (config.PdftspSection declares the section with these checks)
PDFTSP_CHECKS = {
    "alpha": lambda value, key: _bound(value, key, ALPHA_BOUNDS),
    "beta": lambda value, key: _bound(value, key, BETA_BOUNDS),
    "kappa": _kappa,
    "work_unit": lambda value, key: choice(value, key, tuple(WORK_UNITS)),
    "price_scale": lambda value, key: real(value, key, 0, strict_min=True),
    "payment": lambda value, key: choice(value, key, PAYMENTS),
    "schedule_space": lambda value, key: choice(value, key, SCHEDULE_SPACES),
    "prices": lambda value, key: switch(key)(value),
    "selector": lambda value, key: choice(value, key, SELECTORS),
}
PLACEHOLDERS = {
    "alpha": "lemma2|A",
    "beta": "lemma2|lemma2_tight|B",
    "kappa": "lemma|K",
    "work_unit": "|".join(WORK_UNITS),
    "price_scale": "S",
    "payment": "|".join(PAYMENTS),
    "schedule_space": "|".join(SCHEDULE_SPACES),
    "prices": "on|off",
    "selector": "|".join(SELECTORS),
}
# A pdFTSP key has no default of its own (None), so a name's value always overrides the section's
PDFTSP_SETTINGS = tuple(
    Param(key, functools.partial(check, key=key), default=None, placeholder=PLACEHOLDERS[key])
    for key, check in PDFTSP_CHECKS.items()
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
