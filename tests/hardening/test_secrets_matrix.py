"""No key on disk in any encoding: the key rides in every place a request can carry it,
the upstream echoes it in every body encoding, and afterwards every file the capture wrote
(segment, Parquet, catalog, logs, exports) is searched for it, raw, URL-encoded, base64
and JSON-escaped, after decompressing what is compressed. Zero hits."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import duckdb
import pytest

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port

from ..e2e.conftest import assert_clean, wait_rows
from .nasty import KEY, REQUEST, NastyUpstream

TOOLPROXY = str(Path(sys.executable).parent / "toolproxy")
ECHOES = [
    "key_gzip",
    "key_br",
    "key_zstd",
    "key_invalid_json",
    "key_json_escaped",
    "key_url_encoded",
    "key_sse_split",
    "non_utf8_length",
    "status_401",
    "key_in_header",
]
BODY = json.loads(REQUEST)


def _body(**fields: object) -> bytes:
    return json.dumps(BODY | fields).encode()


def _mcp_tool(**fields: object) -> dict[str, object]:
    return {"type": "mcp", "server_label": "x", "server_url": "https://mcp.example/mcp"} | fields


def locations() -> dict[str, tuple[str, list[tuple[str, str]], bytes]]:
    """name -> (query string, headers, body): the key in exactly one place."""
    ct = ("Content-Type", "application/json")
    return {
        "authorization": ("", [ct, ("Authorization", f"Bearer {KEY}")], REQUEST),
        "x_api_key": ("", [ct, ("x-api-key", KEY)], REQUEST),
        "query": (f"&key={quote(KEY, safe='')}", [ct], REQUEST),
        # AWS (Bedrock): the SigV4 session token as a header, and in a presigned URL's query
        "aws_session_token": ("", [ct, ("X-Amz-Security-Token", KEY)], REQUEST),
        "aws_presigned_query": (f"&X-Amz-Security-Token={quote(KEY, safe='')}", [ct], REQUEST),
        "json_body": ("", [ct], json.dumps(BODY | {"api_key": KEY}).encode()),
        "invalid_json_body": ("", [ct], b'{"api_key": "' + KEY.encode() + b'", "model": '),
        # credentials the body carries for the provider: a hosted MCP server's header
        # (Responses), its URL's query, its token (Anthropic), a data source's key (Azure)
        "hosted_mcp_header": (
            "",
            [ct],
            _body(tools=[_mcp_tool(headers={"Authorization": f"Bearer {KEY}"})]),
        ),
        "hosted_mcp_url": (
            "",
            [ct],
            _body(
                tools=[
                    _mcp_tool(server_url=f"https://mcp.example/mcp?api_key={quote(KEY, safe='')}")
                ]
            ),
        ),
        "mcp_servers_token": (
            "",
            [ct],
            _body(
                mcp_servers=[
                    {
                        "type": "url",
                        "url": "https://mcp.example/sse",
                        "name": "x",
                        "authorization_token": KEY,
                    }
                ]
            ),
        ),
        "data_source_key": (
            "",
            [ct],
            _body(
                data_sources=[
                    {
                        "type": "azure_search",
                        "parameters": {"authentication": {"type": "api_key", "key": KEY}},
                    }
                ]
            ),
        ),
        "form_body": (
            "",
            [("Content-Type", "application/x-www-form-urlencoded")],
            f"model=m&api_key={quote_plus(KEY)}".encode(),
        ),
    }


def send(port: int, case: str, query: str, headers: list[tuple[str, str]], body: bytes) -> None:
    head = f"POST /v1/chat/completions?case={case}{query} HTTP/1.1\r\nHost: up\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode() + body)
        while sock.recv(65536):
            pass


def spellings() -> list[bytes]:
    """The key as it could stand in a file: raw, URL-encoded, JSON-escaped, base64 at each
    of the three alignments it can take inside a longer base64 text."""
    forms = {
        KEY,
        quote(KEY, safe=""),
        quote_plus(KEY),
        KEY.replace("/", "\\/"),
        json.dumps(KEY)[1:-1],
        KEY.replace("/", "\\u002f"),
    }
    out = [f.encode() for f in forms]
    for pad in range(3):
        b64 = base64.b64encode(b"x" * pad + KEY.encode())
        out.append(b64[4 if pad else 0 : -4])  # the part that depends on the key alone
    return out


def dump_everything(capture: Path, into: Path) -> list[Path]:
    """Every stored row as text: each table and view through the catalog, and each
    Parquet file read on its own (they are compressed on disk)."""
    into.mkdir()
    written = []
    for table in (
        "exchanges",
        "tool_calls",
        "tool_results",
        "tools_offered",
        "proxy_runs",
        "sessions",
        "calls",
        "call_results",
    ):
        out = into / f"{table}.jsonl"
        store.export_jsonl(capture, table, out) if table in (
            "exchanges",
            "tool_calls",
            "tool_results",
            "tools_offered",
            "proxy_runs",
        ) else out.write_text(repr(store.query(capture, f"SELECT * FROM {table}")))
        written.append(out)
        as_csv = into / f"{table}.csv"  # the other export formats hold the same rows
        store.export_file(capture, table, as_csv, "csv")
        written.append(as_csv)
    plain = duckdb.connect()
    for i, parquet in enumerate(sorted(capture.rglob("*.parquet"))):
        out = into / f"parquet-{i}.txt"
        out.write_text(repr(plain.execute(f"SELECT * FROM read_parquet('{parquet}')").fetchall()))
        written.append(out)
    for row in store.query(
        capture, "SELECT request_body, response_body FROM exchanges WHERE body_encoding = 'base64'"
    )[1]:
        out = into / f"decoded-{len(written)}.bin"
        out.write_bytes(b"".join(base64.b64decode(b or "") for b in row))
        written.append(out)
    return written


@pytest.fixture(scope="module")
def nasty():
    with NastyUpstream() as upstream:
        yield upstream


def test_no_key_in_any_file_in_any_encoding(nasty, tmp_path):
    capture = tmp_path / "capture"
    sent = 0
    # A proxy of its own for each place: a key the redactor met once (in a header, say) is
    # scrubbed from whatever comes after, which would hide a place that leaks it.
    for place, (query, headers, body) in locations().items():
        spec = ProxySpec(capture=capture, upstream=nasty.url, port=free_port(), flush_interval=0.05)
        proxy = RunningProxy(spec).start()
        for case in ECHOES:
            send(spec.port, case, query, headers, body)
            sent += 1
        wait_rows(capture, "SELECT exchange_id FROM exchanges", sent)
        log = proxy.stop()
        assert_clean(log)
        (tmp_path / f"mitmdump-{place}.log").write_text(log)
    # The CLI's own outputs: status, sessions, a compaction into Parquet, an export.
    outputs = []
    for args in (
        ["status"],
        ["sessions"],
        ["compact"],
        ["export", "exchanges"],
        ["sql", "SELECT * FROM exchanges"],
    ):
        done = subprocess.run([TOOLPROXY, *args, "-c", str(capture)], capture_output=True)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout + done.stderr)
    (tmp_path / "cli.out").write_bytes(b"".join(outputs))
    assert store.query(capture, "SELECT count(*) FROM exchanges")[1] == [(sent,)]
    dump_everything(capture, tmp_path / "dump")
    hits = []
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [(str(path.relative_to(tmp_path)), s) for s in spellings() if s in data]
    assert hits == [], hits
