"""Anthropic Messages: toolproxy.wire.anthropic."""

from __future__ import annotations

import json
from typing import Any

from tests import paths
from toolproxy.records import ParsedResponse, Turn, schema_hash
from toolproxy.wire import parse_exchange
from toolproxy.wire.anthropic import parse_request, parse_response, parse_stream
from toolproxy.wire.common import decode_stream
from toolproxy.wire.sse import iter_sse_events

FIXTURES = paths.FIXTURES / "wire"
UNICODE_ARGS = (
    '{"query": "caf\\u00e9 guide \\"best of\\"\\nMontréal 🌧️", "path": "C:\\\\docs\\\\東京"}'
)
UNICODE_VALUE = {"query": 'café guide "best of"\nMontréal 🌧️', "path": "C:\\docs\\東京"}


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def stream(body: bytes) -> tuple[ParsedResponse, list[str]]:
    return parse_stream(decode_stream(*iter_sse_events(body)))


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def tool_block(index: int, *pieces: str, start_input: Any = None) -> list[dict[str, Any]]:
    block = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": start_input or {}}
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *[
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in pieces
        ],
        {"type": "content_block_stop", "index": index},
    ]


# ------------------------------------------------------------------ requests


def test_request_fields() -> None:
    body = load("anthropic_request.json")
    request = parse_request(body)
    assert request.wire_format == "anthropic_messages"
    assert (request.model, request.stream) == ("claude-sonnet-4-5-20250929", True)
    assert request.system == (
        "You are a travel agent assistant.\nToday is 2025-10-02. Working directory: /home/me/trip"
    )
    assert request.messages == body["messages"]
    assert request.params == {
        "max_tokens": 32000,
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": False},
        "temperature": 0.3,
        "metadata": {"user_id": "user_3f9c0b1e"},
    }


def test_request_tools() -> None:
    body = load("anthropic_request.json")
    tools = parse_request(body).tools
    assert [(t.position, t.name, t.kind) for t in tools] == [
        (0, "get_weather", "function"),
        (1, "search_docs", "function"),
        (2, "list_files", "function"),
        (3, "bash", "bash_20250124"),
        (4, "web_search", "web_search_20250305"),
    ]
    assert tools[0].parameters == body["tools"][0]["input_schema"]
    assert tools[0].schema_hash == schema_hash(body["tools"][0]["input_schema"])
    assert tools[3].parameters is None
    typed = parse_request({"tools": [{"type": "custom", "name": "g", "input_schema": {}}]}).tools
    assert (typed[0].kind, typed[0].parameters) == ("function", {})


def test_request_tool_results() -> None:
    results = parse_request(load("anthropic_request.json")).tool_results
    assert [(r.message_index, r.call_id, r.content, r.is_error) for r in results] == [
        (2, "toolu_01D7FLrfh4GYq7yT1ULFeyMV", '{"temp_c": -3, "sky": "snow"}', None),
        (2, "toolu_01Hq3sBn5Kc8Vx2Jm9Lp4Rt6", "No guide found.", True),
        (2, "toolu_01Nz6Yw1Qe4Ua7Io0Pa3Sd5F", "notes.md\nplan.txt", None),
    ]


def test_request_turns_one_tool_turn_per_result_block() -> None:
    turns = parse_request(load("anthropic_request.json")).turns
    assert [t.role for t in turns] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "user",
    ]
    assert turns[0].text.startswith("You are a travel agent assistant.\n")
    assert turns[2].text == "I'll check the weather and the café guide."
    assert turns[2].calls[2] == ("toolu_01Nz6Yw1Qe4Ua7Io0Pa3Sd5F", "list_files", "{}")
    assert turns[4] == Turn(
        role="tool", text="No guide found.", call_id="toolu_01Hq3sBn5Kc8Vx2Jm9Lp4Rt6"
    )
    assert turns[6] == Turn(role="user", text="Keep it short.")


def test_request_turns_block_order_and_odd_messages() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "before"},
                {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
            ],
        },
        {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": ""}}]},
        {"role": "user", "content": []},
        {"role": "assistant", "content": "plain"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "x"},
                {"type": "tool_use", "id": "t2", "name": "g"},
            ],
        },
        {"content": "no role"},
    ]
    request = parse_request({"system": "", "messages": messages})
    assert request.system == ""
    assert request.turns == [
        Turn(role="user", text="before"),
        Turn(role="tool", text="r", call_id="t1"),
        Turn(role="user", text=""),
        Turn(role="user", text=""),
        Turn(role="assistant", text="plain"),
        Turn(role="assistant", calls=[("t2", "g", "{}")]),
        Turn(role="user", text="no role"),
    ]
    assert request.tool_results[0].is_error is None
    assert parse_request({}).system is None


