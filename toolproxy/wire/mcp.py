"""MCP over streamable HTTP: the JSON-RPC messages of one exchange as McpMessage rows.

Pure: no I/O and no SDK imports. The transport (MCP spec, "Streamable HTTP"):

- the client POSTs one JSON-RPC message or a batch (a JSON array) to the MCP endpoint;
- the server answers ``application/json`` (one message or a batch), ``text/event-stream``
  (each event's ``data`` is a message; server requests and notifications may come before
  the response), or ``202 Accepted`` with no body when the POST held no request;
- ``GET`` with ``Accept: text/event-stream`` opens a server-to-client stream, ``DELETE``
  ends the session; the ``Mcp-Session-Id`` header (set by the server on the response to
  ``initialize``) names the session, ``MCP-Protocol-Version`` the negotiated version.

An exchange is MCP when its POST body is JSON-RPC 2.0 (an object with ``"jsonrpc": "2.0"``
and a method, result or error; or a non-empty array holding such objects), or when the
request carries an MCP header (GET streams, DELETE, and bodies too broken to recognise).
So any JSON-RPC 2.0 over HTTP is recorded this way; the older HTTP+SSE transport's GET
stream (no MCP headers) is not recognised, its POSTs are.

Rows: one per client message in order (a request's response fills in its row), then one
per server message that answers nothing of this POST (server requests, notifications,
stray responses), in arrival order. An error response that names no request of the POST
(``"id": null`` or a server's own id such as ``"server-error"``, sent when the server
rejects the whole POST) fills in every request still unanswered. A request left
unanswered by a 4xx/5xx gets ``error_message`` "HTTP <status>: <body>".

parse_status: 'error' when the POST body is not JSON-RPC at all, or a 2xx response body
that should be JSON is not; 'partial' for malformed messages (skipped), a JSON body or an
event cut short, no response, or a request a 2xx answer left unanswered; otherwise 'ok'.
An event stream closed early is not in itself partial: clients close it once answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from toolproxy.records import McpMessage, ParseStatus, WireResult, canonical_json
from toolproxy.wire.common import as_dict, as_int, as_str, http_error, is_event_stream, load_json
from toolproxy.wire.sse import iter_sse_events

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


def is_message(value: Any) -> bool:
    """A JSON-RPC 2.0 message: ``"jsonrpc": "2.0"`` plus a method, result or error."""
    return (
        isinstance(value, dict)
        and value.get("jsonrpc") == "2.0"
        and ("method" in value or "result" in value or "error" in value)
    )


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """A header's value by case-insensitive name, or None."""
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value
    return None


def is_mcp(method: str, request_json: Any, request_headers: Mapping[str, str] | None) -> bool:
    """Whether an exchange is MCP: a JSON-RPC 2.0 POST body, or an MCP request header."""
    if header(request_headers, SESSION_HEADER) or header(request_headers, VERSION_HEADER):
        return True
    if method.upper() != "POST":
        return False
    if isinstance(request_json, list):
        return any(is_message(item) for item in request_json)
    return is_message(request_json)


def rpc_id(value: Any) -> str | None:
    """A JSON-RPC id as text: strings as they are, numbers in JSON form, null as None."""
    if value is None:
        return None
    return value if isinstance(value, str) else canonical_json(value)


def parse_mcp(
    method: str,
    request_body: bytes,
    request_headers: Mapping[str, str] | None,
    status: int | None,
    content_type: str | None,
    response_headers: Mapping[str, str] | None,
    response_body: bytes,
    complete: bool = True,
) -> WireResult:
    """Parse one MCP exchange (bodies already content-decoded) into McpMessage rows.

    Bad input is a value: problems are reported in parse_status / parse_error, each
    prefixed 'request:' or 'response:', as for the model formats. Only a program error or
    absurd nesting (RecursionError) raises; ``wire.parse_exchange`` turns those into values.
    """
    session = header(request_headers, SESSION_HEADER) or header(response_headers, SESSION_HEADER)
    errors: list[str] = []
    notes: list[str] = []

    rows, pending, problem = _client_rows(method, request_body, session, notes)
    if problem:
        errors.append(f"request: {problem}")

    messages, unreadable = _server_messages(status, content_type, response_body, complete, notes)
    if unreadable:
        errors.append(f"response: {unreadable}")
    requested = set(pending)
    stray_errors: list[dict[str, Any]] = []
    for message in messages:
        key = _key(message)
        if "method" in message:
            rows.append(_row(message, "server", session))
        elif key in pending:
            _answer(pending.pop(key), message)
        elif "error" in message and key not in requested:
            stray_errors.append(message)
        else:
            rows.append(_row(message, "server", session))
    # An error naming no request of this POST is the server rejecting the POST as a whole.
    for message in stray_errors:
        if pending:
            for row in pending.values():
                _answer(row, message)
            pending.clear()
        else:
            rows.append(_row(message, "server", session))
    if pending and status is not None and status >= 400:
        text = http_error(status, response_body)
        for row in pending.values():
            row.error_message = text
    elif pending and status is not None and not unreadable:
        ids = ", ".join(row.rpc_id or "?" for row in pending.values())
        notes.append(f"response: no response to request id {ids}")

    for position, row in enumerate(rows):
        row.position = position
    parse_status: ParseStatus = "error" if errors else "partial" if notes else "ok"
    return WireResult(
        wire_format="mcp",
        parse_status=parse_status,
        parse_error="; ".join(errors + notes) or None,
        mcp=rows,
    )


