"""Property-based fuzzing of everything that reads input toolproxy does not control: the
wire parsers (all three model formats and MCP, any bytes, any chunk boundaries), capture
(any content encoding), the expectations and replay-config loaders (broken files) and
the segment reader (truncated and garbage lines). Never an unhandled exception, and the
parsers' catch-all ("internal error") never fires: garbage is a parse status, not a bug."""

from __future__ import annotations

import gzip
import json
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolproxy import store, wire
from toolproxy.capture.redact import Redactor
from toolproxy.capture.rows import build_rows
from toolproxy.capture.session import SessionTracker
from toolproxy.capture.tap import BodyTap, RawExchange
from toolproxy.errors import UserError
from toolproxy.grade.expectations import load_cases
from toolproxy.replay.config import load_config
from toolproxy.store.segments import SegmentWriter, encode_row
from toolproxy.wire import eventstream

PATHS = [
    "/v1/chat/completions",
    "/v1/responses",
    "/v1/messages",
    "/api/chat",
    "/v1beta/models/m:streamGenerateContent",
    "/model/anthropic.claude%3A0/converse-stream",
    "/model/m/invoke-with-response-stream",
    "/mcp",
    "/other",
]
TYPES = [
    "application/json",
    "text/event-stream",
    "application/x-ndjson",
    "application/vnd.amazon.eventstream",
    None,
    "text/plain",
]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
# Bodies that look like the real thing, then damaged: real keys, wrong shapes.
shaped = st.fixed_dictionaries(
    {},
    optional={
        "model": json_values,
        "messages": json_values,
        "input": json_values,
        "tools": json_values,
        "choices": json_values,
        "output": json_values,
        "content": json_values,
        "message": json_values,
        "done": json_values,
        "conversation": json_values,
        "contents": json_values,
        "candidates": json_values,
        "anthropic_version": json_values,
        "toolConfig": json_values,
        "contentBlockIndex": json_values,
        "delta": json_values,
        "start": json_values,
        "bytes": json_values,
        "stream": json_values,
        "jsonrpc": st.just("2.0"),
        "method": st.sampled_from(["tools/call", "tools/list", "initialize"]) | st.text(),
        "params": json_values,
        "result": json_values,
        "id": json_values,
    },
)
bodies = (
    st.binary(max_size=300)
    | shaped.map(lambda v: json.dumps(v).encode())
    | json_values.map(lambda v: json.dumps(v).encode())
)
sse = st.lists(
    shaped.map(lambda v: b"data: " + json.dumps(v).encode() + b"\n\n")
    | st.binary(max_size=40)
    | st.just(b"data: [DONE]\n\n")
    | st.sampled_from([b"event: message_start\n", b": keep-alive\n\n", b"data: {"]),
    max_size=6,
).map(b"".join)
ndjson = st.lists(
    shaped.map(lambda v: json.dumps(v).encode() + b"\n") | st.binary(max_size=40), max_size=6
).map(b"".join)

# AWS event streams (Bedrock's): whole messages with damaged headers and payloads, cut
# messages, and bytes that only look like a prelude
headers = st.dictionaries(
    st.sampled_from([":event-type", ":message-type", ":exception-type", ":error-message"])
    | st.text(max_size=8),
    st.sampled_from(["chunk", "event", "exception", "error", "contentBlockDelta"])
    | st.text(max_size=12),
    max_size=4,
)
aws_messages = st.lists(
    st.builds(lambda h, v: eventstream.encode(h, json.dumps(v).encode()), headers, shaped)
    | st.builds(eventstream.encode, headers, st.binary(max_size=40))
    | st.binary(max_size=24),
    max_size=6,
).map(b"".join)
aws = st.tuples(aws_messages, st.integers(min_value=0, max_value=400)).map(
    lambda pair: pair[0][: pair[1]] if pair[1] < len(pair[0]) else pair[0]
)


def no_internal_error(result: wire.WireResult) -> None:
    assert "internal error" not in (result.parse_error or ""), result.parse_error


