"""Wire parsers: model API requests and responses (streamed or not) into typed records.

Pure: no I/O and no SDK imports. The capture layer calls decode_body on each body, then
parse_exchange; every outcome, malformed input included, comes back as a WireResult.

parse_status is 'unparsed' for an endpoint that is not a known model API; 'error' when a
body that must be JSON is not (the other side is still parsed and kept); 'partial' when
the response was cut short (stream without its terminator, connection closed mid-body, no
response at all) or some stream events did not parse; otherwise 'ok'. An API error body
(``{"error": ...}``, or any 4xx/5xx body) is 'ok' with ParsedResponse.error set. A tool
call whose arguments do not parse is still 'ok': the ToolCall carries the parse_error.
parse_error lists each problem, prefixed 'request:' or 'response:'.

MCP over streamable HTTP (JSON-RPC) is recognised before the model APIs and parsed by
``wire.mcp`` into ``WireResult.mcp`` rows; see that module for its rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolproxy.records import (
    ParsedRequest,
    ParsedResponse,
    ParseStatus,
    WireFormat,
    WireResult,
)
from toolproxy.wire import (
    anthropic,
    bedrock,
    gemini,
    mcp,
    ollama,
    openai_chat,
    openai_responses,
)
from toolproxy.wire.body import decode_body
from toolproxy.wire.common import (
    Codec,
    decode_stream,
    http_error,
    is_event_stream,
    load_json,
    parse_arguments,
    reply_turn,
)
from toolproxy.wire.eventstream import aws_stream, is_eventstream
from toolproxy.wire.ndjson import is_ndjson, ndjson_stream
from toolproxy.wire.sse import SseEvent, iter_sse_events

__all__ = [
    "SseEvent",
    "decode_body",
    "detect_format",
    "iter_sse_events",
    "parse_arguments",
    "parse_exchange",
]

_CODECS: dict[WireFormat, Codec] = {
    "openai_chat": openai_chat.CODEC,
    "openai_responses": openai_responses.CODEC,
    "anthropic_messages": anthropic.CODEC,
    "ollama_chat": ollama.CODEC,
    "gemini": gemini.CODEC,
    "bedrock_converse": bedrock.CODEC,
}
_GEMINI = (":generatecontent", ":streamgeneratecontent")  # a path's last segment ends so
# What an event-stream body can start with; a JSON body never does.


def detect_format(
    method: str,
    path: str,
    request_json: object | None = None,
    request_headers: Mapping[str, str] | None = None,
) -> WireFormat:
    """Which model API a request is for, from its method and path; or 'mcp'.

    'mcp' first, whatever the path: a JSON-RPC 2.0 POST body, or an MCP request header
    (``Mcp-Session-Id``, ``MCP-Protocol-Version``); see ``wire.mcp.is_mcp``.

    POST ``.../chat/completions`` is openai_chat, ``.../responses`` openai_responses (not
    ``.../responses/{id}/...``), ``.../messages`` anthropic_messages (not count_tokens or
    batches, nor OpenAI's ``/threads/{id}/messages``). Any path prefix and query string is
    allowed (``/openai/deployments/x/chat/completions?api-version=...``). Vertex AI's
    ``...:rawPredict`` / ``...:streamRawPredict`` is anthropic_messages when the body has
    ``anthropic_version`` and ``messages``. ``.../api/chat`` is ollama_chat (Ollama's own
    API; its OpenAI-compatible ``/v1/chat/completions`` is openai_chat).
    ``.../models/{model}:generateContent`` and ``:streamGenerateContent`` are gemini (the
    Gemini API's and Vertex AI's). Bedrock's ``.../model/{modelId}/converse`` and
    ``/converse-stream`` are bedrock_converse; its ``.../model/{modelId}/invoke`` and
    ``/invoke-with-response-stream`` are anthropic_messages when the body is a Messages
    request (`anthropic_version` and `messages`), as Vertex AI's rawPredict. Anything else
    is 'unknown'.
    """
    if mcp.is_mcp(method, request_json, request_headers):
        return "mcp"
    if method.upper() != "POST":
        return "unknown"
    path = path.split("?", 1)[0].split("#", 1)[0]
    segments = [segment.lower() for segment in path.split("/") if segment]
    last = segments[-1] if segments else ""
    if last == "completions" and segments[-2:-1] == ["chat"]:
        return "openai_chat"
    if last == "responses":
        return "openai_responses"
    if last == "messages" and "threads" not in segments:
        return "anthropic_messages"
    if last == "chat" and segments[-2:-1] == ["api"]:
        return "ollama_chat"
    if last.endswith(_GEMINI):
        return "gemini"
    if last in bedrock.ACTIONS and segments[-3:-2] == ["model"]:
        return "bedrock_converse"
    if (
        (
            last.endswith((":rawpredict", ":streamrawpredict"))
            or (last in anthropic.BEDROCK_ACTIONS and segments[-3:-2] == ["model"])
        )
        and isinstance(request_json, dict)
        and "anthropic_version" in request_json
        and "messages" in request_json
    ):
        return "anthropic_messages"
    return "unknown"


def parse_exchange(
    method: str,
    path: str,
    request_body: bytes,
    response_status: int | None,
    response_content_type: str | None,
    response_body: bytes,
    response_complete: bool = True,
    request_headers: Mapping[str, str] | None = None,
    response_headers: Mapping[str, str] | None = None,
) -> WireResult:
    """Parse one exchange; bodies are already content-decoded. Never raises.

    The headers are needed for MCP only (its session header, and telling a GET or DELETE
    of an MCP session from other traffic).

    A response is read as an event stream when its content type is text/event-stream or
    its body starts like one (``data:``, ``event:``, ``:``), else as JSON.
    `response_status` None with an empty body means no response arrived;
    `response_complete` False means the connection broke before the body ended.
    Unexpected exceptions become parse_status 'error' naming the exception.
    """
    try:
        return _parse(
            method,
            path,
            request_body,
            response_status,
            response_content_type,
            response_body,
            response_complete,
            request_headers,
            response_headers,
        )
    except Exception as exc:  # the contract is "never raises"; say what broke instead
        return WireResult(parse_status="error", parse_error=f"internal error: {_describe(exc)}")


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _attempt[T](work: Callable[[], T]) -> tuple[T | None, str | None]:
    """Run one step; an unexpected exception (RecursionError on absurd nesting, a bug)
    becomes a message naming it, so the other side of the exchange is still parsed."""
    try:
        return work(), None
    except Exception as exc:
        return None, _describe(exc)


def _parse(
    method: str,
    path: str,
    request_body: bytes,
    status: int | None,
    content_type: str | None,
    response_body: bytes,
    complete: bool,
    request_headers: Mapping[str, str] | None = None,
    response_headers: Mapping[str, str] | None = None,
) -> WireResult:
    loaded, crash = _attempt(lambda: load_json(request_body))
    request_json, problem = loaded if loaded is not None else (None, crash)
    wire_format = detect_format(method, path, request_json, request_headers)
    if wire_format == "unknown":
        return WireResult()
    if wire_format == "mcp":
        result, crash = _attempt(
            lambda: mcp.parse_mcp(
                method,
                request_body,
                request_headers,
                status,
                content_type,
                response_headers,
                response_body,
                complete,
            )
        )
        if result is not None:
            return result
        return WireResult(
            wire_format="mcp", parse_status="error", parse_error=f"internal error: {crash}"
        )
    codec = _CODECS[wire_format]

    request: ParsedRequest | None = None
    if problem is None and isinstance(request_json, dict):
        body: dict[str, Any] = request_json
        request, problem = _attempt(lambda: codec.parse_request(body))
        if request is not None and codec.from_path is not None:
            codec.from_path(request, path)
    elif problem is None:
        problem = f"expected a JSON object, got {type(request_json).__name__}"
    errors = [f"request: {problem}"] if problem else []

    outcome, crash = _attempt(
        lambda: _parse_response(codec, status, content_type, response_body, complete)
    )
    response, fatal, notes = outcome if outcome is not None else (None, crash, [])
    errors += [f"response: {fatal}"] if fatal else []
    notes = [f"response: {note}" for note in notes]
    parse_status: ParseStatus = "error" if errors else "partial" if notes else "ok"
    return WireResult(
        wire_format=wire_format,
        parse_status=parse_status,
        parse_error="; ".join(errors + notes) or None,
        request=request,
        response=response,
    )


def _parse_response(
    codec: Codec,
    status: int | None,
    content_type: str | None,
    body: bytes,
    complete: bool,
) -> tuple[ParsedResponse | None, str | None, list[str]]:
    """(response, fatal problem, partial notes) for one response body (a stream framed
    as `codec.framing` says, or as SSE)."""
    if status is None and not body:
        return None, None, ["none received"]
    failed = status is not None and status >= 400
    binary = is_eventstream(content_type, body, expected=codec.framing == "eventstream")
    lines = not binary and is_ndjson(content_type, body, expected=codec.framing == "ndjson")
    chunks = codec.framing == "array" and body.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")
    if binary or lines or chunks or is_event_stream(content_type, body):
        if binary:  # Bedrock's, whatever the codec (InvokeModel streams Anthropic's events)
            stream = aws_stream(body, complete)
        elif lines:
            stream = ndjson_stream(body, complete)
        elif chunks:
            stream = gemini.array_stream(body, complete)
        else:
            events, ended = iter_sse_events(body)
            # Cut off, a body on an event boundary has not ended: only the stream's own
            # terminator ([DONE], message_stop, response.completed) says it was whole.
            stream = decode_stream(events, ended and complete)
        response, notes = codec.parse_stream(stream)
        response.events = stream.events
        notes = stream.notes + notes
        if response.complete:
            # The connection went after the terminator (the openai SDK hangs up at
            # [DONE], before the body's end): nothing of the stream was lost.
            complete = True
    else:
        value, problem = load_json(body)
        if problem is None and not isinstance(value, dict):
            problem = f"expected a JSON object, got {type(value).__name__}"
        if problem is not None:
            if failed:
                return ParsedResponse(error=http_error(status, body)), None, []
            if not complete:
                return None, None, [f"body cut short ({problem})"]
            return None, problem, []
        response, notes = codec.parse_response(value), []
    if failed and response.error is None:
        response.error = http_error(status, body)
        response.reply = reply_turn(response)
    if not complete:
        response.complete = False
        notes.append("connection closed before the body ended")
    return response, None, notes
