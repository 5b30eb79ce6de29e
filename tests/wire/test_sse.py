"""Event-stream framing: toolproxy.wire.sse."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import paths
from toolproxy.wire.sse import SseEvent, event_ends, iter_sse_events

FIXTURES = paths.FIXTURES / "wire"


def test_openai_style_data_only_stream() -> None:
    events, ended = iter_sse_events(b'data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n')
    assert events == [
        SseEvent("message", '{"a":1}'),
        SseEvent("message", '{"a":2}'),
        SseEvent("message", "[DONE]"),
    ]
    assert ended


def test_named_events_and_ids() -> None:
    body = (
        b'event: message_start\nid: 7\ndata: {"type":"message_start"}\n\nevent: ping\ndata: {}\n\n'
    )
    events, ended = iter_sse_events(body)
    assert events == [
        SseEvent("message_start", '{"type":"message_start"}', "7"),
        SseEvent("ping", "{}"),
    ]
    assert ended


@pytest.mark.parametrize("newline", [b"\r\n", b"\n", b"\r"])
def test_every_line_ending(newline: bytes) -> None:
    body = newline.join([b"event: x", b"data: one", b"", b"data: two", b"", b""])
    events, ended = iter_sse_events(body)
    assert events == [SseEvent("x", "one"), SseEvent("message", "two")]
    assert ended


def test_multi_line_data_is_joined_with_newlines() -> None:
    events, _ = iter_sse_events(b'data: {\ndata:  "a": 1\ndata: }\n\n')
    # Only one leading space is dropped from a value; the rest is data.
    assert events == [SseEvent("message", '{\n "a": 1\n}')]


def test_comments_retry_and_unknown_fields_are_skipped() -> None:
    body = b": ping\n\n: OPENROUTER PROCESSING\nretry: 3000\nfoo: bar\ndata: x\n\n"
    events, ended = iter_sse_events(body)
    assert events == [SseEvent("message", "x")]
    assert ended


def test_field_without_colon_and_value_without_space() -> None:
    events, _ = iter_sse_events(b"data\ndata:tight\n\n")
    assert events == [SseEvent("message", "\ntight")]


def test_event_without_data_is_not_dispatched() -> None:
    events, ended = iter_sse_events(b"event: lonely\n\ndata: real\n\n")
    assert events == [SseEvent("message", "real")]
    assert ended


def test_event_name_does_not_leak_into_the_next_event() -> None:
    events, _ = iter_sse_events(b"event: a\ndata: 1\n\ndata: 2\n\n")
    assert [e.event for e in events] == ["a", "message"]


def test_id_with_nul_is_ignored() -> None:
    events, _ = iter_sse_events(b"id: a\x00b\ndata: x\n\n")
    assert events == [SseEvent("message", "x", None)]


def test_trailing_event_without_blank_line_is_kept_but_not_a_boundary() -> None:
    events, ended = iter_sse_events(b"data: 1\n\ndata: [DONE]\n")
    assert events[-1] == SseEvent("message", "[DONE]")
    assert not ended


def test_cut_mid_line_keeps_what_arrived() -> None:
    events, ended = iter_sse_events(b'data: {"a":1}\n\ndata: {"choices":[{"del')
    assert events == [SseEvent("message", '{"a":1}'), SseEvent("message", '{"choices":[{"del')]
    assert not ended


def test_cut_after_event_line_only() -> None:
    events, ended = iter_sse_events(b"data: 1\n\nevent: message_stop\n")
    assert events == [SseEvent("message", "1")]
    assert not ended


def test_cut_inside_a_comment_is_not_a_boundary() -> None:
    events, ended = iter_sse_events(b"data: 1\n\n: pi")
    assert events == [SseEvent("message", "1")]
    assert not ended


def test_empty_body() -> None:
    assert iter_sse_events(b"") == ([], True)


def test_bom_and_unicode_line_separators_inside_data() -> None:
    # U+2028 is a line break for str.splitlines() but not for an event stream.
    body = '\ufeffdata: {"t":"a\u2028b \u00e9 🌧️ 東京"}\n\n'.encode()
    events, ended = iter_sse_events(body)
    assert events == [SseEvent("message", '{"t":"a\u2028b é 🌧️ 東京"}')]
    assert ended


def test_invalid_utf8_is_replaced_not_raised() -> None:
    events, _ = iter_sse_events(b"data: \xff\xfe\n\n")
    assert events == [SseEvent("message", "\ufffd\ufffd")]


def test_recorded_anthropic_stream() -> None:
    events, ended = iter_sse_events((FIXTURES / "anthropic_stream.sse").read_bytes())
    assert ended
    assert events[0].event == "message_start"
    assert events[-1] == SseEvent("message_stop", '{"type":"message_stop"}')
    assert [e.event for e in events].count("ping") == 1


_FIELDS = st.sampled_from(
    [b"data: x", b"data: {\"a\": 1}", b"event: delta", b": ping", b"id: 7", b"retry: 5",
     b"data", b"dat", b"data: \xc3\xa9t\xc3\xa9", b""]
)  # fmt: skip
_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])


@given(st.lists(st.tuples(_FIELDS, _ENDS), max_size=30), st.booleans(), st.booleans())
def test_event_ends_match_the_events_one_for_one(lines, bom, cut):
    body = (b"\xef\xbb\xbf" if bom else b"") + b"".join(f + e for f, e in lines)
    if cut and body:
        body = body[:-1]
    events, _ = iter_sse_events(body)
    ends = event_ends(body)
    assert len(ends) == len(events)
    assert ends == sorted(ends) and all(0 < e <= len(body) for e in ends)
    for n, end in enumerate(
        ends
    ):  # the body up to an event's end holds exactly it and those before
        assert iter_sse_events(body[:end])[0] == events[: n + 1]


def test_event_ends_of_a_chat_stream():
    body = b'data: {"a":1}\n\n: ping\n\ndata: {"a":2}\n\ndata: [DONE]\n\n'
    assert event_ends(body) == [15, 38, 52]
    assert event_ends(b"data: cut") == [9]
    assert event_ends(b"") == [] and event_ends(b": only a comment\n\n") == []
