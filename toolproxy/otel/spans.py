"""A captured session as the spans of one trace (pure): what `export --otlp` sends.

One trace per session. Its root span (`invoke_agent`) covers the session; under it one
span per exchange (a model call: `chat <model>`, kind client; any other request: its HTTP
method and path) and one span per tool execution (`execute_tool <name>`, from the end of the
turn that made the call to the start of the request that sent its result back). Attributes
follow the OpenTelemetry GenAI semantic conventions (`gen_ai.*`), plus the OpenInference
ones Arize Phoenix reads (`openinference.span.kind`, `llm.*`, `tool.*`, `input.value`,
`session.id`), plus `toolproxy.*` for what neither names. Grades attach to the span of the
exchange they graded, as `toolproxy.grade` events. Span and trace ids come from the
session and exchange ids (a hash), so exporting the same capture twice sends the same ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from toolproxy.otel.messages import (
    AttrValue,
    as_json,
    clip,
    input_messages,
    output_messages,
    put,
    turns_of,
)
from toolproxy.store.rows import CallRow, ExchangeDetail, ExchangeGradeRow, ResultRow
from toolproxy.wire.common import decoded

PROVIDERS = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "anthropic_messages": "anthropic",
    "ollama_chat": "ollama",
    "gemini": "gcp.gemini",
    "bedrock_converse": "aws.bedrock",
}
REQUEST_PARAMS = {  # request parameter -> gen_ai.request.* attribute
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "max_completion_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
    "seed": "seed",
}


@dataclass
class SpanEvent:
    """An event on a span (a grade)."""

    name: str
    time_ns: int
    attributes: dict[str, AttrValue]


@dataclass
class SpanSpec:
    """One span to send: ids, timing, attributes, events and status."""

    span_id: int  # 64 bits
    parent_id: int | None  # None: the trace's root
    name: str
    kind: str  # "internal" | "client"
    start_ns: int
    end_ns: int
    attributes: dict[str, AttrValue]
    events: list[SpanEvent] = field(default_factory=list)
    error: str | None = None  # set: the span's status is ERROR with this description


@dataclass
class TraceSpec:
    """A session as a trace: its root span first, then the others in time order."""

    trace_id: int  # 128 bits
    session_id: str
    spans: list[SpanSpec]


def trace_id_of(session_id: str) -> int:
    return int.from_bytes(_digest("trace", session_id)[:16]) or 1


def span_id_of(*parts: str) -> int:
    return int.from_bytes(_digest("span", *parts)[:8]) or 1


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).digest()


def _ns(t: datetime | None) -> int | None:
    return None if t is None else int(t.timestamp() * 1_000_000) * 1000


def session_trace(
    session_id: str,
    details: Sequence[ExchangeDetail],
    grades: Sequence[ExchangeGradeRow] = (),
) -> TraceSpec:
    """The trace of one session's exchanges (in time order) and their grades."""
    trace_id = trace_id_of(session_id)
    root_id = span_id_of("session", session_id)
    ends = {d.exchange.exchange_id: _end_ns(d) for d in details}
    starts = {d.exchange.exchange_id: _ns(d.exchange.started_at) or 0 for d in details}
    by_exchange: dict[str, list[ExchangeGradeRow]] = {}
    for g in grades:
        by_exchange.setdefault(g.exchange_id, []).append(g)
    spans: list[SpanSpec] = []
    for d in details:
        xid = d.exchange.exchange_id
        span = exchange_span(d, session_id, root_id)
        span.events.extend(grade_event(g, ends[xid]) for g in by_exchange.get(xid, []))
        _grade_counts(span, by_exchange.get(xid, []))
        spans.append(span)
        calls = {c.index: c for c in d.calls}
        for res in d.results:
            call = calls.get(res.index)
            if call is not None:
                start = ends[xid]
                end = starts.get(res.result_exchange_id or "", start)
                span = tool_span(call, res, session_id, root_id, start, max(start, end))
                for m in d.mcp:  # an MCP tools/call the proxy saw execute this very call
                    if m.linked_call_id == call.call_id and m.tool_name == call.name:
                        span.attributes["toolproxy.mcp_exchange_id"] = m.mcp_exchange_id
                spans.append(span)
    first = min((s.start_ns for s in spans), default=0)
    last = max((s.end_ns for s in spans), default=first)
    root = SpanSpec(
        span_id=root_id,
        parent_id=None,
        name="invoke_agent",
        kind="internal",
        start_ns=first,
        end_ns=last,
        attributes=_session_attributes(session_id, details),
    )
    spans.sort(key=lambda s: (s.start_ns, s.span_id))
    return TraceSpec(trace_id=trace_id, session_id=session_id, spans=[root, *spans])


