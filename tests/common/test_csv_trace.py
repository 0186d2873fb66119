"""The CSV reader every trace loader uses (market/common/csv_trace.py): UTF-8 with or without a
byte-order mark, LF or CRLF, and errors that name the file and line."""

from __future__ import annotations

import codecs

import pytest

from market.common.csv_trace import TraceError, read_rows

TEXT = "slot,timestamp,arrivals\n0,a,3\n1,b,4\n"
EXPECTED = [(2, {"slot": "0", "arrivals": "3"}), (3, {"slot": "1", "arrivals": "4"})]


@pytest.mark.parametrize(
    "encode",
    [
        lambda t: t.encode(),  # LF
        lambda t: t.replace("\n", "\r\n").encode(),  # CRLF (the shipped files)
        lambda t: codecs.BOM_UTF8 + t.encode(),  # what spreadsheets write
        lambda t: codecs.BOM_UTF8 + t.replace("\n", "\r\n").encode(),
    ],
)
def test_line_endings_and_a_bom_read_the_same(tmp_path, encode):
    path = tmp_path / "t.csv"
    path.write_bytes(encode(TEXT))
    assert list(read_rows(path, ("slot", "arrivals"))) == EXPECTED


def test_bytes_that_are_not_utf8_name_the_file_line_and_column(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("slot,timestamp,arrivals\n0,a,3\n1,caf\u00e9,4\n".encode("latin-1"))
    with pytest.raises(TraceError) as info:
        list(read_rows(path, ("slot", "arrivals")))
    assert info.value.path == str(path) and info.value.line == 3
    assert str(info.value).startswith(f"{path}:3: not UTF-8 text (byte 0xe9 in column 6)")


def test_a_folder_is_not_a_file(tmp_path):
    with pytest.raises(TraceError, match="is a directory, not a CSV file"):
        list(read_rows(tmp_path, ("slot",)))


def test_header_names_are_stripped(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("slot , timestamp, arrivals\n0,a,3\n")
    assert list(read_rows(path, ("slot", "arrivals"))) == [(2, {"slot": "0", "arrivals": "3"})]
