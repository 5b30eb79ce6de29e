"""HTTP/2 and websocket traffic pass through toolproxy as through bare mitmdump: the same
answers, and the exchange that carried them is recorded."""

from __future__ import annotations

import httpx
import pytest

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port

from ..e2e.conftest import assert_clean, wait_rows
from ..e2e.tls import make_cert, server_context
from .nasty import CHAT, REQUEST
from .passthrough import h2_upstream, ws_session, ws_upstream


def explicit(capture, confdir, cert, addon: bool) -> RunningProxy:
    spec = ProxySpec(
        capture=capture,
        port=free_port(),
        flush_interval=0.05,
        confdir=str(confdir),
        with_addon=addon,
        extra=["--set", f"ssl_verify_upstream_trusted_ca={cert}"],
    )
    return RunningProxy(spec).start()


def h2_post(url: str, proxy: str | None) -> tuple[str, int, str, bytes]:
    with httpx.Client(http2=True, verify=False, proxy=proxy, timeout=10) as client:
        r = client.post(url, content=REQUEST, headers={"content-type": "application/json"})
        return r.http_version, r.status_code, r.headers["content-type"], r.content


def test_http2_passes_and_is_recorded(tmp_path, capture):
    cert, key = make_cert(tmp_path)
    upstream = h2_upstream(server_context(cert, key))
    url = f"https://127.0.0.1:{upstream.port}/v1/chat/completions"
    confdir = tmp_path / "mitmproxy"
    ours = explicit(capture, confdir, cert, addon=True)
    bare = explicit(tmp_path / "unused", confdir, cert, addon=False)
    try:
        direct = h2_post(url, None)
        assert direct == ("HTTP/2", 200, "application/json", CHAT)
        assert h2_post(url, ours.url) == direct == h2_post(url, bare.url)
    finally:
        bare.stop()
        assert_clean(ours.stop())
        upstream.close()
    sql = "SELECT wire_format, parse_status, status_code, assistant_text FROM exchanges"
    assert wait_rows(capture, sql, 1) == [("openai_chat", "ok", 200, "hi")]


@pytest.fixture
def reverse_to(capture):
    started: list[RunningProxy] = []

    def start(upstream: str, addon: bool) -> RunningProxy:
        spec = ProxySpec(
            capture=capture,
            upstream=upstream,
            port=free_port(),
            flush_interval=0.05,
            with_addon=addon,
        )
        started.append(RunningProxy(spec).start())
        return started[-1]

    yield start
    for proxy in started:
        output = proxy.stop()
        if proxy.spec.with_addon:
            assert_clean(output)


def test_websocket_passes_and_its_handshake_is_recorded(capture, reverse_to):
    upstream = ws_upstream()
    url = f"http://127.0.0.1:{upstream.port}"
    messages = [b"hello", "héllo ✓".encode(), b"x" * 70_000]
    try:
        direct = ws_session(upstream.port, messages)
        assert [p for _, p in direct[:3]] == [m.decode()[::-1].encode() for m in messages]
        ours, bare = reverse_to(url, True), reverse_to(url, False)
        assert ws_session(ours.spec.port, messages) == direct
        assert ws_session(bare.spec.port, messages) == direct
    finally:
        upstream.close()
    sql = "SELECT method, path, status_code FROM exchanges"
    assert wait_rows(capture, sql, 1) == [("GET", "/v1/realtime", 101)]
