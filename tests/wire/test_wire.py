"""The wire package's public API: toolproxy.wire (detect_format, parse_exchange)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import anthropic
import brotli
import httpx2
import openai
import pytest

import toolproxy.wire as wire
from tests import paths
from toolproxy.records import WireResult
from toolproxy.wire import decode_body, detect_format, parse_exchange

FIXTURES = paths.FIXTURES / "wire"
SSE = "text/event-stream; charset=utf-8"
JSON = "application/json"
CHAT = "/v1/chat/completions"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_public_api() -> None:
    assert set(wire.__all__) == {
        "SseEvent",
        "decode_body",
        "detect_format",
        "iter_sse_events",
        "parse_arguments",
        "parse_exchange",
    }
    assert wire.parse_arguments("{}") == ({}, None)


def test_the_wire_package_imports_no_sdk() -> None:
    sdks = "{'mitmproxy', 'duckdb', 'openai', 'anthropic', 'mcp', 'textual'}"
    code = f"import sys, toolproxy.wire; print(sorted({sdks} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- detect_format


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/chat/completions", "openai_chat"),
        ("post", "/chat/completions", "openai_chat"),
        (
            "POST",
            "/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21",
            "openai_chat",
        ),
        ("POST", "/api/v1/chat/completions/", "openai_chat"),
        ("POST", "/v1beta/openai/chat/completions", "openai_chat"),
        ("POST", "/v1/completions", "unknown"),
        ("GET", "/v1/chat/completions", "unknown"),
        ("POST", "/v1/responses", "openai_responses"),
        ("POST", "/openai/v1/responses?api-version=preview", "openai_responses"),
        ("POST", "/openai/responses", "openai_responses"),
        ("POST", "/v1/responses/resp_123/cancel", "unknown"),
        ("GET", "/v1/responses/resp_123", "unknown"),
        ("POST", "/v1/responses/input_tokens", "unknown"),
        ("POST", "/v1/messages", "anthropic_messages"),
        ("POST", "/v1/messages?beta=true", "anthropic_messages"),
        ("POST", "/api/anthropic/v1/messages#x", "anthropic_messages"),
        ("POST", "/v1/messages/count_tokens", "unknown"),
        ("POST", "/v1/messages/batches", "unknown"),
        ("POST", "/v1/threads/thread_abc/messages", "unknown"),
        ("GET", "/v1/models", "unknown"),
        ("POST", "/", "unknown"),
        ("POST", "", "unknown"),
    ],
)
def test_detect_format(method: str, path: str, expected: str) -> None:
    assert detect_format(method, path, None) == expected


def test_detect_format_vertex_anthropic_needs_the_body() -> None:
    path = (
        "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5:streamRawPredict"
    )
    body = {"anthropic_version": "vertex-2023-10-16", "messages": [], "max_tokens": 10}
    assert detect_format("POST", path, body) == "anthropic_messages"
    assert (
        detect_format("POST", path.replace("streamRawPredict", "rawPredict"), body)
        == "anthropic_messages"
    )
    assert detect_format("POST", path, {"instances": []}) == "unknown"
    assert detect_format("POST", path) == "unknown"


# --------------------------------------------------------------- parse_exchange


def test_non_model_endpoint_is_unparsed() -> None:
    result = parse_exchange("GET", "/v1/models", b"", 200, JSON, b'{"object":"list","data":[]}')
    assert result == WireResult(wire_format="unknown", parse_status="unparsed")


def test_ok_exchange_end_to_end() -> None:
    result = parse_exchange(
        "POST", CHAT, fixture("chat_request.json"), 200, SSE, fixture("chat_stream_parallel.sse")
    )
    assert (result.wire_format, result.parse_status, result.parse_error) == (
        "openai_chat",
        "ok",
        None,
    )
    assert result.request is not None and result.response is not None
    assert result.request.model == "gpt-4.1"
    assert result.response.events == 19
    assert len(result.response.tool_calls) == 3


def test_compressed_bodies_decode_then_parse() -> None:
    request, _ = decode_body(gzip.compress(fixture("anthropic_request.json")), "gzip")
    response, error = decode_body(brotli.compress(fixture("anthropic_stream.sse")), "br")
    assert error is None
    result = parse_exchange("POST", "/v1/messages", request, 200, SSE, response)
    assert result.parse_status == "ok"
    assert result.response is not None and result.response.finish_reason == "tool_use"


def test_stream_detected_from_the_body_whatever_the_content_type() -> None:
    body = b"\xef\xbb\xbf\n" + fixture("anthropic_stream.sse")
    result = parse_exchange("POST", "/v1/messages", b"{}", 200, JSON, body)
    assert result.response is not None and result.response.events == 24
    comment_first = b": OPENROUTER PROCESSING\n\n" + fixture("chat_stream_text.sse")
    result = parse_exchange("POST", CHAT, b"{}", 200, None, comment_first)
    assert result.response is not None and result.response.text is not None


def test_garbage_response_keeps_the_request() -> None:
    result = parse_exchange(
        "POST", CHAT, fixture("chat_request.json"), 200, JSON, b"\x00\x81garbage"
    )
    assert result.parse_status == "error"
    assert result.parse_error == "response: not UTF-8 text (invalid start byte at byte 1)"
    assert result.request is not None and result.request.model == "gpt-4.1"
    assert result.response is None


def test_garbage_request_keeps_the_response() -> None:
    result = parse_exchange(
        "POST",
        "/v1/responses",
        b"model=gpt-5&input=hi",
        200,
        JSON,
        fixture("responses_response.json"),
    )
    assert (result.wire_format, result.parse_status) == ("openai_responses", "error")
    assert result.parse_error == "request: Expecting value at char 0"
    assert result.request is None
    assert result.response is not None and len(result.response.tool_calls) == 2


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (b"", "request: empty body"),
        (b"[1, 2]", "request: expected a JSON object, got list"),
    ],
)
def test_request_that_is_not_an_object(request_body: bytes, message: str) -> None:
    result = parse_exchange(
        "POST", CHAT, request_body, 200, JSON, fixture("chat_response_text.json")
    )
    assert (result.parse_status, result.parse_error) == ("error", message)


def test_response_that_is_not_an_object() -> None:
    result = parse_exchange("POST", CHAT, b"{}", 200, JSON, b'"just a string"')
    assert (result.parse_status, result.parse_error) == (
        "error",
        "response: expected a JSON object, got str",
    )


def test_json_error_bodies_are_ok_with_error_set() -> None:
    for path, name, status in [
        (CHAT, "chat_error_400.json", 400),
        ("/v1/responses", "responses_error_400.json", 400),
        ("/v1/messages", "anthropic_error_529.json", 529),
    ]:
        result = parse_exchange("POST", path, b"{}", status, JSON, fixture(name))
        assert result.parse_status == "ok", name
        assert result.response is not None and result.response.error, name
        assert result.response.reply is None


def test_non_json_error_bodies_are_ok_with_error_set() -> None:
    html = b"<html><body><h1>502 Bad Gateway</h1></body></html>\n"
    result = parse_exchange("POST", CHAT, b"{}", 502, "text/html", html)
    assert result.parse_status == "ok"
    assert result.response is not None
    assert result.response.error == "HTTP 502: <html><body><h1>502 Bad Gateway</h1></body></html>"
    empty = parse_exchange("POST", CHAT, b"{}", 500, None, b"")
    assert empty.response is not None and empty.response.error == "HTTP 500 with an empty body"


def test_error_status_with_unknown_json_shape() -> None:
    result = parse_exchange("POST", "/v1/messages", b"{}", 404, JSON, b'{"detail": "Not Found"}')
    assert result.parse_status == "ok"
    assert result.response is not None
    assert result.response.error == 'HTTP 404: {"detail": "Not Found"}'
    assert result.response.reply is None


def test_no_response_at_all_is_partial() -> None:
    result = parse_exchange("POST", CHAT, fixture("chat_request.json"), None, None, b"", False)
    assert (result.parse_status, result.parse_error) == ("partial", "response: none received")
    assert result.request is not None and result.response is None


def test_plain_body_cut_short_is_partial() -> None:
    body = fixture("chat_response_tool_calls.json")[:200]
    result = parse_exchange("POST", CHAT, b"{}", 200, JSON, body, response_complete=False)
    assert result.parse_status == "partial"
    assert result.parse_error is not None and result.parse_error.startswith(
        "response: body cut short ("
    )
    assert result.response is None


def test_plain_body_whole_but_connection_broken() -> None:
    result = parse_exchange(
        "POST", CHAT, b"{}", 200, JSON, fixture("chat_response_text.json"), False
    )
    assert result.parse_status == "partial"
    assert result.parse_error == "response: connection closed before the body ended"
    assert result.response is not None and not result.response.complete
    assert result.response.text is not None


@pytest.mark.parametrize(
    ("path", "name"),
    [
        (CHAT, "chat_stream_text.sse"),
        ("/v1/messages", "anthropic_stream.sse"),
        ("/v1/responses", "responses_stream.sse"),
    ],
)
def test_stream_whole_when_the_connection_goes_after_its_terminator(path, name) -> None:
    """The openai SDK closes at `data: [DONE]`, before the body's last chunk: the stream's
    own end was seen, so nothing of it was lost."""
    result = parse_exchange("POST", path, b"{}", 200, SSE, fixture(name), False)
    assert (result.parse_status, result.parse_error) == ("ok", None)
    assert result.response is not None and result.response.complete


def test_chat_stream_cut_on_an_event_boundary_before_done_is_partial() -> None:
    """Whole at the body's end, a finish_reason without [DONE] is a server that omits it;
    cut off there, [DONE] (and the usage chunk before it) may still have been coming."""
    body = fixture("chat_stream_text.sse")
    cut = body[: body.index(b"data: [DONE]")]
    assert parse_exchange("POST", CHAT, b"{}", 200, SSE, cut).parse_status == "ok"
    result = parse_exchange("POST", CHAT, b"{}", 200, SSE, cut, False)
    assert result.parse_status == "partial"
    assert result.parse_error == (
        "response: stream ended before data: [DONE]; "
        "response: connection closed before the body ended"
    )
    assert result.response is not None and not result.response.complete


def test_empty_success_body_is_an_error() -> None:
    result = parse_exchange("POST", CHAT, b"{}", 200, JSON, b"")
    assert (result.parse_status, result.parse_error) == ("error", "response: empty body")


def test_unparseable_events_are_skipped_and_reported() -> None:
    body = fixture("chat_stream_text.sse").replace(b'data: {"id"', b"data: {oops", 1)
    result = parse_exchange("POST", CHAT, b"{}", 200, SSE, body)
    assert result.parse_status == "partial"
    assert result.parse_error == (
        "response: 1 unparseable SSE event(s), first event 0: "
        "Expecting property name enclosed in double quotes at char 1"
    )
    assert result.response is not None and result.response.complete
    assert result.response.text is not None and result.response.text.startswith("It's")


def test_problems_on_both_sides_are_all_reported() -> None:
    cut = fixture("anthropic_stream.sse")[:900]
    result = parse_exchange("POST", "/v1/messages", b"{", 200, SSE, cut, False)
    assert result.parse_status == "error"
    assert result.parse_error is not None
    assert result.parse_error.startswith("request: Expecting property name")
    assert "response: stream ended before message_stop" in result.parse_error
    assert result.parse_error.endswith("response: connection closed before the body ended")


def test_absurd_nesting_is_an_error_naming_the_exception() -> None:
    deep = b"[" * 200_000
    result = parse_exchange("POST", CHAT, deep, 200, JSON, fixture("chat_response_text.json"))
    assert result.parse_status == "error"
    assert result.parse_error is not None and result.parse_error.startswith(
        "request: RecursionError: "
    )
    assert result.response is not None
    result = parse_exchange("POST", CHAT, b"{}", 200, JSON, b'{"choices": ' + deep)
    assert result.parse_error is not None and result.parse_error.startswith(
        "response: RecursionError: "
    )
    assert result.request is not None


def test_never_raises_even_on_wrong_types() -> None:
    result = parse_exchange("POST", None, b"{}", 200, JSON, b"{}")  # type: ignore[arg-type]
    assert result.parse_status == "error"
    assert result.parse_error is not None and result.parse_error.startswith(
        "internal error: AttributeError"
    )


# ------------------------------------------------- SDK round trips (reply turn)
# The real SDKs talk to an in-process stand-in endpoint (httpx2.MockTransport) that plays
# recorded fixtures; the second request is exactly what the SDK sends after the agent
# appends the first response, the way agents do.


class Endpoint:
    """Plays (content type, body) pairs in order and keeps every request it is sent."""

    def __init__(self, *replies: tuple[str, bytes]) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        content_type, body = self.replies.pop(0)
        return httpx2.Response(200, headers={"content-type": content_type}, content=body)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def exchange(self, index: int, reply: tuple[str, bytes]) -> WireResult:
        request = self.requests[index]
        return parse_exchange(request.method, request.url.path, request.content, 200, *reply)


def assert_reply_comes_back(endpoint: Endpoint, first_reply: tuple[str, bytes]) -> None:
    first = endpoint.exchange(0, first_reply)
    second = endpoint.exchange(1, (JSON, b"{}"))
    assert first.parse_status == "ok" and second.request is not None
    assert first.request is not None and first.response is not None
    reply = first.response.reply
    assert reply is not None and reply.calls
    turns = first.request.turns
    assert second.request.turns[: len(turns) + 1] == [*turns, reply]


Run = Callable[[Any, list[Any]], None]


def openai_chat(stream: bool) -> Run:
    def run(client: openai.OpenAI, messages: list[Any]) -> None:
        if stream:
            with client.chat.completions.stream(model="gpt-4.1", messages=messages) as events:
                message: Any = events.get_final_completion().choices[0].message
        else:
            message = (
                client.chat.completions.create(model="gpt-4.1", messages=messages)
                .choices[0]
                .message
            )
        messages.append(message)
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "done"})
        client.chat.completions.create(model="gpt-4.1", messages=messages)

    return run


@pytest.mark.parametrize(
    ("stream", "reply"),
    [
        (True, (SSE, fixture("chat_stream_parallel.sse"))),
        (False, (JSON, fixture("chat_response_tool_calls.json"))),
    ],
)
def test_sdk_round_trip_openai_chat(stream: bool, reply: tuple[str, bytes]) -> None:
    endpoint = Endpoint(reply, (JSON, fixture("chat_response_text.json")))
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://model.test/v1", http_client=endpoint.client()
    )
    openai_chat(stream)(
        client,
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}],
    )
    assert_reply_comes_back(endpoint, reply)


@pytest.mark.parametrize(
    ("stream", "reply"),
    [
        (True, (SSE, fixture("responses_stream.sse"))),
        (False, (JSON, fixture("responses_response.json"))),
    ],
)
def test_sdk_round_trip_openai_responses(stream: bool, reply: tuple[str, bytes]) -> None:
    endpoint = Endpoint(reply, (JSON, fixture("responses_response.json")))
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://model.test/v1", http_client=endpoint.client()
    )
    items: list[Any] = [{"role": "user", "content": "Weather in Montréal?"}]
    if stream:
        with client.responses.stream(
            model="gpt-5", instructions="Be brief.", input=items
        ) as events:
            output: list[Any] = events.get_final_response().output
    else:
        output = client.responses.create(
            model="gpt-5", instructions="Be brief.", input=items
        ).output
    items += output
    items += [
        {"type": "function_call_output", "call_id": item.call_id, "output": "done"}
        for item in output
        if item.type == "function_call"
    ]
    client.responses.create(model="gpt-5", instructions="Be brief.", input=items)
    assert_reply_comes_back(endpoint, reply)


@pytest.mark.parametrize(
    ("stream", "reply"),
    [
        (True, (SSE, fixture("anthropic_stream.sse"))),
        (False, (JSON, fixture("anthropic_response.json"))),
    ],
)
def test_sdk_round_trip_anthropic(stream: bool, reply: tuple[str, bytes]) -> None:
    endpoint = Endpoint(reply, (JSON, fixture("anthropic_response.json")))
    client = anthropic.Anthropic(
        api_key="sk-test", base_url="http://model.test", http_client=endpoint.client()
    )
    messages: list[Any] = [{"role": "user", "content": "Weather in Montréal?"}]
    model = "claude-opus-4-6"
    if stream:
        with client.messages.stream(
            model=model, max_tokens=1024, system="Be brief.", messages=messages
        ) as events:
            content: list[Any] = events.get_final_message().content
    else:
        content = client.messages.create(
            model=model, max_tokens=1024, system="Be brief.", messages=messages
        ).content
    messages.append({"role": "assistant", "content": content})
    results = [
        {"type": "tool_result", "tool_use_id": b.id, "content": "done"}
        for b in content
        if b.type == "tool_use"
    ]
    messages.append({"role": "user", "content": results})
    client.messages.create(model=model, max_tokens=1024, system="Be brief.", messages=messages)
    assert_reply_comes_back(endpoint, reply)


def test_round_trip_fails_when_the_agent_changes_the_call() -> None:
    """The equality is strict enough to notice an edited call."""
    endpoint = Endpoint((JSON, fixture("chat_response_tool_calls.json")), (JSON, b"{}"))
    client = openai.OpenAI(
        api_key="sk-test", base_url="http://model.test/v1", http_client=endpoint.client()
    )
    messages: list[Any] = [{"role": "user", "content": "Weather?"}]
    message: Any = (
        client.chat.completions.create(model="gpt-4.1", messages=messages)
        .choices[0]
        .message.to_dict()
    )
    message["tool_calls"][0]["function"]["arguments"] = json.dumps({"city": "Paris"})
    client.chat.completions.create(model="gpt-4.1", messages=[*messages, message])
    first = endpoint.exchange(0, (JSON, fixture("chat_response_tool_calls.json")))
    second = endpoint.exchange(1, (JSON, b"{}"))
    assert first.response is not None and second.request is not None
    assert second.request.turns[1] != first.response.reply


# ------------------------------------------------------------------------------ MCP

MCP_SESSION = {"mcp-session-id": "abc", "mcp-protocol-version": "2025-11-25"}
MCP_CALL = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather"}}'


def test_detect_format_puts_mcp_before_model_paths() -> None:
    # The older HTTP+SSE transport POSTs to /messages/: JSON-RPC, not Anthropic.
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert detect_format("POST", "/messages/?session_id=abc", body) == "mcp"
    assert detect_format("POST", "/mcp", body) == "mcp"
    assert detect_format("DELETE", "/mcp", None, {"mcp-session-id": "x"}) == "mcp"
    assert detect_format("POST", "/v1/messages", {"model": "m", "messages": []}) == (
        "anthropic_messages"
    )


def test_mcp_through_parse_exchange_needs_the_headers_for_get_and_delete() -> None:
    result = parse_exchange(
        "POST",
        "/mcp",
        MCP_CALL,
        200,
        SSE,
        fixture("mcp_tools_call_ok.sse"),
        request_headers=MCP_SESSION,
    )
    assert result.wire_format == "mcp" and result.mcp[0].tool_name == "get_weather"
    assert result.request is None and result.response is None
    delete = parse_exchange("DELETE", "/mcp", b"", 200, JSON, b"", request_headers=MCP_SESSION)
    assert (delete.wire_format, delete.parse_status) == ("mcp", "ok")
    plain = parse_exchange("DELETE", "/mcp", b"", 200, JSON, b"")
    assert plain.wire_format == "unknown"


def test_mcp_absurd_nesting_is_an_error_value() -> None:
    deep = b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b"[" * 100_000 + b"]" * 100_000
    result = parse_exchange("POST", "/mcp", deep, 200, JSON, b"", request_headers=MCP_SESSION)
    assert result.wire_format == "mcp"
    assert result.parse_status == "error"
    assert (result.parse_error or "").startswith("internal error: RecursionError")