def _key(message: Mapping[str, Any]) -> str:
    return canonical_json(message.get("id"))


def _client_rows(
    method: str, body: bytes, session: str | None, notes: list[str]
) -> tuple[list[McpMessage], dict[str, McpMessage], str | None]:
    """(rows, unanswered requests by id key, fatal problem) from the request body."""
    if not body.strip() and method.upper() != "POST":
        return [], {}, None
    value, problem = load_json(body)
    if problem is not None:
        return [], {}, problem
    items = value if isinstance(value, list) else [value]
    if not isinstance(value, list | dict):
        return [], {}, f"expected a JSON-RPC message or batch, got {type(value).__name__}"
    if not items:
        return [], {}, "empty batch"
    rows: list[McpMessage] = []
    pending: dict[str, McpMessage] = {}
    bad = [i for i, item in enumerate(items) if not is_message(item)]
    if bad and len(bad) == len(items):
        return [], {}, "not a JSON-RPC 2.0 message"
    if bad:
        notes.append(f"request: {len(bad)} message(s) not JSON-RPC 2.0, first at {bad[0]}")
    for i, item in enumerate(items):
        if i in bad:
            continue
        row = _row(item, "client", session)
        if row.method is not None and item.get("id") is not None:
            key = _key(item)
            if key in pending:
                notes.append(f"request: duplicate request id {row.rpc_id}")
            pending[key] = row
        rows.append(row)
    return rows, pending, None


def _row(
    message: dict[str, Any], direction: Literal["client", "server"], session: str | None
) -> McpMessage:
    """A row for one message as it stands (a request's response is filled in later)."""
    method = as_str(message.get("method"))
    params = message.get("params")
    row = McpMessage(
        position=0,
        direction=direction,
        mcp_session_id=session,
        rpc_id=rpc_id(message.get("id")),
        method=method,
        params=params,
    )
    if method == "tools/call":
        call = as_dict(params)
        row.tool_name = as_str(call.get("name"))
        arguments = call.get("arguments")
        row.arguments = {} if arguments is None else arguments  # the spec's default
    if "method" not in message:
        _answer(row, message)
    return row


def _answer(row: McpMessage, message: Mapping[str, Any]) -> None:
    """Fill a row's response fields from a result or error message."""
    if "error" in message:
        error = message.get("error")
        fields = as_dict(error)
        row.error_code = as_int(fields.get("code"))
        row.error_message = as_str(fields.get("message")) or canonical_json(error)
        return
    row.result = message.get("result")
    if row.method == "tools/call":
        row.is_error = as_dict(row.result).get("isError") is True


def _server_messages(
    status: int | None, content_type: str | None, body: bytes, complete: bool, notes: list[str]
) -> tuple[list[dict[str, Any]], str | None]:
    """(messages in arrival order, fatal problem) from the response body."""
    if status is None and not body:
        notes.append("response: none received")
        return [], None
    failed = status is not None and status >= 400
    values: list[Any] = []
    if is_event_stream(content_type, body):
        events, ended = iter_sse_events(body)
        bad: list[str] = []
        for position, event in enumerate(events):
            if not event.data.strip():
                continue  # priming events carry an id only, for resumption
            value, problem = load_json(event.data)
            if problem is None:
                values.append(value)
            elif position == len(events) - 1 and not ended:
                notes.append("response: stream cut in the middle of an event")
            else:
                bad.append(f"event {position}: {problem}")
        if bad:
            notes.append(f"response: {len(bad)} unparseable SSE event(s), first {bad[0]}")
        # No note for a stream closed early: clients hang up once answered (the mcp SDK
        # does, racing the server's end of stream) and GET streams end no other way. What
        # a cut loses shows as a request left unanswered.
    elif body.strip():
        value, problem = load_json(body)
        if problem is not None:
            if failed:
                return [], None  # a plain-text 4xx/5xx: kept raw, noted on the requests
            if not complete:
                notes.append(f"response: body cut short ({problem})")
                return [], None
            return [], problem
        values.append(value)
    elif not complete:
        notes.append("response: connection closed before the body ended")
    messages: list[dict[str, Any]] = []
    skipped = 0
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            if is_message(item):
                messages.append(item)
            else:
                skipped += 1
    if skipped and not failed:
        notes.append(f"response: {skipped} message(s) not JSON-RPC 2.0")
    return messages, None
