"""The transparency promise against a nasty upstream: whatever the upstream does (every
framing, encoding and status, 103s, trailers, resets, hangs, bytes that are not UTF-8),
the client receives through toolproxy exactly the bytes it receives through bare
mitmdump, and each request is recorded. Against a direct connection, only the behaviours
mitmproxy itself changes differ (listed, with the reason)."""

from __future__ import annotations

import pytest

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port

from ..e2e.conftest import assert_clean, wait_rows
from .nasty import KEY, NastyUpstream, corpus, fetch

CASES = sorted(corpus())
# What mitmproxy (bare or not) does differently from a direct connection, by design.
MITMPROXY_DIFFERS = {
    "reset_before_response": "mitmproxy answers 502 itself",
    "early_hints_103": "mitmproxy does not forward 1xx interim responses",
    "trailers": "mitmproxy re-frames chunked bodies",
    "reset_mid_body": "mitmproxy ends the client connection with a FIN, not a reset",
}


@pytest.fixture(scope="module")
def nasty():
    with NastyUpstream() as upstream:
        yield upstream


@pytest.fixture(scope="module")
def proxies(nasty, tmp_path_factory):
    capture = tmp_path_factory.mktemp("transparency") / "capture"
    common = dict(capture=capture, upstream=nasty.url, flush_interval=0.05)
    bare = RunningProxy(ProxySpec(port=free_port(), with_addon=False, **common)).start()
    ours = RunningProxy(ProxySpec(port=free_port(), **common)).start()
    yield bare, ours, capture
    bare.stop()
    assert_clean(ours.stop())


def test_the_corpus_is_large():
    assert len(CASES) >= 60


@pytest.mark.parametrize("case", CASES)
def test_client_gets_what_bare_mitmdump_gives(proxies, case):
    bare, ours, _ = proxies
    assert _message(fetch(ours.spec.port, case)) == _message(fetch(bare.spec.port, case))


@pytest.mark.parametrize("case", CASES)
def test_client_gets_what_a_direct_connection_gives(nasty, proxies, case):
    _, ours, _ = proxies
    port = int(nasty.url.rsplit(":", 1)[1])
    direct, through = fetch(port, case), fetch(ours.spec.port, case)
    if case in MITMPROXY_DIFFERS:
        assert _message(through) != _message(direct), f"{case} no longer differs"
    else:
        assert _message(through) == _message(direct)


def _message(got: tuple[bytes, str]) -> tuple[bytes, bytes, bytes, str]:
    """(head, body, trailers, end) with chunked framing undone: where a proxy cuts chunks
    depends on TCP timing, not on what it forwards."""
    data, end = got
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep or b"transfer-encoding: chunked" not in head.lower():
        return head, rest, b"", end
    body = b""
    while rest:
        size_line, nl, rest = rest.partition(b"\r\n")
        if not nl:
            break
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            return head, body, rest, end
        body += rest[:size]
        rest = rest[size + 2 :]
    return head, body, b"", end


def test_every_request_is_recorded_without_the_key(proxies):
    _, ours, capture = proxies
    # Each case was fetched twice through toolproxy above.
    sql = "SELECT path, status_code, error_kind FROM exchanges"
    got = wait_rows(capture, sql, 2 * len(CASES), timeout=60)
    cases = sorted({p.partition("?case=")[2] for p, _, _ in got})
    assert cases == CASES
    assert len(got) == 2 * len(CASES)
    for table in ("exchanges", "tool_calls"):
        _, rows = store.query(capture, f"SELECT * FROM {table}")
        assert KEY not in repr(rows)
