"""toolproxy.store.filters: every field of the one filter model, on the seeded capture."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.seeded import at
from toolproxy import store
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.queries import exchanges

CAPTURED = ["a-0", "a-1", "a-2", "b-0", "b-1", "c-0", "m-0"]


def ids(capture, **fields) -> list[str]:
    with store.reading(capture) as r:
        page = exchanges.exchanges(r, ExchangeFilter(**fields), limit=100)
    return [x.exchange_id for x in page.items]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, ["a-0", "a-1", "a-2", "b-0", "b-1", "c-0", "r-0", "m-0"]),
        ({"sessions": ["s-b", "s-c"]}, ["b-0", "b-1", "c-0"]),
        ({"exchanges": ["a-2", "b-0", "nope"]}, ["a-2", "b-0"]),
        ({"models": ["gpt-a-2026"]}, ["a-0", "a-1", "a-2"]),  # returned model
        ({"models": ["claude-x"]}, ["b-0", "b-1"]),  # requested model
        ({"tools": ["search"]}, ["b-0"]),  # called it; offering is not calling
        ({"wire_formats": ["openai_responses", "mcp"]}, ["c-0", "m-0"]),
        ({"since": at(2), "until": at(5)}, ["a-2", "b-0", "b-1"]),  # [since, until)
        ({"status": "failed"}, ["b-1"]),
        ({"status": "ok", "sessions": ["s-b"]}, ["b-0"]),
        ({"parse_statuses": ["partial"]}, ["c-0"]),
        ({"label_run": "g1"}, ["a-0", "b-0"]),
        ({"label_run": "g1", "labels": ["wrong_tool"]}, []),  # b-0's latest grade passed
        ({"label_run": "g2", "labels": ["no_call"]}, ["a-1"]),
        ({"text": "SUNNY in rome"}, ["a-2"]),  # the reply, any case
        ({"text": "paris"}, ["a-0", "a-1"]),  # the request's messages and the calls
        ({"text": "flights"}, ["b-0"]),  # a call's arguments
        ({"origin": "replayed"}, ["r-0"]),
        ({"origin": "captured"}, CAPTURED),
        ({"model_turns": True}, ["a-0", "a-1", "a-2", "b-0", "c-0", "r-0"]),
        ({"model_turns": True, "origin": "captured", "tools": ["get_weather"]}, ["a-0", "a-1"]),
    ],
)
def test_each_field_selects_what_it_says(seeded_capture, fields, expected):
    assert ids(seeded_capture, **fields) == expected


def test_labels_need_the_run_they_are_read_from():
    with pytest.raises(ValidationError, match="label_run"):
        ExchangeFilter(labels=["wrong_tool"])


def test_a_filter_is_a_value():
    assert ExchangeFilter(tools=["x"]) == ExchangeFilter(tools=["x"])
    with pytest.raises(ValidationError):
        ExchangeFilter(tools=["x"]).tools = []  # type: ignore[misc]


def test_the_text_finds_a_refusal_too(tmp_path):
    from tests.store.helpers import exchange_rows
    from toolproxy.store.segments import SegmentWriter

    capture = tmp_path / "cap"
    rows = exchange_rows(2, refusal=None)
    rows["exchanges"][1]["refusal"] = "I'm sorry, I can't help with THAT."
    SegmentWriter(capture, "p").write(rows)
    assert ids(capture, text="can't help with that") == ["ex-1"]
