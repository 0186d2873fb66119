"""Users' SoW files (market/sow/sow_trace.py, docs/sow/world.md)."""

import pickle
from pathlib import Path

import numpy as np
import pytest

from market.common.csv_trace import TraceError
from market.sow.birth_sequences import bounds_from_config
from market.sow.sow_trace import load_sow_trace
from market.sow.statement_of_work import Bounds

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "sow_example_sows.csv"
HEADER = "job,birth,concurrency,arrival,duration,probability,values\n"
BOUNDS = Bounds(max_concurrency=3, max_duration=3, horizon=4, max_value=10.0)
V = "9 9 5 0 0"  # V(b + 0..4), S_max = 4


def write(tmp_path, rows, name="sows.csv"):
    path = tmp_path / name
    path.write_text(HEADER + "".join(row + "\n" for row in rows))
    return path


def expect(path, line, pattern, bounds=None):
    with pytest.raises(TraceError, match=pattern) as info:
        trace = load_sow_trace(path)
        trace.to_sequence(bounds or BOUNDS)
    assert info.value.path == str(path) and info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_the_example_file_loads_and_fits_the_default_bounds():
    assert EXAMPLE.stat().st_size < 5000
    trace = load_sow_trace(EXAMPLE)
    assert len(trace) == 5 and trace.lines == (2, 8, 14, 20, 26) and trace.horizon == 16
    seq = trace.to_sequence(bounds_from_config({}), "duration").check()
    assert [s.birth for s in seq.jobs] == [0, 8, 16, 24, 32] and seq.signal == "duration"
    job = seq.jobs[0]
    assert job.concurrency == 2 and job.arrival.tolist() == [2, 2, 3, 3, 4, 4]
    assert job.duration.tolist() == [2, 3] * 3 and job.probability.tolist() == [0.125, 0.125, 0.25, 0.25, 0.125, 0.125]
    assert job.values.tolist() == [8.0] * 10 + [0.0] * 7
    again = pickle.loads(pickle.dumps(trace))
    assert again.lines == trace.lines and np.array_equal(again.jobs[3].values, trace.jobs[3].values)


def test_a_small_file_with_fractions_crlf_and_extra_columns(tmp_path):
    path = tmp_path / "s.csv"
    path.write_bytes(
        (
            "job,birth,concurrency,arrival,duration,probability,values,note\r\n"
            f"0,0,1,0,1,1/3,{V},a\r\n0,0,1,1,1,2/3,{V},b\r\n1,2,3,3,2,1,9 0 0 0 0,c\r\n"
        ).encode()
    )
    trace = load_sow_trace(path)
    assert trace.lines == (2, 4) and trace.jobs[0].probability.tolist() == [1 / 3, 2 / 3]
    seq = trace.to_sequence(BOUNDS, nodes=3)
    assert len(seq) == 2 and seq.jobs[1].concurrency == 3


