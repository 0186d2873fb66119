"""market/common/fields.py: the config checks every family shares."""

import math
import re
import subprocess
import sys
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, strategies as st

from market.common.fields import (
    as_section,
    choice,
    in_range,
    integer,
    interval,
    is_integral,
    is_real,
    real,
    reject_unknown_keys,
)

KEY = "sec.field"
# Anything a config (or a careless caller) can hand over.
anything = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
bounds = st.one_of(st.none(), st.integers(-50, 50))


def raises(message: str):
    return pytest.raises(ValueError, match=re.escape(message))


def error_of(fn) -> str:
    with pytest.raises(ValueError) as err:
        fn()
    return str(err.value)


# --- integer -------------------------------------------------------------------------------


def integer_oracle(value, minimum, maximum, allow_float) -> bool:
    if type(value) is bool:
        return False
    if isinstance(value, int):
        whole = True
    elif isinstance(value, float):
        whole = allow_float and math.isfinite(value) and value == int(value)
    else:
        whole = False
    return whole and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


@given(anything, bounds, bounds, st.booleans())
def test_integer_accepts_exactly_the_integers_in_bounds(value, minimum, maximum, allow_float):
    if integer_oracle(value, minimum, maximum, allow_float):
        out = integer(value, KEY, minimum, maximum, allow_float=allow_float)
        assert type(out) is int and out == value
    else:
        message = error_of(lambda: integer(value, KEY, minimum, maximum, allow_float=allow_float))
        assert message.startswith(f"{KEY} must be ") and message.endswith(f", got {value!r}")


@pytest.mark.parametrize("value", [3, 3.0, np.int64(3), np.float64(3.0), -0.0])
def test_integer_written_as_a_float_is_accepted(value):
    out = integer(value, KEY)
    assert type(out) is int and out == int(value)


@pytest.mark.parametrize("value", [3.0, np.float64(3.0)])
def test_integer_written_as_a_float_can_be_refused(value):
    with raises(f"{KEY} must be an integer, got {value!r}"):
        integer(value, KEY, allow_float=False)
    assert integer(np.int64(3), KEY, allow_float=False) == 3


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 3.5, float("nan"), float("inf"), "3", None, [3]])
def test_integer_rejects_bools_fractions_and_non_numbers(value):
    with raises(f"{KEY} must be"):
        integer(value, KEY)


@pytest.mark.parametrize(
    "minimum, maximum, value, message",
    [
        (1, None, 0, "job.deadline must be a positive integer, got 0"),
        (1, None, -1, "job.deadline must be a positive integer, got -1"),
        (1, None, 2.5, "job.deadline must be a positive integer, got 2.5"),
        (1, None, True, "job.deadline must be a positive integer, got True"),
        (0, None, -1, "job.deadline must be an integer >= 0, got -1"),
        (2, None, 1, "job.deadline must be an integer >= 2, got 1"),
        (None, 5, 6, "job.deadline must be an integer <= 5, got 6"),
        (1, 5, 6, "job.deadline must be an integer in [1, 5], got 6"),
        (None, None, "x", "job.deadline must be an integer, got 'x'"),
    ],
)
def test_integer_messages_name_the_key_the_rule_and_the_value(minimum, maximum, value, message):
    with raises(message):
        integer(value, "job.deadline", minimum, maximum)


def test_integer_bounds_are_inclusive():
    assert integer(1, KEY, 1, 5) == 1 and integer(5, KEY, 1, 5) == 5
    with raises(f"{KEY} must be an integer in [1, 5], got 0"):
        integer(0, KEY, 1, 5)


def test_integer_optional_lets_none_through():
    assert integer(None, KEY, minimum=0, optional=True) is None
    with raises("tasks.trace_start must be null or an integer >= 0, got -3"):
        integer(-3, "tasks.trace_start", minimum=0, optional=True)
    with raises(f"{KEY} must be a positive integer, got None"):
        integer(None, KEY, minimum=1)


# --- real ----------------------------------------------------------------------------------


def real_oracle(value, minimum, maximum, strict_min, strict_max, finite) -> bool:
    if type(value) is bool or not isinstance(value, (int, float)) or math.isnan(value):
        return False
    if finite and math.isinf(value):
        return False
    if minimum is not None and (value <= minimum if strict_min else value < minimum):
        return False
    if maximum is not None and (value >= maximum if strict_max else value > maximum):
        return False
    return True


