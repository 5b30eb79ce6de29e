"""The HTTP side: routing, framing, keep-alive, and every scripted way to break."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from toolproxy.scripted import Reply, Script, ScriptedUpstream
from toolproxy.scripted.handler import route

MESSAGES: Any = [{"role": "user", "content": "hi"}]
CHAT = json.dumps({"model": "m", "messages": MESSAGES}).encode()


def post(
    upstream: ScriptedUpstream, path: str, body: bytes, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", upstream.port, timeout=5)
    conn.request("POST", path, body, {"content-type": "application/json", **headers})
    response = conn.getresponse()
    result = response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    conn.close()
    return result


def raw_exchange(upstream: ScriptedUpstream, data: bytes) -> bytes:
    """Send raw bytes and read until the server closes."""
    with socket.create_connection(("127.0.0.1", upstream.port), timeout=5) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


@pytest.fixture
def oai(scripted_upstream: ScriptedUpstream) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=scripted_upstream.url + "/v1", api_key="k", max_retries=0, timeout=5
    )


@pytest.fixture
def claude(scripted_upstream: ScriptedUpstream) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=scripted_upstream.url, api_key="k", max_retries=0)


def test_route_with_and_without_v1() -> None:
    assert route("/v1/chat/completions") == route("/chat/completions") == "chat"
    assert route("/v1/responses?x=1") == "responses"
    assert route("/v1/messages/") == "messages"
    assert route("/v1/embeddings") is None


def test_bedrocks_paths_route_by_their_action() -> None:
    assert route("/model/anthropic.claude-v2%3A1/converse") == "converse"
    assert route("/model/m/converse-stream") == "converse"
    assert route("/model/m/invoke") == route("/model/m/invoke-with-response-stream") == "messages"
    assert route("/model/m/count-tokens") is None and route("/converse") is None


def test_unknown_path_and_method_are_404_json(scripted_upstream: ScriptedUpstream) -> None:
    status, headers, body = post(scripted_upstream, "/v1/embeddings", b"{}")
    assert status == 404 and headers["content-type"] == "application/json"
    assert "no route for POST /v1/embeddings" in json.loads(body)["error"]["message"]
    conn = http.client.HTTPConnection("127.0.0.1", scripted_upstream.port, timeout=5)
    conn.request("DELETE", "/v1/models")
    assert conn.getresponse().status == 404


def test_models_lists_the_script_keys(scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script(replies={"gpt-a": [Reply()], "default": [Reply()]}))
    conn = http.client.HTTPConnection("127.0.0.1", scripted_upstream.port, timeout=5)
    conn.request("GET", "/v1/models")
    listing = json.loads(conn.getresponse().read())
    assert [m["id"] for m in listing["data"]] == ["gpt-a"]


def test_body_that_is_not_a_json_object_is_a_400(scripted_upstream: ScriptedUpstream) -> None:
    status, _, body = post(scripted_upstream, "/v1/messages", b"{nope")
    assert status == 400 and json.loads(body)["type"] == "error"
    assert post(scripted_upstream, "/v1/chat/completions", b"[1]")[0] == 400


def test_keep_alive_serves_many_requests_on_one_connection(
    scripted_upstream: ScriptedUpstream,
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", scripted_upstream.port, timeout=5)
    for _ in range(3):
        conn.request("POST", "/v1/chat/completions", CHAT)
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("content-length")
        response.read()
    sock = conn.sock
    conn.request("POST", "/v1/chat/completions", CHAT)
    conn.getresponse().read()
    assert conn.sock is sock  # the same socket, never reconnected


def test_chunked_request_body_and_expect_continue(scripted_upstream: ScriptedUpstream) -> None:
    body = b'{"model": "chunky", "messages": []}'
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        b"Expect: 100-continue\r\nConnection: close\r\n\r\n"
        + b"%x\r\n%s\r\n0\r\nx-trailer: 1\r\n\r\n"
        % (len(body), body)
    )
    received = raw_exchange(scripted_upstream, request)
    assert received.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
    assert b"connection: close" in received
    assert scripted_upstream.requests[-1].body == json.loads(body)


def test_http_1_0_closes_after_the_reply(scripted_upstream: ScriptedUpstream) -> None:
    # A stray blank line before the request line is tolerated (RFC 9112 section 2.2).
    request = b"\r\nPOST /chat/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (
        len(CHAT),
        CHAT,
    )
    assert b'"content":"ok"' in raw_exchange(scripted_upstream, request)


def test_malformed_request_head_is_a_400(scripted_upstream: ScriptedUpstream) -> None:
    assert raw_exchange(scripted_upstream, b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    bad_header = b"GET /v1/models HTTP/1.1\r\nno colon here\r\n\r\n"
    assert raw_exchange(scripted_upstream, bad_header).startswith(b"HTTP/1.1 400 ")
    bad_length = b"POST /v1/messages HTTP/1.1\r\nContent-Length: lots\r\n\r\n"
    assert raw_exchange(scripted_upstream, bad_length).startswith(b"HTTP/1.1 400 ")


def test_streams_are_chunked_one_event_per_chunk(scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="abcdef", text_chunk_size=2)))
    body = json.dumps({"model": "m", "messages": [], "stream": True}).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
    )
    received = raw_exchange(scripted_upstream, request % (len(body), body))
    head, _, payload = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head and b"content-length" not in head
    chunks = payload.split(b"\r\n")
    sizes, data = chunks[0::2], chunks[1::2]
    assert sizes[-2:] == [b"0", b""]
    assert all(
        int(size, 16) == len(d) and d.endswith(b"\n\n")
        for size, d in zip(sizes, data[:-1], strict=False)
    )
    assert data[-2] == b"data: [DONE]\n\n"


def test_a_late_end_of_body_still_ends_the_stream(scripted_upstream: ScriptedUpstream) -> None:
    """end_delay_s holds back only the zero chunk: the events and their order are the same."""
    body = json.dumps({"model": "m", "messages": [], "stream": True}).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
    )
    payloads = []
    for late in (0.0, 0.2):
        scripted_upstream.set_script(Script.of(Reply(text="abcdef", end_delay_s=late)))
        received = raw_exchange(scripted_upstream, request % (len(body), body))
        payloads.append(received.partition(b"\r\n\r\n")[2])
    assert payloads[0] == payloads[1] and payloads[1].endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")


def test_rate_limit_arrives_with_retry_after(
    oai: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(status=429, retry_after=2)))
    with pytest.raises(openai.RateLimitError) as caught:
        oai.chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "2"
    assert len(scripted_upstream.requests) == 1  # max_retries=0: no retry behind our back


def test_server_errors_per_sdk(
    oai: openai.OpenAI, claude: anthropic.Anthropic, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(status=500)))
    with pytest.raises(openai.InternalServerError):
        oai.responses.create(model="m", input="hi", stream=True)
    scripted_upstream.set_script(Script.of(Reply(status=529)))
    with pytest.raises(anthropic.InternalServerError) as caught:
        claude.messages.create(model="c", max_tokens=5, messages=MESSAGES)
    assert caught.value.status_code == 529
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "scripted error 529"},
    }


def test_garbage_body_reaches_the_sdk(
    oai: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(raw_body="<html>oops")))
    with pytest.raises(json.JSONDecodeError):
        oai.chat.completions.create(model="m", messages=MESSAGES)
    scripted_upstream.set_script(Script.of(Reply(raw_body="plain", content_type="text/plain")))
    # The SDK hands back a non-JSON body as a string rather than failing.
    assert oai.chat.completions.create(model="m", messages=MESSAGES) == "plain"  # type: ignore[comparison-overlap]


def test_reset_is_a_connection_reset(
    oai: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(reset_before_response=True)))
    with pytest.raises(openai.APIConnectionError) as caught:
        oai.chat.completions.create(model="m", messages=MESSAGES)
    assert "reset" in str(caught.value.__cause__).lower()
    assert len(scripted_upstream.requests) == 1  # the request was read before the reset


def test_hang_meets_the_client_timeout(scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(Reply(hang_s=30)))
    client = openai.OpenAI(
        base_url=scripted_upstream.url + "/v1", api_key="k", max_retries=0, timeout=0.2
    )
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=MESSAGES)


def test_hang_then_close_without_answer(scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(Reply(hang_s=0.01)))
    with pytest.raises(http.client.RemoteDisconnected):
        post(scripted_upstream, "/v1/chat/completions", CHAT)


def test_cut_chat_stream_raises_after_the_events_sent(
    oai: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(
        Script.of(Reply(text="abcdefghijkl", text_chunk_size=2, cut_after_events=3))
    )
    received = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in oai.chat.completions.create(model="m", messages=MESSAGES, stream=True):
            received.append(chunk.choices[0].delta.content)
    assert received == ["", "ab", "cd"]


def test_cut_responses_stream_raises(
    oai: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="abc", cut_after_events=4)))
    kinds = []
    with pytest.raises(openai.APIConnectionError):
        for event in oai.responses.create(model="m", input="hi", stream=True):
            kinds.append(event.type)
    assert len(kinds) == 4 and "response.completed" not in kinds


def test_cut_anthropic_stream_raises_unwrapped(
    claude: anthropic.Anthropic, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="abc", cut_after_events=2)))
    # The anthropic SDK lets the transport error through instead of wrapping it.
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        with claude.messages.stream(model="c", max_tokens=5, messages=MESSAGES) as stream:
            stream.get_final_message()


def test_cut_plain_body(oai: openai.OpenAI, scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="x", cut_after_bytes=10)))
    with pytest.raises(openai.APIConnectionError):
        oai.chat.completions.create(model="m", messages=MESSAGES)


def test_delays_and_extra_headers_still_deliver(
    oai: openai.OpenAI, scripted_upstream: ScriptedUpstream
) -> None:
    slow = Reply(
        text="slow",
        delay_s=0.01,
        first_byte_delay_s=0.01,
        chunk_delay_s=0.005,
        headers={"x-scripted": "yes"},
    )
    scripted_upstream.set_script(Script.of(slow))
    raw = oai.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    assert raw.headers["x-scripted"] == "yes"
    assert raw.parse().choices[0].message.content == "slow"
    stream = oai.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "slow"


def test_gzip_replies_decode_in_the_sdk(
    oai: openai.OpenAI, claude: anthropic.Anthropic, scripted_upstream: ScriptedUpstream
) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="zipped ü", content_encoding="gzip")))
    raw = oai.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    assert raw.headers["content-encoding"] == "gzip"
    assert raw.parse().choices[0].message.content == "zipped ü"
    with claude.messages.stream(model="c", max_tokens=5, messages=MESSAGES) as stream:
        assert "".join(stream.text_stream) == "zipped ü"


def test_a_by_prompt_script_answers_each_task_whatever_the_order() -> None:
    script = Script(
        replies={
            "m | first task": [Reply(text="one")],
            "m | second task": [Reply(text="two")],
            "other | first task": [Reply(text="other one")],
            "default": [Reply(text="fallback")],
        },
        by_prompt=True,
    )
    with ScriptedUpstream(script) as upstream:
        client = openai.OpenAI(base_url=f"{upstream.url}/v1", api_key="x")

        def ask(model: str, prompt: str) -> str | None:
            messages: Any = [{"role": "user", "content": prompt}]
            reply = client.chat.completions.create(model=model, messages=messages)
            return reply.choices[0].message.content

        assert ask("m", "second task") == "two"
        assert ask("m", "first task") == "one"
        assert ask("m", "second task") == "two"  # asked again (a repeat): the same
        assert ask("other", "first task") == "other one"
        assert ask("m", "unknown task") == "fallback"
