"""Ad hoc servers from `--stdio` / `--url` / `--header` / `--name`."""

from __future__ import annotations

import pytest

from toolproxy.errors import UserError
from toolproxy.mcp.adhoc import adhoc_specs, derive_name, parse_header


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["uvx", "mcp-server-time"], "mcp-server-time"),
        (["python3", "-m", "mcp_server_git", "-r", "."], "mcp_server_git"),
        (["npx", "-y", "@modelcontextprotocol/server-github"], "server-github"),
        (["npx", "-y", "pkg@1.2.3"], "pkg"),
        (["uv", "run", "/srv/weather.py"], "weather"),
        (["/usr/bin/node", "dist/index.js"], "index"),
        (["/usr/local/bin/my-server", "--flag"], "my-server"),
        (["python"], "python"),
        (["python", "-m"], "python"),
    ],
)
def test_derive_name(argv, name):
    assert derive_name(argv) == name


def test_adhoc_specs():
    specs = adhoc_specs(
        ["python -m mcp_server_time", "python -m mcp_server_time", "'my server' --x 'a b'"],
        ["http://127.0.0.1:8000/mcp", "https://h.example/sse?key=query-secret-1"],
        ["Authorization: Bearer tok-123456", "X-A:b"],
        ["clock"],
    )
    assert [s.name for s in specs] == [
        "clock",
        "mcp_server_time",
        "my server",
        "127.0.0.1-8000",
        "h.example",
    ]
    assert specs[2].command == "my server" and specs[2].args == ("--x", "a b")
    assert [s.transport for s in specs] == ["stdio", "stdio", "stdio", "http", "sse"]
    assert specs[3].headers == {"Authorization": "Bearer tok-123456", "X-A": "b"}
    assert {"tok-123456", "query-secret-1"} <= set(specs[4].secrets)
    assert all(s.source in ("--stdio", "--url") for s in specs)
    dup = adhoc_specs(["a", "a", "a"], [], [], [])
    assert [s.name for s in dup] == ["a", "a-2", "a-3"]


@pytest.mark.parametrize(
    ("stdio", "urls", "headers", "names", "message"),
    [
        ([], [], ["A: b"], [], "--header applies to --url"),
        (["a"], [], [], ["x", "y"], "2 --name values for 1"),
        ([""], [], [], [], "needs a command"),
        (["'open"], [], [], [], "--stdio"),
        ([], ["ftp://x/?k=secret-value"], [], [], "http"),
        ([], ["http://x/"], ["novalue"], [], "expected K:V"),
    ],
)
def test_adhoc_usage_errors(stdio, urls, headers, names, message):
    with pytest.raises(UserError, match=message) as info:
        adhoc_specs(stdio, urls, headers, names)
    assert "secret-value" not in str(info.value)


def test_parse_header():
    assert parse_header(" X-Key :  v:w ") == ("X-Key", "v:w")
    with pytest.raises(UserError):
        parse_header(":v")
