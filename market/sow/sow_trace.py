"""Users' own statements of work from a CSV file (`births.kind: trace`; docs/sow/world.md).

One row per support point of a job's distribution P_j:

    job,birth,concurrency,arrival,duration,probability,values
    0,0,2,3,2,0.5,8 8 8 8 8 8 8 8 8 0 0 0 0 0 0 0 0

- `job`: 0, 1, 2, ... in order of first appearance; the rows of a job are contiguous.
- `birth`, `concurrency`: integers, the same on every row of a job; births non-decreasing.
- `arrival` (absolute round), `duration`: integers; `probability`: a number or a fraction `p/q`.
- `values`: V(birth + 0) .. V(birth + S_max), space-separated numbers. The same on every row of a
  job, and the same count for every job (S_max + 1).

`load_sow_trace` checks the layout and that the numbers parse, and names file and line
(TraceError). `SowTrace.to_sequence(bounds, signal)` checks every SoW against Sec. 2's model and
the bounds (`check_sow`), naming file and the line of the job's first row.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from market.common.csv_trace import TraceError, parse_int, read_rows
from market.sow.statement_of_work import BirthSequence, Bounds, StatementOfWork, check_sow

__all__ = ["REQUIRED_COLUMNS", "SowTrace", "TraceError", "load_sow_trace"]

REQUIRED_COLUMNS = ("job", "birth", "concurrency", "arrival", "duration", "probability", "values")


@dataclass(frozen=True, eq=False)
class SowTrace:
    """The SoWs of a file in submission order, with the line of each job's first row.
    Not yet checked against any bounds: see `to_sequence`."""

    path: str
    jobs: tuple[StatementOfWork, ...]
    lines: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def horizon(self) -> int:
        """S_max as the file writes it: the number of values per job minus 1."""
        return len(self.jobs[0].values) - 1

    def to_sequence(self, bounds: Bounds, signal: str = "none", nodes: int | None = None) -> BirthSequence:
        """The birth sequence, every SoW checked by `check_sow` against `bounds` (and `nodes` when
        given). A violation is a TraceError naming the file and the line of the job's first row."""
        for sow, line in zip(self.jobs, self.lines):
            where = f"{self.path}:{line}"
            try:
                check_sow(sow, bounds, where, nodes)
            except ValueError as err:
                text = str(err)
                raise TraceError(self.path, line, text[len(where) + 2 :] if text.startswith(where) else text) from None
        return BirthSequence(self.jobs, bounds, signal)


def _int(path, line: int, column: str, text: str) -> int:
    value = parse_int(text)
    if value is None:
        raise TraceError(path, line, f"{column} {text!r} is not an integer")
    return value


def _probability(path, line: int, text: str) -> float:
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise TraceError(path, line, f"probability {text!r} is not a number or a fraction p/q") from None
    return float(value)


def _values(path, line: int, text: str) -> tuple[float, ...]:
    values = []
    for item in text.split():
        try:
            x = float(item)
        except ValueError:
            raise TraceError(path, line, f"values: {item!r} is not a number") from None
        if not math.isfinite(x):
            raise TraceError(path, line, f"values: {item!r} is not a finite number")
        values.append(x)
    return tuple(values)


@dataclass
class _Job:
    line: int
    birth: int
    concurrency: int
    values: tuple
    points: list

    def sow(self) -> StatementOfWork:
        a, d, p = zip(*self.points)
        return StatementOfWork(
            self.birth,
            self.concurrency,
            np.array(self.values),
            np.array(a, np.int64),
            np.array(d, np.int64),
            np.array(p),
        )


def _same(path, line: int, job: int, first: _Job, birth: int, concurrency: int, values: tuple) -> None:
    for column, mine, theirs in (
        ("birth", birth, first.birth),
        ("concurrency", concurrency, first.concurrency),
        ("values", values, first.values),
    ):
        if mine != theirs:
            raise TraceError(
                path,
                line,
                f"job {job}: {column} differs from the job's first row (line "
                f"{first.line}); birth, concurrency and values are the job's, the "
                "same on each of its rows",
            )


def load_sow_trace(path) -> SowTrace:
    """Read a SoW file (format in the module docstring). TraceError naming file and line for a
    number that does not parse, jobs not numbered 0, 1, ... in order, a job's rows not
    contiguous, birth/concurrency/values differing within a job, births decreasing, and jobs
    with different numbers of values."""
    path = os.fspath(path)
    jobs: list[_Job] = []
    for line, row in read_rows(path, REQUIRED_COLUMNS):
        job = _int(path, line, "job", row["job"])
        birth = _int(path, line, "birth", row["birth"])
        concurrency = _int(path, line, "concurrency", row["concurrency"])
        point = (
            _int(path, line, "arrival", row["arrival"]),
            _int(path, line, "duration", row["duration"]),
            _probability(path, line, row["probability"]),
        )
        values = _values(path, line, row["values"])
        if jobs and job == len(jobs) - 1:
            _same(path, line, job, jobs[-1], birth, concurrency, values)
            jobs[-1].points.append(point)
            continue
        if 0 <= job < len(jobs):
            raise TraceError(
                path,
                line,
                f"job {job} again after job {len(jobs) - 1}: the rows of job {job} "
                f"(from line {jobs[job].line}) must be contiguous",
            )
        if job != len(jobs):
            raise TraceError(
                path,
                line,
                f"job {job}, expected {len(jobs)} (jobs are numbered 0, 1, ... in order of first appearance)",
            )
        if jobs and birth < jobs[-1].birth:
            raise TraceError(
                path,
                line,
                f"job {job} is born at {birth}, before job {job - 1} ({jobs[-1].birth}): births must be non-decreasing",
            )
        if jobs and len(values) != len(jobs[0].values):
            raise TraceError(
                path,
                line,
                f"job {job} has {len(values)} values, job 0 (line {jobs[0].line}) has "
                f"{len(jobs[0].values)}: every job lists V(birth + 0..S_max)",
            )
        jobs.append(_Job(line, birth, concurrency, values, [point]))
    return SowTrace(path, tuple(job.sow() for job in jobs), tuple(job.line for job in jobs))
