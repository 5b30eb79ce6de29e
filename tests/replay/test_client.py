"""toolproxy.replay.client against a real HTTP server playing scripted replies (the real
openai SDK over its aiohttp transport): streamed and whole replies, every failure a value."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from toolproxy.capture.proxy import free_port
from toolproxy.replay import client
from toolproxy.replay.model import Candidate
from toolproxy.replay.reply import RETRYABLE
from toolproxy.scripted import Reply, Script, ScriptedCall

HELLO = [{"role": "user", "content": "hello"}]


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def cand(upstream, **fields) -> Candidate:
    fields = {"timeout_s": 5.0, **fields}
    return Candidate(name="c", base_url=upstream.url + "/v1", model="cand-1", **fields)


async def test_acall_streams_and_reassembles_parallel_tool_calls(scripted_upstream):
    calls = [
        ScriptedCall(name="f", arguments={"city": "Paris", "days": [1, 2, 3]}),
        ScriptedCall(name="g", arguments={"q": "a longer query string"}),
    ]
    scripted_upstream.set_script(Script.of(Reply(tool_calls=calls, args_chunk_size=3)))
    got = await client.acall(cand(scripted_upstream), HELLO, TOOLS, {}, True, "sk-1")
    assert got.ok and got.stream and got.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in got.calls] == [
        ("f", {"city": "Paris", "days": [1, 2, 3]}),
        ("g", {"q": "a longer query string"}),
    ]
    assert all(c.call_id for c in got.calls) and got.calls[0].call_id != got.calls[1].call_id
    assert got.ttft_ms > 0 and got.tps > 0 and got.output_tokens and got.input_tokens
    (request,) = scripted_upstream.requests
    assert request.body == got.request
    assert got.request["stream"] is True
    assert got.request["stream_options"] == {"include_usage": True}
    assert request.headers["authorization"] == "Bearer sk-1"
    assert got.response["tool_calls"][1]["name"] == "g" and got.response["status"] == 200


async def test_acall_streamed_text_and_non_streamed_calls(scripted_upstream):
    scripted_upstream.set_script(
        Script.of(
            Reply(text="hello there, a longer text", text_chunk_size=4),
            Reply(tool_calls=[ScriptedCall(name="f", arguments={"a": 1})]),
        )
    )
    streamed = await client.acall(cand(scripted_upstream), HELLO, [], {}, True, None)
    assert streamed.text == "hello there, a longer text" and streamed.finish_reason == "stop"
    whole = await client.acall(cand(scripted_upstream), HELLO, TOOLS, {}, False, None)
    assert whole.calls[0].arguments == {"a": 1} and not whole.stream
    assert whole.latency_ms > 0 and whole.model == "cand-1"
    assert scripted_upstream.requests[0].headers["authorization"] == "Bearer not-needed"
    assert "stream" not in scripted_upstream.requests[1].body


async def test_acall_non_streamed_times_the_first_body_byte_as_the_capture_does(
    scripted_upstream,
):
    """A whole reply's `ttft_ms` is the time to its first body byte, what the capture
    records as `ttfb_ms` for a non-streamed exchange, so `avg_ttft_ms` is known for
    `stream: never` candidates too; the body is still read whole."""
    text = "a reply long enough to arrive in more than one read " * 200
    scripted_upstream.set_script(
        Script.of(Reply(text=text, delay_s=0.15, first_byte_delay_s=0.1), Reply(status=503))
    )
    whole = await client.acall(cand(scripted_upstream), HELLO, [], {}, False, None)
    assert whole.ok and whole.text == text
    assert whole.ttft_ms is not None and 250 <= whole.ttft_ms <= whole.latency_ms
    failed = await client.acall(cand(scripted_upstream), HELLO, [], {}, False, None)
    assert failed.error_kind == "server_error" and failed.ttft_ms is None


@pytest.mark.parametrize(
    ("reply", "stream", "kind", "retry_after"),
    [
        (Reply(status=429, retry_after=3), False, "rate_limited", 3.0),
        (Reply(status=429, headers={"retry-after-ms": "1500"}), True, "rate_limited", 1.5),
        (Reply(status=503), True, "server_error", None),
        (Reply(status=404), False, "client_error", None),
        (Reply(raw_body="<html>x</html>", content_type="text/html"), False, "bad_response", None),
        (Reply(raw_body="<html>x</html>", content_type="text/html"), True, "bad_response", None),
        (
            Reply(raw_body="data: {broken\n\n", content_type="text/event-stream"),
            True,
            "bad_response",
            None,
        ),
        (
            Reply(raw_body='{"no": "choices"}', content_type="application/json"),
            False,
            "bad_response",
            None,
        ),
        (Reply(text="a long enough reply text", cut_after_events=2), True, "cut_stream", None),
        (Reply(text="a long enough reply text", cut_after_bytes=20), False, "connection", None),
        (Reply(reset_before_response=True), False, "connection", None),
        (Reply(hang_s=5), True, "timeout", None),
    ],
    ids=[
        "429",
        "429-ms",
        "503",
        "404",
        "html",
        "html-stream",
        "bad-sse",
        "no-choices",
        "cut-stream",
        "cut-body",
        "reset",
        "hang",
    ],
)
async def test_acall_failures_are_values(scripted_upstream, reply, stream, kind, retry_after):
    scripted_upstream.set_script(Script.of(reply))
    got = await client.acall(cand(scripted_upstream, timeout_s=0.5), HELLO, [], {}, stream, None)
    assert (got.error_kind, got.retry_after) == (kind, retry_after)
    assert not got.ok and got.error and got.response["error_kind"] == kind
    assert got.retryable == (kind in RETRYABLE)
    assert len(scripted_upstream.requests) == 1  # the SDK itself never retries


async def test_acall_refused_connection_and_client_reuse(scripted_upstream):
    refused = Candidate(name="x", base_url=f"http://127.0.0.1:{free_port()}/v1", model="m")
    got = await client.acall(refused, HELLO, [], {}, False, None)
    assert got.error_kind == "connection"
    sdk = client.make_async_client(cand(scripted_upstream), "k")
    try:
        for _ in range(2):
            assert (
                await client.acall(cand(scripted_upstream), HELLO, [], {}, False, None, client=sdk)
            ).ok
    finally:
        await sdk.close()
    assert {r.headers["authorization"] for r in scripted_upstream.requests} == {"Bearer k"}


def test_retry_after_reads_seconds_dates_and_ignores_junk():
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    assert 80 < client.retry_after({"retry-after": later}) <= 90
    assert client.retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert client.retry_after({"retry-after": "2.5"}) == 2.5
    assert client.retry_after({"retry-after": "soon"}) is None
    assert client.retry_after({}) is None


@pytest.mark.parametrize("stream", [False, True])
async def test_a_key_the_candidate_echoes_is_out_of_every_text_before_it_is_cut(
    scripted_upstream, stream
):
    # the sink scrubs whole keys from what it stores; a key cut in half by the 2,000
    # characters kept of an error body, or the 500 of a message, would keep its half.
    # Quoted over and over, the key straddles every cut.
    key = "sk-live-echoed-at-the-cut-0123456789"
    message = " ".join([key] * 300)
    scripted_upstream.set_script(
        Script.of(Reply(status=401, error_body={"error": {"message": message}}))
    )
    got = await client.acall(cand(scripted_upstream), HELLO, [], {}, stream, key)
    assert got.error_kind == "client_error" and len(got.response["body"]) == client._BODY_CHARS
    for text in (got.error, got.response["body"]):
        assert key[:8] not in text and "[REDACTED]" in text
