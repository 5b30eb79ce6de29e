"""`toolproxy export --otlp URL | --otlp-file FILE`: sessions as OTLP traces, sent by the
OpenTelemetry SDK (the only module that imports it).

The spans come from `otel.spans` (pure); here the SDK turns them into its own spans (ids
given by an `IdGenerator` that hands out the ids `spans` chose, limits lifted so no
attribute is dropped) and its OTLP exporter sends them: over HTTP (protobuf) to a collector
or a backend, or encoded by the same encoder as OTLP/JSON lines (one
`ExportTraceServiceRequest` per line, the OpenTelemetry Collector's file format). Spans go
out session batch by session batch, each checked: a refused batch stops the export with
the endpoint's reason, never a silent drop.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from toolproxy import __version__
from toolproxy.errors import Failure, UserError
from toolproxy.otel.spans import TraceSpec, session_trace
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.paging import every_page
from toolproxy.store.queries.exchanges import details, exchanges, sessions
from toolproxy.store.queries.grades import exchange_grades
from toolproxy.store.reader import Reader, reading

SESSIONS_PER_BATCH = 200
_KINDS = {"client": SpanKind.CLIENT, "internal": SpanKind.INTERNAL}
_NO_LIMIT = 1_000_000


@dataclass
class OtlpStats:
    """What an export sent."""

    traces: int = 0
    spans: int = 0
    model_calls: int = 0
    tool_executions: int = 0
    grades: int = 0


def traces_endpoint(url: str) -> str:
    """The OTLP/HTTP traces URL: a bare `http://host:port` gets `/v1/traces`."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"--otlp wants an http(s) URL such as http://localhost:4318, not {url!r}")
    if parts.path in ("", "/"):
        parts = parts._replace(path="/v1/traces")
    return urlunsplit(parts)


def shown_url(url: str) -> str:
    """The URL without credentials or query (either can carry a key)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class _GivenIds(IdGenerator):
    """Hands out the ids the next span should have (set just before it starts)."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id


class _Collect(SpanProcessor):
    """Keeps ended spans until the export takes them (one batch of sessions at a time)."""

    def __init__(self) -> None:
        self.ended: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


class JsonLinesExporter(SpanExporter):
    """OTLP/JSON lines: the SDK's own protobuf encoding, in the JSON form OTLP specifies
    (trace and span ids as hex, enums as integers)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        request = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        for resource in request.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64decode(span[key]).hex()
        self.out.write(json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n")
        return SpanExportResult.SUCCESS


class _Reasons(logging.Handler):
    """What the SDK's exporter logged while a batch was refused (its only report)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _reasons() -> Iterator[_Reasons]:
    logger = logging.getLogger("opentelemetry.exporter")
    handler, propagate = _Reasons(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def resource_of(project: str, service: str, capture: Path) -> Resource:
    return Resource.create(
        {
            "service.name": service,
            "service.version": __version__,
            "openinference.project.name": project,
            "toolproxy.capture": capture.name,
        }
    )


def export_traces(
    capture: Path,
    exporter: SpanExporter,
    resource: Resource,
    where: ExchangeFilter | None = None,
    runs: list[str] | None = None,
) -> OtlpStats:
    """Send every session `where` selects as a trace through `exporter`, with the grades
    of `runs` (all runs when None); a refused batch is a `Failure` with the reason."""
    ids = _GivenIds()
    collect = _Collect()
    limits = SpanLimits(
        max_span_attributes=_NO_LIMIT,
        max_events=_NO_LIMIT,
        max_links=_NO_LIMIT,
        max_event_attributes=_NO_LIMIT,
        max_link_attributes=_NO_LIMIT,
        max_attribute_length=_NO_LIMIT,
    )
    provider = TracerProvider(resource=resource, id_generator=ids, span_limits=limits)
    provider.add_span_processor(collect)
    tracer = provider.get_tracer("toolproxy", __version__)
    stats = OtlpStats()
    where = where or ExchangeFilter()
    try:
        with reading(capture) as r:
            pages = every_page(lambda c: sessions(r, where, limit=SESSIONS_PER_BATCH, cursor=c))
            for page in pages:
                sent = stats.traces
                batch = [s.session_id for s in page]
                for spec in _traces(r, batch, where, runs):
                    _emit(tracer, ids, spec, stats)
                _send(exporter, collect, sent)
    finally:
        provider.shutdown()
        exporter.shutdown()
    return stats


def _traces(
    r: Reader, session_ids: list[str], where: ExchangeFilter, runs: list[str] | None
) -> Iterator[TraceSpec]:
    chosen = where.model_copy(update={"sessions": session_ids})
    pages = every_page(lambda c: exchanges(r, chosen, limit=5_000, cursor=c))
    ids = [x.exchange_id for page in pages for x in page]
    by_session: dict[str, list[Any]] = {s: [] for s in session_ids}
    for d in details(r, ids):
        by_session[d.exchange.session_id or ""].append(d)
    grades: dict[str, list[Any]] = {}
    for g in exchange_grades(r, ids, runs):
        grades.setdefault(g.exchange_id, []).append(g)
    for sid, found in by_session.items():
        if found:
            mine = [g for d in found for g in grades.get(d.exchange.exchange_id, [])]
            yield session_trace(sid, found, mine)


def _emit(tracer: trace.Tracer, ids: _GivenIds, spec: TraceSpec, stats: OtlpStats) -> None:
    """Start and end the SDK's spans for one trace, parents before children."""
    ids.trace_id = spec.trace_id
    made: dict[int, trace.Span] = {}
    for s in spec.spans:
        ids.span_id = s.span_id
        parent = made.get(s.parent_id) if s.parent_id is not None else None
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = tracer.start_span(
            s.name, context=context, kind=_KINDS[s.kind], attributes=s.attributes,
            start_time=s.start_ns,
        )  # fmt: skip
        for e in s.events:
            span.add_event(e.name, e.attributes, timestamp=e.time_ns)
        if s.error is not None:
            span.set_status(Status(StatusCode.ERROR, s.error))
        made[s.span_id] = span
        kind = s.attributes.get("openinference.span.kind")
        stats.model_calls += kind == "LLM"
        stats.tool_executions += kind == "TOOL"
        stats.grades += sum(1 for e in s.events if e.name == "toolproxy.grade")
    for s in reversed(spec.spans):  # children end first, as they would live
        made[s.span_id].end(end_time=s.end_ns)
    stats.traces += 1
    stats.spans += len(spec.spans)


def _send(exporter: SpanExporter, collect: _Collect, sent: int) -> None:
    """Export the collected spans; refused, a `Failure` that says what got through before."""
    spans, collect.ended = collect.ended, []
    if not spans:
        return
    with _reasons() as reasons:
        result = exporter.export(spans)
    if result is not SpanExportResult.SUCCESS:
        why = "; ".join(dict.fromkeys(reasons.messages[-2:])) or "no reason given"
        before = f" ({sent} sessions were sent before them)" if sent else ""
        raise Failure(f"the OTLP endpoint did not take {len(spans)} spans{before}: {why}")


def http_exporter(url: str, headers: Mapping[str, str] | None, timeout: float) -> SpanExporter:
    """The SDK's OTLP/HTTP (protobuf) exporter; with no headers given it reads
    OTEL_EXPORTER_OTLP_(TRACES_)HEADERS itself."""
    return OTLPSpanExporter(
        endpoint=traces_endpoint(url), headers=dict(headers) if headers else None, timeout=timeout
    )
