"""sweep/csv_text.py writes the text pandas' to_csv writes, or leaves the frame to pandas."""

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from sweep.csv_text import csv_text, write_csv

_TEXT = st.text(alphabet=st.sampled_from(list('ab ,"\n\r=.é')), max_size=6)


def _pandas(frame: pd.DataFrame, header: bool) -> str:
    out = io.StringIO()
    frame.to_csv(out, index=False, header=header)
    return out.getvalue()


@st.composite
def frames(draw):
    rows = draw(st.integers(0, 12))
    floats = st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from([0.0, -0.0, 1e16, 1e-5, 0.1])
    kinds = {
        "f": lambda: np.array(draw(st.lists(floats, min_size=rows, max_size=rows)), dtype=np.float64),
        "i": lambda: np.array(
            draw(st.lists(st.integers(-(2**62), 2**62), min_size=rows, max_size=rows)), dtype=np.int64
        ),
        "b": lambda: np.array(draw(st.lists(st.booleans(), min_size=rows, max_size=rows)), dtype=bool),
        "s": lambda: pd.array(draw(st.lists(_TEXT | st.none(), min_size=rows, max_size=rows)), dtype="str"),
        "o": lambda: np.array(draw(st.lists(_TEXT | st.none(), min_size=rows, max_size=rows)), dtype=object),
    }
    names = draw(st.lists(_TEXT, min_size=2, max_size=5, unique=True))
    return pd.DataFrame({name: kinds[draw(st.sampled_from(sorted(kinds)))]() for name in names})


@settings(max_examples=300, deadline=None)
@given(frames(), st.booleans())
def test_the_text_pandas_writes(frame, header):
    text, expected = csv_text(frame, header), _pandas(frame, header)
    assert text == expected or (text is None and _carriage_return(frame))


def _carriage_return(frame: pd.DataFrame) -> bool:
    values = [*frame.columns, *(v for c in frame.columns for v in frame[c].tolist())]
    return any(isinstance(v, str) and "\r" in v for v in values)


def test_a_summary_like_frame_with_repeated_values():
    frame = pd.DataFrame(
        {
            "cell": ["job.deadline=6,market.mean_price=0.5"] * 3 + ['say "hi"'] * 3,
            "cell_index": np.repeat([0, 1], 3),
            "market.mean_price": np.repeat([0.5, np.nan], 3),
            "mechanism": ["OD-Only", "MSU", "UP"] * 2,
            "utility_mean": [118.0, 128.13942207952832, -0.0, 0.0, np.nan, 1e-05],
        }
    )
    text = csv_text(frame, header=True)
    assert text == _pandas(frame, header=True)
    assert text.splitlines()[1] == '"job.deadline=6,market.mean_price=0.5",0,0.5,OD-Only,118.0'
    assert text.splitlines()[6] == '"say ""hi""",1,,UP,1e-05'


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"only": [1.0, 2.0]}),  # one column: an empty field would be quoted
        pd.DataFrame({"n": pd.array([1, None], dtype="Int64"), "x": [1.0, 2.0]}),
        pd.DataFrame({"c": pd.Categorical(["a", "b"]), "x": [1.0, 2.0]}),
        pd.DataFrame({"o": np.array([1.5, "a"], dtype=object), "x": [1.0, 2.0]}),
        pd.DataFrame({"f": np.array([1.5, 2.5], dtype=np.float32), "x": [1.0, 2.0]}),
        pd.DataFrame({0: [1.0], 1: [2.0]}),
        pd.DataFrame({"s": ["a\rb", "c"], "x": [1.0, 2.0]}),
    ],
)
def test_what_it_does_not_cover_is_left_to_pandas(frame):
    assert csv_text(frame, header=True) is None


@pytest.mark.parametrize("rows", [0, 1, 7, 10])
def test_written_a_slice_at_a_time(monkeypatch, rows):
    monkeypatch.setattr("sweep.csv_text.ROWS_AT_ONCE", 3)
    frame = pd.DataFrame({"s": [f"c,{i}" for i in range(rows)], "x": np.arange(rows) / 7})
    for header in (True, False):
        out = io.StringIO()
        write_csv(frame, out, header)
        assert out.getvalue() == _pandas(frame, header)
    mixed = frame.assign(n=pd.array(range(rows), dtype="Int64"))  # left to pandas, a slice at a time
    out = io.StringIO()
    write_csv(mixed, out, header=True)
    assert out.getvalue() == _pandas(mixed, header=True)
