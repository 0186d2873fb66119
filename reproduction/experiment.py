"""What a family's reproduction package declares (reproduction/<family>/__init__.py), and the checks it
writes: the generic driver (reproduction/driver.py) needs nothing else.

A module defines ``EXPERIMENTS``, a sequence of :class:`Experiment` in the order they run, and
``checks(context) -> list[Check]``, the paper's claims evaluated on the reports it built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd


@dataclass
class Context:
    """Where an experiment's runs are (`runs/<experiment>`) and its reports go (`out`), and the
    reports built so far in this invocation (experiment name -> what its `report` returned)."""

    runs: Path
    out: Path
    reports: dict[str, Any] = field(default_factory=dict)

    def run_dir(self, name: str) -> Path:
        return self.runs / name


@dataclass(frozen=True)
class Experiment:
    """One experiment of a paper: the Hydra experiment it runs (`conf/experiment/<it>.yaml`; None
    for a report computed in process or from other experiments' runs), and how to build its
    report (CSV + PNG in `context.out`) from `context.run_dir(name)`."""

    name: str
    experiment: str | None
    report: Callable[[Context], Any]
    multirun: bool = True


@dataclass(frozen=True)
class Check:
    """A claim evaluated on the reproduced numbers: `ours` against the `paper`'s value (when the
    paper gives one) under the `rule` that decides `holds` (e.g. "> 0", "<= 3", "|ours - paper|
    <= 5"). An information row (a number worth showing that no rule judges) has `holds` None."""

    experiment: str
    check: str
    ours: float
    holds: bool | None
    rule: str = ""
    paper: float | None = None


CHECK_COLUMNS = ["experiment", "check", "paper", "ours", "rule", "holds"]


def write_checks(out_dir: Path, checks: list[Check], chosen: list[str], known: list[str]) -> pd.DataFrame:
    """Write ``checks.csv``: these checks, plus the earlier file's rows of experiments not run now
    (so a run of a subset does not drop the other experiments' checks), in experiment order."""
    table = pd.DataFrame(
        [{column: getattr(check, column) for column in CHECK_COLUMNS} for check in checks], columns=CHECK_COLUMNS
    )
    table[["paper", "ours"]] = table[["paper", "ours"]].astype(float)
    path = Path(out_dir) / "checks.csv"
    try:
        earlier = pd.read_csv(path)
    except (OSError, pd.errors.EmptyDataError, pd.errors.ParserError):
        earlier = pd.DataFrame()  # none yet, or not one this function wrote: start afresh
    if "experiment" in earlier and set(CHECK_COLUMNS) <= set(earlier.columns):
        fresh = set(chosen) | set(table["experiment"])
        kept = earlier[~earlier["experiment"].isin(fresh) & earlier["experiment"].isin(known)]
        table = pd.concat([kept[CHECK_COLUMNS], table], ignore_index=True) if len(kept) else table
    rank = {name: i for i, name in enumerate(known)}
    table = table.sort_values("experiment", key=lambda e: e.map(rank), kind="stable").reset_index(drop=True)
    table.to_csv(path, index=False, float_format="%.4f")
    return table
