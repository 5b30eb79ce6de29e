"""OpenAI Chat Completions: toolproxy.wire.openai_chat."""

from __future__ import annotations

import json
from typing import Any

from tests import paths
from toolproxy.records import ParsedResponse, Turn, schema_hash
from toolproxy.wire import parse_exchange
from toolproxy.wire.common import decode_stream
from toolproxy.wire.openai_chat import parse_request, parse_response, parse_stream
from toolproxy.wire.sse import iter_sse_events

FIXTURES = paths.FIXTURES / "wire"
PATH = "/v1/chat/completions"
UNICODE_ARGS = (
    '{"query": "caf\\u00e9 guide \\"best of\\"\\nMontréal 🌧️", "path": "C:\\\\docs\\\\東京"}'
)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def stream(body: bytes) -> tuple[ParsedResponse, list[str]]:
    return parse_stream(decode_stream(*iter_sse_events(body)))


def sse(*chunks: object, done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return "".join(lines + (["data: [DONE]\n\n"] if done else [])).encode()


def delta(**fields: object) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


# ------------------------------------------------------------------ requests


def test_request_fields() -> None:
    body = load("chat_request.json")
    request = parse_request(body)
    assert request.wire_format == "openai_chat"
    assert (request.model, request.stream, request.system) == ("gpt-4.1", True, None)
    assert request.messages == body["messages"]
    assert request.params == {
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "temperature": 0.2,
        "max_completion_tokens": 1024,
        "stream_options": {"include_usage": True},
    }
    assert request.previous_response_id is None


def test_request_tools() -> None:
    body = load("chat_request.json")
    tools = parse_request(body).tools
    assert [(t.position, t.name, t.kind) for t in tools] == [
        (0, "get_weather", "function"),
        (1, "search_docs", "function"),
        (2, "list_files", "function"),
    ]
    assert tools[0].description == "Current weather for a city."
    assert tools[0].parameters == body["tools"][0]["function"]["parameters"]
    assert tools[0].schema_hash == schema_hash(body["tools"][0]["function"]["parameters"])
    assert tools[2].description is None


def test_request_tool_results() -> None:
    results = parse_request(load("chat_request.json")).tool_results
    assert [(r.message_index, r.call_id, r.content, r.is_error) for r in results] == [
        (3, "call_Q8mZc1VtR4yXb7LpN2sKd9Fh", '{"temp_c": -3, "sky": "snow"}', None),
        (4, "call_H3nWq6TzE1uYo8RiA5cVb2Mx", "東京: 18 °C, clear", None),
        (5, "call_P7sLk2DfJ9gXa4WeQ1rTy6Un", 'No guide found for "café".', None),
    ]


def test_request_turns() -> None:
    turns = parse_request(load("chat_request.json")).turns
    assert [t.role for t in turns] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert turns[1].text == "What's the weather in Montréal and Tokyo?\nAlso find the café guide."
    assert turns[2].text == ""
    assert turns[2].calls[0] == (
        "call_Q8mZc1VtR4yXb7LpN2sKd9Fh",
        "get_weather",
        '{"city":"Montréal","unit":"celsius"}',
    )
    assert turns[4] == Turn(role="tool", text="東京: 18 °C, clear", call_id=turns[4].call_id)


def test_request_odd_shapes() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "developer", "content": "be terse"},
            {"content": "no role"},
            {"role": "assistant", "content": None, "function_call": {"name": "f"}},
            {"role": "function", "name": "f", "content": "42"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "custom", "custom": {"name": "patch", "input": "diff"}},
                    {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{x"}},
                ],
            },
            "not a message",
        ],
        "tools": [
            {"type": "custom", "custom": {"name": "patch", "description": "Apply a diff."}},
            {"type": "function"},
            "junk",
        ],
    }
    request = parse_request(body)
    assert [(t.role, t.text, t.call_id) for t in request.turns] == [
        ("developer", "be terse", None),
        ("user", "no role", None),
        ("assistant", "", None),
        ("tool", "42", None),
        ("assistant", "", None),
        ("user", "", None),
    ]
    assert request.turns[4].calls == [("c1", "patch", '"diff"'), ("c2", "g", "{x")]
    assert [(r.message_index, r.call_id, r.content) for r in request.tool_results] == [
        (3, None, "42")
    ]
    assert [(t.name, t.kind, t.description) for t in request.tools] == [
        ("patch", "custom", "Apply a diff."),
        ("function", "function", None),
        ("function", "function", None),
    ]
    assert request.stream is False