def _end_ns(d: ExchangeDetail) -> int:
    start = _ns(d.exchange.started_at) or 0
    ended = _ns(d.request.get("ended_at"))
    if ended is not None:
        return max(start, ended)
    if d.exchange.latency_ms is not None:
        return start + int(d.exchange.latency_ms * 1_000_000)
    return start


def _session_attributes(session_id: str, details: Sequence[ExchangeDetail]) -> dict[str, AttrValue]:
    attrs: dict[str, AttrValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": session_id,
        "openinference.span.kind": "AGENT",
        "session.id": session_id,
        "toolproxy.session_id": session_id,
        "toolproxy.exchanges": len(details),
        "toolproxy.tool_calls": sum(len(d.calls) for d in details),
        "toolproxy.errors": sum(1 for d in details if _failure(d) is not None),
    }
    models = sorted({d.exchange.model for d in details if d.exchange.model})
    if models:
        attrs["toolproxy.models"] = models
    for d in details:
        text = _last_user_text(d)
        if text:
            attrs["input.value"] = clip(text) or ""
            break
    for d in reversed(details):
        if d.request.get("assistant_text"):
            attrs["output.value"] = clip(d.request["assistant_text"]) or ""
            break
    return attrs


def _last_user_text(d: ExchangeDetail) -> str | None:
    messages = decoded(d.request.get("messages"))
    turns = turns_of(d.exchange.wire_format, d.request.get("system"), messages)
    return next((t.text for t in reversed(turns) if t.role == "user" and t.text), None)


def _failure(d: ExchangeDetail) -> str | None:
    """What made the call fail (an upstream error or a status >= 400), else None."""
    x = d.exchange
    if x.error_kind:
        return f"{x.error_kind}: {d.request.get('error_message') or ''}".rstrip(": ")
    if x.status_code is not None and x.status_code >= 400:
        return f"HTTP {x.status_code}: {d.request.get('error_message') or ''}".rstrip(": ")
    return None


def exchange_span(d: ExchangeDetail, session_id: str, root_id: int) -> SpanSpec:
    """A model call (or any other recorded request) as a span under the session's root."""
    x, req = d.exchange, d.request
    start = _ns(x.started_at) or 0
    attrs: dict[str, AttrValue] = {
        "session.id": session_id,
        "gen_ai.conversation.id": session_id,
        "server.address": str(req.get("host") or ""),
        "toolproxy.exchange_id": x.exchange_id,
        "toolproxy.wire_format": x.wire_format or "unknown",
        "toolproxy.parse_status": x.parse_status or "unparsed",
        "toolproxy.streamed": bool(x.streamed),
    }
    put(attrs, "server.port", req.get("port"))
    put(attrs, "http.request.method", req.get("method"))
    put(attrs, "url.path", req.get("path"))
    put(attrs, "http.response.status_code", x.status_code)
    put(attrs, "toolproxy.ttfb_ms", x.ttfb_ms)
    put(attrs, "toolproxy.latency_ms", x.latency_ms)
    put(attrs, "toolproxy.proxy_id", x.proxy_id)
    put(attrs, "toolproxy.parse_error", req.get("parse_error"))
    failure = _failure(d)
    if failure is not None:
        attrs["error.type"] = x.error_kind or str(x.status_code)
    events = []
    if x.ttfb_ms is not None:
        events.append(SpanEvent("toolproxy.first_byte", start + int(x.ttfb_ms * 1_000_000), {}))
    provider = PROVIDERS.get(x.wire_format or "")
    if provider is None:  # not a model call: the request as HTTP
        name = f"{req.get('method') or 'HTTP'} {req.get('path') or ''}".strip()
    else:
        attrs |= _model_attributes(d, provider)
        name = f"chat {x.model}" if x.model else "chat"
    return SpanSpec(
        span_id_of("exchange", x.exchange_id), root_id, name, "client", start, _end_ns(d),
        attrs, events, clip(failure),
    )  # fmt: skip


