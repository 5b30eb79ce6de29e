"""Turn one observed exchange into store rows: decode, redact, parse, sessionise, measure.

Pure: runs in the recorder's background thread, never on the proxy's request path.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, datetime
from typing import Any

from toolproxy import wire
from toolproxy.capture.link import Linker
from toolproxy.capture.redact import Redactor
from toolproxy.capture.session import Attempt, ResultLink, SessionTracker
from toolproxy.capture.tap import RawExchange
from toolproxy.records import (
    Exchange,
    ParsedRequest,
    ParsedResponse,
    ToolOffered,
    ToolResult,
    WireResult,
)
from toolproxy.store.segments import child_rows
from toolproxy.wire import eventstream
from toolproxy.wire.body import body_text, one_encoding
from toolproxy.wire.sse import event_ends

Rows = dict[str, list[dict[str, Any]]]

# Stable error_kind strings (README "Store schema").
ERROR_KINDS = (
    "connect_failed",  # upstream refused / unresolvable / TLS failure before any response
    "timeout",  # upstream did not answer in time (or before the client gave up waiting)
    "connection_reset",  # connection dropped after the request was sent
    "stream_cut",  # response body ended before its terminator (no transport error seen)
    "http_4xx",  # upstream answered 4xx
    "http_5xx",  # upstream answered 5xx
    "upstream_error",  # any other transport error reported by mitmproxy
    "provider_error",  # a whole 2xx answer that says it failed (Responses' response.failed)
)


# Words of a transport error that happened while opening the upstream connection.
CONNECT_FAILURES = (
    "refused",
    "connect call failed",
    "cannot connect",
    "could not connect",
    "resolv",
    "unreachable",
    "tls",
    "certificate",
    "name or service",
    "nodename",
    "no address",
)


def classify_error(
    raw: RawExchange, response: ParsedResponse | None
) -> tuple[str | None, str | None]:
    """(error_kind, message) for an exchange, or (None, None) when it went fine."""
    if raw.error:
        msg = raw.error.lower()
        # mitmproxy's own 502 to a CONNECT it could not open carries a status, no upstream
        before_response = raw.status_code is None or msg.startswith("cannot connect to")
        if before_response and any(s in msg for s in CONNECT_FAILURES):
            return "connect_failed", raw.error
        if "timed out" in msg or "timeout" in msg:
            return "timeout", raw.error
        if raw.status_code is None and "client disconnected" in msg:
            # The upstream had not begun to answer when the client gave up waiting.
            return (
                "timeout",
                f"no response from the upstream before the client hung up ({raw.error})",
            )
        if any(s in msg for s in ("reset", "closed", "disconnect", "eof", "killed", "broken")):
            return "connection_reset", raw.error
        return "upstream_error", raw.error
    status = raw.status_code or 0
    api_error = response.error if response else None
    if status >= 500:
        return "http_5xx", api_error or f"HTTP {status}"
    if status >= 400:
        return "http_4xx", api_error or f"HTTP {status}"
    if response is not None and not response.complete:
        # an error event ended it (overloaded, throttled): the provider's words say why
        return "stream_cut", api_error or "response ended before its terminator"
    if api_error:  # whole, and 2xx, but the provider says it failed: not the model's answer
        return "provider_error", api_error
    return None, None


def _ms(a: float | None, b: float | None) -> float | None:
    return round((b - a) * 1000.0, 3) if a is not None and b is not None else None


def _dt(ts: float | None) -> datetime | None:
    return datetime.fromtimestamp(ts, UTC) if ts is not None else None


def decode_tps(raw: RawExchange, streamed: bool, output_tokens: int | None) -> float | None:
    """Output tokens per second of decoding (docs/capture.md "Metrics captured").

    Streamed: tokens / (last body byte - first body byte). Not streamed: tokens /
    (response end - request end), which includes prefill, so it is a lower bound.
    """
    if not output_tokens:
        return None
    if streamed:
        start, end = raw.first_byte, raw.last_byte
    else:
        start, end = raw.request_end, raw.ended_at or raw.last_byte
    if start is None or end is None or end <= start:
        return None
    return round(output_tokens / (end - start), 3)


def sse_times(raw: RawExchange) -> list[float] | None:
    """Each event's arrival, ms after the request started: the time the chunk holding its
    last byte came in (None when the response is not an event stream, SSE or AWS's, with
    recorded chunks, or came compressed: chunk offsets then count compressed bytes)."""
    kind = (_header(raw.response_headers, "content-type") or "").lower()
    coding = (_header(raw.response_headers, "content-encoding") or "identity").strip().lower()
    if not raw.arrivals or coding != "identity":
        return None
    if "text/event-stream" in kind:
        ends = event_ends(raw.response_body)
    elif eventstream.CONTENT_TYPE in kind:
        ends = eventstream.message_ends(raw.response_body)
    else:
        return None
    starts = [offset for offset, _ in raw.arrivals]
    times = []
    for end in ends:
        _, at = raw.arrivals[max(bisect_right(starts, end - 1) - 1, 0)]
        times.append(round((at - raw.started_at) * 1000, 3))
    return times


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def offered_tools(req: ParsedRequest | None, resp: ParsedResponse | None) -> list[ToolOffered]:
    """The tools the model had: the request's, then those its answer listed (a hosted MCP
    server's, met for the first time) that the request did not already hold, numbered on."""
    tools = list(req.tools) if req else []
    held = {(tool.mcp_server, tool.name) for tool in tools}
    for tool in resp.tools if resp else []:
        if (tool.mcp_server, tool.name) not in held:
            held.add((tool.mcp_server, tool.name))
            tools.append(tool.model_copy(update={"position": len(tools)}))
    return tools