@given(anything, bounds, bounds, st.booleans(), st.booleans(), st.booleans())
def test_real_accepts_exactly_the_numbers_in_bounds(value, minimum, maximum, strict_min, strict_max, finite):
    if real_oracle(value, minimum, maximum, strict_min, strict_max, finite):
        out = real(value, KEY, minimum, maximum, strict_min, strict_max, finite=finite)
        assert type(out) is float and out == value
    else:
        message = error_of(lambda: real(value, KEY, minimum, maximum, strict_min, strict_max, finite=finite))
        assert message.startswith(f"{KEY} must be ") and message.endswith(f", got {value!r}")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), np.float64("nan")])
def test_real_rejects_nan_and_inf_when_finite_is_required(value):
    with raises(f"{KEY} must be a finite number, got {value!r}"):
        real(value, KEY)


def test_real_without_finite_takes_inf_within_the_bounds_but_never_nan():
    assert real(float("inf"), KEY, minimum=0, finite=False) == float("inf")
    with raises(f"{KEY} must be a number >= 0, got -inf"):
        real(float("-inf"), KEY, minimum=0, finite=False)
    with raises(f"{KEY} must be a number >= 0, got nan"):
        real(float("nan"), KEY, minimum=0, finite=False)
    with raises(f"{KEY} must be in [0, 24), got inf"):
        real(float("inf"), KEY, 0, 24, strict_max=True, finite=False)


@pytest.mark.parametrize("value", [True, False, "0.5", None, [0.5], np.bool_(False)])
def test_real_rejects_bools_and_non_numbers(value):
    with raises(f"{KEY} must be a finite number, got {value!r}"):
        real(value, KEY)


def test_real_accepts_ints_and_numpy_scalars():
    assert real(3, KEY) == 3.0 and type(real(np.float32(0.5), KEY)) is float


@pytest.mark.parametrize(
    "kwargs, value, message",
    [
        (dict(minimum=0, strict_min=True), 0.0, "market.mean_price must be a finite number > 0, got 0.0"),
        (dict(minimum=0), -0.5, "market.mean_price must be a finite number >= 0, got -0.5"),
        (dict(minimum=0, finite=False), -1, "market.mean_price must be a number >= 0, got -1"),
        (dict(maximum=1, strict_max=True), 1, "market.mean_price must be a finite number < 1, got 1"),
        (dict(minimum=0, maximum=1, strict_max=True), 1.0, "market.mean_price must be in [0, 1), got 1.0"),
        (dict(minimum=0, maximum=1, strict_min=True), 0, "market.mean_price must be in (0, 1], got 0"),
        (
            dict(minimum=-1, maximum=1, strict_min=True, strict_max=True),
            -1.0,
            "market.mean_price must be in (-1, 1), got -1.0",
        ),
        (dict(minimum=0, maximum=48.0, strict_max=True), 48, "market.mean_price must be in [0, 48), got 48"),
        (dict(minimum=0.5, maximum=2.5), "x", "market.mean_price must be in [0.5, 2.5], got 'x'"),
    ],
)
def test_real_messages(kwargs, value, message):
    with raises(message):
        real(value, "market.mean_price", **kwargs)


def test_real_bounds_inclusive_unless_strict():
    assert real(0, KEY, 0, 1) == 0.0 and real(1, KEY, 0, 1) == 1.0
    with raises(f"{KEY} must be in (0, 1), got 0"):
        real(0, KEY, 0, 1, strict_min=True, strict_max=True)
    with raises(f"{KEY} must be in (0, 1), got 1"):
        real(1, KEY, 0, 1, strict_min=True, strict_max=True)
    assert real(1e-300, KEY, 0, strict_min=True) == 1e-300


def test_real_optional():
    assert real(None, KEY, optional=True) is None
    with raises(f"{KEY} must be null or a finite number > 0, got 0"):
        real(0, KEY, minimum=0, strict_min=True, optional=True)


# --- in_range ------------------------------------------------------------------------------


