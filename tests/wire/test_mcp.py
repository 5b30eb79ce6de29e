"""MCP over streamable HTTP: toolproxy.wire.mcp, on real-shaped traffic (FastMCP 1.30)."""

from __future__ import annotations

import json

import pytest

from tests import paths
from toolproxy.records import McpMessage
from toolproxy.wire.mcp import header, is_mcp, is_message, parse_mcp, rpc_id

FIXTURES = paths.FIXTURES / "wire"
SSE = "text/event-stream"
JSON = "application/json"
SID = "d45a318e3c8f431cac610c3c8c03944c"
SESSION = {"mcp-session-id": SID, "mcp-protocol-version": "2025-11-25"}


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def call(name: str, arguments: object, id_: object = 2) -> bytes:
    body = {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name}}
    if arguments is not None:
        body["params"]["arguments"] = arguments
    return json.dumps(body).encode()


def post(request: bytes, status: int | None, content_type: str | None, response: bytes, **kw):
    return parse_mcp(
        "POST",
        request,
        kw.pop("request_headers", SESSION),
        status,
        content_type,
        kw.pop("response_headers", {"Mcp-Session-Id": SID}),
        response,
        **kw,
    )


# ------------------------------------------------------------------------- detection


def test_is_message() -> None:
    assert is_message({"jsonrpc": "2.0", "method": "ping", "id": 1})
    assert is_message({"jsonrpc": "2.0", "id": 1, "result": {}})
    assert is_message({"jsonrpc": "2.0", "id": None, "error": {"code": -32700}})
    assert not is_message({"jsonrpc": "1.0", "method": "ping"})
    assert not is_message({"jsonrpc": "2.0", "id": 1})
    assert not is_message({"model": "gpt", "messages": []})
    assert not is_message([{"jsonrpc": "2.0", "method": "ping"}])


@pytest.mark.parametrize(
    ("method", "body", "headers", "expected"),
    [
        ("POST", {"jsonrpc": "2.0", "id": 0, "method": "initialize"}, {}, True),
        ("POST", [{"jsonrpc": "2.0", "method": "ping", "id": 1}], {}, True),
        ("POST", [{"x": 1}, {"jsonrpc": "2.0", "method": "ping"}], {}, True),
        ("POST", [], {}, False),
        ("POST", [{"x": 1}], {}, False),
        ("POST", {"model": "m", "messages": []}, {}, False),
        ("POST", None, {}, False),
        ("GET", None, {"Mcp-Session-Id": "s"}, True),
        ("DELETE", None, {"mcp-session-id": "s"}, True),
        ("GET", None, {"MCP-Protocol-Version": "2025-06-18"}, True),
        ("GET", None, {"accept": "text/event-stream"}, False),
        ("GET", {"jsonrpc": "2.0", "method": "ping"}, {}, False),
    ],
)
def test_is_mcp(method: str, body: object, headers: dict[str, str], expected: bool) -> None:
    assert is_mcp(method, body, headers) is expected


def test_header_and_rpc_id() -> None:
    assert header({"MCP-Session-Id": "a"}, "mcp-session-id") == "a"
    assert header(None, "x") is None
    assert [rpc_id(v) for v in (0, "a", None, 1.5, "7")] == ["0", "a", None, "1.5", "7"]


# ------------------------------------------------------------------- request kinds


def test_initialize_starts_the_session_from_the_response_header() -> None:
    result = post(
        fixture("mcp_initialize_request.json"),
        200,
        SSE,
        fixture("mcp_initialize_response.sse"),
        request_headers={"content-type": JSON},
    )
    assert (result.wire_format, result.parse_status, result.parse_error) == ("mcp", "ok", None)
    (row,) = result.mcp
    assert row.direction == "client" and row.method == "initialize" and row.rpc_id == "0"
    assert row.mcp_session_id == SID
    assert row.params["clientInfo"] == {"name": "mcp", "version": "0.1.0"}
    assert row.params["protocolVersion"] == "2025-11-25"
    assert row.result["serverInfo"] == {"name": "weather", "version": "1.30.0"}
    assert row.result["protocolVersion"] == "2025-11-25"
    assert row.tool_name is None and row.is_error is None and row.error_code is None


