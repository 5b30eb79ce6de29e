"""Helpers shared by the wire formats: toolproxy.wire.common."""

from __future__ import annotations

import json

import pytest

from toolproxy.records import ParsedResponse, ToolCall, Turn, schema_hash
from toolproxy.wire.common import (
    arguments_key,
    as_int,
    call_key,
    decode_stream,
    error_message,
    join_text,
    joined_text,
    load_json,
    make_call,
    merge_usage,
    offered,
    parse_arguments,
    repair_surrogates,
    reply_turn,
    request_params,
    text_parts,
)
from toolproxy.wire.sse import SseEvent, iter_sse_events


def test_parse_arguments_ok() -> None:
    assert parse_arguments('{"city": "Paris", "days": [1, 2]}') == (
        {"city": "Paris", "days": [1, 2]},
        None,
    )
    assert parse_arguments("  {}\n") == ({}, None)


def test_parse_arguments_reports_where_it_failed() -> None:
    assert parse_arguments('{"city": "Paris" "unit": "c"}') == (
        None,
        "Expecting ',' delimiter at char 17",
    )
    assert parse_arguments('{"city": "Par') == (None, "Unterminated string starting at char 9")


def test_parse_arguments_empty_is_an_error() -> None:
    assert parse_arguments("") == (None, "empty arguments")
    assert parse_arguments(" \n") == (None, "empty arguments")


def test_parse_arguments_rejects_non_standard_constants() -> None:
    assert parse_arguments('{"x": NaN}') == (None, "non-standard JSON constant NaN")


def test_parse_arguments_reads_as_json_loads_does() -> None:
    """A byte order mark is refused with json.loads' own words; overflowing numbers read
    as infinity, duplicate keys keep the last; bytes are read as json.loads reads them."""
    assert parse_arguments('\ufeff{"a": 1}') == (
        None,
        "Unexpected UTF-8 BOM (decode using utf-8-sig) at char 0",
    )
    assert parse_arguments('{"a": 1e999, "b": 1, "b": 2}') == ({"a": float("inf"), "b": 2}, None)
    assert parse_arguments(b'{"a": "\xc3\xa9"}') == ({"a": "é"}, None)  # type: ignore[arg-type]
    assert parse_arguments('{"a": -Infinity}') == (None, "non-standard JSON constant -Infinity")


def test_parse_arguments_survives_absurd_nesting() -> None:
    assert parse_arguments("[" * 200_000) == (None, "arguments nested too deeply to parse")


def test_load_json() -> None:
    assert load_json(b'{"a": 1}') == ({"a": 1}, None)
    assert load_json(b"  ") == (None, "empty body")
    assert load_json(b"<html>") == (None, "Expecting value at char 0")
    assert load_json(b'"\xff"') == (None, "not UTF-8 text (invalid start byte at byte 1)")
    assert load_json(b'\xef\xbb\xbf{"a": 1}') == ({"a": 1}, None)
    assert load_json('{"a": 1}') == ({"a": 1}, None)


def test_load_json_leaves_recursion_errors_to_the_caller() -> None:
    with pytest.raises(RecursionError):
        load_json(b"[" * 200_000)


def test_as_int_refuses_bools_and_strings() -> None:
    assert [as_int(v) for v in (3, True, "3", None, 2.0)] == [3, None, None, None, None]


def test_text_parts_and_join() -> None:
    content = [
        {"type": "text", "text": "a"},
        {"type": "image_url", "image_url": {"url": "data:..."}},
        {"type": "input_text", "text": "b"},
        {"type": "output_text", "text": "c"},
        {"type": "refusal", "refusal": "no"},
        "d",
        7,
    ]
    assert text_parts(content) == ["a", "b", "c", "d"]
    assert join_text(content) == "a\nb\nc\nd"
    assert join_text("plain") == "plain"
    assert join_text(None) == ""
    assert joined_text([]) is None
    assert joined_text(["x", "y"]) == "x\ny"


def test_request_params_keeps_everything_but_the_content_keys() -> None:
    body = {
        "model": "m",
        "stream": True,
        "messages": [],
        "input": [],
        "system": "s",
        "instructions": "i",
        "tools": [],
        "tool_choice": "auto",
        "temperature": 0,
        "stream_options": {"include_usage": True},
    }
    assert request_params(body) == {
        "tool_choice": "auto",
        "temperature": 0,
        "stream_options": {"include_usage": True},
    }


def test_offered_function_and_builtin() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    tool = offered(0, "function", "search", "Search.", schema)
    assert tool.schema_hash == schema_hash(schema)
    assert (tool.name, tool.kind, tool.description) == ("search", "function", "Search.")
    builtin = offered(1, "web_search", None, None, {"ignored": True})
    assert (builtin.name, builtin.kind, builtin.parameters) == ("web_search", "web_search", None)


def test_make_call_parses_and_keeps_raw_text_exactly() -> None:
    raw = '{ "q" : "caf\\u00e9 \\"x\\"\\n 🌧️ 東京" }'
    call = make_call(0, "c1", "search", raw)
    assert call.arguments_raw == raw
    assert call.arguments == {"q": 'café "x"\n 🌧️ 東京'}
    assert call.parse_error is None


def test_make_call_malformed() -> None:
    call = make_call(1, "c2", "search", '{"q": ')
    assert call.arguments is None
    assert call.parse_error == "Expecting value at char 6"


def test_make_call_with_an_object_reserialises_compactly() -> None:
    call = make_call(0, "c", "f", {"city": "Montréal", "n": [1, 2]})
    assert call.arguments_raw == '{"city":"Montréal","n":[1,2]}'
    assert call.arguments == {"city": "Montréal", "n": [1, 2]}