# ------------------------------------------------------------ plain responses


def test_response_reserialises_input_as_raw_arguments() -> None:
    response = parse_response(load("anthropic_response.json"))
    assert response.response_id == "msg_01XkT8c3Vq9LmN2pR7sW4yZb"
    assert response.model == "claude-sonnet-4-5-20250929"
    assert response.text == "I'll check the weather and the café guide."
    assert response.finish_reason == "tool_use"
    assert [(c.index, c.call_id, c.name, c.arguments_raw) for c in response.tool_calls] == [
        (
            0,
            "toolu_01D7FLrfh4GYq7yT1ULFeyMV",
            "get_weather",
            '{"city":"Montréal","unit":"celsius"}',
        ),
        (
            1,
            "toolu_01Hq3sBn5Kc8Vx2Jm9Lp4Rt6",
            "search_docs",
            '{"query":"café guide \\"best of\\"\\nMontréal 🌧️","path":"C:\\\\docs\\\\東京"}',
        ),
        (2, "toolu_01Nz6Yw1Qe4Ua7Io0Pa3Sd5F", "list_files", "{}"),
    ]
    assert response.tool_calls[1].arguments == UNICODE_VALUE
    assert all(c.parse_error is None for c in response.tool_calls)


def test_response_usage_is_normalised() -> None:
    usage = parse_response(load("anthropic_response.json")).usage
    # 27 fresh + 4012 read from cache + 0 written to cache = the whole prompt.
    assert usage.model_dump() == {
        "input_tokens": 4039,
        "output_tokens": 187,
        "total_tokens": 4226,
        "cached_input_tokens": 4012,
        "reasoning_tokens": None,
    }
    assert parse_response({"usage": {"output_tokens": 3}}).usage.total_tokens is None


def test_response_error_body() -> None:
    response = parse_response(load("anthropic_error_529.json"))
    assert response.error == "overloaded_error: Overloaded"
    assert response.reply is None


def test_response_skips_thinking_and_server_tools() -> None:
    body = {
        "content": [
            {"type": "thinking", "thinking": "...", "signature": "s"},
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "x"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "Found it."},
            {"type": "tool_use", "id": "t", "name": "g"},
        ]
    }
    response = parse_response(body)
    assert response.text == "Found it."
    assert [(c.call_id, c.arguments_raw, c.arguments) for c in response.tool_calls] == [
        ("t", "{}", {})
    ]


# ------------------------------------------------------------------- streams


def test_stream_reassembles_text_and_tool_use() -> None:
    response, notes = stream((FIXTURES / "anthropic_stream.sse").read_bytes())
    assert notes == [] and response.complete
    assert response.events == 0  # set by parse_exchange, which knows the raw event count
    assert response.response_id == "msg_01XkT8c3Vq9LmN2pR7sW4yZb"
    assert response.text == "I'll check the weather and the café guide."
    assert response.finish_reason == "tool_use"
    assert [(c.call_id, c.name, c.arguments_raw) for c in response.tool_calls] == [
        (
            "toolu_01D7FLrfh4GYq7yT1ULFeyMV",
            "get_weather",
            '{"city": "Montréal", "unit": "celsius"}',
        ),
        ("toolu_01Hq3sBn5Kc8Vx2Jm9Lp4Rt6", "search_docs", UNICODE_ARGS),
        ("toolu_01Nz6Yw1Qe4Ua7Io0Pa3Sd5F", "list_files", ""),
    ]
    # No partial_json text means an empty input, not a malformed call.
    assert (response.tool_calls[2].arguments, response.tool_calls[2].parse_error) == ({}, None)
    assert response.tool_calls[1].arguments == UNICODE_VALUE


def test_stream_usage_merges_start_and_delta() -> None:
    response, _ = stream((FIXTURES / "anthropic_stream.sse").read_bytes())
    assert response.usage == parse_response(load("anthropic_response.json")).usage


def test_stream_matches_plain_response() -> None:
    streamed, _ = stream((FIXTURES / "anthropic_stream.sse").read_bytes())
    plain = parse_response(load("anthropic_response.json"))
    assert streamed.reply == plain.reply
    assert [c.arguments for c in streamed.tool_calls] == [c.arguments for c in plain.tool_calls]


