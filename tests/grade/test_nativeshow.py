"""The C `show` (`nativeshow.c`, part of `nativegrade.c`) writes what `showing.show`
writes, character for character: JSON's values and tuples in C, anything else by
`showing.show` itself."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.grade.test_nativegrade import SETTINGS, native_grader
from toolproxy.grade.showing import show

texts = st.text(max_size=90) | st.integers(70, 200).map(lambda n: "é'\"" * n)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=8)
        | st.lists(inner, max_size=8).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=8)
    ),
    max_leaves=20,
)


@pytest.fixture(scope="module")
def native() -> ModuleType:
    return native_grader()


@SETTINGS
@given(values)
def test_it_writes_what_show_writes(native, value):
    assert native.show(value) == show(value)


@pytest.mark.parametrize(
    "value",
    [
        "x" * 79, "x" * 80, "x" * 81, "'" * 78, "\n" * 40, 10**45, -(10**39),
        (1,), (), [[[[1]]]], {"b": 1, "a": 2}, {1: "a"}, {1, 2}, {"a": {1, 2}},
        float("nan"), 1e300, [None] * 7,
    ],
)  # fmt: skip
def test_edges_and_what_reprlib_writes(native, value: Any):
    assert native.show(value) == show(value)
