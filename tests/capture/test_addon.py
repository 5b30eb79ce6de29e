"""Addon hooks driven without a proxy, on mitmproxy test flows."""

import json

import pytest
from mitmproxy import exceptions
from mitmproxy.test import taddons, tflow, tutils

from toolproxy import store
from toolproxy.capture.addon import ToolproxyAddon

KEY = "sk-addon-secret-0123456789"

CHAT_REQUEST = {
    "model": "gpt-test",
    "messages": [{"role": "user", "content": "weather in Paris?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ],
}
CHAT_RESPONSE = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-test-2024",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
}


def make_flow(body: bytes, response_body: bytes | None, path: str = "/v1/chat/completions"):
    req = tutils.treq(
        method=b"POST",
        path=path.encode(),
        host="api.example.com",
        port=443,
        scheme=b"https",
        content=None,
        headers=(
            (b"content-type", b"application/json"),
            (b"authorization", f"Bearer {KEY}".encode()),
        ),
    )
    flow = tflow.tflow(req=req)
    flow.request.raw_content = None  # body arrives through the streaming tap
    return flow, body, response_body


def play(addon, flow, body, response_body, chunk=7, status=200):
    addon.requestheaders(flow)
    assert callable(flow.request.stream)
    sent = b"".join(flow.request.stream(body[i : i + chunk]) for i in range(0, len(body), chunk))
    flow.request.stream(b"")
    assert sent == body
    if response_body is None:
        flow.error = tflow.terr("peer closed connection")
        addon.error(flow)
        return b""
    flow.response = tutils.tresp(
        status_code=status, content=None, headers=((b"content-type", b"application/json"),)
    )
    addon.responseheaders(flow)
    got = b"".join(
        flow.response.stream(response_body[i : i + chunk])
        for i in range(0, len(response_body), chunk)
    )
    flow.response.stream(b"")
    addon.response(flow)
    return got


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    """mitmproxy's test context configures the addon with its defaults first, and the
    default capture (`captures/default`) is relative to the working directory."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def capture(tmp_path):
    return tmp_path / "cap"


def run_addon(capture, plays, worker=False, **options):
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        tctx.configure(
            addon,
            toolproxy_capture=str(capture),
            toolproxy_flush_interval="0.05",
            toolproxy_worker=worker,
            **options,
        )
        results = [play(addon, *p) for p in plays]
        addon.done()
    return addon, results


@pytest.mark.parametrize("worker", [True, False], ids=["worker-process", "thread"])
def test_records_a_chat_exchange_and_passes_bytes_through(capture, worker):
    body, resp = json.dumps(CHAT_REQUEST).encode(), json.dumps(CHAT_RESPONSE).encode()
    _, (got,) = run_addon(capture, [make_flow(body, resp)], worker=worker)
    assert got == resp
    cols, rows = store.query(
        capture,
        "SELECT wire_format, model_requested, model_returned, parse_status, status_code, "
        "input_tokens, request_headers->>'authorization' FROM exchanges",
    )
    assert rows == [("openai_chat", "gpt-test", "gpt-test-2024", "ok", 200, 10, "[REDACTED]")]
    _, calls = store.query(capture, "SELECT name, arguments_raw, call_id FROM tool_calls")
    assert calls == [("get_weather", '{"city":"Paris"}', "call_1")]
    _, tools = store.query(capture, "SELECT name, schema_hash FROM tools_offered")
    assert tools[0][0] == "get_weather" and len(tools[0][1]) == 16


def test_malformed_body_is_kept_raw_with_a_parse_error(capture):
    garbage = b"{not json at all"
    addon, (got,) = run_addon(capture, [make_flow(json.dumps(CHAT_REQUEST).encode(), garbage)])
    assert got == garbage
    _, rows = store.query(capture, "SELECT parse_status, parse_error, response_body FROM exchanges")
    assert rows[0][0] == "error" and rows[0][1] and rows[0][2] == garbage.decode()


def test_upstream_error_without_response_is_recorded(capture):
    run_addon(capture, [make_flow(json.dumps(CHAT_REQUEST).encode(), None)])
    _, rows = store.query(capture, "SELECT status_code, error_kind, error_message FROM exchanges")
    assert rows == [(None, "connection_reset", "peer closed connection")]


def test_secret_never_reaches_any_file(capture):
    body = json.dumps({**CHAT_REQUEST, "api_key": KEY}).encode()
    resp = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}).encode()
    flow, b, r = make_flow(body, resp, path=f"/v1/chat/completions?key={KEY}")
    run_addon(capture, [(flow, b, r)])
    store.compact(capture)
    for path in capture.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    _, rows = store.query(capture, "SELECT path, error_kind FROM exchanges")
    assert "REDACTED" in rows[0][0]


def test_bad_options_raise_options_error(capture):
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, toolproxy_capture=str(capture))
        for bad in (
            {"toolproxy_flush_interval": "0"},
            {"toolproxy_flush_interval": "11"},
            {"toolproxy_flush_interval": "soon"},
            {"toolproxy_retry_window": "-1"},
            {"toolproxy_retry_window": "later"},
            {"toolproxy_max_body": -1},
            {"toolproxy_session_header": " "},
            {"toolproxy_redact_json": ["a..b"]},
            {"toolproxy_redact_json": ["api_key", "a."]},
            {"toolproxy_redact_headers": ["x-api-key", " "]},
            {"toolproxy_redact_query": [""]},
        ):
            (option,) = bad
            with pytest.raises(exceptions.OptionsError, match=option):
                tctx.configure(addon, **bad)
        addon.done()


def test_the_capture_defaults_to_toolproxy_capture(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLPROXY_CAPTURE", str(tmp_path / "from-env"))
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        assert tctx.options.toolproxy_capture == str(tmp_path / "from-env")
        tctx.configure(addon, toolproxy_flush_interval="0.05")
        addon.done()
    assert store.summary(tmp_path / "from-env")["tables"]["exchanges"] == 0  # made there


def test_capture_path_that_is_a_file_is_rejected(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        with pytest.raises(exceptions.OptionsError, match="not a directory"):
            tctx.configure(addon, toolproxy_capture=str(target))


def test_hook_failure_is_counted_and_the_flow_is_untouched(capture):
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        tctx.configure(
            addon,
            toolproxy_capture=str(capture),
            toolproxy_flush_interval="0.05",
            toolproxy_worker=False,
        )
        flow = tflow.tflow(resp=True)
        flow.metadata = None  # type: ignore[assignment]  # any hook error must be swallowed
        before = flow.response.content
        addon.requestheaders(flow)
        addon.responseheaders(flow)
        addon.response(flow)
        assert flow.response.content == before
        assert addon.hook_errors >= 1
        addon.done()


def test_response_submitted_once_even_if_error_follows(capture):
    body, resp = json.dumps(CHAT_REQUEST).encode(), json.dumps(CHAT_RESPONSE).encode()
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        tctx.configure(
            addon,
            toolproxy_capture=str(capture),
            toolproxy_flush_interval="0.05",
            toolproxy_worker=False,
        )
        flow, b, r = make_flow(body, resp)
        play(addon, flow, b, r)
        flow.error = tflow.terr("client disconnected")
        addon.error(flow)
        addon.done()
    _, rows = store.query(capture, "SELECT count(*) FROM exchanges")
    assert rows == [(1,)]


def test_listens_on_loopback_unless_told_otherwise(capture):
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        tctx.options.update(listen_host="")
        tctx.configure(addon, toolproxy_capture=str(capture), listen_host="")
        assert tctx.options.listen_host == "127.0.0.1"
        tctx.configure(addon, listen_host="0.0.0.0")
        assert tctx.options.listen_host == "0.0.0.0"
        addon.done()


def test_flows_open_when_the_proxy_stops_are_recorded_as_far_as_they_got(capture):
    body, resp = json.dumps(CHAT_REQUEST).encode(), json.dumps(CHAT_RESPONSE).encode()
    addon = ToolproxyAddon()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, toolproxy_capture=str(capture), toolproxy_worker=False)
        # Answered in full, but mitmproxy stopped before the response hook ran.
        answered, _, _ = make_flow(body, resp)
        addon.requestheaders(answered)
        answered.request.stream(body)
        answered.request.stream(b"")
        answered.response = tutils.tresp(content=None)
        addon.responseheaders(answered)
        answered.response.stream(resp)
        answered.response.stream(b"")
        # Still waiting for its answer.
        waiting, _, _ = make_flow(body, None)
        addon.requestheaders(waiting)
        waiting.request.stream(body)
        waiting.request.stream(b"")
        addon.done()
        addon.response(answered)  # a hook that comes after done() records nothing twice
    _, rows = store.query(
        capture, "SELECT exchange_id, error_kind, status_code FROM exchanges ORDER BY started_at"
    )
    got = {r[0]: r[1:] for r in rows}
    assert got == {answered.id: (None, 200), waiting.id: ("connection_reset", None)}
