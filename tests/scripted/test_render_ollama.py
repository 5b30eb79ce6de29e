"""Ollama /api/chat replies: wire shape, and the real ollama client reading them."""

from __future__ import annotations

import json

import ollama
import pytest

from toolproxy.scripted import Reply, Script, ScriptedCall, ScriptedUpstream
from toolproxy.scripted.context import Context
from toolproxy.scripted.render_ollama import render_body, render_events
from toolproxy.wire.ndjson import ndjson_stream
from toolproxy.wire.ollama import parse_response, parse_stream

WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Zürich"})
BOTH = Reply(text="Checking the weather.", tool_calls=[WEATHER], text_chunk_size=8)


def test_body_and_lines_as_ollama_writes_them():
    body = json.loads(render_body(BOTH, Context("ollama", model="llama3.2")))
    assert body["done"] is True and body["done_reason"] == "stop"
    assert body["message"]["tool_calls"] == [
        {"function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}
    ]
    assert body["prompt_eval_count"] >= 1 and body["eval_count"] >= 1
    lines = render_events(BOTH, Context("ollama", stream=True))
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
    chunks = [json.loads(line) for line in lines]
    assert [c["done"] for c in chunks] == [False, False, False, False, True]
    assert "".join(c["message"]["content"] for c in chunks) == "Checking the weather."
    # the capture's own parser reads both back to the same call
    plain = parse_response(body)
    streamed, notes = parse_stream(ndjson_stream(b"".join(lines), ended=True))
    assert notes == [] and streamed.complete
    assert (
        streamed.tool_calls == plain.tool_calls
        and plain.tool_calls[0].arguments == WEATHER.arguments
    )


def test_the_real_client_streams_and_reads_whole_answers():
    script = Script.of(BOTH, Reply(text="Sunny."), Reply(status=404, error_body=None))
    with ScriptedUpstream(script) as upstream:
        client = ollama.Client(host=upstream.url)
        messages = [{"role": "user", "content": "Weather in Zürich?"}]
        parts = list(client.chat(model="llama3.2", messages=messages, stream=True))
        assert parts[-1].done and "".join(p.message.content or "" for p in parts) == BOTH.text
        (call,) = [c for p in parts for c in p.message.tool_calls or []]
        assert (call.function.name, dict(call.function.arguments)) == (
            "get_weather",
            WEATHER.arguments,
        )
        whole = client.chat(model="llama3.2", messages=messages, stream=False)
        assert whole.message.content == "Sunny." and whole.done_reason == "stop"
        with pytest.raises(ollama.ResponseError) as refused:
            client.chat(model="llama3.2", messages=messages, stream=False)
        assert refused.value.status_code == 404 and "scripted error 404" in refused.value.error
