"""The C comparison (`nativeequal.c`) gives `deep_equal_py`'s answer or hands the question
back (None): never another answer; and over JSON's types, it answers. Run on the venv's
build in both cores (the pure core loads the built file here, not in the grader)."""

from __future__ import annotations

from decimal import Decimal
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.util.test_compiled import built_module
from toolproxy.grade import equality
from toolproxy.grade.equality import deep_equal, deep_equal_py
from toolproxy.util import compiled


@pytest.fixture(scope="module")
def native() -> ModuleType:
    """The venv's build of `nativeequal.c`, for these very sources."""
    return built_module("toolproxy.grade.nativeequal")


def agrees(native: ModuleType, a: Any, b: Any) -> bool | None:
    """The C answer for (a, b), None or `deep_equal_py`'s (asserted), both ways round."""
    found = native.equal(a, b)
    assert found is None or found is deep_equal_py(a, b), (a, b)
    back = native.equal(b, a)
    assert back is None or back is deep_equal_py(b, a), (b, a)
    return found


NAN = float("nan")
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, -1, 2**70, 0.0, 1.0, -0.0, 2.5, 1e300, NAN, float("inf")]),
    st.sampled_from(["", "a", "b", "é", "1", "true"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=10,
)


@st.composite
def near_pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    """A value and one that is often equal to it: itself, its copy with numbers, lists and
    tuples swapped for their equals (1 for 1.0, a tuple for a list), or another value."""
    a = draw(json_values)

    def twin(v: Any) -> Any:
        if type(v) is float and v.is_integer() and abs(v) < 2**53 and draw(st.booleans()):
            return int(v)
        if type(v) is int and abs(v) < 2**53 and draw(st.booleans()):
            return float(v)
        if isinstance(v, list | tuple):
            items = [twin(x) for x in v]
            return tuple(items) if draw(st.booleans()) else items
        if isinstance(v, dict):
            return {k: twin(x) for k, x in reversed(list(v.items()))}
        return v

    choice = draw(st.sampled_from(["same", "twin", "other"]))
    if choice == "other":
        return a, draw(json_values)
    return a, a if choice == "same" else twin(a)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_pairs())
def test_over_jsons_types_it_answers_and_agrees(native, pair: tuple[Any, Any]):
    a, b = pair
    assert agrees(native, a, b) is not None, (a, b)


class Anything:
    """Not a JSON value: equal to every other (Python code runs to say so)."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class Key(str):
    pass


@pytest.mark.parametrize(
    ("a", "b", "answer"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (None, False, False),
        ([1, 2], (1.0, 2), True),
        ({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2}]}, True),
        ({"a": 1}, {"b": 1}, False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1], {"0": 1}, False),
        ("x", ["x"], False),
        (NAN, NAN, False),  # the same NaN object: equal to nothing
        ([NAN], [NAN], False),
        (2**70, float(2**70), True),
        (2**70 + 1, float(2**70), False),
        (Anything(), 1, None),  # not JSON: Python decides
        ([1, Anything()], [2, 3], None),  # met before the answer: handed back
        ({1: "a"}, {1: "a"}, None),  # a key that is no str
        ({"a": 1}, {Key("a"): 1}, None),
        (Key("a"), "a", None),
        (Decimal(1), 1, None),
        ([[1], 2], [[1, 2], 2], False),  # lengths differ inside
    ],
)
def test_what_it_answers_and_what_it_hands_back(native, a: Any, b: Any, answer: Any):
    assert agrees(native, a, b) is answer
    assert deep_equal(a, b) is deep_equal_py(a, b)


def test_deeper_than_its_limit_is_handed_back(native):
    a: list[Any] = []
    b: list[Any] = []
    for _ in range(native.MAX_DEPTH + 2):
        a, b = [a], [b]
    assert agrees(native, a, b) is None
    assert deep_equal(a, b) is True


def test_the_compiled_core_compares_in_c_and_the_pure_one_does_not():
    assert (equality.NATIVE_EQUAL is not None) is compiled.in_use()
