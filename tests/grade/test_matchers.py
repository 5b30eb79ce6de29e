"""Matchers: one argument value against one Matcher, for every kind."""

from __future__ import annotations

import re
from datetime import date, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolproxy.grade.matchers import (
    coercions,
    is_integer_text,
    match,
    normalize_text,
    parse_instant,
)
from toolproxy.grade.model import Matcher


def m(kind: str = "exact", **kw) -> Matcher:
    return Matcher(kind=kind, **kw)


def test_exact_reports_what_differs():
    assert match(m(value="Paris"), "Paris") == (True, None)
    ok, detail = match(m(value="Paris"), "London")
    assert ok is False and detail == "expected 'Paris', got 'London'"


@pytest.mark.parametrize("kind", ["any_of", "enum"])
def test_any_of_and_enum(kind):
    matcher = m(kind, values=["celsius", "fahrenheit"])
    assert match(matcher, "celsius")[0] is True
    assert match(matcher, "kelvin")[0] is False
    assert match(m(kind, value=[1, 2]), 2.0)[0] is True  # `value` as the list of choices


@pytest.mark.parametrize(
    ("value", "ok"),
    [(1, True), (7, True), (3.5, True), (0, False), (8, False), (True, False), ("3", False)],
)
def test_range_is_inclusive_and_numbers_only(value, ok):
    assert match(m("range", min=1, max=7), value)[0] is ok


def test_range_with_one_bound():
    assert match(m("range", min=0), 10**9)[0] is True
    assert match(m("range", max=0), -1)[0] is True


@pytest.mark.parametrize(
    ("value", "ok"), [(21.8, True), (21.0, True), (22.1, False), ("21.5", False)]
)
def test_tolerance_is_absolute(value, ok):
    assert match(m("tolerance", value=21.5, tolerance=0.5), value)[0] is ok


def test_tolerance_defaults_to_zero():
    assert match(m("tolerance", value=2), 2.0)[0] is True
    assert match(m("tolerance", value=2), 2.01)[0] is False


def test_regex_is_a_full_match_on_strings():
    matcher = m("regex", pattern=r"\d{3}")
    assert match(matcher, "123")[0] is True
    assert match(matcher, "1234")[0] is False
    assert match(matcher, 123)[0] is False


def test_invalid_regex_is_not_graded():
    ok, detail = match(m("regex", pattern="("), "x")
    assert ok is None and detail and "invalid pattern" in detail


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ("2025-03-04T10:00:00+02:00", "2025-03-04T08:00:00Z", True),
        ("2025-03-04T10:00:00Z", "2025-03-04T10:00:00.000+00:00", True),
        ("2025-03-04T10:00:00z", "2025-03-04T10:00:00+00:00", True),
        ("2025-03-04T10:00:00Z", "2025-03-04T10:00:00+02:00", False),
        ("2025-03-04T10:00:00", "2025-03-04T10:00:00", True),
        ("2025-03-04T10:00:00", "2025-03-04T10:00:00Z", False),  # naive vs aware
        ("2025-03-04T10:00:00Z", "next tuesday", False),
        ("2025-03-04T10:00:00Z", 1741082400, False),
    ],
)
def test_datetime_compares_instants(want, got, ok):
    assert match(m("datetime", value=want), got)[0] is ok


def test_datetime_naive_and_aware_say_why():
    _, detail = match(m("datetime", value="2025-03-04T10:00:00"), "2025-03-04T10:00:00Z")
    assert detail and "timezone" in detail


def test_datetime_accepts_yaml_datetimes_and_dates():
    assert match(m("datetime", value=datetime(2025, 3, 4, 10)), "2025-03-04T10:00:00")[0]
    assert match(m("datetime", value=date(2025, 3, 4)), "2025-03-04")[0]


def test_a_bad_datetime_expectation_is_not_graded():
    assert match(m("datetime", value="soon"), "2025-03-04T10:00:00Z")[0] is None


