"""reproduction/sow/__init__.py's checks on hand-made report tables: each rule can fail."""

from pathlib import Path

import pandas as pd

from reproduction.experiment import Context
from reproduction.sow import checks


def _checks(name: str, table: pd.DataFrame) -> list:
    return [c for c in checks(Context(Path("."), Path("."), {name: table})) if c.experiment == name]


def _lemma31(lifo_changed: int, fifo_changed: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "births.signal": ["none", "none"],
            "mechanism": ["PrefixAudit", "PrefixAudit(eviction=fifo)"],
            "compared": [100, 100],
            "changed": [lifo_changed, fifo_changed],
        }
    )


def test_lemma31_holds_only_when_lifo_changes_nothing_and_fifo_something():
    assert [c.holds for c in _checks("lemma31", _lemma31(0, 3))] == [True, True]
    assert [c.holds for c in _checks("lemma31", _lemma31(1, 0))] == [False, False]


def _misreports(gain: float, within_mu: bool, mu: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mechanism": ["TruthAudit"] * 3,
            "kind": ["truthful", "value", "concurrency"],
            "gain": [0.0, gain, 0.5],
            "within_mu": [True, within_mu, False],
            "within_plans": [True, True, True],
            "mu": [mu, mu, mu],
        }
    )


def test_truthfulness_checks_count_reports_over_the_bounds_and_the_oracle_error():
    good = {c.check.split(":")[0]: c for c in _checks("truthfulness", _misreports(0.01, True, 0.05))}
    assert good["Theorem 3.2"].holds and good["Theorem 3.2"].ours == 0
    assert good["Lemma F.1 (R = 324)"].holds
    assert good["concurrency overclaims that gain (Appendix B's gap"].ours == 1  # information
    bad = {c.check.split(":")[0]: c for c in _checks("truthfulness", _misreports(2.0, False, 0.5))}
    assert bad["Theorem 3.2"].holds is False and bad["Theorem 3.2"].ours == 1
    assert bad["Lemma F.1 (R = 324)"].holds is False


def _toy(reserve_per_unit: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "births.X": [8, 8, 8],
            "mechanism": ["FirstComeGreedy", "ReserveWorstCase", "Reduction"],
            "welfare_per_job": [8.0, 4.0, 8.0],
            "welfare_per_node_round": [8.0, reserve_per_unit, 8.0],
        }
    )


def test_toy_per_unit_check_fails_when_reserving_earns_as_much_per_unit():
    def per_unit(table):
        return next(c for c in _checks("toy", table) if "node-round" in c.check)

    assert per_unit(_toy(1.0)).holds
    assert not per_unit(_toy(6.0)).holds
