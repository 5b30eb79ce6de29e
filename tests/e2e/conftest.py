"""Whole-system fixtures: a scripted upstream, real mitmdump processes, real captures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import toolproxy
from toolproxy import store
from toolproxy.capture.proxy import ADDON_SCRIPT, ProxySpec, RunningProxy, free_port
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


OUR_CODE = (  # tracebacks name files by absolute path
    str(Path(toolproxy.__file__).resolve().parent) + os.sep,
    str(ADDON_SCRIPT.resolve().parent) + os.sep,
)


def assert_clean(output: str) -> None:
    """No addon error and no traceback through our code in mitmdump's output (its own
    shutdown noise about open keep-alive connections is not ours to judge). The package is
    matched by its absolute path, so a checkout in a folder named `toolproxy` is fine."""
    assert "Addon error" not in output, output
    assert not [code for code in OUR_CODE if f'File "{code}' in output], output


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