def link_results(results: list[ToolResult], links: list[ResultLink | None]) -> None:
    """Fill each result's link to the call it answers. `links` has one entry per tool turn,
    in request order, as the tool results are: paired in order, checked by call id."""
    if len(links) != len(results):
        return
    for result, link in zip(results, links, strict=True):
        if link is not None:
            result.call_exchange_id, result.call_index = link


def build_rows(
    raw: RawExchange,
    proxy_id: str,
    redactor: Redactor,
    sessions: SessionTracker,
    linker: Linker | None = None,
) -> tuple[Exchange, Rows]:
    """The exchange record and every store row it yields, with secrets removed.

    `linker` carries MCP linking state across calls (the recorder keeps one); without it
    MCP calls link only to model calls of this one exchange, i.e. to none.
    """
    linker = linker if linker is not None else Linker()
    headers = {k.lower(): v for k, v in raw.request_headers}
    request_headers = redactor.redact_headers(raw.request_headers)
    response_headers = redactor.redact_headers(raw.response_headers)
    path = redactor.redact_url(raw.path)

    req_body, req_err = wire.decode_body(
        raw.request_body, _header(raw.request_headers, "content-encoding")
    )
    resp_body, resp_err = wire.decode_body(
        raw.response_body, _header(raw.response_headers, "content-encoding")
    )
    req_text, req_b64 = body_text(req_body)
    if not req_b64:
        req_text = redactor.redact_body(req_text)
        req_body = req_text.encode("utf-8")
    else:
        req_text, req_b64 = body_text(redactor.redact_bytes(req_body))
    resp_text, resp_b64 = body_text(resp_body)
    if resp_b64:  # text is scrubbed with the rows; bytes must be before they become base64
        resp_text, resp_b64 = body_text(redactor.redact_bytes(resp_body))
    stored_request, stored_response, encoding = one_encoding(
        (req_text, req_b64), (resp_text, resp_b64)
    )

    result: WireResult = wire.parse_exchange(
        raw.method,
        raw.path,
        req_body,
        raw.status_code,
        _header(raw.response_headers, "content-type"),
        resp_body,
        response_complete=raw.response_complete and not raw.truncated,
        request_headers=headers,
        response_headers={k.lower(): v for k, v in raw.response_headers},
    )
    req: ParsedRequest | None = result.request
    resp: ParsedResponse | None = result.response
    parse_error = "; ".join(e for e in (req_err, resp_err, result.parse_error) if e) or None
    if raw.truncated:
        parse_error = "; ".join(e for e in (parse_error, "body over max_body cap") if e)

    error_kind, error_message = classify_error(raw, resp)
    streamed = bool(req and req.stream) or (
        "text/event-stream" in (_header(raw.response_headers, "content-type") or "")
    )
    if streamed and result.parse_status == "ok" and error_kind == "connection_reset":
        # The stream had its own end ([DONE], message_stop, response.completed, an MCP
        # answer) before the connection went. Clients hang up there: the openai SDK at
        # [DONE], before the body's end; MCP clients once answered, and a GET stream ends
        # no other way. That disconnect is the protocol, not a failure.
        error_kind = error_message = None
    key: str | None = None
    if result.wire_format == "mcp":
        # The server names the session in its answer to initialize, the client thereafter.
        mcp_session = headers.get("mcp-session-id") or _header(
            raw.response_headers, "mcp-session-id"
        )
        explicit = headers.get(sessions.header, "").strip() or None
        session_id, source = linker.place(result.mcp, mcp_session, explicit)
    else:
        attempt = Attempt(
            exchange_id=raw.exchange_id,
            started=raw.started_at,
            ended=raw.ended_at or raw.started_at,
            ok=error_kind is None,
            connection=raw.client_connection,
            peer=raw.client_peer,
        )
        session_id, source, key, links = sessions.assign(
            headers,
            req.turns if req else [],
            resp.reply if resp else None,
            previous_response_id=req.previous_response_id if req else None,
            conversation=req.conversation if req else None,
            response_id=resp.response_id if resp else None,
            model=req.model if req else None,
            attempt=attempt,
        )
        if req is not None:
            link_results(req.tool_results, links)
        if resp is not None:
            linker.remember(raw.exchange_id, session_id, resp.tool_calls)
    usage = resp.usage if resp else None
    first = raw.first_byte or raw.response_started
    exchange = Exchange(
        exchange_id=raw.exchange_id,
        proxy_id=proxy_id,
        session_id=session_id,
        session_source=source,  # type: ignore[arg-type]
        started_at=_dt(raw.started_at),  # type: ignore[arg-type]
        ended_at=_dt(raw.ended_at),
        ttfb_ms=_ms(raw.request_end, first),
        latency_ms=_ms(raw.started_at, raw.ended_at),
        method=raw.method,
        scheme=raw.scheme,
        host=raw.host,
        port=raw.port,
        path=path,
        wire_format=result.wire_format,
        streamed=streamed,
        status_code=raw.status_code,
        error_kind=error_kind,
        error_message=error_message,
        parse_status=result.parse_status,
        parse_error=parse_error,
        model_requested=req.model if req else None,
        model_returned=resp.model if resp else None,
        request_params=req.params if req else {},
        system=req.system if req else None,
        messages=req.messages if req else None,
        assistant_text=resp.text if resp else None,
        refusal=resp.refusal if resp else None,
        finish_reason=resp.finish_reason if resp else None,
        response_id=resp.response_id if resp else None,
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        total_tokens=usage.total_tokens if usage else None,
        cached_input_tokens=usage.cached_input_tokens if usage else None,
        decode_tps=decode_tps(raw, streamed, usage.output_tokens if usage else None),
        sse_times=sse_times(raw),
        request_headers=request_headers,
        response_headers=response_headers,
        request_body=stored_request,
        response_body=stored_response,
        body_encoding=encoding,  # type: ignore[arg-type]  # "utf-8" or "base64"
        request_bytes=raw.request_size,
        response_bytes=raw.response_size,
        truncated=raw.truncated,
        conversation_key=key,
    )
    rows: Rows = {
        "exchanges": [exchange.model_dump(mode="json")],
        "tools_offered": child_rows(exchange, offered_tools(req, resp)),
        "tool_calls": child_rows(exchange, resp.tool_calls if resp else []),
        "tool_results": child_rows(exchange, req.tool_results if req else []),
        "mcp_messages": child_rows(exchange, result.mcp),
    }
    # Last line of defence: any secret value seen in headers or query strings is scrubbed
    # from every stored string, wherever the upstream or the agent echoed it. The walk is
    # skipped when one JSON dump shows no secret anywhere (the usual case, and 5x cheaper).
    if redactor.mentions_secret(rows):
        rows = {t: [redactor.scrub_value(r) for r in rs] for t, rs in rows.items()}
    return exchange, rows


