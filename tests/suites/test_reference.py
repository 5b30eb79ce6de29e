"""A perfect model's calls, derived from a task's matchers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproxy.grade.expectations import parse_matcher
from toolproxy.grade.matchers import match
from toolproxy.suites.reference import NoReference, reference_value

ACCEPTED = [
    ("Paris", "Paris"),
    ({"match": "any_of", "values": ["a", "b"]}, "a"),
    ({"match": "enum", "values": ["x"]}, "x"),
    ({"match": "text", "value": "New York"}, "New York"),
    ({"match": "text", "values": ["DC", "D.C."]}, "DC"),
    ({"match": "tolerance", "value": 2.5, "tolerance": 0.1}, 2.5),
    ({"match": "range", "min": 3}, 3),
    ({"match": "range", "max": 7}, 7),
    ({"match": "datetime", "value": "2026-01-01T00:00:00Z"}, "2026-01-01T00:00:00Z"),
    ({"match": "unordered", "value": [1, 2]}, [1, 2]),
    (
        {
            "match": "object",
            "fields": {"a": 1, "b": {"optional": True}, "c": {"match": "text", "value": "x"}},
        },
        {"a": 1, "c": "x"},
    ),
    ({"match": "list", "items": [{"match": "enum", "values": [5]}, "y"]}, [5, "y"]),
]


@pytest.mark.parametrize(("raw", "value"), ACCEPTED)
def test_the_reference_value_is_one_the_matcher_accepts(raw, value) -> None:
    m = parse_matcher(raw)
    assert reference_value(m) == value
    assert match(m, value, None)[0] is True


@pytest.mark.parametrize(
    "raw",
    [{"match": "any"}, {"match": "regex", "pattern": "^a$"}, {"match": "judge", "criterion": "ok"}],
)
def test_matchers_that_name_no_value_have_no_reference(raw) -> None:
    with pytest.raises(NoReference):
        reference_value(parse_matcher(raw))


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(plain)
def test_a_plain_value_is_its_own_reference(value) -> None:
    m = parse_matcher(value if not isinstance(value, dict) else {"match": "exact", "value": value})
    assert reference_value(m) == value
    assert match(m, reference_value(m), None)[0] is True