def test_make_call_free_text_and_known_value() -> None:
    patch = "*** Begin Patch\n*** End Patch"
    free = make_call(0, "c", "apply_patch", patch, free_text=True)
    assert (free.arguments, free.parse_error) == (patch, None)
    known = make_call(0, "c", "f", "", value={})
    assert (known.arguments_raw, known.arguments, known.parse_error) == ("", {}, None)


def test_make_call_ignores_non_string_ids() -> None:
    call = make_call(0, 12, ["x"], "{}")
    assert (call.call_id, call.name) == (None, None)


def test_arguments_key_canonicalises_or_keeps_raw() -> None:
    assert arguments_key('{"b": 1, "a": "é"}') == '{"a":"é","b":1}'
    assert arguments_key('{"b": 1,') == '{"b": 1,'
    assert arguments_key({"b": 1, "a": 2}) == '{"a":2,"b":1}'


def test_call_key_matches_arguments_key() -> None:
    raw = '{"b": 1, "a": 2}'
    assert call_key(make_call(0, "c", "f", raw)) == ("c", "f", arguments_key(raw))
    bad = '{"b": '
    assert call_key(make_call(0, "c", "f", bad)) == ("c", "f", bad)


def test_reply_turn() -> None:
    response = ParsedResponse(text="hi", tool_calls=[ToolCall(index=0, call_id="c", name="f")])
    assert reply_turn(response) == Turn(role="assistant", text="hi", calls=[("c", "f", "null")])
    assert reply_turn(ParsedResponse()) == Turn(role="assistant", text="")
    assert reply_turn(ParsedResponse(error="boom")) is None
    assert reply_turn(ParsedResponse(error="boom", text="half")) == Turn(
        role="assistant", text="half"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"error": {"message": "Bad", "type": "invalid_request_error"}},
            "invalid_request_error: Bad",
        ),
        ({"error": {"message": "Bad", "code": "rate_limit_exceeded"}}, "rate_limit_exceeded: Bad"),
        ({"error": {"message": "Bad"}}, "Bad"),
        ({"error": {"code": 500}}, '{"code":500}'),
        ({"error": "plain text"}, "plain text"),
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "overloaded_error: Overloaded",
        ),
        ({"type": "error", "code": "server_error", "message": "Oops"}, "server_error: Oops"),
        ({"type": "error", "message": "Oops"}, "Oops"),
        ({"error": None, "object": "response"}, None),
        ({"error": {}}, None),
        (["not", "a", "dict"], None),
    ],
)
def test_error_message(body: object, message: str | None) -> None:
    assert error_message(body) == message


def test_merge_usage_ignores_nulls() -> None:
    usage = {"input_tokens": 10, "output_tokens": 1}
    merge_usage(usage, {"output_tokens": 40, "input_tokens": None})
    merge_usage(usage, None)
    assert usage == {"input_tokens": 10, "output_tokens": 40}


def test_repair_surrogates_rejoins_a_split_character() -> None:
    high, low = json.loads('"\\ud83c"'), json.loads('"\\udf27 rain"')
    assert repair_surrogates(high + low) == "🌧 rain"
    assert repair_surrogates("x" + high) == "x" + high
    assert repair_surrogates("plain é") == "plain é"


def test_decode_stream_counts_done_and_bad_events() -> None:
    body = (
        b'data: {"a": 1}\n\n'
        b"data: not json\n\n"
        b"data: [1, 2]\n\n"
        b"data:\n\n"
        b"event: message_stop\ndata: {}\n\n"
        b'event: message_delta\ndata: {"type": "message_delta"}\n\n'
        b"data: [DONE]\n\n"
    )
    stream = decode_stream(*iter_sse_events(body))
    assert stream.objects == [{"a": 1}, {"type": "message_stop"}, {"type": "message_delta"}]
    assert stream.done and stream.ended
    assert stream.events == 7
    assert stream.notes == ["2 unparseable SSE event(s), first event 1: Expecting value at char 0"]


def test_decode_stream_reports_a_cut_last_event_as_a_cut() -> None:
    stream = decode_stream(*iter_sse_events(b'data: {"a": 1}\n\ndata: {"b": '))
    assert stream.objects == [{"a": 1}]
    assert not stream.done and not stream.ended
    assert stream.notes == ["stream cut in the middle of an event"]


def test_decode_stream_keeps_a_whole_last_event_without_blank_line() -> None:
    stream = decode_stream([SseEvent(data='{"a": 1}'), SseEvent(data="[DONE]")], ended=False)
    assert stream.objects == [{"a": 1}] and stream.done and stream.notes == []


def test_one_line_folds_whitespace_and_cuts_with_an_ellipsis():
    from toolproxy.wire.common import one_line

    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 10, 5) == "xxxx…"
    assert one_line("x" * 5, 5) == "xxxxx"


def test_exception_text_names_the_cause():
    from toolproxy.wire.common import exception_text

    try:
        try:
            raise ConnectionResetError("peer reset")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as exc:
        assert exception_text(exc) == "ConnectionResetError: peer reset"
    assert exception_text(ValueError()) == "ValueError"


def test_decoded_reads_json_text_and_keeps_the_rest():
    from toolproxy.wire.common import decoded

    assert decoded('{"a": [1]}') == {"a": [1]} and decoded("3") == 3
    assert decoded("not json") == "not json" and decoded(None) is None
    assert decoded({"already": "a dict"}) == {"already": "a dict"}
