"""A family whose simulations cost nothing, for bench/dispatch.py: what is left of a sweep's time
is the engine's (dispatch, collection, files).

The contract (sweep/family.py) with the least work: one section `noop` (`cell`, only to make the
cells different worlds), and `simulate_replicate` returns one row per mechanism at once, with the
required `mechanism` and `utility` and three more numbers, about as wide as a spot row's numeric
part. It never draws from `rng`.
"""

from __future__ import annotations

NAME = "noop"
SECTIONS = ("noop",)
SUMMARY_COLUMNS = ("cost", "completion_time")


def prepare(config: dict) -> tuple[str, ...]:
    section = config.get("noop") or {}
    unknown = sorted(set(section) - {"cell"})
    if unknown:
        raise ValueError(f"noop.{unknown[0]}: not a key of the noop family (its keys: cell)")
    return tuple(config["mechanisms"])


def mechanism_names(config: dict) -> list[str]:
    return list(config["mechanisms"])


def simulate_replicate(prepared: tuple[str, ...], replicate: int, rng) -> list[dict]:
    return [
        {"mechanism": name, "utility": float(replicate + i), "cost": 1.0, "completion_time": 2.0, "met_deadline": True}
        for i, name in enumerate(prepared)
    ]