def _model_attributes(d: ExchangeDetail, provider: str) -> dict[str, AttrValue]:
    x, req = d.exchange, d.request
    attrs: dict[str, AttrValue] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "openinference.span.kind": "LLM",
        "llm.provider": provider,
        "llm.system": provider,
    }
    put(attrs, "gen_ai.request.model", req.get("model_requested"))
    put(attrs, "gen_ai.response.model", req.get("model_returned"))
    put(attrs, "llm.model_name", x.model)
    put(attrs, "gen_ai.response.id", req.get("response_id"))
    if x.finish_reason:
        attrs["gen_ai.response.finish_reasons"] = [x.finish_reason]
    for key, value in (
        ("input_tokens", x.input_tokens),
        ("output_tokens", x.output_tokens),
    ):
        put(attrs, f"gen_ai.usage.{key}", value)
    put(attrs, "llm.token_count.prompt", x.input_tokens)
    put(attrs, "llm.token_count.completion", x.output_tokens)
    put(attrs, "llm.token_count.total", req.get("total_tokens"))
    put(attrs, "llm.token_count.prompt_details.cache_read", req.get("cached_input_tokens"))
    params = decoded(req.get("request_params")) or {}
    if isinstance(params, dict):
        for key, name in REQUEST_PARAMS.items():
            value = params.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                attrs[f"gen_ai.request.{name}"] = value
        if params:
            attrs["llm.invocation_parameters"] = as_json(params)
    turns = turns_of(x.wire_format, req.get("system"), decoded(req.get("messages")))
    attrs |= input_messages(turns, req.get("system"), x.wire_format)
    attrs |= output_messages(req.get("assistant_text"), d.calls, x.finish_reason)
    for i, tool in enumerate(d.offered):
        schema = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        attrs[f"llm.tools.{i}.tool.json_schema"] = as_json({"type": "function", "function": schema})
    if d.offered:
        attrs["gen_ai.tool.definitions"] = as_json(
            [{"type": "function", "name": t.name, "description": t.description,
              "parameters": t.parameters} for t in d.offered]
        )  # fmt: skip
    return attrs


def tool_span(
    call: CallRow, res: ResultRow, session_id: str, root_id: int, start: int, end: int
) -> SpanSpec:
    """A tool execution: the call, answered by a result the agent sent back."""
    name = call.name or "unknown"
    attrs: dict[str, AttrValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
        "openinference.span.kind": "TOOL",
        "tool.name": name,
        "session.id": session_id,
        "gen_ai.conversation.id": session_id,
        "toolproxy.exchange_id": call.exchange_id,
        "toolproxy.call_index": call.index,
    }
    put(attrs, "gen_ai.tool.call.id", call.call_id)
    put(attrs, "toolproxy.result_exchange_id", res.result_exchange_id)
    put(attrs, "toolproxy.parse_error", call.parse_error)
    if call.arguments_raw is not None:
        attrs["gen_ai.tool.call.arguments"] = clip(call.arguments_raw) or ""
        attrs["input.value"] = attrs["gen_ai.tool.call.arguments"]
        attrs["input.mime_type"] = "application/json" if call.parse_error is None else "text/plain"
    if res.result is not None:
        attrs["gen_ai.tool.call.result"] = clip(res.result) or ""
        attrs["output.value"] = attrs["gen_ai.tool.call.result"]
        attrs["output.mime_type"] = "text/plain"
    error = None
    if res.result_is_error:
        attrs["error.type"] = "tool_error"
        error = clip(res.result) or "the tool reported an error"
    return SpanSpec(
        span_id_of("tool", call.exchange_id, str(call.index)), root_id,
        f"execute_tool {name}", "internal", start, end, attrs, [], error,
    )  # fmt: skip


def grade_event(g: ExchangeGradeRow, time_ns: int) -> SpanEvent:
    """A grade of the exchange's turn, as a `toolproxy.grade` event."""
    attrs: dict[str, AttrValue] = {
        "toolproxy.grade.run": g.run,
        "toolproxy.grade.case_id": g.case_id,
        "toolproxy.grade.passed": bool(g.passed),
        "toolproxy.grade.not_graded": bool(g.not_graded),
    }
    put(attrs, "toolproxy.grade.label", g.label)
    put(attrs, "toolproxy.grade.reason", clip(g.reason))
    put(attrs, "toolproxy.grade.graded_at", g.graded_at)
    for key, value in (("expected_tools", g.expected_tools), ("called_tools", g.called_tools)):
        tools = decoded(value)
        if isinstance(tools, list):
            attrs[f"toolproxy.grade.{key}"] = [str(t) for t in tools]
    return SpanEvent("toolproxy.grade", time_ns, attrs)


def _grade_counts(span: SpanSpec, grades: Sequence[ExchangeGradeRow]) -> None:
    """Counts and labels as span attributes too (backends filter spans by attributes)."""
    if not grades:
        return
    span.attributes["toolproxy.grades.passed"] = sum(1 for g in grades if g.passed)
    span.attributes["toolproxy.grades.failed"] = sum(
        1 for g in grades if not g.passed and not g.not_graded
    )
    labels = sorted({g.label for g in grades if g.label})
    if labels:
        span.attributes["toolproxy.grades.labels"] = labels
