"""Every request the proxy passes leaves a row, with the status it deserves: bodies the
parsers cannot handle, valid JSON the Python side finds awkward, an upstream that hangs."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from toolproxy.scripted import Reply, Script

from ..e2e.conftest import wait_rows

JSON = {"content-type": "application/json"}


def test_a_body_nested_10000_deep_is_an_exchange_with_parse_status_error(proxy, capture):
    deep = b'{"model": "m", "messages": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    r = httpx.post(proxy.url + "/v1/chat/completions", content=deep, headers=JSON)
    assert r.status_code == 400  # the upstream's own answer: it cannot read the body either
    got = wait_rows(
        capture, "SELECT parse_status, parse_error, request_bytes, status_code FROM exchanges", 1
    )
    assert len(got) == 1
    status, error, size, code = got[0]
    assert status == "error" and "request" in error and code == 400
    assert size == len(deep)


def test_lone_surrogate_escapes_parse_like_any_json(proxy, capture, upstream):
    # Valid JSON that no UTF-8 encoder can write back as text: "\\ud83d" without its pair.
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": "lookup", "arguments": json.dumps({"q": "a\ud800b"})}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "finish_reason": "tool_calls", "message": message}
    reply = {"id": "r1", "object": "chat.completion", "model": "m", "choices": [choice]}
    upstream.set_script(
        Script.of(Reply(raw_body=json.dumps(reply), content_type="application/json"))
    )
    request = {
        "model": "m",
        "messages": [{"role": "user", "content": "half a pair: \ud83d"}],
        "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {}}}],
    }
    body = json.dumps(request).encode()  # ensure_ascii: the surrogate goes as an escape
    r = httpx.post(proxy.url + "/v1/chat/completions", content=body, headers=JSON)
    assert r.status_code == 200 and r.content == json.dumps(reply).encode()
    got = wait_rows(capture, "SELECT parse_status, parse_error, messages FROM exchanges", 1)
    assert [(s, e) for s, e, _ in got] == [("ok", None)]
    assert "half a pair" in got[0][2]
    calls = wait_rows(capture, "SELECT name, arguments_raw, parse_error FROM tool_calls", 1)
    assert calls[0][0] == "lookup" and calls[0][2] is None
    assert json.loads(calls[0][1]) == {"q": "a\ud800b"}  # the raw text keeps the escape


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_that_never_answers_is_a_timeout(proxy, capture, upstream, stream):
    upstream.set_script(Script.of(Reply(hang_s=30)))
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="k", max_retries=0, timeout=1.0)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=stream
        )
    got = wait_rows(capture, "SELECT error_kind, status_code, error_message FROM exchanges", 1)
    assert [(k, s) for k, s, _ in got] == [("timeout", None)], got
    assert "no response" in got[0][2]
