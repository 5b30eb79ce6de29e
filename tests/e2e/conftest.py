"""Whole-system fixtures: a scripted upstream, real mitmdump processes, real captures."""

from __future__ import annotations

import pytest

from toolproxy import store
from toolproxy.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.scripted import Script, ScriptedUpstream

pytestmark = pytest.mark.e2e


@pytest.fixture
def upstream():
    with ScriptedUpstream(Script(deterministic=True)) as server:
        yield server


@pytest.fixture
def capture(tmp_path):
    return tmp_path / "capture"


@pytest.fixture
def proxy(upstream, capture):
    """mitmdump + toolproxy in reverse mode in front of the scripted upstream."""
    spec = ProxySpec(capture=capture, upstream=upstream.url, port=free_port(), flush_interval=0.05)
    running = RunningProxy(spec).start()
    yield running
    assert_clean(running.stop())


def assert_clean(output: str) -> None:
    """No addon error in mitmdump's output (its own shutdown noise about open
    keep-alive connections is not ours to judge)."""
    assert "Addon error" not in output, output
    assert "toolproxy/" not in output, output


def rows(capture, sql, params=None):
    """Query a capture (reads segments and compacted rows alike)."""
    return store.query(capture, sql, params)[1]


def wait_rows(capture, sql, expected, timeout=30.0):
    """Poll until the recorder's flush makes `sql` return `expected` rows' count."""
    import time

    deadline = time.monotonic() + timeout
    got = []
    while time.monotonic() < deadline:
        got = rows(capture, sql)
        if len(got) >= expected:
            return got
        time.sleep(0.05)
    return got