@given(st.floats(allow_nan=True), bounds, bounds, st.booleans(), st.booleans())
def test_in_range_matches_the_comparisons(value, minimum, maximum, strict_min, strict_max):
    ok = real_oracle(value, minimum, maximum, strict_min, strict_max, finite=False)
    if ok:
        assert in_range(value, KEY, minimum, maximum, strict_min, strict_max) is value
    else:
        message = error_of(lambda: in_range(value, KEY, minimum, maximum, strict_min, strict_max))
        assert message.startswith(f"{KEY} must be ") and message.endswith(f", got {value!r}")


@pytest.mark.parametrize(
    "kwargs, value, message",
    [
        (dict(minimum=0, strict_min=True), -0.5, "market.mean_price must be > 0, got -0.5"),
        (dict(minimum=1, strict_min=True), 1.0, "market.mean_price must be > 1, got 1.0"),
        (dict(minimum=0), -1, "market.mean_price must be >= 0, got -1"),
        (dict(maximum=2), 3, "market.mean_price must be <= 2, got 3"),
        (dict(minimum=0, maximum=1, strict_min=True), 1.1, "market.mean_price must be in (0, 1], got 1.1"),
    ],
)
def test_in_range_messages(kwargs, value, message):
    with raises(message):
        in_range(value, "market.mean_price", **kwargs)


# --- interval ------------------------------------------------------------------------------


finite_floats = st.floats(-1e6, 1e6, allow_nan=False)


@given(finite_floats, finite_floats, st.sampled_from([list, tuple]))
def test_interval_accepts_ordered_pairs_and_rejects_reversed_ones(a, b, container):
    low, high = sorted((a, b))
    assert interval(container([low, high]), KEY) == (low, high)
    if low < high:
        with raises(f"{KEY} must satisfy low <= high, got {[high, low]!r}"):
            interval([high, low], KEY)


@given(st.integers(-20, 20), st.integers(0, 20), st.integers(-5, 5), st.booleans())
def test_interval_minimum(low, width, minimum, strict):
    value = [low, low + width]
    ok = low > minimum if strict else low >= minimum
    if ok:
        assert interval(value, KEY, kind=int, minimum=minimum, strict_min=strict) == (low, low + width)
    else:
        sign = "<" if strict else "<="
        with raises(f"{KEY} must satisfy {minimum} {sign} low <= high, got {value!r}"):
            interval(value, KEY, kind=int, minimum=minimum, strict_min=strict)


def test_interval_integers():
    out = interval([1.0, 5], KEY, kind=int, minimum=1)
    assert out == (1, 5) and all(type(x) is int for x in out)
    assert type(interval([1, 5], KEY)[0]) is float
    with raises("tasks.epochs must hold integers, got [1.5, 3]"):
        interval([1.5, 3], "tasks.epochs", kind=int, minimum=1)
    with raises("job_sampling.n_min must hold integers, got [1.0, 4]"):
        interval([1.0, 4], "job_sampling.n_min", kind=int, minimum=1, allow_float=False)
    with raises(f"{KEY} must hold integers, got [1, inf]"):
        interval([1, float("inf")], KEY, kind=int)


@pytest.mark.parametrize(
    "value",
    [
        [1],
        [1, 2, 3],
        [],
        "ab",
        b"ab",
        3,
        None,
        {"low": 1, "high": 2},
        [True, 2],
        [1, False],
        ["1", "2"],
        [1, None],
    ],
)
def test_interval_needs_a_pair_of_numbers(value):
    with raises(f"tasks.samples must be a pair [low, high] of numbers, got {value!r}"):
        interval(value, "tasks.samples", minimum=0.0)


def test_interval_nan_never_fits_and_high_may_be_inf():
    for value in ([float("nan"), 1], [1, float("nan")]):
        with raises(f"tasks.samples must satisfy 0 <= low <= high, got {value!r}"):
            interval(value, "tasks.samples", minimum=0.0)
    assert interval([1, float("inf")], KEY, minimum=1.0) == (1.0, float("inf"))


def test_interval_kind_must_be_float_or_int():
    with pytest.raises(TypeError):
        interval([1, 2], KEY, kind=str)


# --- sections, keys and choices ------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    nodes: int = 1
    node_type: str = "a"
    start_hour: float = 0.0