# ------------------------------------------------------------ plain responses


def test_response_tool_calls_keep_raw_arguments_exactly() -> None:
    response = parse_response(load("chat_response_tool_calls.json"))
    assert response.response_id == "chatcmpl-C3xSa0Lm7NbV2cXz9QwErTyU"
    assert response.model == "gpt-4.1-2025-04-14"
    assert response.text is None
    assert response.finish_reason == "tool_calls"
    first, second = response.tool_calls
    assert (first.index, first.call_id, first.name) == (
        0,
        "call_Z1xC2vB3nM4aS5dF6gH7jK8l",
        "get_weather",
    )
    assert first.arguments_raw == '{"city":"Montréal","unit":"celsius"}'
    assert second.arguments_raw == UNICODE_ARGS
    assert second.arguments == {
        "query": 'café guide "best of"\nMontréal 🌧️',
        "path": "C:\\docs\\東京",
    }
    assert second.parse_error is None


def test_response_usage() -> None:
    usage = parse_response(load("chat_response_tool_calls.json")).usage
    assert usage.model_dump() == {
        "input_tokens": 2147,
        "output_tokens": 58,
        "total_tokens": 2205,
        "cached_input_tokens": 1920,
        "reasoning_tokens": 0,
    }


def test_response_text() -> None:
    response = parse_response(load("chat_response_text.json"))
    assert response.text == "It's −3 °C and snowing in Montréal ❄️."
    assert response.finish_reason == "stop"
    assert response.tool_calls == []
    assert response.reply == Turn(role="assistant", text=response.text)
    assert (response.complete, response.events, response.error) == (True, 0, None)


def test_response_malformed_arguments_are_not_an_exchange_failure() -> None:
    result = parse_exchange(
        "POST",
        PATH,
        (FIXTURES / "chat_request.json").read_bytes(),
        200,
        "application/json",
        (FIXTURES / "chat_response_malformed_args.json").read_bytes(),
    )
    assert (result.parse_status, result.parse_error) == ("ok", None)
    assert result.response is not None
    bad, empty = result.response.tool_calls
    assert bad.arguments_raw == '{"city": "Paris" "unit": "celsius"}'
    assert (bad.arguments, bad.parse_error) == (None, "Expecting ',' delimiter at char 17")
    # OpenAI arguments are JSON text; "" for a no-argument call is flagged, not guessed.
    assert (empty.arguments_raw, empty.arguments, empty.parse_error) == (
        "",
        None,
        "empty arguments",
    )


def test_response_error_body() -> None:
    response = parse_response(load("chat_error_400.json"))
    assert response.error == (
        "invalid_request_error: Invalid parameter: messages with role 'tool' must be a "
        "response to a preceeding message with 'tool_calls'."
    )
    assert response.reply is None and response.tool_calls == []


def test_response_odd_shapes() -> None:
    body = {
        "choices": [
            {"index": 1, "message": {"content": "second choice"}},
            {
                "index": 0,
                "message": {
                    "content": [{"type": "text", "text": "parts"}],
                    "tool_calls": [
                        {"id": "a", "function": {"name": "f", "arguments": {"x": 1}}},
                        {"id": "b", "type": "custom", "custom": {"name": "patch", "input": "diff"}},
                        {"id": "c", "function": {"name": "g"}},
                    ],
                },
            },
        ],
        "usage": {"prompt_tokens": True},
    }
    response = parse_response(body)
    assert response.text == "parts"
    obj, custom, missing = response.tool_calls
    assert (obj.arguments_raw, obj.arguments) == ('{"x":1}', {"x": 1})
    assert (custom.arguments_raw, custom.arguments, custom.parse_error) == ("diff", "diff", None)
    assert missing.parse_error == "empty arguments"
    assert response.usage.input_tokens is None
    assert parse_response({"choices": "nope"}).reply == Turn(role="assistant")


# ------------------------------------------------------------------- streams