def test_stream_error_event_is_partial() -> None:
    result = parse_exchange(
        "POST",
        "/v1/messages",
        (FIXTURES / "anthropic_request.json").read_bytes(),
        200,
        "text/event-stream",
        (FIXTURES / "anthropic_stream_error.sse").read_bytes(),
    )
    assert result.parse_status == "partial"
    assert result.parse_error == "response: stream ended before message_stop"
    response = result.response
    assert response is not None
    assert (response.error, response.text, response.complete) == (
        "overloaded_error: Overloaded",
        "Let me look",
        False,
    )
    assert response.usage.input_tokens == 310
    assert response.events == 4


def test_stream_cut_before_message_stop() -> None:
    body = (FIXTURES / "anthropic_stream.sse").read_bytes()
    cut = body[: body.index(b"event: message_delta")]
    result = parse_exchange("POST", "/v1/messages", b"{}", 200, "text/event-stream", cut, False)
    assert result.parse_status == "partial"
    response = result.response
    assert response is not None and not response.complete
    assert response.finish_reason is None
    assert len(response.tool_calls) == 3


def test_stream_cut_mid_tool_input() -> None:
    body = (FIXTURES / "anthropic_stream.sse").read_bytes()
    cut = body[: body.index(b"tr\xc3\xa9al")]
    response, notes = stream(cut)
    (call,) = response.tool_calls
    assert call.arguments_raw == '{"city": "Mon'
    assert call.parse_error == "Unterminated string starting at char 9"
    assert notes == ["stream ended before message_stop"]


def test_stream_tool_input_given_whole_in_block_start() -> None:
    """Some proxies put the whole input in content_block_start and send no deltas."""
    body = sse(*tool_block(0, start_input={"x": 1}), *tool_block(1, "  "), {"type": "message_stop"})
    first, second = stream(body)[0].tool_calls
    assert (first.arguments_raw, first.arguments) == ('{"x":1}', {"x": 1})
    assert (second.arguments_raw, second.arguments, second.parse_error) == ("  ", {}, None)


def test_stream_ignores_unknown_and_stray_events() -> None:
    body = sse(
        {
            "type": "content_block_delta",
            "index": 5,
            "delta": {"type": "text_delta", "text": "orphan"},
        },
        {"type": "content_block_start", "content_block": {"type": "text"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hm"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "s"},
        },
        {"type": "error"},
        {"type": "something_new"},
    )
    response, _ = stream(body)
    assert (response.text, response.tool_calls, response.error) == (None, [], '{"type":"error"}')


# ------------------------------------------------------------------ round trip


def test_reply_round_trip_plain() -> None:
    """The Anthropic SDK sends the response's content blocks back as the assistant message."""
    body = load("anthropic_response.json")
    follow_up = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": body["content"]},
        ]
    }
    assert parse_request(follow_up).turns[-1] == parse_response(body).reply


def test_reply_round_trip_streamed() -> None:
    reply = stream((FIXTURES / "anthropic_stream.sse").read_bytes())[0].reply
    assert parse_request(load("anthropic_request.json")).turns[2] == reply


# ------------------------------------------------------------------ the MCP connector


def test_mcp_connector_calls_are_the_models_with_their_server() -> None:
    body = load("anthropic_response_mcp.json")
    response = parse_response(body)
    (call,) = response.tool_calls
    assert (call.call_id, call.name, call.mcp_server) == (
        "mcptoolu_014Q35RayjACSWkSj4X2yov1",
        "echo",
        "example-mcp",
    )
    assert call.arguments == {"param1": "value1", "param2": "value2"}
    # the result the provider got is neither text nor a call
    assert response.text == "I'll echo that for you.\nThe server said: Hello"
    streamed, notes = stream((FIXTURES / "anthropic_stream_mcp.sse").read_bytes())
    assert notes == [] and streamed.text == response.text
    assert [(c.call_id, c.name, c.arguments, c.mcp_server) for c in streamed.tool_calls] == [
        (call.call_id, call.name, call.arguments, call.mcp_server)
    ]


def test_mcp_servers_are_offered_and_the_reply_comes_back_as_its_turn() -> None:
    body = load("anthropic_response_mcp.json")
    request = parse_request(
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
            "mcp_servers": [
                {"type": "url", "url": "https://mcp.example.com/sse", "name": "example-mcp"}
            ],
            "messages": [
                {"role": "user", "content": "echo it"},
                {"role": "assistant", "content": body["content"]},
                {"role": "user", "content": "thanks"},
            ],
        }
    )
    tools = [(t.position, t.name, t.kind, t.mcp_server, t.parameters) for t in request.tools]
    assert tools == [
        (0, "f", "function", None, {"type": "object"}),
        (1, "example-mcp", "mcp", "example-mcp", None),
    ]
    assert request.tool_results == []
    assert request.turns[1] == parse_response(body).reply
