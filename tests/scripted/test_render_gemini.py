"""Gemini generateContent replies: wire shape, and the real google-genai client reading
them (streamed as SSE, as the client asks, and whole)."""

from __future__ import annotations

import json

import pytest
from google import genai
from google.genai import errors, types

from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.scripted.context import Context
from toolproxy.scripted.render_gemini import render_body, render_events
from toolproxy.wire.common import decode_stream
from toolproxy.wire.gemini import array_stream, parse_response, parse_stream
from toolproxy.wire.sse import iter_sse_events

WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Zürich"})
BOTH = Reply(text="Checking the weather.", tool_calls=[WEATHER], text_chunk_size=8)


def test_body_sse_and_array_streams_read_back_the_same():
    body = json.loads(render_body(BOTH, Context("gemini", model="gemini-2.5-flash")))
    (candidate,) = body["candidates"]
    assert candidate["finishReason"] == "STOP" and body["modelVersion"] == "gemini-2.5-flash"
    assert candidate["content"]["parts"][1] == {
        "functionCall": {"name": "get_weather", "args": {"city": "Zürich"}}
    }
    plain = parse_response(body)
    sse = b"".join(render_events(BOTH, Context("gemini", stream=True)))
    streamed, notes = parse_stream(decode_stream(*iter_sse_events(sse)))
    array = b"".join(render_events(BOTH, Context("gemini", stream=True, array=True)))
    assert array.startswith(b"[") and array.endswith(b"]") and json.loads(array)
    listed, _ = parse_stream(array_stream(array, ended=True))
    for got in (streamed, listed):
        assert got.complete and got.text == "Checking the weather."
        assert got.tool_calls == plain.tool_calls and got.usage == plain.usage
    assert notes == []


def test_the_real_client_streams_reads_whole_answers_and_errors():
    script = Script.of(BOTH, Reply(text="Sunny."), Reply(status=429))
    with ScriptedUpstream(script) as upstream:
        client = genai.Client(
            api_key="k-test-0123456789", http_options=types.HttpOptions(base_url=upstream.url)
        )
        parts = list(
            client.models.generate_content_stream(model="gemini-2.5-flash", contents="Weather?")
        )
        assert "".join(p.text or "" for p in parts) == BOTH.text
        (call,) = [c for p in parts for c in p.function_calls or []]
        assert (call.name, call.args) == ("get_weather", WEATHER.arguments)
        whole = client.models.generate_content(model="gemini-2.5-flash", contents="Weather?")
        assert (
            whole.text == "Sunny." and whole.candidates[0].finish_reason == types.FinishReason.STOP
        )
        with pytest.raises(errors.ClientError) as limited:
            client.models.generate_content(model="gemini-2.5-flash", contents="Weather?")
        assert limited.value.code == 429 and limited.value.status == "RESOURCE_EXHAUSTED"
        assert upstream.requests[0].path.endswith(":streamGenerateContent?alt=sse")