def test_unordered_is_a_multiset_of_deep_values():
    matcher = m("unordered", value=[{"a": 1}, {"a": 1}, [2]])
    assert match(matcher, [[2], {"a": 1}, {"a": 1.0}])[0] is True
    assert match(matcher, [[2], {"a": 1}])[0] is False  # one {"a": 1} too few
    assert match(matcher, [[2], {"a": 1}, {"a": 1}, 3])[0] is False  # one too many
    assert match(matcher, "not a list")[0] is False


def test_text_ignores_case_and_whitespace():
    matcher = m("text", value="Weekly  Report ")
    assert match(matcher, "weekly\treport")[0] is True
    assert match(matcher, "weekly reports")[0] is False
    assert match(matcher, 1)[0] is False
    assert normalize_text("  STRASSE\n ß ") == "strasse ss"


def test_text_takes_alternatives_and_says_what_it_ignores():
    dc = m("text", values=["Washington, DC", "District of Columbia"])
    assert match(dc, "washington,  dc")[0] is True
    assert match(dc, "district of columbia")[0] is True
    ok, why = match(dc, "Washington, D.C.")  # punctuation counts unless ignored
    assert ok is False
    assert why == (
        "'Washington, D.C.' is not 'Washington, DC' or 'District of Columbia' "
        "(ignoring case, whitespace)"
    )
    loose = m("text", values=["Washington, DC"], ignore=["case", "whitespace", "punctuation"])
    assert match(loose, "Washington, D.C.")[0] is True
    assert match(loose, "washington dc!")[0] is True
    assert match(loose, "Washington State")[0] is False
    strict = m("text", value="Paris", ignore=[])
    assert match(strict, "Paris")[0] is True and match(strict, "paris")[0] is False
    assert match(m("text", value="a b", ignore=["case"]), "A  B")[0] is False
    assert normalize_text("Don't stop, now!", ("punctuation",)) == "Dont stop now"


@given(st.lists(st.text(max_size=12), min_size=1, max_size=4), st.text(max_size=12))
def test_text_with_values_is_any_of_its_single_values(values, got):
    ignore = ["case", "punctuation"]
    either = match(m("text", values=values, ignore=ignore), got)[0]
    assert either is any(match(m("text", value=v, ignore=ignore), got)[0] for v in values)


def test_object_matches_each_named_field_with_its_own_matcher():
    stop = m(
        "object",
        fields={"city": m("text", value="paris"), "nights": m("range", min=1, max=3)},
    )
    assert match(stop, {"city": "Paris", "nights": 2, "note": "x"}) == (True, None)
    assert match(stop, {"city": "Paris", "nights": 9}) == (False, "nights: 9 > max 3.0")
    assert match(stop, {"city": "Paris"}) == (False, "nights: missing")
    closed = stop.model_copy(update={"allow_extra": False})
    assert match(closed, {"city": "Paris", "nights": 2, "note": "x"}) == (
        False,
        "note: not expected (allow_extra: false)",
    )
    optional = m("object", fields={"nights": m("range", min=1, optional=True)})
    assert match(optional, {})[0] is True
    assert match(stop, ["Paris"]) == (False, "expected an object, got ['Paris']")


def test_list_matches_items_in_order_or_in_any_order():
    items = [m("text", value="paris"), m("regex", pattern="L.*")]
    ordered = m("list", items=items)
    assert match(ordered, ["PARIS", "Lyon"])[0] is True
    assert match(ordered, ["Lyon", "PARIS"])[1].startswith("[0]: ")
    assert match(ordered, ["PARIS"]) == (False, "expected 2 elements, got 1: ['PARIS']")
    assert match(ordered, ["PARIS", "Lyon", "Nice"])[0] is False
    assert match(ordered.model_copy(update={"allow_extra": True}), ["PARIS", "Lyon", "Nice"])[0]
    anyhow = m("list", items=items, order="unordered")
    assert match(anyhow, ["Lyon", "PARIS"])[0] is True
    # a greedy pairing would give "Lille" to the first item and fail; a matching exists
    greedy = m(
        "list", items=[m("regex", pattern="L.*"), m("exact", value="Lille")], order="unordered"
    )
    assert match(greedy, ["Lille", "Lyon"])[0] is True
    assert match(greedy, ["Lille", "Paris"])[0] is False


