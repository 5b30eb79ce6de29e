"""toolproxy.tui.filterbar: the `/` bar's words into the store's filter, and back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from toolproxy.store.filters import ExchangeFilter
from toolproxy.tui.filterbar import FilterError, describe, parse_filter


def test_keys_lists_times_and_free_text():
    f = parse_filter(
        "model:gpt-4o tool:a tool:b since:2026-11-01 status:failed run:g1 label:wrong_tool "
        'origin:replayed format:mcp parse:partial session:"my session" paris  weather'
    )
    assert f == ExchangeFilter(
        models=["gpt-4o"],
        tools=["a", "b"],
        since=datetime(2026, 11, 1, tzinfo=UTC),
        status="failed",
        label_run="g1",
        labels=["wrong_tool"],
        origin="replayed",
        wire_formats=["mcp"],
        parse_statuses=["partial"],
        sessions=["my session"],
        text="paris weather",
    )
    assert parse_filter("") == ExchangeFilter()


def test_the_bar_text_round_trips():
    text = 'session:"my session" model:m until:2026-11-02T00:00:00+00:00 status:ok hello'
    f = parse_filter(text)
    assert parse_filter(describe(f)) == f
    assert describe(ExchangeFilter()) == ""


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("colour:red", "unknown key 'colour'"),
        ("since:yesterday", "since: not an ISO-8601 time"),
        ("status:broken", "status"),
        ("label:x", "label_run"),
        ("model:", "model: needs a value"),
        ('text "open', "unbalanced quotes"),
    ],
)
def test_a_bad_bar_says_which_word_and_why(text, says):
    with pytest.raises(FilterError, match=says):
        parse_filter(text)


def test_a_word_with_a_colon_that_is_no_key_is_text():
    assert parse_filter("http://x 12:30").text == "http://x 12:30"
