"""market/common/sections.py: a section declared once gives its validation, its error messages
and its docs."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from market.common.fields import choice, integer
from market.common.sections import checked, describe, key, memoized, parse


@dataclass(frozen=True)
class Demo:
    """A section of two keys and a cross-key check."""

    low: int = key(1, checked(integer, minimum=0), "the low end")
    high: int = key(5, checked(integer, minimum=0), "the high end")
    mode: str = key("a", checked(choice, ("a", "b")), "a | b (null: a)", optional=True)
    note: str | None = key(None, None, "free text")

    def check(self) -> None:
        if self.low > self.high:
            raise ValueError(f"demo.low ({self.low}) must not exceed demo.high ({self.high})")


def test_defaults_checked_values_and_null():
    assert parse(Demo, None, "demo") == Demo()
    assert parse(Demo, {"low": 2, "high": 3.0, "mode": None, "note": None}, "demo") == Demo(2, 3, "a", None)


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"lo": 1}, r"demo: unknown key\(s\) 'lo'"),
        ({"low": -1}, "demo.low must be"),
        ({"high": None}, "demo.high must be"),  # null is the default only for optional keys
        ({"mode": "c"}, "demo.mode must be"),
        ({"low": 6}, r"demo.low \(6\) must not exceed demo.high \(5\)"),
        ([1, 2], "demo"),
    ],
)
def test_errors_name_the_key(raw, message):
    with pytest.raises(ValueError, match=message):
        parse(Demo, raw, "demo")


def test_describe_lists_the_keys_in_order_with_defaults_and_docs():
    assert [(k.name, k.default, k.doc) for k in describe(Demo)] == [
        ("low", 1, "the low end"),
        ("high", 5, "the high end"),
        ("mode", "a", "a | b (null: a)"),
        ("note", None, "free text"),
    ]


def test_a_section_parsed_before_is_the_same_section_and_its_value_types_count():
    """The memo of plain sections (``parse``): the same values give the parsed section again,
    without its checks; a value of another type (True for 1) or a nested mapping is checked anew."""
    calls = []

    def counted(value, where):
        calls.append(where)
        return integer(value, where, minimum=0)

    @dataclass(frozen=True)
    class Counted:
        n: int = key(1, counted, "n")
        tags: list | None = key(None, None, "tags")

    first = parse(Counted, {"n": 2, "tags": ["a", 1]}, "counted")
    assert parse(Counted, {"tags": ["a", 1], "n": 2}, "counted") is first and calls == ["counted.n"]
    with pytest.raises(ValueError, match="counted.n"):
        parse(Counted, {"n": True}, "counted")  # True == 1 and hashes alike: not the section of n=1
    assert parse(Counted, {"n": 1}, "counted").n == 1 and parse(Counted, {"n": 1.0}, "counted").n == 1
    assert calls == ["counted.n", "counted.n", "counted.n", "counted.n"]
    assert parse(Counted, {"n": 2, "tags": {"x": 1}}, "counted") is not parse(
        Counted, {"n": 2, "tags": {"x": 1}}, "counted"
    )
    assert parse(Counted, {"n": 2}, "other") is not parse(Counted, {"n": 2}, "counted")


def test_memoized_builds_a_plain_section_once_and_a_bad_one_every_time():
    built = []

    def build(raw):
        built.append(dict(raw))
        if raw.get("price", 0) < 0:
            raise ValueError("market.price must be >= 0")
        return ("market", tuple(sorted(raw.items())))

    class Market:
        pass

    first = memoized(Market, {"kind": "x", "price": 0.5}, "market", lambda: build({"kind": "x", "price": 0.5}))
    again = memoized(Market, {"price": 0.5, "kind": "x"}, "market", lambda: build({"price": 0.5, "kind": "x"}))
    assert again is first and len(built) == 1
    for _ in range(2):
        with pytest.raises(ValueError, match="market.price"):
            memoized(Market, {"kind": "x", "price": -1}, "market", lambda: build({"kind": "x", "price": -1}))
    assert len(built) == 3
    memoized(Market, {"kind": "x", "price": 1}, "market", lambda: build({"kind": "x", "price": 1}))  # an int
    assert len(built) == 4
