"""A fake family for tests/engine/test_engine_units.py: one mechanism reports a key the
other does not (as the auction family's Titan rows do)."""

NAME = "ragged"
SECTIONS = ()


def prepare(config):
    return None


def mechanism_names(config):
    return ["A", "B"]


def simulate_replicate(prepared, replicate, rng):
    return [
        {"mechanism": "A", "utility": 1.0, "cost": 0.0, "completion_time": 1.0},
        {"mechanism": "B", "utility": 2.0, "cost": 0.0, "completion_time": 1.0, "extra": replicate},
    ]