def test_stream_parallel_calls_interleaved() -> None:
    response, notes = stream((FIXTURES / "chat_stream_parallel.sse").read_bytes())
    assert notes == []
    assert response.complete
    assert response.response_id == "chatcmpl-C3xRk9Vn2LqT8bWm5ZyPa1sDfGhJ"
    assert response.model == "gpt-4.1-2025-04-14"
    assert response.text is None
    assert response.finish_reason == "tool_calls"
    assert [(c.index, c.call_id, c.name, c.arguments_raw) for c in response.tool_calls] == [
        (
            0,
            "call_Q8mZc1VtR4yXb7LpN2sKd9Fh",
            "get_weather",
            '{"city": "Montréal", "unit": "celsius"}',
        ),
        (1, "call_H3nWq6TzE1uYo8RiA5cVb2Mx", "get_weather", '{"city":"東京","unit":"celsius"}'),
        (2, "call_P7sLk2DfJ9gXa4WeQ1rTy6Un", "search_docs", UNICODE_ARGS),
    ]
    assert all(c.parse_error is None for c in response.tool_calls)


def test_stream_usage_only_final_chunk() -> None:
    response, _ = stream((FIXTURES / "chat_stream_parallel.sse").read_bytes())
    assert response.usage.model_dump() == {
        "input_tokens": 2147,
        "output_tokens": 96,
        "total_tokens": 2243,
        "cached_input_tokens": 1920,
        "reasoning_tokens": 0,
    }


def test_stream_text() -> None:
    response, notes = stream((FIXTURES / "chat_stream_text.sse").read_bytes())
    assert response.text == "It's −3 °C and snowing in Montréal ❄️; Tokyo is 18 °C and clear."
    assert (response.finish_reason, response.complete, notes) == ("stop", True, [])
    assert response.usage.output_tokens == 21


def test_stream_without_usage() -> None:
    body = sse(
        delta(role="assistant", content="hi"),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    )
    response, _ = stream(body)
    assert response.usage.input_tokens is None
    assert response.text == "hi"


def test_stream_cut_mid_arguments_keeps_what_arrived() -> None:
    body = (FIXTURES / "chat_stream_parallel.sse").read_bytes()
    cut = body[: body.index(b"\\u0")]
    result = parse_exchange("POST", PATH, b"{}", 200, "text/event-stream", cut, False)
    assert result.parse_status == "partial"
    assert (
        result.parse_error is not None and "stream ended before data: [DONE]" in result.parse_error
    )
    response = result.response
    assert response is not None and not response.complete
    assert [c.name for c in response.tool_calls] == ["get_weather", "get_weather", "search_docs"]
    # The event holding the cut is dropped; every whole event before it counts.
    assert "stream cut in the middle of an event" in result.parse_error
    assert response.tool_calls[2].arguments_raw == '{"query": "c'
    assert response.tool_calls[2].parse_error is not None
    assert response.finish_reason is None


def test_stream_cut_before_done() -> None:
    body = (FIXTURES / "chat_stream_parallel.sse").read_bytes()
    cut = body[: body.index(b"data: [DONE]")]
    # The connection broke: incomplete whatever arrived.
    broken = parse_exchange("POST", PATH, b"{}", 200, "text/event-stream", cut, False)
    assert broken.parse_status == "partial"
    assert broken.response is not None and not broken.response.complete
    # The server closed cleanly after finish_reason on an event boundary, only [DONE]
    # missing (some OpenAI-compatible servers never send it): complete.
    response, notes = stream(cut)
    assert (response.complete, notes) == (True, [])


def test_stream_without_finish_or_done_is_incomplete() -> None:
    response, notes = stream(sse(delta(content="partial"), done=False))
    assert not response.complete
    assert notes == ["stream ended before data: [DONE]"]


def test_stream_error_chunk() -> None:
    error = {"error": {"message": "The server had an error", "type": "server_error"}}
    response, notes = stream(sse(delta(content="Hel"), error, done=False))
    assert response.error == "server_error: The server had an error"
    assert response.text == "Hel"
    assert not response.complete and notes