def test_tools_list() -> None:
    request = b'{"method":"tools/list","jsonrpc":"2.0","id":1}'
    result = post(request, 200, JSON, fixture("mcp_tools_list_response.json"))
    (row,) = result.mcp
    assert result.parse_status == "ok"
    assert row.method == "tools/list" and row.params is None
    assert [t["name"] for t in row.result["tools"]] == ["get_weather", "delete_note"]


def test_tools_call_ok_over_sse() -> None:
    result = post(
        call("get_weather", {"city": "Paris"}), 200, SSE, fixture("mcp_tools_call_ok.sse")
    )
    (row,) = result.mcp
    assert result.parse_status == "ok"
    assert (row.tool_name, row.arguments, row.is_error) == ("get_weather", {"city": "Paris"}, False)
    assert row.result["structuredContent"] == {
        "city": "Paris",
        "temperature": 18.0,
        "unit": "celsius",
    }
    assert row.params == {"name": "get_weather", "arguments": {"city": "Paris"}}


def test_tools_call_is_error() -> None:
    body = fixture("mcp_tools_call_is_error.json")
    result = post(call("delete_note", {"note_id": "x1"}, 3), 200, JSON, body)
    (row,) = result.mcp
    assert result.parse_status == "ok"
    assert row.is_error is True and row.error_code is None
    assert "no such note" in row.result["content"][0]["text"]


def test_tools_call_json_rpc_error() -> None:
    body = fixture("mcp_tools_call_invalid_params.json")
    result = post(call("get_weather", None, 7), 200, JSON, body)
    (row,) = result.mcp
    assert result.parse_status == "ok"
    assert (row.error_code, row.error_message) == (-32602, "Invalid request parameters")
    assert row.result is None and row.is_error is None
    assert row.arguments == {}  # absent arguments are the spec's empty object


def test_tools_call_result_without_is_error_is_not_an_error() -> None:
    response = b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'
    (row,) = post(call("t", {}), 200, JSON, response).mcp
    assert row.is_error is False


def test_error_without_a_message_keeps_its_json() -> None:
    response = b'{"jsonrpc":"2.0","id":2,"error":{"code":"weird"}}'
    (row,) = post(call("t", {}), 200, JSON, response).mcp
    assert (row.error_code, row.error_message) == (None, '{"code":"weird"}')


def test_any_other_method_is_recorded_generically() -> None:
    request = b'{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///a"}}'
    response = b'{"jsonrpc":"2.0","id":9,"result":{"contents":[{"uri":"file:///a","text":"x"}]}}'
    (row,) = post(request, 200, JSON, response).mcp
    assert row.method == "resources/read" and row.params == {"uri": "file:///a"}
    assert row.result == {"contents": [{"uri": "file:///a", "text": "x"}]}
    assert row.tool_name is None and row.is_error is None


def test_notification_answered_202() -> None:
    request = b'{"method":"notifications/initialized","jsonrpc":"2.0"}'
    result = post(request, 202, JSON, b"")
    (row,) = result.mcp
    assert result.parse_status == "ok"
    assert row.method == "notifications/initialized" and row.rpc_id is None
    assert row.direction == "client" and row.result is None


def test_batch_rows_in_order_with_responses_matched_by_id() -> None:
    result = post(fixture("mcp_batch_request.json"), 200, JSON, fixture("mcp_batch_response.json"))
    assert result.parse_status == "ok", result.parse_error
    assert [(r.position, r.direction, r.rpc_id, r.method) for r in result.mcp] == [
        (0, "client", "a", "tools/call"),
        (1, "client", None, "notifications/progress"),
        (2, "client", "b", "ping"),
        (3, "client", "41", None),  # the client answering a server request (roots/list)
    ]
    call_row, _, ping, answer = result.mcp
    assert call_row.result["content"][0]["text"] == "Oslo: 4.0" and call_row.is_error is False
    assert ping.result == {}
    assert answer.result == {"roots": [{"uri": "file:///home/u/project"}]}


