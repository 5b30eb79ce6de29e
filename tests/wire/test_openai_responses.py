"""OpenAI Responses: toolproxy.wire.openai_responses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import paths
from toolproxy.records import ParsedResponse, Turn
from toolproxy.wire import parse_exchange
from toolproxy.wire.common import decode_stream
from toolproxy.wire.openai_responses import parse_request, parse_response, parse_stream
from toolproxy.wire.sse import iter_sse_events

FIXTURES = paths.FIXTURES / "wire"
UNICODE_ARGS = (
    '{"query": "caf\\u00e9 guide \\"best of\\"\\nMontréal 🌧️", "path": "C:\\\\docs\\\\東京"}'
)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def stream(body: bytes) -> tuple[ParsedResponse, list[str]]:
    return parse_stream(decode_stream(*iter_sse_events(body)))


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def fixture_events(name: str) -> list[dict[str, Any]]:
    events, _ = iter_sse_events((FIXTURES / name).read_bytes())
    return [json.loads(e.data) for e in events]


def essentials(response: ParsedResponse) -> tuple[Any, ...]:
    calls = [(c.index, c.call_id, c.name, c.arguments_raw) for c in response.tool_calls]
    return (response.response_id, response.model, response.text, calls)


# ------------------------------------------------------------------ requests


def test_request_fields() -> None:
    body = load("responses_request.json")
    request = parse_request(body)
    assert request.wire_format == "openai_responses"
    assert (request.model, request.stream) == ("gpt-5", True)
    assert request.system == "You are a coding agent. Be brief."
    assert request.messages == body["input"]
    assert request.params == {
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "reasoning": {"effort": "low"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    assert request.previous_response_id is None


def test_request_tools_keep_builtins() -> None:
    tools = parse_request(load("responses_request.json")).tools
    assert [(t.position, t.name, t.kind) for t in tools] == [
        (0, "get_weather", "function"),
        (1, "search_docs", "function"),
        (2, "web_search", "web_search"),
        (3, "apply_patch", "custom"),
    ]
    assert tools[0].parameters["required"] == ["city"]
    assert tools[2].parameters is None
    assert tools[3].description == "Apply a unified diff to the workspace."


def test_request_tool_results() -> None:
    results = parse_request(load("responses_request.json")).tool_results
    assert [(r.message_index, r.call_id, r.content) for r in results] == [
        (5, "call_K2pQ7vX1mN4rT8wY3zB6cD9f", '{"temp_c":-3,"sky":"snow"}'),
        (6, "call_R5sU0wZ3oP6tV9xA2cE5gH8j", "No guide found."),
    ]


def test_request_turns_merge_message_and_calls_skip_reasoning() -> None:
    turns = parse_request(load("responses_request.json")).turns
    assert [t.role for t in turns] == ["system", "user", "assistant", "tool", "tool"]
    assert turns[0].text == "You are a coding agent. Be brief."
    assert turns[2].text == "I'll check the weather and the café guide."
    assert [c[1] for c in turns[2].calls] == ["get_weather", "search_docs"]
    assert turns[3] == Turn(
        role="tool", text='{"temp_c":-3,"sky":"snow"}', call_id="call_K2pQ7vX1mN4rT8wY3zB6cD9f"
    )


def test_request_string_input_and_previous_response() -> None:
    request = parse_request({"model": "gpt-5", "input": "Hello", "previous_response_id": "resp_1"})
    assert request.turns == [Turn(role="user", text="Hello")]
    assert request.previous_response_id == "resp_1"
    assert request.params == {"previous_response_id": "resp_1"}
    assert request.system is None


def test_request_stored_conversation_by_id_or_object() -> None:
    assert parse_request({"input": "Hi", "conversation": "conv_1"}).conversation == "conv_1"
    assert parse_request({"input": "Hi", "conversation": {"id": "conv_2"}}).conversation == "conv_2"
    assert parse_request({"input": "Hi", "conversation": 3}).conversation is None
    assert parse_request({"input": "Hi"}).conversation is None


def test_request_odd_items() -> None:
    items = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "d"}]},
        {"type": "item_reference", "id": "msg_1"},
        {"role": "assistant", "content": "easy text"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "diff"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "done"},
        {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{bad"},
        "junk",
    ]
    request = parse_request({"input": items, "tools": [{"type": "mcp", "server_label": "git"}]})
    assert request.turns == [
        Turn(role="developer", text="d"),
        Turn(role="assistant", text="easy text", calls=[("c1", "apply_patch", '"diff"')]),
        Turn(role="tool", text="done", call_id="c1"),
        Turn(role="assistant", calls=[("c2", "f", "{bad")]),
    ]
    assert [(r.message_index, r.content) for r in request.tool_results] == [(5, "done")]
    assert [(t.name, t.kind) for t in request.tools] == [("git", "mcp")]


# ------------------------------------------------------------ plain responses


def test_response_fields() -> None:
    response = parse_response(load("responses_response.json"))
    assert response.response_id == "resp_68c1f0a2b3c48190a1b2c3d4e5f6a7b80c1d2e3f4a5b6c7d"
    assert response.model == "gpt-5-2025-08-07"
    assert response.text == "I'll check the weather and the café guide."
    assert response.finish_reason == "tool_calls"
    assert response.error is None
    assert [(c.call_id, c.name, c.arguments_raw) for c in response.tool_calls] == [
        ("call_K2pQ7vX1mN4rT8wY3zB6cD9f", "get_weather", '{"city":"Montréal","unit":"celsius"}'),
        ("call_R5sU0wZ3oP6tV9xA2cE5gH8j", "search_docs", UNICODE_ARGS),
    ]
    assert response.tool_calls[1].arguments == {
        "query": 'café guide "best of"\nMontréal 🌧️',
        "path": "C:\\docs\\東京",
    }
    assert response.usage.model_dump() == {
        "input_tokens": 1843,
        "output_tokens": 212,
        "total_tokens": 2055,
        "cached_input_tokens": 1536,
        "reasoning_tokens": 128,
    }


@pytest.mark.parametrize(
    ("status", "details", "calls", "reason"),
    [
        ("completed", None, False, "completed"),
        ("completed", None, True, "tool_calls"),
        ("incomplete", {"reason": "content_filter"}, False, "incomplete:content_filter"),
        ("incomplete", None, False, "incomplete"),
        ("failed", None, False, "failed"),
        ("cancelled", None, False, "cancelled"),
        ("in_progress", None, False, None),
    ],
)
def test_finish_reason(status: str, details: Any, calls: bool, reason: str | None) -> None:
    output = [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]
    body = {"status": status, "incomplete_details": details, "output": output if calls else []}
    assert parse_response(body).finish_reason == reason


def test_response_custom_tool_call() -> None:
    body = {
        "status": "completed",
        "output": [
            {
                "type": "custom_tool_call",
                "call_id": "c",
                "name": "apply_patch",
                "input": "*** Begin Patch",
            }
        ],
    }
    (call,) = parse_response(body).tool_calls
    assert (call.arguments_raw, call.arguments, call.parse_error) == (
        "*** Begin Patch",
        "*** Begin Patch",
        None,
    )


def test_response_error_body() -> None:
    response = parse_response(load("responses_error_400.json"))
    assert response.error == (
        "invalid_request_error: No tool output found for function call "
        "call_K2pQ7vX1mN4rT8wY3zB6cD9f."
    )
    assert response.reply is None


# ------------------------------------------------------------------- streams


def test_stream_prefers_final_response_and_matches_plain() -> None:
    response, notes = stream((FIXTURES / "responses_stream.sse").read_bytes())
    plain = parse_response(load("responses_response.json"))
    assert notes == []
    assert response.complete
    assert essentials(response) == essentials(plain)
    assert response.usage == plain.usage
    assert response.finish_reason == "tool_calls"
    assert response.reply == plain.reply


def test_stream_reassembled_deltas_match_final() -> None:
    events = fixture_events("responses_stream.sse")
    final = stream(sse(*events))[0]
    without_terminal = [e for e in events if e["type"] != "response.completed"]
    rebuilt, notes = stream(sse(*without_terminal))
    assert essentials(rebuilt) == essentials(final)
    assert not rebuilt.complete and notes == ["stream ended before response.completed"]
    # Deltas alone, without any .done event or finished item, give the same text and calls.
    deltas_only = [e for e in without_terminal if not e["type"].endswith(".done")]
    assert essentials(stream(sse(*deltas_only))[0]) == essentials(final)


def test_stream_completed_with_empty_output_falls_back_to_deltas() -> None:
    events = fixture_events("responses_stream.sse")
    events[-1]["response"]["output"] = []
    response, notes = stream(sse(*events))
    assert essentials(response) == essentials(parse_response(load("responses_response.json")))
    assert response.complete and notes == []


def test_stream_incomplete() -> None:
    response, notes = stream((FIXTURES / "responses_stream_incomplete.sse").read_bytes())
    assert response.finish_reason == "incomplete:max_output_tokens"
    assert response.text == "Here is a long answer that gets cut"
    assert response.complete and notes == []


def test_stream_failed() -> None:
    result = parse_exchange(
        "POST",
        "/v1/responses",
        (FIXTURES / "responses_request.json").read_bytes(),
        200,
        "text/event-stream; charset=utf-8",
        (FIXTURES / "responses_stream_failed.sse").read_bytes(),
    )
    assert result.parse_status == "ok"
    response = result.response
    assert response is not None
    assert (
        response.error
        == "server_error: An error occurred while processing your request. Please retry."
    )
    assert (response.finish_reason, response.reply, response.complete) == ("failed", None, True)


def test_stream_error_event() -> None:
    created = fixture_events("responses_stream.sse")[0]
    error = {
        "type": "error",
        "code": "server_error",
        "message": "Something broke",
        "param": None,
        "sequence_number": 1,
    }
    response, notes = stream(sse(created, error))
    assert response.error == "server_error: Something broke"
    assert response.response_id == created["response"]["id"]
    assert not response.complete and notes == ["stream ended before response.completed"]


def test_stream_cut_before_completed() -> None:
    body = (FIXTURES / "responses_stream.sse").read_bytes()
    cut = body[: body.index(b"event: response.function_call_arguments.done")]
    result = parse_exchange("POST", "/v1/responses", b"{}", 200, "text/event-stream", cut, False)
    assert result.parse_status == "partial"
    response = result.response
    assert response is not None and not response.complete
    assert response.text == "I'll check the weather and the café guide."
    assert response.tool_calls[0].arguments_raw == '{"city":"Montréal","unit":"celsius"}'
    assert response.finish_reason is None


def test_stream_custom_tool_input_and_unannounced_items() -> None:
    body = sse(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {
                "type": "custom_tool_call",
                "id": "ct",
                "call_id": "c",
                "name": "apply_patch",
                "input": "",
            },
        },
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": "*** Begin"},
        {"type": "response.custom_tool_call_input.delta", "item_id": "ct", "delta": " Patch"},
        # Deltas for items never announced by output_item.added still count.
        {
            "type": "response.output_text.delta",
            "item_id": "m9",
            "output_index": 1,
            "content_index": 1,
            "delta": "late",
        },
        {"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{}"},
        {"type": "response.output_item.added", "item": {"type": "reasoning", "id": "rs"}},
        {"type": "response.reasoning_summary_text.delta", "output_index": 3, "delta": "thinking"},
    )
    response, _ = stream(body)
    assert response.text == "\nlate"
    assert [(c.name, c.arguments_raw) for c in response.tool_calls] == [
        ("apply_patch", "*** Begin Patch"),
        (None, "{}"),
    ]


def test_stream_text_into_malformed_content() -> None:
    body = sse(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "role": "assistant", "content": "odd"},
        },
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "a"},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "message", "role": "assistant", "content": ["odd"]},
        },
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "b"},
    )
    assert stream(body)[0].text == "a\nb"


# ------------------------------------------------------------------ round trip


def test_reply_round_trip_plain() -> None:
    """Agents append the output items to their input for the next request."""
    body = load("responses_response.json")
    reply = parse_response(body).reply
    follow_up = {
        "input": [
            {"role": "user", "content": "hi"},
            *body["output"],
            {"type": "function_call_output", "call_id": "x", "output": "1"},
        ]
    }
    turns = parse_request(follow_up).turns
    assert turns[1] == reply
    assert reply is not None and reply.text and len(reply.calls) == 2


def test_reply_round_trip_streamed() -> None:
    reply = stream((FIXTURES / "responses_stream.sse").read_bytes())[0].reply
    assert parse_request(load("responses_request.json")).turns[2] == reply


def test_reply_round_trip_custom_and_malformed() -> None:
    output = [
        {"type": "custom_tool_call", "call_id": "c", "name": "apply_patch", "input": "diff"},
        {"type": "function_call", "call_id": "d", "name": "f", "arguments": '{"a": '},
    ]
    reply = parse_response({"status": "completed", "output": output}).reply
    assert parse_request({"input": output}).turns == [reply]


# ------------------------------------------------------------------ hosted MCP servers

MCP_CALL = "mcp_682d437d90a88191bf88cd03aae0c3e503937d5f622d7a90"


def test_response_hosted_mcp_call_and_the_tools_the_provider_listed() -> None:
    body = load("responses_response_mcp.json")
    response = parse_response(body)
    (call,) = response.tool_calls
    assert (call.index, call.call_id, call.name, call.mcp_server) == (
        0,
        MCP_CALL,
        "ask_question",
        "deepwiki",
    )
    assert call.arguments["repoName"] == "modelcontextprotocol/modelcontextprotocol"
    assert call.parse_error is None
    # the provider ran it: nothing is left for the agent to run
    assert response.finish_reason == "completed"
    assert response.text == "It supports two transports: stdio and Streamable HTTP."
    listed = [(t.position, t.name, t.kind, t.mcp_server) for t in response.tools]
    assert listed == [
        (0, "read_wiki_structure", "mcp_tool", "deepwiki"),
        (1, "ask_question", "mcp_tool", "deepwiki"),
    ]
    schema = body["output"][0]["tools"][1]["input_schema"]
    assert response.tools[1].parameters == schema
    assert response.tools[1].description == "Ask any question about a GitHub repository"


def test_an_approval_request_is_the_call_and_the_approved_run_is_not_a_second() -> None:
    held = {
        "id": "mcpr_682d498e3bd4819196a0ce1664f8e77b04ad1e533afccbfa",
        "type": "mcp_approval_request",
        "arguments": '{"repoName":"a/b","question":"q"}',
        "name": "ask_question",
        "server_label": "deepwiki",
    }
    first = parse_response({"status": "completed", "output": [held]})
    assert [(c.call_id, c.name, c.mcp_server) for c in first.tool_calls] == [
        (held["id"], "ask_question", "deepwiki")
    ]
    run = {
        "id": "mcp_1",
        "type": "mcp_call",
        "approval_request_id": held["id"],
        "arguments": held["arguments"],
        "name": "ask_question",
        "output": "an answer",
        "server_label": "deepwiki",
    }
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    second = parse_response({"status": "completed", "output": [run, message]})
    assert second.tool_calls == [] and second.text == "ok"
    # the agent sends it all back: its turns are the two replies, in order
    approval = {"type": "mcp_approval_response", "approve": True, "approval_request_id": held["id"]}
    turns = parse_request({"input": [held, approval, run, message]}).turns
    assert turns == [first.reply, second.reply]


def test_request_hosted_mcp_tool_and_the_listing_sent_back() -> None:
    body = load("responses_response_mcp.json")
    request = parse_request(
        {
            "model": "gpt-4.1",
            "tools": [
                {"type": "function", "name": "f", "parameters": {"type": "object"}},
                *body["tools"],
            ],
            "input": [{"role": "user", "content": "which transports?"}, *body["output"]],
        }
    )
    tools = [(t.position, t.name, t.kind, t.mcp_server) for t in request.tools]
    assert tools == [
        (0, "f", "function", None),
        (1, "deepwiki", "mcp", "deepwiki"),
        (2, "read_wiki_structure", "mcp_tool", "deepwiki"),
        (3, "ask_question", "mcp_tool", "deepwiki"),
    ]
    assert request.tools[1].parameters is None and request.tools[3].parameters is not None
    assert request.tool_results == []  # the provider's result is not the agent's
    assert request.turns[1] == parse_response(body).reply


def test_stream_hosted_mcp_matches_plain_and_rebuilds_from_deltas() -> None:
    plain = parse_response(load("responses_response_mcp.json"))
    streamed, notes = stream((FIXTURES / "responses_stream_mcp.sse").read_bytes())
    assert notes == [] and streamed.complete
    assert essentials(streamed) == essentials(plain)
    assert streamed.tool_calls == plain.tool_calls and streamed.tools == plain.tools
    # a terminal event with no output: the items are rebuilt from the events
    events = fixture_events("responses_stream_mcp.sse")
    events[-1]["response"] = {**events[-1]["response"], "output": []}
    rebuilt, _ = stream(sse(*events))
    assert rebuilt.tool_calls == plain.tool_calls and rebuilt.tools == plain.tools
    # and from the argument deltas alone, with no output_item.done for the call
    bare = [
        e
        for e in events
        if not (e["type"] == "response.output_item.done" and e["output_index"] == 1)
    ]
    (call,) = stream(sse(*bare))[0].tool_calls
    assert (call.call_id, call.arguments, call.mcp_server) == (
        MCP_CALL,
        plain.tool_calls[0].arguments,
        "deepwiki",
    )


# ------------------------------------------------------------------ refusals

REFUSED = "I'm sorry, I can't help with that."


def test_a_refusal_part_is_kept_apart_from_the_text() -> None:
    message = {
        "id": "msg_r",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": REFUSED}],
    }
    response = parse_response({"id": "resp_r", "status": "completed", "output": [message]})
    assert (response.text, response.refusal) == (None, REFUSED)
    events = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": message | {"content": []},
        },
        *(
            {
                "type": "response.refusal.delta",
                "item_id": "msg_r",
                "output_index": 0,
                "content_index": 0,
                "delta": piece,
            }  # fmt: skip
            for piece in (REFUSED[:7], REFUSED[7:])
        ),
        {
            "type": "response.completed",
            "response": {"id": "resp_r", "status": "completed", "output": []},
        },
    ]
    streamed, _ = stream(sse(*events))
    assert (streamed.text, streamed.refusal) == (None, REFUSED)
    done = {"type": "response.refusal.done", "item_id": "msg_r", "output_index": 0,
            "content_index": 0, "refusal": REFUSED}  # fmt: skip
    events.insert(3, done)
    assert stream(sse(*events))[0].refusal == REFUSED
