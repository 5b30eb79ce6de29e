from __future__ import annotations

import pytest

from toolproxy.grade.literalhint import literal_hint
from toolproxy.grade.matchers import match
from toolproxy.grade.model import Matcher
from toolproxy.grade.showing import show


def m(kind: str = "exact", **kw) -> Matcher:
    return Matcher(kind=kind, **kw)


@pytest.mark.parametrize(
    "literal",
    [
        {"regex": "^Par"},  # a kind's name as the key
        {"pattern": "^Par"},  # a matcher's fields without match
        {"mtach": "regex", "pattern": "^Par"},  # match misspelt
        {"Match": "regex", "pattern": "^Par"},
        {"matcher": "any"},
        {"macth": "any"},
        {"mattch": "any"},
        {"values": ["Paris", "Lyon"]},
        {"min": 0, "max": 10},
    ],
)
def test_a_literal_mapping_shaped_like_a_matcher_says_so_when_it_fails(literal):
    ok, detail = match(m(value=literal), "Paris")
    assert ok is False
    assert "without a `match` key a mapping is a literal value" in detail, detail
    assert literal_hint(literal) and literal_hint(literal) in detail


@pytest.mark.parametrize(
    "literal",
    [
        {"city": "Paris"},
        {"text": "hi", "lang": "en"},
        {"value": 1, "unit": "m"},
        {"batch": 1, "patch": 2, "math": 3},  # one letter changed or dropped: words
        {"match": "regex", "pattern": "^Par"},  # written {match: exact, value: {...}}
        {},
    ],
)
def test_a_literal_mapping_of_a_tool_s_own_fields_gets_no_hint(literal):
    assert literal_hint(literal) is None
    assert match(m(value=literal), "Paris")[1] == f"expected {show(literal)}, got 'Paris'"


@pytest.mark.parametrize("key", ["optinal", "Optional", "optoinal", "opitonal", "optionall"])
def test_a_misspelt_optional_is_named(key):
    hint = literal_hint({key: True}) or ""
    assert f"{key!r} is not `optional`" in hint and hint.endswith("write {optional: true}")


@pytest.mark.parametrize(
    ("literal", "write"),
    [
        ({"enum": ["a", "b"]}, "{match: enum, ...}"),
        ({"mtach": "any_of", "values": [1]}, "{match: any_of, ...}"),
        ({"mtach": "nonsense"}, "{match: KIND, ...}"),
        ({"min": 0}, "{match: range, ...}"),
        ({"pattern": "^a"}, "{match: regex, ...}"),
    ],
)
def test_the_hint_writes_the_matcher_it_takes_the_mapping_for(literal, write):
    assert (literal_hint(literal) or "").endswith(f"write {write}")
