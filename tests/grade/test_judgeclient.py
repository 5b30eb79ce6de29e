"""toolproxy.grade.judgeclient against a real HTTP server playing scripted replies (the
real openai SDK): the judge's sync client."""

from __future__ import annotations

import pytest

from toolproxy.capture.proxy import free_port
from toolproxy.grade import judgeclient as llm
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


@pytest.mark.parametrize("status", [401, 200])
def test_a_key_the_endpoint_echoes_is_taken_out_of_the_error(
    scripted_upstream, monkeypatch, status
):
    # providers quote the key they refused; the error becomes the judged field's detail,
    # which `grade` stores: the key must not go with it
    monkeypatch.setenv("TEST_LLM_KEY", "sk-live-echoed-0123456789")
    message = "Incorrect API key provided: sk-live-echoed-0123456789. Find your key online"
    reply = (
        Reply(status=401, error_body={"error": {"message": message}})
        if status == 401
        else Reply(raw_body=f'{{"message": "{message}"}}', content_type="application/json")
    )
    scripted_upstream.set_script(Script.of(reply))
    got = client(scripted_upstream).complete(HELLO)
    assert not got.ok and "Incorrect API key provided: [REDACTED]" in got.error
    assert "sk-live-echoed" not in got.model_dump_json()


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


def test_long_error_messages_are_cut_to_one_line_after_the_key_is_taken_out(
    scripted_upstream, monkeypatch
):
    # the key at the cut: cutting first would have kept its first half
    monkeypatch.setenv("TEST_LLM_KEY", "sk-live-at-the-cut-0123456789")
    # after "HTTP 400: Error code: 400 - " (28 characters) the key straddles the cut
    message = "x" * (llm.MAX_MESSAGE - 40) + "sk-live-at-the-cut-0123456789" + "y\n" * 2000
    error = {"error": {"message": message}}
    scripted_upstream.set_script(Script.of(Reply(status=400, error_body=error)))
    got = client(scripted_upstream).complete(HELLO)
    assert len(got.error) == llm.MAX_MESSAGE and "\n" not in got.error
    assert "sk-live" not in got.error and "[REDACT" in got.error
