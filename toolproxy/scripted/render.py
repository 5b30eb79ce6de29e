"""Turn a scripted reply into what goes on the wire: status, headers, a body or SSE events.

Pure: the server only writes a `Plan` out, with the reply's timing and breakage.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from toolproxy.scripted import (
    render_anthropic,
    render_bedrock,
    render_chat,
    render_gemini,
    render_ollama,
    render_responses,
)
from toolproxy.scripted.context import Context, Format, dump_json
from toolproxy.scripted.script import Reply

JSON = "application/json"
SSE = "text/event-stream; charset=utf-8"
NDJSON = "application/x-ndjson"  # Ollama's streams
EVENTSTREAM = "application/vnd.amazon.eventstream"  # Bedrock's

_Body = Callable[[Reply, Context], bytes]
_Events = Callable[[Reply, Context], list[bytes]]
_RENDERERS: dict[Format, tuple[_Body, _Events]] = {
    "chat": (render_chat.render_body, render_chat.render_events),
    "responses": (render_responses.render_body, render_responses.render_events),
    "messages": (render_anthropic.render_body, render_anthropic.render_events),
    "ollama": (render_ollama.render_body, render_ollama.render_events),
    "gemini": (render_gemini.render_body, render_gemini.render_events),
    "converse": (render_bedrock.render_body, render_bedrock.render_events),
}

_GOOGLE_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    503: "UNAVAILABLE",
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}

_BEDROCK_ERRORS = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
}


@dataclass(frozen=True)
class Plan:
    """One HTTP response to write: a body with Content-Length, or events sent chunked."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    events: list[bytes] | None = None

    @property
    def streamed(self) -> bool:
        """Whether the events go out chunked, one chunk each."""
        return self.events is not None


def error_body(fmt: Format | None, status: int, message: str) -> dict[str, Any]:
    """The provider's error shape for `status`: Anthropic's for messages, Ollama's for its
    own API, else OpenAI's."""
    if fmt == "ollama":
        return {"error": message}
    if fmt == "converse":  # Bedrock's (its kind goes in the x-amzn-errortype header)
        return {"message": message}
    if fmt == "gemini":
        kind = _GOOGLE_STATUSES.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
        return {"error": {"code": status, "message": message, "status": kind}}
    if fmt == "messages":
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        kind, code = "server_error", None
    else:
        kind, code = "invalid_request_error", None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _request_id_header(ctx: Context) -> tuple[str, str]:
    name = "request-id" if ctx.fmt == "messages" else "x-request-id"
    return name, ctx.make_id("req_")


def render(reply: Reply, ctx: Context) -> Plan:
    """The plan for answering the request in `ctx` with `reply` (before content encoding)."""
    headers = [_request_id_header(ctx), *reply.headers.items()]
    if reply.retry_after is not None:
        headers.append(("retry-after", f"{reply.retry_after:g}"))
    content_type = ("content-type", reply.content_type or JSON)
    if reply.raw_body is not None:
        return Plan(reply.status, [content_type, *headers], reply.raw_body.encode())
    if reply.raw_body_b64 is not None:
        raw = base64.b64decode(reply.raw_body_b64)
        return Plan(reply.status, [content_type, *headers], raw)
    if reply.status >= 400:
        body = reply.error_body
        if ctx.bedrock:
            kind = _BEDROCK_ERRORS.get(reply.status, "InternalServerException")
            headers.append(("x-amzn-errortype", f"{kind}:http://internal.amazon.com/coral/"))
        if body is None:
            fmt = "converse" if ctx.bedrock else ctx.fmt
            body = error_body(fmt, reply.status, f"scripted error {reply.status}")
        raw = body.encode() if isinstance(body, str) else dump_json(body)
        return Plan(reply.status, [content_type, *headers], raw)
    render_body, render_events = _RENDERERS[ctx.fmt]
    stream = ctx.stream if reply.stream is None else reply.stream
    if stream:
        kind = NDJSON if ctx.fmt == "ollama" else JSON if ctx.array else SSE
        kind = EVENTSTREAM if ctx.bedrock else kind
        headers = [("content-type", kind), ("cache-control", "no-cache"), *headers]
        return Plan(reply.status, headers, events=render_events(reply, ctx))
    return Plan(reply.status, [("content-type", JSON), *headers], render_body(reply, ctx))


def encode_gzip(plan: Plan) -> Plan:
    """The plan gzip-encoded; each event stays its own flushed piece of one gzip stream."""
    headers = [*plan.headers, ("content-encoding", "gzip")]
    if plan.events is None:
        return replace(plan, headers=headers, body=gzip.compress(plan.body, mtime=0))
    compressor = zlib.compressobj(wbits=31)  # 31: gzip container, header mtime 0
    events = [compressor.compress(e) + compressor.flush(zlib.Z_SYNC_FLUSH) for e in plan.events]
    if events:
        events[-1] += compressor.flush()
    return replace(plan, headers=headers, events=events)
