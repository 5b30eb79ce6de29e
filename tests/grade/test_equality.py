"""toolproxy.grade.equality: JSON values equal by value, at any depth (the C comparison is
held to `deep_equal_py` in test_nativeequal)."""

from __future__ import annotations

from enum import IntEnum

import pytest

from toolproxy.grade.equality import deep_equal, deep_equal_py, is_number
from toolproxy.schema import accepts


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, False, False),
        ("1", 1, False),
        ({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
        ([1, 2], [1, 2, 3], False),
        ([1], {"0": 1}, False),
        ("x", ["x"], False),
    ],
)
def test_deep_equal(a, b, equal):
    assert deep_equal(a, b) is equal
    assert deep_equal(b, a) is equal


def test_deep_equal_survives_deep_nesting():
    a: list = []
    b: list = []
    for _ in range(5000):
        a, b = [a], [b]
    assert deep_equal(a, b)


def test_a_number_is_an_int_or_a_float_not_a_bool():
    assert is_number(1) and is_number(1.5) and not is_number(True) and not is_number("1")


def test_an_int_subclass_is_a_number_here_but_not_to_a_json_schema_type_test():
    """`is_number` reads by isinstance (an IntEnum a caller put in an expectation compares
    by value); `schema.accepts.is_number` takes the exact types a JSON parser makes. The
    two differ on purpose: merging them would change what a matcher accepts."""

    class Level(IntEnum):
        HIGH = 3

    assert is_number(Level.HIGH) and not accepts.is_number(Level.HIGH)
    assert deep_equal(Level.HIGH, 3) and deep_equal([Level.HIGH], [3.0])
    assert deep_equal_py([Level.HIGH], [3.0])
