"""A full disk under the capture: traffic keeps passing untouched, the proxy says once what
is wrong, keeps the rows in memory (bounded) and retries, and stops cleanly."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from toolproxy.capture.proxy import free_port, wait_listening

TOOLPROXY = str(Path(sys.executable).parent / "toolproxy")
BIG = "x" * 100_000  # each request body 100 kB: a 4 MB disk is full after a few dozen


def test_traffic_passes_while_the_capture_disk_is_full(upstream, tmp_path):
    disk, port = tmp_path / "disk", free_port()
    disk.mkdir()
    record = [TOOLPROXY, "record", "--upstream", upstream.url, "--port", str(port)]
    record += ["--capture", str(disk / "cap"), "--flush-interval", "0.1"]
    # A private mount namespace: a 4 MB tmpfs only this command sees (root or not).
    script = f'mount -t tmpfs -o size=4m tmpfs {shlex.quote(str(disk))} && exec "$@"'
    proc = subprocess.Popen(
        ["unshare", "--mount", "--map-root-user", "sh", "-c", script, "sh", *record],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    answers = []
    try:
        wait_listening("127.0.0.1", port, proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for i in range(80):
                r = client.post(
                    "/v1/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": f"{i} {BIG}"}]},
                )
                answers.append((r.status_code, r.json()["choices"][0]["message"]["content"]))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert answers == [(200, "ok")] * 80  # every answer passed, as the upstream sent it
    assert "No space left on device" in out, out
    assert "segment write failed, will retry" in out
    assert out.count("segment write failed") == 1  # said once, then counted
    assert "Traceback" not in out, out
    assert "exchanges could not be written before stopping" in out  # no silent loss
    assert proc.returncode == 0, out
