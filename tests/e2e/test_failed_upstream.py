"""An upstream that cannot be reached: refused, unresolvable, not speaking TLS. The client
gets what bare mitmdump gives it in the same mode, and the capture records every attempt
with `error_kind = connect_failed`."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.scripted import ScriptedUpstream

from .conftest import assert_clean, wait_rows

pytestmark = pytest.mark.e2e

BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
JSON = {"content-type": "application/json"}


def outcome(proxy: RunningProxy, target: str | None) -> tuple[object, str]:
    """What the client got: (status, body start) or ("error", the exception's type)."""
    try:
        if target is None:
            r = httpx.post(proxy.url + "/v1/chat/completions", content=BODY, headers=JSON)
        else:
            with httpx.Client(proxy=proxy.url, verify=False) as c:
                r = c.post(target, content=BODY, headers=JSON)
        return r.status_code, r.text[:60]
    except httpx.HTTPError as exc:
        return "error", type(exc).__name__


def through(capture: Path, upstream: str | None, target: str | None, addon: bool, extra=()):
    shutil.rmtree(capture, ignore_errors=True)
    spec = ProxySpec(
        capture=capture,
        upstream=upstream,
        port=free_port(),
        flush_interval=0.05,
        with_addon=addon,
        extra=list(extra),
    )
    proxy = RunningProxy(spec).start()
    try:
        got = outcome(proxy, target)
        if addon:
            sql = "SELECT method, path, host, error_kind, error_message, status_code FROM exchanges"
            return got, wait_rows(capture, sql, 1, timeout=10)
        return got, None
    finally:
        output = proxy.stop()
        if addon:
            assert_clean(output)


@pytest.fixture(scope="module")
def plain_http():
    with ScriptedUpstream() as upstream:
        yield upstream


def cases(dead: int, plain: str) -> dict[str, tuple[str | None, str | None, tuple[str, ...]]]:
    """name -> (reverse upstream, explicit-proxy target, extra mitmdump options)."""
    return {
        "reverse_refused": (f"http://127.0.0.1:{dead}", None, ()),
        "reverse_refused_lazy": (
            f"http://127.0.0.1:{dead}",
            None,
            ("--set", "connection_strategy=lazy"),
        ),
        "reverse_dns": ("http://no-such-host.invalid", None, ()),
        "reverse_tls": (plain.replace("http://", "https://"), None, ()),
        "explicit_refused": (None, f"http://127.0.0.1:{dead}/v1/chat/completions", ()),
        "explicit_dns": (None, "http://no-such-host.invalid/v1/chat/completions", ()),
        "explicit_connect_refused": (None, f"https://127.0.0.1:{dead}/v1/chat/completions", ()),
        "explicit_tls": (None, plain.replace("http://", "https://") + "/v1/chat/completions", ()),
    }


@pytest.mark.parametrize(
    "name",
    [
        "reverse_refused",
        "reverse_refused_lazy",
        "reverse_dns",
        "reverse_tls",
        "explicit_refused",
        "explicit_dns",
        "explicit_connect_refused",
        "explicit_tls",
    ],
)
def test_every_attempt_is_recorded_and_the_client_sees_what_bare_mitmdump_gives(
    name, tmp_path, plain_http
):
    upstream, target, extra = cases(free_port(), plain_http.url)[name]
    bare, _ = through(tmp_path / "bare", upstream, target, addon=False, extra=extra)
    got, recorded = through(tmp_path / "capture", upstream, target, addon=True, extra=extra)
    assert got[0] == bare[0]  # the same status, or an error either way
    if got[0] != "error":
        assert got == bare
    if name in ("reverse_refused", "reverse_dns"):
        # every client connection is an attempt; the proxy's own readiness probe is one too
        assert 1 <= len(recorded) <= 2, recorded
        assert len({r[1:] for r in recorded}) == 1
    else:
        assert len(recorded) == 1, recorded
    (method, path, host, kind, message, status) = recorded[-1]
    assert kind == "connect_failed", recorded
    assert message
    if name in ("reverse_refused", "reverse_dns"):
        # mitmproxy connects when the client connects and never reads the request
        assert (method, path) == ("", "") and "before any request was read" in message
        assert host in ("127.0.0.1", "no-such-host.invalid")
    elif name == "explicit_connect_refused":
        assert method == "CONNECT" and status == 502
    else:
        assert (method, path) == ("POST", "/v1/chat/completions")
