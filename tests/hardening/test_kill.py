"""kill -9 under a 32-way load, repeated: of the CLI (its mitmdump must not serve on as an
orphan), of mitmdump (the worker drains what reached it) and of the recorder's worker (the
proxy records on in-process, says so, and loses at most what the worker held)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, child_pids, free_port, wait_listening

from .load import Load

TOOLPROXY = str(Path(sys.executable).parent / "toolproxy")
ROUNDS = 3
FLUSH = 0.2


def recorded(capture: Path) -> int:
    return store.query(capture, "SELECT count(*) FROM exchanges")[1][0][0]


def gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":  # exited; its parent has not reaped it yet
            return True
        time.sleep(0.05)
    return False


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


def test_kill_9_of_record_takes_its_mitmdump_along(upstream, capture):
    total = 0
    for _ in range(ROUNDS):
        port = free_port()
        cli = subprocess.Popen(
            [TOOLPROXY, "record", "--upstream", upstream.url, "--port", str(port)]
            + ["--capture", str(capture), "--flush-interval", str(FLUSH)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_listening("127.0.0.1", port, cli)
        (mitmdump,) = child_pids(cli.pid)
        with Load(f"http://127.0.0.1:{port}") as load:
            load.wait_for(100)
            cli.kill()
            cli.wait()
            killed = time.time()
            assert gone(mitmdump), "mitmdump serves on after its CLI was killed"
        assert refused(port)
        # The child stopped gracefully (SIGTERM): every exchange answered before the kill
        # was recorded, none after it was served.
        assert load.between(killed + 1.0, float("inf")) == 0
        total += len(load.answered)
        assert recorded(capture) >= total
    assert store.summary(capture)["warnings"] == []


def proxy_under_load(upstream, capture) -> tuple[RunningProxy, int]:
    spec = ProxySpec(capture=capture, upstream=upstream.url, port=free_port(), flush_interval=FLUSH)
    proxy = RunningProxy(spec).start()
    assert proxy.proc is not None
    return proxy, proxy.proc.pid


def test_kill_9_of_mitmdump_loses_only_what_never_reached_the_worker(upstream, capture):
    total = 0
    for _ in range(ROUNDS):
        proxy, pid = proxy_under_load(upstream, capture)
        with Load(proxy.url) as load:
            load.wait_for(100)
            proxy.kill()  # SIGKILL, then wait for the orphaned worker to drain and exit
        total += len(load.answered)
        # The worker reads everything that reached the pipe after mitmdump is gone: only
        # exchanges still in mitmdump's own queue can be lost, at most one per client.
        assert recorded(capture) >= total - load.clients
    assert store.summary(capture)["warnings"] == []


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_kill_9_of_the_worker_falls_back_visibly_and_loses_at_most_its_window(
    upstream, capture, round_
):
    proxy, pid = proxy_under_load(upstream, capture)
    (worker,) = child_pids(pid)
    with Load(proxy.url) as load:
        load.wait_for(100)
        os.kill(worker, signal.SIGKILL)
        killed = time.time()
        load.wait_for(len(load.answered) + 100)
    output = proxy.stop()
    assert "recording in-process" in output
    lost = len(load.answered) - recorded(capture)
    # What the worker held: up to a flush window of rows, plus what sat in the pipe and
    # what arrived before the proxy noticed. Bounded by the answers of that stretch.
    window = load.between(killed - 2 * FLUSH - 0.5, killed + 0.5)
    print(f"round {round_}: lost {lost} of {len(load.answered)}; bound {window}")
    assert 0 <= lost <= window
    (warning,) = store.summary(capture)["warnings"]
    assert "recorder worker died" in warning
    _, runs = store.query(capture, "SELECT event FROM proxy_runs WHERE worker_lost = 1")
    assert ("fallback",) in runs
