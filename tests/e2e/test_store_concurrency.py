"""Many proxies, one capture; readers while recording; kill -9 loses at most one window."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import httpx

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port

from .conftest import rows


def post(client, marker):
    body = {"model": "m", "messages": [{"role": "user", "content": marker}]}
    return client.post("/v1/chat/completions", json=body)


def send(url, prefix, n, done):
    with httpx.Client(base_url=url, timeout=30) as client:
        for i in range(n):
            post(client, f"{prefix}-{i}").raise_for_status()
            done.append((f"{prefix}-{i}", time.monotonic()))


def markers(capture):
    got = rows(capture, "SELECT messages->0->>'content' FROM exchanges")
    return {r[0] for r in got}


def test_two_proxies_record_into_one_capture_while_read(upstream, capture):
    specs = [
        ProxySpec(capture=capture, upstream=upstream.url, port=free_port(), flush_interval=0.05)
        for _ in range(2)
    ]
    with RunningProxy(specs[0]) as a, RunningProxy(specs[1]) as b:
        done: list = []
        threads = [
            threading.Thread(target=send, args=(p.url, name, 60, done))
            for p, name in ((a, "a"), (b, "b"))
        ]
        for t in threads:
            t.start()
        # Readers in other processes while both proxies write: the CLI and plain DuckDB SQL.
        reads = []
        while any(t.is_alive() for t in threads):
            cli = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "toolproxy.cli",
                    "sql",
                    "--json",
                    "--capture",
                    str(capture),
                    "SELECT count(*) AS n FROM exchanges",
                ],
                capture_output=True,
                text=True,
            )
            assert cli.returncode == 0, cli.stderr
            reads.append(json.loads(cli.stdout.splitlines()[0])["n"])
        for t in threads:
            t.join()
        plain = subprocess.run(
            [
                sys.executable,
                "-c",
                "import duckdb,sys; c=duckdb.connect(sys.argv[1], read_only=True);"
                "print(c.execute('select count(*) from exchanges').fetchone()[0])",
                str(capture / "capture.duckdb"),
            ],
            capture_output=True,
            text=True,
        )
        assert plain.returncode == 0, plain.stderr
    assert reads == sorted(reads)  # counts only grow while recording
    expected = {f"{p}-{i}" for p in "ab" for i in range(60)}
    assert markers(capture) == expected
    proxies = rows(capture, "SELECT count(DISTINCT proxy_id) FROM exchanges")
    assert proxies == [(2,)]
    store.compact(capture)
    assert markers(capture) == expected
    assert len(rows(capture, "SELECT exchange_id FROM exchanges")) == 120  # no duplicates


def test_kill_9_mid_load_then_reopen(upstream, capture):
    flush = 0.1
    spec = ProxySpec(capture=capture, upstream=upstream.url, port=free_port(), flush_interval=flush)
    proxy = RunningProxy(spec).start()
    done: list = []
    sender = threading.Thread(target=lambda: _send_until_error(proxy.url, done), daemon=True)
    sender.start()
    time.sleep(1.5)
    killed_at = time.monotonic()
    proxy.kill()
    sender.join(10)
    assert len(done) > 20
    # The capture opens cleanly and holds everything flushed before the kill: every request
    # answered more than one flush window (+ processing slack) before the kill is there.
    recorded = markers(capture)
    settled = {m for m, t in done if t < killed_at - flush - 0.5}
    assert settled and settled <= recorded
    # the request in flight at the kill may or may not be there; nothing else can be
    assert recorded <= {f"k-{i}" for i in range(len(done) + 1)}
    # a new proxy appends to the same capture, and compaction folds everything once
    with RunningProxy(
        ProxySpec(capture=capture, upstream=upstream.url, port=free_port(), flush_interval=flush)
    ) as again:
        with httpx.Client(base_url=again.url) as client:
            post(client, "after-restart").raise_for_status()
    store.compact(capture)
    final = markers(capture)
    assert recorded | {"after-restart"} == final
    assert not list(capture.rglob("*.jsonl.tmp"))


def _send_until_error(url, done):
    with httpx.Client(base_url=url, timeout=5) as client:
        i = 0
        while True:
            try:
                post(client, f"k-{i}").raise_for_status()
            except httpx.HTTPError:
                return
            done.append((f"k-{i}", time.monotonic()))
            i += 1
