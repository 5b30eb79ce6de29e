"""The SDK sends the spans: to a real HTTP receiver (protobuf, decoded with the OTLP proto
package), to OTLP/JSON lines, batch by batch; a refusal is an error with the reason."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from toolproxy.errors import Failure, UserError
from toolproxy.otel import exporter
from toolproxy.otel.exporter import (
    JsonLinesExporter,
    export_traces,
    http_exporter,
    resource_of,
    shown_url,
    traces_endpoint,
)
from toolproxy.otel.spans import span_id_of, trace_id_of
from toolproxy.store.filters import ExchangeFilter


class Receiver:
    """An OTLP/HTTP endpoint: keeps each request's decoded body and headers, answers
    `status` (200 by default)."""

    def __init__(self) -> None:
        self.requests: list[tuple[ExportTraceServiceRequest, dict[str, str]]] = []
        self.status = 200
        self.refuse_after: int | None = None  # requests taken before refusing with a 400
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if receiver.refuse_after is not None and len(receiver.requests) >= (
                    receiver.refuse_after
                ):
                    receiver.status = 400
                if receiver.status == 200:
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    receiver.requests.append((request, headers))
                reply = b"" if receiver.status == 200 else b"spans refused"
                self.send_response(receiver.status)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list:
        return [
            span
            for request, _ in self.requests
            for rs in request.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


def resource(seeded_capture):
    return resource_of("proj", "svc", seeded_capture)


def test_sessions_go_to_an_otlp_http_endpoint(seeded_capture, receiver):
    sent = http_exporter(receiver.url, {"Authorization": "Bearer k-123"}, 5.0)
    stats = export_traces(seeded_capture, sent, resource(seeded_capture))
    assert (stats.traces, stats.model_calls, stats.tool_executions, stats.grades) == (5, 7, 2, 3)
    spans = receiver.spans()
    assert len(spans) == stats.spans == 15
    (request, headers), *_ = receiver.requests
    assert headers["authorization"] == "Bearer k-123"
    attrs = {a.key: a.value.string_value for a in request.resource_spans[0].resource.attributes}
    assert attrs["openinference.project.name"] == "proj"
    assert attrs["service.name"] == "svc"
    a0 = next(s for s in spans if s.span_id == span_id_of("exchange", "a-0").to_bytes(8))
    assert a0.trace_id == trace_id_of("s-a").to_bytes(16)
    assert a0.parent_span_id == span_id_of("session", "s-a").to_bytes(8)
    assert a0.name == "chat gpt-a-2026"
    assert [e.name for e in a0.events] == ["toolproxy.first_byte", "toolproxy.grade"]
    a0_attrs = {a.key for a in a0.attributes}
    assert {"gen_ai.usage.input_tokens", "llm.input_messages.0.message.content"} <= a0_attrs


def test_batches_of_sessions_each_go_as_one_request(seeded_capture, receiver, monkeypatch):
    monkeypatch.setattr(exporter, "SESSIONS_PER_BATCH", 2)
    sent = http_exporter(receiver.url, None, 5.0)
    export_traces(seeded_capture, sent, resource(seeded_capture))
    assert len(receiver.requests) == 3  # 5 sessions
    assert len(receiver.spans()) == 15


def test_a_filter_and_runs_choose_what_is_sent(seeded_capture, receiver):
    sent = http_exporter(receiver.url, None, 5.0)
    where = ExchangeFilter(sessions=["s-a"])
    stats = export_traces(seeded_capture, sent, resource(seeded_capture), where, ["g2"])
    assert (stats.traces, stats.spans, stats.grades) == (1, 6, 1)


def test_a_refused_batch_stops_the_export_with_the_reason(seeded_capture, receiver):
    receiver.status = 400
    sent = http_exporter(receiver.url, None, 5.0)
    with pytest.raises(Failure, match="did not take 15 spans: .*400"):
        export_traces(seeded_capture, sent, resource(seeded_capture))


def test_a_refusal_midway_says_what_went_before(seeded_capture, receiver, monkeypatch):
    monkeypatch.setattr(exporter, "SESSIONS_PER_BATCH", 2)
    receiver.refuse_after = 1
    sent = http_exporter(receiver.url, None, 5.0)
    with pytest.raises(Failure, match=r"did not take \d+ spans \(2 sessions were sent before"):
        export_traces(seeded_capture, sent, resource(seeded_capture))
    assert len(receiver.requests) == 1


def test_otlp_json_lines_carry_hex_ids_and_integer_enums(seeded_capture, tmp_path):
    out = tmp_path / "traces.jsonl"
    with out.open("w") as f:
        stats = export_traces(seeded_capture, JsonLinesExporter(f), resource(seeded_capture))
    (line,) = out.read_text().splitlines()
    request = json.loads(line)
    spans = [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert len(spans) == stats.spans == 15
    root = next(s for s in spans if s["name"] == "invoke_agent" and "parentSpanId" not in s
                and s["traceId"] == f"{trace_id_of('s-a'):032x}")  # fmt: skip
    assert root["spanId"] == f"{span_id_of('session', 's-a'):016x}"
    assert root["kind"] == 1  # SPAN_KIND_INTERNAL
    failed = next(s for s in spans if s["status"].get("code") == 2)  # STATUS_CODE_ERROR
    assert failed["status"]["message"] == "upstream"


def test_urls_get_their_traces_path_and_lose_their_secrets():
    assert traces_endpoint("http://h:4318") == "http://h:4318/v1/traces"
    assert traces_endpoint("http://h:6006/") == "http://h:6006/v1/traces"
    assert traces_endpoint("https://h/api/public/otel/v1/traces") == (
        "https://h/api/public/otel/v1/traces"
    )
    with pytest.raises(UserError, match="http"):
        traces_endpoint("h:4318")
    assert shown_url("https://user:pw@h:8443/v1/traces?key=sk-1") == "https://h:8443/v1/traces"