@FUZZ
@given(
    path=st.sampled_from(PATHS),
    request=bodies,
    status=st.sampled_from([None, 200, 400, 500]),
    content_type=st.sampled_from(TYPES),
    response=bodies | sse | ndjson | aws,
    complete=st.booleans(),
)
def test_wire_parsers_take_any_bytes(path, request, status, content_type, response, complete):
    result = wire.parse_exchange(
        "POST", path, request, status, content_type, response, response_complete=complete
    )
    no_internal_error(result)


@FUZZ
@given(stream=sse, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_chunk_boundaries_change_nothing(stream, cuts):
    tap = BodyTap(limit=1 << 20)
    edges = sorted({0, len(stream), *(c for c in cuts if c < len(stream))})
    passed = b"".join(tap(stream[a:b]) for a, b in zip(edges, edges[1:], strict=False))
    tap(b"")
    assert passed == stream and tap.body() == stream  # forwarded and kept byte for byte
    whole = wire.parse_exchange(
        "POST", "/v1/chat/completions", b"{}", 200, "text/event-stream", stream
    )
    split = wire.parse_exchange(
        "POST", "/v1/chat/completions", b"{}", 200, "text/event-stream", tap.body()
    )
    assert whole == split
    no_internal_error(whole)


@FUZZ
@given(
    request=bodies,
    response=bodies | sse,
    encoding=st.sampled_from([None, "gzip", "br", "zstd", "deflate", "bogus", "gzip, br"]),
    compress=st.booleans(),
    path=st.sampled_from(PATHS),
)
def test_capture_rows_from_any_body_and_encoding(request, response, encoding, compress, path):
    body = gzip.compress(response) if compress and encoding == "gzip" else response
    now = time.time()
    headers = [("content-encoding", encoding)] if encoding else []
    raw = RawExchange(
        exchange_id="e1",
        started_at=now,
        method="POST",
        scheme="https",
        host="api.example.com",
        port=443,
        path=path + "?key=sk-fuzz-secret-123",
        request_headers=[("content-type", "application/json"), *headers],
        request_body=request,
        status_code=200,
        response_headers=[("content-type", "application/json"), *headers],
        response_body=body,
        ended_at=now + 0.1,
    )
    exchange, rows = build_rows(raw, "p1", Redactor.build((), ("key",), ()), SessionTracker())
    assert "internal error" not in (exchange.parse_error or ""), exchange.parse_error
    for table_rows in rows.values():
        for row in table_rows:
            line = encode_row(row)
            assert b"sk-fuzz-secret-123" not in line
            assert json.loads(line)


@FUZZ
@given(
    text=st.text(max_size=400) | json_values.map(json.dumps),
    suffix=st.sampled_from([".jsonl", ".json", ".yaml"]),
)
@example(text="\x1f", suffix=".yaml")  # found by this test: YAML's reader refuses it first
def test_expectation_loader_says_what_is_wrong(text, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"cases{suffix}"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load_cases([path])
        except UserError as exc:
            assert str(exc)


@FUZZ
@given(text=st.text(max_size=400) | json_values.map(json.dumps))
@example(text="\x1f")
def test_replay_config_loader_says_what_is_wrong(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "replay.yaml"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        try:
            load_config(path)
        except UserError as exc:
            assert str(exc)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    garbage=st.lists(st.binary(max_size=60) | json_values.map(lambda v: json.dumps(v).encode())),
    cut=st.integers(min_value=0, max_value=2000),
)
def test_segment_reader_survives_garbage_and_truncation(garbage, cut):
    with tempfile.TemporaryDirectory() as tmp:
        cap = store.init_capture(Path(tmp) / "cap")
        row = {"exchange_id": "good", "session_id": "s", "started_at": "2026-01-01T00:00:00Z"}
        (good,) = SegmentWriter(cap, "p1").write({"exchanges": [row]})
        (bad,) = SegmentWriter(cap, "p2").write({"exchanges": [row | {"exchange_id": "b"}]})
        bad.write_bytes((bad.read_bytes() + b"\n".join(garbage))[:cut])
        ids = {r[0] for r in store.query(cap, "SELECT exchange_id FROM exchanges")[1]}
        assert "good" in ids
        store.compact(cap)
        after = {r[0] for r in store.query(cap, "SELECT exchange_id FROM exchanges")[1]}
        assert after == ids
