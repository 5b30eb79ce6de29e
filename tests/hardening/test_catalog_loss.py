"""A catalog you can lose, end to end: record real traffic, compact, then cut the catalog
in half, delete it, rebuild it on request: every command still works and every row is
there, read back from the Parquet files (which plain DuckDB reads too)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import httpx

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port

from ..e2e.conftest import assert_clean, wait_rows

TOOLPROXY = str(Path(sys.executable).parent / "toolproxy")
N = 30


def cli(*args: str) -> str:
    done = subprocess.run([TOOLPROXY, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout


def exchanges(capture: Path) -> int:
    return json.loads(cli("status", "--json", "-c", str(capture)))["tables"]["exchanges"]


def record(upstream, capture: Path, n: int) -> None:
    spec = ProxySpec(capture=capture, upstream=upstream.url, port=free_port(), flush_interval=0.05)
    with RunningProxy(spec) as proxy, httpx.Client(base_url=proxy.url) as client:
        for i in range(n):
            body = {"model": "m", "messages": [{"role": "user", "content": f"turn {i}"}]}
            assert client.post("/v1/chat/completions", json=body).status_code == 200
        wait_rows(capture, "SELECT exchange_id FROM exchanges", n)
        assert_clean(proxy.stop())


def test_cut_deleted_and_rebuilt_catalogs_lose_nothing(upstream, capture):
    record(upstream, capture, N)
    cli("compact", "-c", str(capture))
    db = capture / "capture.duckdb"
    with open(db, "r+b") as f:  # cut in half
        f.truncate(db.stat().st_size // 2)
    assert exchanges(capture) == N
    assert len(list(capture.glob("capture.duckdb.damaged-*"))) == 1
    db.unlink()
    assert exchanges(capture) == N
    out = cli("repair", "--rebuild", "-c", str(capture))
    assert "rebuilt from its files" in out and f"exchanges {N}" in out
    files = f"{capture}/parquet/exchanges/*.parquet"
    assert duckdb.sql(f"SELECT count(*) FROM '{files}'").fetchall() == [(N,)]
    record(upstream, capture, 5)  # and the capture records on
    cli("compact", "-c", str(capture))
    assert exchanges(capture) == N + 5