def test_reject_unknown_keys_lists_them_sorted_with_the_known_ones():
    message = error_of(lambda: reject_unknown_keys(Section, {"nodez": 1, "nodes": 2, "gpus": 3}, "cluster"))
    assert message == "cluster: unknown key(s) 'gpus', 'nodez' (known: nodes, node_type, start_hour)"
    reject_unknown_keys(Section, {"nodes": 3, "start_hour": 1.0}, "cluster")
    reject_unknown_keys(Section, {}, "cluster")


@given(st.sets(st.text(min_size=1, max_size=4), max_size=6))
def test_reject_unknown_keys_property(keys):
    known = {"nodes", "node_type", "start_hour"}
    unknown = sorted(keys - known)
    if unknown:
        message = error_of(lambda: reject_unknown_keys(Section, dict.fromkeys(keys, 1), "cluster"))
        assert message.startswith(f"cluster: unknown key(s) {', '.join(map(repr, unknown))} (known: ")
    else:
        reject_unknown_keys(Section, dict.fromkeys(keys, 1), "cluster")


def test_reject_unknown_keys_with_names_context_and_also_known():
    with raises("titan: unknown key(s) 'limit' (known: time_limit)"):
        reject_unknown_keys(("time_limit",), {"limit": 2}, "titan")
    with raises("market: unknown key(s) 'seed' for kind 'synthetic' (known: kind, nodes, node_type, start_hour)"):
        reject_unknown_keys(
            Section, {"kind": "synthetic", "seed": 1}, "market", context=" for kind 'synthetic'", also_known=("kind",)
        )
    with raises("market: unknown key(s) '3'"):
        reject_unknown_keys(Section, {3: 1}, "market")


def test_as_section():
    assert as_section(None, "cluster") == {}
    source = {"nodes": 3}
    copy = as_section(source, "cluster")
    copy["nodes"] = 4
    assert source == {"nodes": 3} and type(copy) is dict
    assert as_section(MappingProxyType({"a": 1}), "cluster") == {"a": 1}
    for value, name in ([], "list"), (0, "int"), ("", "str"), ("nodes", "str"), (False, "bool"), ([("a", 1)], "list"):
        with raises(f"cluster: must be a mapping, got {name}"):
            as_section(value, "cluster")


def test_choice():
    assert choice("mixed", "cluster.node_type", ("A100", "mixed")) == "mixed"
    with raises("cluster.node_type must be one of A100, mixed, got 'H100'"):
        choice("H100", "cluster.node_type", ("A100", "mixed"))
    with raises("cluster.node_type must be one of A100, mixed, got ['A100']"):
        choice(["A100"], "cluster.node_type", ["A100", "mixed"])


def test_predicates():
    assert is_real(1) and is_real(0.5) and is_real(float("nan")) and is_real(np.int64(1))
    assert not is_real(True) and not is_real("1") and not is_real(None)
    assert is_integral(3) and is_integral(3.0) and is_integral(np.int64(3))
    assert not is_integral(3.0, allow_float=False) and not is_integral(True) and not is_integral(3.5)
    assert not is_integral(float("inf")) and not is_integral(float("nan"))


def test_fields_needs_no_framework():
    code = (
        "import sys, market.common.fields; "
        "bad = {'ray', 'mlflow', 'hydra', 'omegaconf'} & {m.split('.')[0] for m in sys.modules}; "
        "sys.exit(sorted(bad) or 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_null_optional_keys_are_dropped_without_changing_the_shared_sections():
    from algorithms.common.optional_keys import without_null_keys

    shared = {"path": None, "kind": "trace", "deep": {"x": None, "y": 1}}
    config = {"prices": shared, "jobs": {"size_hours": 3.0}, "seed": 0}
    out = without_null_keys(config, ["prices.path", "prices.deep.x", "jobs.size_hours", "jobs.absent", "nope.key"])
    assert out == {"prices": {"kind": "trace", "deep": {"y": 1}}, "jobs": {"size_hours": 3.0}, "seed": 0}
    assert shared == {"path": None, "kind": "trace", "deep": {"x": None, "y": 1}}  # copied, never changed
    assert out["jobs"] is config["jobs"]  # untouched sections are shared