def fallback_rows(raw: RawExchange, proxy_id: str, redactor: Redactor, error: str) -> Rows:
    """Minimal rows for an exchange that build_rows could not process: nothing is dropped."""
    req_text, req_b64 = body_text(redactor.redact_bytes(raw.request_body or b""))
    req_text = req_text if req_b64 else redactor.redact_body(req_text)
    stored_request, stored_response, encoding = one_encoding(
        (req_text, req_b64), body_text(redactor.redact_bytes(raw.response_body or b""))
    )
    error_kind, error_message = classify_error(raw, None)
    exchange = Exchange(
        exchange_id=raw.exchange_id,
        proxy_id=proxy_id,
        session_id=f"unassigned-{raw.exchange_id}",
        error_kind=error_kind,
        error_message=error_message,
        session_source="new",
        started_at=_dt(raw.started_at),  # type: ignore[arg-type]
        ended_at=_dt(raw.ended_at),
        method=raw.method,
        scheme=raw.scheme,
        host=raw.host,
        port=raw.port,
        path=redactor.redact_url(raw.path),
        wire_format="unknown",
        status_code=raw.status_code,
        parse_status="error",
        parse_error=f"internal error: {error}",
        request_headers=redactor.redact_headers(raw.request_headers or []),
        response_headers=redactor.redact_headers(raw.response_headers or []),
        request_body=stored_request,
        response_body=stored_response,
        body_encoding=encoding,  # type: ignore[arg-type]  # "utf-8" or "base64"
        request_bytes=raw.request_size,
        response_bytes=raw.response_size,
        truncated=raw.truncated,
    )
    return {"exchanges": [redactor.scrub_value(exchange.model_dump(mode="json"))]}