def test_stream_compat_quirks() -> None:
    """No index, ids and names repeated in every delta, a second choice."""
    body = sse(
        delta(
            tool_calls=[
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x"'}}
            ]
        ),
        delta(tool_calls=[{"id": "a", "function": {"name": "f", "arguments": ": 1}"}}]),
        delta(tool_calls=[{"id": "b", "function": {"name": "g", "arguments": "{}"}}]),
        delta(tool_calls=[{"function": {"arguments": " "}}]),
        {"choices": [{"index": 1, "delta": {"content": "other choice"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )
    response, _ = stream(body)
    assert response.text is None
    assert [(c.call_id, c.name, c.arguments_raw) for c in response.tool_calls] == [
        ("a", "f", '{"x": 1}'),
        ("b", "g", "{} "),
    ]


def test_stream_first_piece_without_index_or_id() -> None:
    response, _ = stream(sse(delta(tool_calls=[{"function": {"name": "f", "arguments": "{}"}}])))
    assert [(c.index, c.name, c.arguments) for c in response.tool_calls] == [(0, "f", {})]


def test_stream_custom_tool_call() -> None:
    body = sse(
        delta(
            tool_calls=[
                {
                    "index": 0,
                    "id": "c",
                    "type": "custom",
                    "custom": {"name": "patch", "input": "*** Begin"},
                }
            ]
        ),
        delta(tool_calls=[{"index": 0, "custom": {"input": " Patch"}}]),
    )
    response, _ = stream(body)
    (call,) = response.tool_calls
    assert (call.name, call.arguments_raw, call.arguments) == (
        "patch",
        "*** Begin Patch",
        "*** Begin Patch",
    )


# ------------------------------------------------------------------ round trip


def test_reply_round_trip_plain() -> None:
    """The OpenAI SDK sends the response's message back as the next assistant message."""
    body = load("chat_response_tool_calls.json")
    reply = parse_response(body).reply
    follow_up = {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "hi"}, body["choices"][0]["message"]],
    }
    assert parse_request(follow_up).turns[-1] == reply
    assert reply is not None and len(reply.calls) == 2


def test_reply_round_trip_streamed() -> None:
    """chat_request.json carries the message an agent rebuilt from chat_stream_parallel.sse."""
    reply = stream((FIXTURES / "chat_stream_parallel.sse").read_bytes())[0].reply
    assert parse_request(load("chat_request.json")).turns[2] == reply


def test_reply_round_trip_text_and_malformed() -> None:
    text = load("chat_response_text.json")
    assert (
        parse_request({"messages": [text["choices"][0]["message"]]}).turns[0]
        == parse_response(text).reply
    )
    bad = load("chat_response_malformed_args.json")
    assert (
        parse_request({"messages": [bad["choices"][0]["message"]]}).turns[0]
        == parse_response(bad).reply
    )


def test_stream_character_split_across_deltas_is_rejoined() -> None:
    """A server escaping non-ASCII may cut an emoji's surrogate pair across two events."""
    first = (
        '{"index":0,"id":"c","type":"function",'
        '"function":{"name":"f","arguments":"{\\"e\\": \\"\\ud83c"}}'
    )
    second = '{"index":0,"function":{"arguments":"\\udf27\\"}"}}'
    body = "".join(
        f'data: {{"choices":[{{"index":0,"delta":{delta}}}]}}\n\n'
        for delta in (
            f'{{"tool_calls":[{first}]}}',
            f'{{"tool_calls":[{second}]}}',
            '{"content":"rain \\ud83c"}',
            '{"content":"\\udf27"}',
        )
    )
    response, _ = stream(body.encode() + b"data: [DONE]\n\n")
    (call,) = response.tool_calls
    assert call.arguments_raw == '{"e": "🌧"}'
    assert call.arguments == {"e": "🌧"}
    assert response.text == "rain 🌧"
    assert response.text.encode() == "rain 🌧".encode()


# ------------------------------------------- the legacy functions API (functions / function_call)


LEGACY_FUNCTIONS = [
    {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
    {"name": "get_time"},
]


def test_legacy_functions_are_offered_after_any_tools() -> None:
    body = {
        "model": "gpt-3.5-turbo-0613",
        "messages": [{"role": "user", "content": "Weather in Boston?"}],
        "functions": LEGACY_FUNCTIONS,
        "function_call": "auto",
    }
    request = parse_request(body)
    assert [(t.position, t.name, t.kind, t.description) for t in request.tools] == [
        (0, "get_current_weather", "function", "Get the current weather in a given location"),
        (1, "get_time", "function", None),
    ]
    assert request.tools[0].parameters == LEGACY_FUNCTIONS[0]["parameters"]
    assert request.tools[1].parameters is None
    assert request.params == {"function_call": "auto"}  # functions are the tools, not a param
    both = parse_request({**body, "tools": [{"type": "function", "function": {"name": "t"}}]})
    assert [(t.position, t.name) for t in both.tools] == [
        (0, "t"),
        (1, "get_current_weather"),
        (2, "get_time"),
    ]


def test_legacy_function_call_response_is_the_tool_call() -> None:
    body = load("chat_response_function_call.json")
    response = parse_response(body)
    (call,) = response.tool_calls
    raw = body["choices"][0]["message"]["function_call"]["arguments"]
    assert (call.index, call.call_id, call.name, call.arguments_raw) == (
        0,
        None,
        "get_current_weather",
        raw,
    )
    assert call.arguments == {"location": "Boston, MA", "unit": "fahrenheit"}
    assert response.finish_reason == "function_call"
    assert response.reply is not None and response.reply.calls == [
        (None, "get_current_weather", '{"location":"Boston, MA","unit":"fahrenheit"}')
    ]


def test_legacy_function_call_streamed_is_rejoined() -> None:
    response, notes = stream((FIXTURES / "chat_stream_function_call.sse").read_bytes())
    assert (notes, response.complete, response.finish_reason) == ([], True, "function_call")
    (call,) = response.tool_calls
    assert (call.index, call.call_id, call.name) == (0, None, "get_current_weather")
    assert call.arguments_raw == '{\n  "location": "Boston, MA"\n}'
    assert call.arguments == {"location": "Boston, MA"} and call.parse_error is None


def test_legacy_function_call_sent_back_continues_the_reply() -> None:
    """The agent sends the assistant message back, then the function's result: the turn is
    the reply it answers (so the session goes on), and the result is a tool turn."""
    body = load("chat_response_function_call.json")
    reply = parse_response(body).reply
    message = body["choices"][0]["message"]
    result = {"role": "function", "name": "get_current_weather", "content": '{"temp": 72}'}
    follow_up = parse_request({"messages": [{"role": "user", "content": "hi"}, message, result]})
    assert follow_up.turns[1] == reply
    assert follow_up.turns[2] == Turn(role="tool", text='{"temp": 72}', call_id=None)
    streamed = stream((FIXTURES / "chat_stream_function_call.sse").read_bytes())[0]
    function = {"name": "get_current_weather", "arguments": streamed.tool_calls[0].arguments_raw}
    rebuilt = {"role": "assistant", "content": None, "function_call": function}
    assert parse_request({"messages": [rebuilt]}).turns[0] == streamed.reply


def test_legacy_function_call_beside_tool_calls_comes_after_them() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}}
        ],
        "function_call": {"name": "b", "arguments": '{"x": 1}'},
    }
    response = parse_response({"choices": [{"index": 0, "message": message}]})
    assert [(c.index, c.call_id, c.name) for c in response.tool_calls] == [
        (0, "c1", "a"),
        (1, None, "b"),
    ]
    assert parse_request({"messages": [message]}).turns[0] == response.reply


# ------------------------------------------------------------------ refusals

REFUSED = "I'm sorry, I can't help with that request."


def test_a_refusal_is_kept_apart_from_the_text() -> None:
    # structured output: the model refused instead of answering in the schema
    body = {
        "id": "chatcmpl-r",
        "object": "chat.completion",
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "refusal": REFUSED},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
    }
    response = parse_response(body)
    assert (response.text, response.refusal) == (None, REFUSED)
    assert response.reply == Turn(role="assistant", text="", calls=[])  # as sent back
    pieces = [delta(role="assistant", content=None, refusal="")]
    pieces += [delta(refusal=REFUSED[:9]), delta(refusal=REFUSED[9:])]
    streamed, _ = stream(
        sse(*pieces, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    )
    assert (streamed.text, streamed.refusal) == (None, REFUSED)
    assert parse_response(load("chat_response_text.json")).refusal is None
