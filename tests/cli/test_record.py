"""`toolproxy record` as a user runs it: foreground, Ctrl-C, compacted capture."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from toolproxy import store
from toolproxy.capture.proxy import free_port, wait_listening
from toolproxy.scripted import Script, ScriptedUpstream
from toolproxy.store.segments import list_segments

TOOLPROXY = str(Path(sys.executable).parent / "toolproxy")


@pytest.fixture
def upstream():
    with ScriptedUpstream(Script(deterministic=True)) as server:
        yield server


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_record_reverse_proxy_then_stop_compacts(stop, upstream, tmp_path):
    capture, port = tmp_path / "cap", free_port()
    proc = subprocess.Popen(
        [
            TOOLPROXY,
            "record",
            "--upstream",
            upstream.url,
            "--port",
            str(port),
            "--capture",
            str(capture),
            "--flush-interval",
            "0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_listening("127.0.0.1", port, proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for i in range(3):
                client.post(
                    "/v1/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": str(i)}]},
                )
    finally:
        # Ctrl-C reaches the whole foreground process group in a terminal; `kill` only toolproxy
        proc.send_signal(stop)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert proc.returncode == 0, out
    assert f"OPENAI_BASE_URL=http://127.0.0.1:{port}/v1" in out
    assert "compacted" in out
    # quiet by default: no line per connection or request from mitmdump (-v shows them)
    assert "client connect" not in out and "Streaming request" not in out, out
    assert store.query(capture, "SELECT count(*) FROM exchanges")[1] == [(3,)]
    assert not any(list_segments(capture).values())  # everything folded into the catalog


def test_record_explicit_mode_prints_ca_instructions(tmp_path):
    capture, port = tmp_path / "cap", free_port()
    proc = subprocess.Popen(
        [
            TOOLPROXY,
            "record",
            "--port",
            str(port),
            "--capture",
            str(capture),
            "--confdir",
            str(tmp_path / "conf"),
            "-v",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_listening("127.0.0.1", port, proc)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert f"HTTPS_PROXY=http://127.0.0.1:{port}" in out
    assert "listening at" in out  # -v: mitmdump's own log is back
    assert (tmp_path / "conf" / "mitmproxy-ca-cert.pem").exists()