@pytest.mark.parametrize(
    "rows, line, pattern",
    [
        ([f"0,0,1,x,1,1,{V}"], 2, r"arrival 'x' is not an integer"),
        ([f"0,0,1,0,1.5,1,{V}"], 2, r"duration '1\.5' is not an integer"),
        ([f"0,0,1,0,1,0.5,{V}", f"0,0,1,1,1,half,{V}"], 3, r"probability 'half' is not a number or a fraction p/q"),
        ([f"0,0,1,0,1,1/0,{V}"], 2, r"probability '1/0' is not a number"),
        (["0,0,1,0,1,1,9 9 five 0 0"], 2, r"values: 'five' is not a number"),
        (["0,0,1,0,1,1,9 inf 5 0 0"], 2, r"values: 'inf' is not a finite number"),
        ([f"1,0,1,0,1,1,{V}"], 2, r"job 1, expected 0 \(jobs are numbered 0, 1, \.\.\. in order of first appearance\)"),
        (
            [f"0,0,1,0,1,1,{V}", f"1,1,1,1,1,1,{V}", f"0,0,1,2,1,1,{V}"],
            4,
            r"job 0 again after job 1: the rows of job 0 \(from line 2\) must be contiguous",
        ),
        (
            [f"0,0,1,0,1,0.5,{V}", "0,0,1,1,1,0.5,9 9 4 0 0"],
            3,
            r"job 0: values differs from the job's first row \(line 2\)",
        ),
        ([f"0,0,1,0,1,0.5,{V}", f"0,0,2,1,1,0.5,{V}"], 3, r"job 0: concurrency differs from the job's first row"),
        ([f"0,0,1,0,1,0.5,{V}", f"0,1,1,1,1,0.5,{V}"], 3, r"job 0: birth differs from the job's first row"),
        (
            [f"0,3,1,3,1,1,{V}", f"1,2,1,2,1,1,{V}"],
            3,
            r"job 1 is born at 2, before job 0 \(3\): births must be non-decreasing",
        ),
        ([f"0,0,1,0,1,1,{V}", "1,0,1,0,1,1,9 0 0"], 3, r"job 1 has 3 values, job 0 \(line 2\) has 5"),
        ([f"0,0,1,0,,1,{V}"], 2, r"missing value for column 'duration'"),
    ],
)
def test_broken_files_name_file_and_line(tmp_path, rows, line, pattern):
    expect(write(tmp_path, rows), line, pattern)


@pytest.mark.parametrize(
    "rows, line, pattern",
    [
        (
            [f"0,0,1,0,1,1,{V}", "1,1,1,1,1,0.5,1 2 0 0 0", "1,1,1,2,1,0.5,1 2 0 0 0"],
            3,
            r"the value function increases from 1 at birth\+0 to 2 at birth\+1",
        ),
        (["0,0,1,0,1,1,9 9 0.5 0 0"], 2, r"value at finish birth\+2 is 0\.5, outside \{0\} U \[1, V_bar = 10\]"),
        ([f"0,0,1,0,1,1,{V}", f"1,0,4,0,1,1,{V}"], 3, r"concurrency 4 is above C_max = 3"),
        (["0,0,1,0,1,1,9 9 5 0 0 0"], 2, r"the value function must have S_max \+ 1 = 5 values"),
        ([f"0,2,1,1,1,1,{V}"], 2, r"arrival 1 is outside \[birth, birth \+ S_max\) = \[2, 6\)"),
        ([f"0,0,1,0,1,0.5,{V}", f"0,0,1,0,1,0.25,{V}"], 2, r"probabilities sum to 0\.75, not 1"),
        ([f"0,0,1,0,1,0.5,{V}", f"0,0,1,0,1,0.5,{V}"], 2, r"lists an \(arrival, duration\) pair twice"),
    ],
)
def test_model_violations_name_the_jobs_first_line_via_to_sequence(tmp_path, rows, line, pattern):
    path = write(tmp_path, rows)
    trace = load_sow_trace(path)  # the layout is fine
    with pytest.raises(TraceError, match=pattern) as info:
        trace.to_sequence(BOUNDS)
    assert info.value.line == line and str(info.value).startswith(f"{path}:{line}: ")


def test_concurrency_above_the_nodes_names_the_line(tmp_path):
    path = write(tmp_path, [f"0,0,1,0,1,1,{V}", f"1,0,3,0,1,1,{V}"])
    with pytest.raises(TraceError, match=r":3: concurrency 3 is above the 2 nodes$"):
        load_sow_trace(path).to_sequence(BOUNDS, nodes=2)


def test_missing_file_and_missing_column(tmp_path):
    with pytest.raises(TraceError, match=r"nope\.csv: file not found"):
        load_sow_trace(tmp_path / "nope.csv")
    path = tmp_path / "cols.csv"
    path.write_text("job,birth,concurrency,arrival,duration,values\n0,0,1,0,1,9 0 0 0 0\n")
    with pytest.raises(TraceError, match=r"cols\.csv:1: missing column\(s\) 'probability'"):
        load_sow_trace(path)
