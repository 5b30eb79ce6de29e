"""orjson where it reads JSON as the json module does, and the json module everywhere else."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.strategies import finite_json
from toolproxy.util.jsonfast import (
    canonical_dumps,
    canonical_sha256,
    error_where,
    has_long_number,
    holds_float,
    loads,
    plain_json,
    pretty_dumps,
    sorted_bytes,
    text_sha256,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(json_values, st.booleans())
def test_loads_is_json_loads(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    got = loads(text)
    assert got == json.loads(text)
    assert type(got) is type(json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        "123456789012345678901234567890",  # orjson: a float
        "[NaN, Infinity, -Infinity]",
        "1e400",
        '"\\ud800"',
        '{"a": 1, "a": 2}',
        "18446744073709551615",
        "-9223372036854775809",  # 19 digits, below int64: orjson gives a float
        '{"a": [1.5, -9999999999999999999]}',
    ],
)
def test_texts_orjson_reads_its_own_way(text: str) -> None:
    got, want = loads(text), json.loads(text)
    assert repr(got) == repr(want) and type(got) is type(want)


def test_errors_are_the_json_modules() -> None:
    for text in ("{", "[1,]", "1 2", ""):
        with pytest.raises(json.JSONDecodeError) as ours:
            loads(text)
        with pytest.raises(json.JSONDecodeError) as theirs:
            json.loads(text)
        assert str(ours.value) == str(theirs.value)


def test_long_numbers() -> None:
    assert has_long_number('{"id": 12345678901234567890}')
    assert has_long_number('{"id": -1234567890123456789}')
    assert not has_long_number('{"id": 123456789012345678}')


@given(st.integers(min_value=-(2**70), max_value=2**70), st.booleans())
def test_integers_around_64_bits_are_json_loads(number: int, in_float_list: bool) -> None:
    text = json.dumps([1.5, number] if in_float_list else {"n": number})
    got = loads(text)
    assert got == json.loads(text)
    assert type(got["n"] if isinstance(got, dict) else got[1]) is int


def test_holds_float_finds_a_float_at_any_depth() -> None:
    assert holds_float({"a": [1, {"b": 2.0}]})
    assert holds_float(0.5)
    assert not holds_float({"a": [1, "2.0", None, True, {"b": []}]})


def test_plain_json_is_only_jsons_own_values() -> None:
    assert plain_json({"a": [1, 2.5, "x", None, True]})
    for odd in ({1: "x"}, {"a": float("nan")}, [float("inf")], {"a": {1, 2}}, b"x", (1,)):
        assert not plain_json(odd)


def json_dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@given(json_values)
def test_canonical_dumps_is_the_json_modules_text(value: Any) -> None:
    assert canonical_dumps(value) == json_dumps(value)


@given(json_values)
def test_canonical_sha256_hashes_the_json_modules_text(value: Any) -> None:
    text = json_dumps(value).encode("utf-8", "surrogatepass")
    assert canonical_sha256(value) == hashlib.sha256(text).hexdigest()
    assert text_sha256(json_dumps(value)) == canonical_sha256(value)  # the hash of its text


def test_canonical_sha256_hashes_a_lone_surrogate() -> None:
    text = json_dumps({"k": "\ud800"}).encode("utf-8", "surrogatepass")
    assert canonical_sha256({"k": "\ud800"}) == hashlib.sha256(text).hexdigest()


@pytest.mark.parametrize(
    "value",
    [
        {"minimum": 2.9803699941609507e-05, "x": 1e-7},  # orjson: 0.0000298..., 1e-7
        {"b": 1, "a": {"\u00e9": 2**64, "z": [-(2**63) - 1]}},  # orjson refuses > 64 bits
        {"k": "\ud800"},  # a lone surrogate: orjson refuses
        {1: "int key", 3: "x"},  # json writes 1 as "1"
        ("a", "tuple"),
        {"nan": float("nan"), "inf": float("inf")},  # orjson: null
        {"\u2028": "\x7f\x1f\n", "\U0001f600": "é"},
    ],
)
def test_values_orjson_writes_its_own_way_are_written_by_json(value: Any) -> None:
    assert canonical_dumps(value) == json_dumps(value)


def test_canonical_dumps_raises_as_json_does() -> None:
    for value in ({"s": {1, 2}}, {"b": b"bytes"}, {(1,): 2}):
        with pytest.raises(TypeError):
            json_dumps(value)
        with pytest.raises(TypeError):
            canonical_dumps(value)


@given(finite_json)
@example(float("1e16"))
@example({"minimum": 2.9803699941609507e-05, "big": [2**63, -(2**63)]})
def test_sorted_bytes_stand_for_the_canonical_text(value: Any) -> None:
    """For finite JSON values, equal bytes mean equal texts: the bytes read back as a value
    of the same text, and a value of the same text has the same bytes."""
    key = sorted_bytes(value)
    if key is None:  # orjson refuses integers beyond 64 bits, and only them here
        assert has_long_number(canonical_dumps(value))
        return
    assert canonical_dumps(orjson.loads(key)) == canonical_dumps(value)
    assert sorted_bytes(json.loads(json.dumps(value))) == key


def test_sorted_bytes_refuse_what_json_does_not_write_as_its_own() -> None:
    class Text(str):
        pass

    for value in (
        {"enum": [2**64]},
        {1: "x"},
        {"const": datetime(2025, 1, 1)},
        {"const": Text("x")},
        {"enum": {1, 2}},
        b"x",
    ):
        assert sorted_bytes(value) is None, value
    assert sorted_bytes({"b": [1, 2.5], "a": "é"}) == '{"a":"é","b":[1,2.5]}'.encode()
    # where different values share bytes (so a lookup by them compares the values)
    assert sorted_bytes([float("nan"), float("inf")]) == sorted_bytes([None, None])


def json_pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


@given(json_values)
def test_pretty_dumps_is_the_json_modules_text(value: Any) -> None:
    assert pretty_dumps(value) == json_pretty(value)


@pytest.mark.parametrize(
    "value",
    [
        {"rate": 0.585, "empty": {}, "none": [], "deep": [[{}], [[]]], "cost": 1234.5},
        {"edges": [1e-4, -1e-4, 0.0, -0.0, 9999999999999998.0, 1e16, 1e-10, 2.5e300]},
        {"cost": 2.5e-07, "tiny": 1.5e-05},  # orjson: 2.5e-7, 0.000015
        {"b": 1, "a": {"\u00e9": 2**64}},  # orjson refuses > 64 bits
        {"k": "\ud800"},  # a lone surrogate: orjson refuses
        {1: "int key"},  # json writes 1 as "1"
        {"nan": float("nan"), "inf": float("inf")},  # json writes NaN, orjson null
        {"\u2028": '\x7f\x1f\n"\\', "\U0001f600": "é"},
        [True, False, None, -(2**63)],
    ],
)
def test_values_orjson_writes_its_own_way_are_pretty_dumped_by_json(value: Any) -> None:
    assert pretty_dumps(value) == json_pretty(value)


def test_error_where_says_at_once():
    def error(text: str) -> json.JSONDecodeError:
        with pytest.raises(json.JSONDecodeError) as info:
            json.loads(text)
        return info.value

    # json's message ends in "at" here: the place follows it without a second one
    assert error_where(error('{"a": "b'), "column 7") == "Unterminated string starting at column 7"
    assert error_where(error('{"a" 1}'), "line 1") == "Expecting ':' delimiter at line 1"