def test_matchers_nest_at_any_depth_and_say_where_they_failed():
    trip = m(
        "object",
        fields={
            "stops": m(
                "list",
                items=[m("object", fields={"city": m("exact", value="Paris")})],
                allow_extra=True,
            )
        },
    )
    assert match(trip, {"stops": [{"city": "Paris"}, {"city": "Rome"}]})[0] is True
    ok, why = match(trip, {"stops": [{"city": "Pari"}]})
    assert ok is False and why == "stops: [0]: city: expected 'Paris', got 'Pari'"
    judged = m("object", fields={"note": m("judge", criterion="polite")})
    assert match(judged, {"note": "thanks"})[0] is None  # no judge: not graded, said where
    assert match(judged, {"note": "thanks"}, lambda c, v: (True, "ok"))[0] is True


@given(st.lists(st.integers(0, 3), max_size=5), st.permutations([0, 1, 2, 3]))
def test_an_unordered_list_of_exact_items_is_the_unordered_matcher(items, order):
    shuffled = [items[i] for i in order if i < len(items)]
    listed = m("list", items=[m("exact", value=v) for v in items], order="unordered")
    assert match(listed, shuffled)[0] is match(m("unordered", value=items), shuffled)[0]


def test_judge_calls_the_judge_and_keeps_its_reason():
    seen = []

    def judge(criterion, value):
        seen.append((criterion, value))
        return True, "it does"

    assert match(m("judge", criterion="mentions rain"), "rain later", judge) == (True, "it does")
    assert seen == [("mentions rain", "rain later")]


def test_judge_without_a_judge_is_not_graded():
    ok, detail = match(m("judge", criterion="x"), "y")
    assert ok is None and detail == "not graded: no judge configured"


def test_a_failing_judge_leaves_the_field_ungraded():
    def judge(criterion, value):
        raise TimeoutError("judge timed out")

    ok, detail = match(m("judge", criterion="x"), "y", judge)
    assert ok is None and detail and "TimeoutError" in detail


@pytest.mark.parametrize(
    ("value", "converted"),
    [
        ("5", [5]),
        ("-12", [-12]),
        ("2.5", [2.5]),
        ("1e3", [1000.0]),
        ("true", [True]),
        ("false", [False]),
        (1, ["1"]),
        (2.5, ["2.5"]),
        (True, ["true"]),
        ("05", []),
        (" 5", []),
        ("five", []),
        ("1e999", []),
        (None, []),
        ([1], []),
    ],
)
def test_coercions_are_lossless(value, converted):
    assert coercions(value) == converted


INTEGER = re.compile(r"-?(0|[1-9]\d*)")  # what the coercion of a text to an int reads


@given(st.text(alphabet=st.sampled_from("-0123456789\u0660\u0669\u00b2\uff11 .e\n"), max_size=6))
@example("-")
@example("")
@example("-0")
@example("00")
@example("1\n")
@example("\u0661")
@example("1\u0660")
@example("\u00b2")
@example("1\u00b2")
@example("-\u0660")
def test_an_integer_text_is_what_the_regex_reads(text):
    assert is_integer_text(text) is bool(INTEGER.fullmatch(text))


def test_helpers():
    assert parse_instant("2025-03-04T10:00:00Z").tzinfo is not None  # type: ignore[union-attr]
    assert parse_instant("nope") is None and parse_instant(5) is None


def test_any_matcher_accepts_every_value():
    from toolproxy.grade.matchers import match as match_any
    from toolproxy.grade.model import Matcher as AnyMatcher

    for value in (None, 0, "", [1], {"a": 1}):
        assert match_any(AnyMatcher(kind="any", optional=True), value) == (True, None)