def test_sse_response_with_server_messages_before_the_result() -> None:
    request = call("long_task", {"n": 1}, 5)
    result = post(request, 200, SSE, fixture("mcp_sse_notification_first.sse"))
    assert result.parse_status == "ok", result.parse_error
    rows = [(r.position, r.direction, r.rpc_id, r.method) for r in result.mcp]
    assert rows == [
        (0, "client", "5", "tools/call"),
        (1, "server", None, "notifications/progress"),
        (2, "server", "0", "sampling/createMessage"),
    ]
    assert result.mcp[0].result["content"][0]["text"] == "done"
    assert result.mcp[1].params["progress"] == 0.5
    assert result.mcp[2].params["maxTokens"] == 50
    assert all(r.mcp_session_id == SID for r in result.mcp)


def test_get_stream_is_server_messages_only() -> None:
    result = parse_mcp("GET", b"", SESSION, 200, SSE, {}, fixture("mcp_get_stream.sse"))
    assert result.parse_status == "ok"
    assert [(r.direction, r.rpc_id, r.method) for r in result.mcp] == [
        ("server", None, "notifications/tools/list_changed"),
        ("server", "1", "roots/list"),
        ("server", None, "notifications/message"),
    ]


def test_get_stream_closed_empty_and_delete_have_no_rows() -> None:
    for method in ("GET", "DELETE"):
        result = parse_mcp(method, b"", SESSION, 200, SSE if method == "GET" else JSON, {}, b"")
        assert (result.parse_status, result.mcp) == ("ok", [])
    refused = parse_mcp("GET", b"", SESSION, 405, None, {}, b"Method Not Allowed")
    assert (refused.parse_status, refused.mcp) == ("ok", [])


# ------------------------------------------------------------------------- errors


def test_whole_post_rejected_fills_the_unanswered_request() -> None:
    request = b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}'
    result = post(request, 400, JSON, fixture("mcp_server_error_400.json"), request_headers={})
    (row,) = result.mcp
    assert result.parse_status == "ok"
    assert (row.error_code, row.error_message) == (-32600, "Bad Request: Missing session ID")


def test_plain_text_http_error_is_noted_on_each_request() -> None:
    result = post(fixture("mcp_batch_request.json"), 401, "text/plain", b"Unauthorized")
    assert result.parse_status == "ok"
    assert [r.error_message for r in result.mcp] == [
        "HTTP 401: Unauthorized",
        None,
        "HTTP 401: Unauthorized",
        None,
    ]
    empty = post(call("t", {}), 503, None, b"")
    assert empty.mcp[0].error_message == "HTTP 503 with an empty body"


def test_stray_error_without_requests_is_a_server_row() -> None:
    request = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    result = post(request, 404, JSON, fixture("mcp_server_error_400.json"))
    assert [(r.direction, r.rpc_id, r.error_code) for r in result.mcp] == [
        ("client", None, None),
        ("server", "server-error", -32600),
    ]


def test_unmatched_and_duplicate_responses_are_server_rows() -> None:
    response = (
        b'[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"again":1}},'
        b'{"jsonrpc":"2.0","id":99,"result":{}}]'
    )
    result = post(call("t", {}), 200, JSON, response)
    assert [(r.direction, r.rpc_id, r.result) for r in result.mcp] == [
        ("client", "2", {}),
        ("server", "2", {"again": 1}),
        ("server", "99", {}),
    ]


