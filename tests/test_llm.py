"""toolproxy.llm against a real HTTP server playing scripted replies (the real openai SDK):
the judge's sync client and replay's async `acall`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from toolproxy import llm
from toolproxy.proxy import free_port
from toolproxy.replay.model import Candidate, RecordedCall
from toolproxy.scripted import Reply, Script, ScriptedCall

HELLO = [{"role": "user", "content": "hello"}]


def client(scripted_upstream, **options):
    options = {"timeout_s": 5.0, "retries": 0, **options}
    return llm.make_client(scripted_upstream.url + "/v1", "judge-1", "TEST_LLM_KEY", **options)


def test_complete_returns_the_text_and_sends_the_pinned_model_and_params(scripted_upstream):
    scripted_upstream.set_script(Script.of(Reply(text="bonjour", model="judge-1-2025")))
    got = client(scripted_upstream).complete(HELLO, temperature=0)
    assert got.ok and got.text == "bonjour"
    assert got.model == "judge-1-2025" and got.finish_reason == "stop"
    (request,) = scripted_upstream.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {"model": "judge-1", "messages": HELLO, "temperature": 0}


def test_the_key_comes_from_the_named_variable(scripted_upstream, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", "sk-from-env")
    client(scripted_upstream).complete(HELLO)
    monkeypatch.delenv("TEST_LLM_KEY")
    client(scripted_upstream).complete(HELLO)
    auth = [r.headers["authorization"] for r in scripted_upstream.requests]
    assert auth == ["Bearer sk-from-env", f"Bearer {llm.NO_KEY}"]


def test_http_error_is_a_value_and_names_the_key_variable_on_401(scripted_upstream, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", "sk-secret-401")
    scripted_upstream.set_script(Script.of(Reply(status=500), Reply(status=401)))
    c = client(scripted_upstream)
    first, second = c.complete(HELLO), c.complete(HELLO)
    assert (first.text, first.error_kind) == (None, "http_status")
    assert "HTTP 500" in first.error and not first.ok
    assert second.error_kind == "http_status" and "$TEST_LLM_KEY" in second.error
    assert "sk-secret-401" not in second.model_dump_json()


def test_retries_resend_after_a_server_error(scripted_upstream):
    scripted_upstream.set_script(Script.of(Reply(status=503), Reply(text="second time")))
    got = client(scripted_upstream, retries=1).complete(HELLO)
    assert got.text == "second time"
    assert len(scripted_upstream.requests) == 2


@pytest.mark.parametrize(
    "reply",
    [
        Reply(raw_body="<html>garbage</html>", content_type="text/html"),
        Reply(raw_body='{"no": "choices"}', content_type="application/json"),
        Reply(raw_body='"just a string"', content_type="application/json"),
        Reply(tool_calls=[ScriptedCall(name="f", arguments={})]),  # no text content
    ],
    ids=["html", "no-choices", "string", "no-text"],
)
def test_a_200_that_is_not_a_chat_completion_is_a_bad_response(scripted_upstream, reply):
    scripted_upstream.set_script(Script.of(reply))
    got = client(scripted_upstream).complete(HELLO)
    assert (got.text, got.error_kind) == (None, "bad_response")
    assert got.error


def test_a_hang_is_a_timeout(scripted_upstream):
    scripted_upstream.set_script(Script.of(Reply(hang_s=10)))
    got = client(scripted_upstream, timeout_s=0.3).complete(HELLO)
    assert got.error_kind == "timeout" and "0.3" in got.error


def test_cut_body_and_refused_connection_are_connection_errors(scripted_upstream):
    scripted_upstream.set_script(Script.of(Reply(text="a long enough reply", cut_after_bytes=20)))
    cut = client(scripted_upstream).complete(HELLO)
    assert cut.error_kind == "connection"
    refused = llm.make_client(
        f"http://127.0.0.1:{free_port()}/v1", "m", "TEST_LLM_KEY", retries=0
    ).complete(HELLO)
    assert refused.error_kind == "connection" and "cannot reach" in refused.error


def test_long_error_messages_are_cut_to_one_line():
    long = llm._failed("bad_response", "x\n" * 2000)
    assert len(long.error) == llm.MAX_MESSAGE and "\n" not in long.error


# --- acall: replay's async candidate call ----------------------------------------------

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
    got = await llm.acall(cand(scripted_upstream), HELLO, TOOLS, {}, True, "sk-1")
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
    streamed = await llm.acall(cand(scripted_upstream), HELLO, [], {}, True, None)
    assert streamed.text == "hello there, a longer text" and streamed.finish_reason == "stop"
    whole = await llm.acall(cand(scripted_upstream), HELLO, TOOLS, {}, False, None)
    assert whole.calls[0].arguments == {"a": 1} and whole.ttft_ms is None and not whole.stream
    assert whole.latency_ms > 0 and whole.model == "cand-1"
    assert scripted_upstream.requests[0].headers["authorization"] == "Bearer not-needed"
    assert "stream" not in scripted_upstream.requests[1].body


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
    got = await llm.acall(cand(scripted_upstream, timeout_s=0.5), HELLO, [], {}, stream, None)
    assert (got.error_kind, got.retry_after) == (kind, retry_after)
    assert not got.ok and got.error and got.response["error_kind"] == kind
    assert got.retryable == (kind in llm.RETRYABLE)
    assert len(scripted_upstream.requests) == 1  # the SDK itself never retries


async def test_acall_refused_connection_and_client_reuse(scripted_upstream):
    refused = Candidate(name="x", base_url=f"http://127.0.0.1:{free_port()}/v1", model="m")
    got = await llm.acall(refused, HELLO, [], {}, False, None)
    assert got.error_kind == "connection"
    client = llm.make_async_client(cand(scripted_upstream), "k")
    try:
        for _ in range(2):
            assert (
                await llm.acall(cand(scripted_upstream), HELLO, [], {}, False, None, client=client)
            ).ok
    finally:
        await client.close()
    assert {r.headers["authorization"] for r in scripted_upstream.requests} == {"Bearer k"}


def test_build_body_merges_params_and_keeps_its_own_keys():
    c = Candidate(name="c", base_url="http://x/v1", model="m", params={"temperature": 1})
    body = llm.build_body(
        c,
        HELLO,
        [],
        {"temperature": 0, "tool_choice": "auto", "model": "old", "stream": True, "seed": 3},
        False,
    )
    assert body == {"model": "m", "messages": HELLO, "temperature": 1, "seed": 3}
    with_tools = llm.build_body(c, HELLO, TOOLS, {"tool_choice": "required"}, True)
    assert with_tools["tool_choice"] == "required" and with_tools["tools"] == TOOLS


def test_retry_after_reads_seconds_dates_and_ignores_junk():
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    assert 80 < llm.retry_after({"retry-after": later}) <= 90
    assert llm.retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert llm.retry_after({"retry-after": "2.5"}) == 2.5
    assert llm.retry_after({"retry-after": "soon"}) is None
    assert llm.retry_after({}) is None


def test_reply_turn_and_assistant_message():
    reply = llm.CandidateReply(
        text="hi",
        calls=[RecordedCall(call_id="c1", name="f", arguments_raw="{}", arguments={})],
        finish_reason="tool_calls",
        ttft_ms=5.0,
    )
    turn = reply.turn(2, 1, "ex1")
    assert (turn.step, turn.attempt, turn.exchange_id, turn.ttft_ms) == (2, 1, "ex1", 5.0)
    assert reply.assistant_message() == {
        "role": "assistant",
        "content": "hi",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    assert llm.CandidateReply(text="x").assistant_message() == {"role": "assistant", "content": "x"}
