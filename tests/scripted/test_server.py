"""The upstream as a whole: lifecycle, recorded requests, keys, replay, concurrency, CLI."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest

from toolproxy.scripted import KEY_HEADER, Reply, Script, ScriptedCall, ScriptedUpstream

MESSAGES: Any = [{"role": "user", "content": "hi"}]
TOOLY = Reply(text="Sure: ü", tool_calls=[ScriptedCall(name="f", arguments={"a": "✓"})])
REQUESTS = {
    "/v1/chat/completions": {
        "model": "m",
        "messages": MESSAGES,
        "stream_options": {"include_usage": True},
    },
    "/v1/responses": {"model": "m", "input": "hi"},
    "/v1/messages": {"model": "m", "max_tokens": 5, "messages": MESSAGES},
}


def fetch(upstream: ScriptedUpstream, path: str, body: dict[str, Any]) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", upstream.port, timeout=5)
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    data = conn.getresponse().read()
    conn.close()
    return data


def play_all(upstream: ScriptedUpstream) -> list[bytes]:
    return [
        fetch(upstream, path, {**body, "stream": stream})
        for path, body in REQUESTS.items()
        for stream in (False, True)
    ]


def test_url_and_port(scripted_upstream: ScriptedUpstream) -> None:
    assert scripted_upstream.url == f"http://127.0.0.1:{scripted_upstream.port}"
    assert scripted_upstream.port > 0


def test_deterministic_replay_is_byte_identical(scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(TOOLY, Reply(text="second")))
    first = play_all(scripted_upstream)
    scripted_upstream.reset()
    assert play_all(scripted_upstream) == first
    assert b"second" in first[-1]  # the script advanced within one play-through


def test_without_determinism_ids_differ() -> None:
    with ScriptedUpstream(Script.of(TOOLY)) as upstream:
        assert not upstream.deterministic
        first = play_all(upstream)
        upstream.reset()
        second = play_all(upstream)
    assert all(a != b for a, b in zip(first, second, strict=True))


def test_determinism_may_come_from_the_script() -> None:
    with ScriptedUpstream(Script.of(TOOLY, deterministic=True)) as upstream:
        assert upstream.deterministic
    with ScriptedUpstream(Script.of(TOOLY, deterministic=True), deterministic=False) as upstream:
        assert not upstream.deterministic


def test_key_by_header_then_model(scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(
        Script(
            replies={
                "default": [Reply(text="fallback")],
                "gpt-a": [Reply(text="by model")],
                "case-7": [Reply(text="by header")],
            }
        )
    )
    client = openai.OpenAI(base_url=scripted_upstream.url + "/v1", api_key="k", max_retries=0)

    def ask(model: str, **headers: str) -> str | None:
        completion = client.chat.completions.create(
            model=model, messages=MESSAGES, extra_headers=headers
        )
        return completion.choices[0].message.content

    assert ask("gpt-a") == "by model"
    assert ask("gpt-a", **{KEY_HEADER: "case-7"}) == "by header"
    assert ask("gpt-unknown") == "fallback"
    assert [r.key for r in scripted_upstream.requests] == ["gpt-a", "case-7", "gpt-unknown"]


def test_requests_are_recorded(scripted_upstream: ScriptedUpstream) -> None:
    before = time.time()
    client = openai.OpenAI(base_url=scripted_upstream.url + "/v1", api_key="sk-test", max_retries=0)
    client.chat.completions.create(model="gpt-r", messages=MESSAGES, temperature=0.5)
    (request,) = scripted_upstream.requests
    assert (request.method, request.path, request.key) == ("POST", "/v1/chat/completions", "gpt-r")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {"model": "gpt-r", "messages": MESSAGES, "temperature": 0.5}
    assert json.loads(request.raw) == request.body
    assert before <= request.arrived_at <= time.time()
    scripted_upstream.reset()
    assert len(scripted_upstream.requests) == 1  # reset keeps what was received
    scripted_upstream.clear_requests()
    assert scripted_upstream.requests == []


def test_set_script_starts_the_new_script_over(scripted_upstream: ScriptedUpstream) -> None:
    body = REQUESTS["/v1/chat/completions"]
    assert b'"content":"ok"' in fetch(scripted_upstream, "/v1/chat/completions", body)
    scripted_upstream.set_script(Script.of(Reply(text="one"), Reply(text="two")))
    texts = [fetch(scripted_upstream, "/v1/chat/completions", body) for _ in range(3)]
    assert [b'"one"' in t for t in texts] == [True, False, False]
    assert all(b'"two"' in t for t in texts[1:])
    assert b"chatcmpl-default_0001" in texts[0]


def test_serves_32_concurrent_clients(scripted_upstream: ScriptedUpstream) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="hi", chunk_delay_s=0.002), cycle=True))
    body = {**REQUESTS["/v1/chat/completions"], "stream": True}

    def client(_: int) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", scripted_upstream.port, timeout=10)
        ok = 0
        for _ in range(5):
            conn.request("POST", "/v1/chat/completions", json.dumps(body))
            ok += conn.getresponse().read().endswith(b"data: [DONE]\n\n")
        return ok

    with ThreadPoolExecutor(32) as pool:
        assert sum(pool.map(client, range(32))) == 160
    bodies = {r.raw for r in scripted_upstream.requests}
    assert len(scripted_upstream.requests) == 160 and len(bodies) == 1


def test_stop_wakes_a_hanging_reply_and_is_idempotent() -> None:
    upstream = ScriptedUpstream(Script.of(Reply(hang_s=120)))
    errors: list[BaseException] = []

    def wait_forever() -> None:
        try:
            fetch(upstream, "/v1/chat/completions", REQUESTS["/v1/chat/completions"])
        except (OSError, http.client.HTTPException) as exc:
            errors.append(exc)

    thread = threading.Thread(target=wait_forever)
    thread.start()
    while not upstream.requests:
        time.sleep(0.01)
    upstream.stop()
    upstream.stop()
    thread.join(timeout=10)
    assert not thread.is_alive() and len(errors) == 1


def test_serve_forever_prints_the_url_and_serves(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("replies:\n  default:\n    - text: from file\n")
    code = (
        "from toolproxy.scripted import serve_forever; "
        f"serve_forever({str(script)!r}, '127.0.0.1', 0)"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("scripted upstream listening on http://127.0.0.1:")
        client = openai.OpenAI(base_url=line.split()[-1] + "/v1", api_key="k", max_retries=0)
        reply = client.chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content == "from file"
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0


def test_ctrl_c_reaches_the_server_when_the_suite_was_started_ignoring_it() -> None:
    """A suite launched as a background job without job control (`cmd &` in a script)
    inherits SIGINT ignored, and so would every process it starts: the Ctrl-C tests' stops
    would never arrive. The suite restores the handler (tests/conftest.py)."""
    test = f"{__file__}::test_serve_forever_prints_the_url_and_serves"
    launcher = (
        "import signal, subprocess, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        f"sys.exit(subprocess.call([sys.executable, '-m', 'pytest', '-q', '-p', "
        f"'no:cacheprovider', {test!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", launcher], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@pytest.mark.parametrize("path", list(REQUESTS))
def test_model_override_replaces_the_echo(scripted_upstream: ScriptedUpstream, path: str) -> None:
    scripted_upstream.set_script(Script.of(Reply(text="x", model="served-model")))
    assert json.loads(fetch(scripted_upstream, path, REQUESTS[path]))["model"] == "served-model"


def test_the_default_script_calls_a_tool_then_answers():
    import subprocess
    import sys

    import openai

    from toolproxy.capture.proxy import free_port, wait_listening

    port = free_port()
    argv = [sys.executable, "-m", "toolproxy.cli", "upstream", "--port", str(port)]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_listening("127.0.0.1", port, server)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        ask = [{"role": "user", "content": "weather?"}]
        first = client.chat.completions.create(model="any", messages=ask).choices[0]
        assert first.message.tool_calls[0].function.name == "get_weather"
        assert first.finish_reason == "tool_calls"
        second = client.chat.completions.create(model="any", messages=ask).choices[0]
        assert second.message.content == "It is 18 °C in Paris."
        broken = client.chat.completions.create(model="broken-model", messages=ask).choices[0]
        assert broken.message.tool_calls[0].function.arguments == '{"city": "Par'
    finally:
        server.terminate()
        server.wait(10)