def test_ids_of_different_types_do_not_collide() -> None:
    request = b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":"1","method":"b"}]'
    response = b'[{"jsonrpc":"2.0","id":"1","result":"s"},{"jsonrpc":"2.0","id":1,"result":"n"}]'
    result = post(request, 200, JSON, response)
    assert [(r.method, r.result) for r in result.mcp] == [("a", "n"), ("b", "s")]


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (b'{"jsonrpc":"2.0", "id": 1, "meth', "request: Unterminated string starting at char 27"),
        (b"", "request: empty body"),
        (b"[]", "request: empty batch"),
        (b"42", "request: expected a JSON-RPC message or batch, got int"),
        (b'{"jsonrpc":"1.0","method":"x"}', "request: not a JSON-RPC 2.0 message"),
    ],
)
def test_malformed_request_is_an_error_value(request_body: bytes, message: str) -> None:
    result = post(request_body, 400, JSON, fixture("mcp_server_error_400.json"))
    assert result.parse_status == "error"
    assert result.parse_error is not None and result.parse_error.startswith(message)
    # the server's answer is still recorded
    assert [(r.direction, r.error_code) for r in result.mcp] == [("server", -32600)]


def test_batch_with_a_bad_member_is_partial() -> None:
    request = b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"id":2},"x"]'
    result = post(request, 200, JSON, b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert result.parse_status == "partial"
    assert result.parse_error == "request: 2 message(s) not JSON-RPC 2.0, first at 1"
    assert [r.method for r in result.mcp] == ["ping"]


def test_duplicate_request_ids_are_noted() -> None:
    request = b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]'
    result = post(request, 200, JSON, b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert result.parse_status == "partial"
    assert "duplicate request id 1" in (result.parse_error or "")


def test_malformed_response_bodies() -> None:
    garbage = post(call("t", {}), 200, JSON, b"<html>oops</html>")
    assert garbage.parse_status == "error"
    assert garbage.parse_error == "response: Expecting value at char 0"
    assert garbage.mcp[0].tool_name == "t"  # the request is kept
    cut = post(call("t", {}), 200, JSON, b'{"jsonrpc":"2.0","id":2,"res', complete=False)
    assert cut.parse_status == "partial"
    assert "body cut short" in (cut.parse_error or "")
    not_rpc = post(call("t", {}), 200, JSON, b'{"ok": true}')
    assert not_rpc.parse_status == "partial"
    assert not_rpc.parse_error == (
        "response: 1 message(s) not JSON-RPC 2.0; response: no response to request id 2"
    )


def test_sse_with_a_bad_event_and_a_cut_end() -> None:
    body = (
        b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n'
        b"data: {nope\n\n"
        b'data: {"jsonrpc":"2.0","id":2,"res'
    )
    result = post(call("t", {}), 200, SSE, body, complete=False)
    assert result.parse_status == "partial"
    assert result.parse_error == (
        "response: stream cut in the middle of an event; "
        "response: 1 unparseable SSE event(s), first event 1: Expecting property name enclosed "
        "in double quotes at char 1; "
        "response: no response to request id 2"
    )
    assert [r.method for r in result.mcp] == ["tools/call", "notifications/progress"]


def test_no_response_at_all_is_partial() -> None:
    result = post(call("t", {}), None, None, b"")
    assert result.parse_status == "partial"
    assert result.parse_error == "response: none received"
    empty_cut = post(call("t", {}), 200, JSON, b"", complete=False)
    assert "connection closed before the body ended" in (empty_cut.parse_error or "")


def test_rows_are_mcp_messages() -> None:
    result = post(call("t", {"a": [1, {"b": None}]}), 200, JSON, b"")
    assert all(isinstance(r, McpMessage) for r in result.mcp)
    assert result.mcp[0].model_dump(mode="json")["arguments"] == {"a": [1, {"b": None}]}


def test_event_stream_closed_once_answered_is_ok() -> None:
    # The mcp client closes the response as soon as its answer arrived, racing the end.
    answered = post(call("t", {}), 200, SSE, fixture("mcp_tools_call_ok.sse"), complete=False)
    assert (answered.parse_status, answered.parse_error) == ("ok", None)
    stream = parse_mcp("GET", b"", SESSION, 200, SSE, {}, fixture("mcp_get_stream.sse"), False)
    assert (stream.parse_status, len(stream.mcp)) == ("ok", 3)
