"""`toolproxy mcp pull` end to end: real configs, real servers, a real capture and snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path, PurePath

import pytest

from tests.mcp_servers.launch import remote_servers
from tests.paths import REPO
from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.errors import UserError
from toolproxy.mcp.config import ServerSpec
from toolproxy.mcp.outcomes import Listing
from toolproxy.mcp.pull import (
    ServerResult,
    build_rows,
    check_tools,
    compare,
    default_paths,
    definition_hash,
    load_env_file,
    mask_value,
    merge_specs,
    render_table,
    select_specs,
    workspace_of,
)
from toolproxy.mcp.snapshot import tool_definition
from toolproxy.records import schema_hash

TESTS = REPO / "tests"
FIXTURES = TESTS / "fixtures" / "mcp"
CLAUDE = FIXTURES / "claude_desktop_config.json"
CURSOR = FIXTURES / "cursor" / ".cursor" / "mcp.json"
VSCODE = FIXTURES / "vscode" / ".vscode" / "mcp.json"
PAGED = TESTS / "mcp_servers" / "paged.py"
HANG = FIXTURES / "hang_server.py"
PY = sys.executable
SECRET = "s3cret-9f8e7d6c5b4a"
PAGED_FILES = [
    "%2Ehidden.json",
    "%C3%9Cn%C3%AFcode%20tool.json",
    "files%2Fread.json",
    "get_item.json",
    "list.json",
]


@pytest.fixture(scope="module")
def remote():
    """Weather over streamable HTTP and SSE, and a server that answers 401."""
    with remote_servers(PY) as urls:
        yield urls


@pytest.fixture
def env(monkeypatch, remote):
    """What the fixture configs refer to; `python` on PATH is this interpreter."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PATH", f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("TOOLPROXY_TEST_PYTHON", PY)
    monkeypatch.setenv("TOOLPROXY_TEST_SECRET", SECRET)
    monkeypatch.setenv("TOOLPROXY_TEST_HTTP_URL", remote["http"])
    monkeypatch.setenv("TOOLPROXY_TEST_SSE_URL", remote["sse"])
    monkeypatch.setenv("TOOLPROXY_TEST_401_URL", remote["locked"])
    monkeypatch.delenv("TOOLPROXY_INPUT_WEATHER_KEY", raising=False)
    monkeypatch.delenv("TOOLPROXY_TEST_VARIANT", raising=False)
    return monkeypatch


@pytest.fixture
def out(tmp_path):
    return {"capture": tmp_path / "capture", "schemas": tmp_path / "schemas" / "mcp"}


def pull(out, capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    base = ["mcp", "pull", "--capture", str(out["capture"]), "--schemas", str(out["schemas"])]
    code = main([*base, *argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def table(text: str) -> dict[str, list[str]]:
    """Server -> its table cells (status, tools, new, changed, removed, error kind)."""
    lines = text.splitlines()
    body = lines[2 : lines.index("")] if "" in lines else lines[2:]
    return {line.split()[0]: line.split()[1:] for line in body}


def query(out, sql: str):
    return store.query(out["capture"], sql)[1]


def everything_written(out) -> str:
    files = [p for p in out["capture"].rglob("*.jsonl")] + list(out["schemas"].rglob("*.json"))
    return "".join(p.read_text() for p in files)


def snapshot_of(out, server: str) -> dict[str, bytes]:
    folder = out["schemas"] / server
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


def test_claude_desktop_config(env, out, capsys):
    code, stdout, stderr = pull(out, capsys, "--config", str(CLAUDE))
    assert code == 1
    rows = table(stdout)
    assert rows["time"] == ["stdio", "ok", "2", "2", "0", "0"]
    assert rows["paged"] == ["stdio", "ok", "5", "5", "0", "0"]
    assert rows["missing"] == ["stdio", "failed", "not_found"]
    assert rows["crash"] == ["stdio", "failed", "crashed"]
    assert "missing (" in stdout and "command not found: toolproxy-test-no-such-command" in stdout
    assert "fatal: cannot log in with token ***" in stdout  # the crashed server's stderr
    assert "pulled 2 of 4 servers" in stdout
    assert stderr == ""

    stored = query(
        out, "SELECT server, count(*), count(DISTINCT pull_id) FROM mcp_tools GROUP BY 1"
    )
    assert sorted(stored) == [("paged", 5, 1), ("time", 2, 1)]
    (pull_id, pulled_at), *others = query(out, "SELECT DISTINCT pull_id, pulled_at FROM mcp_tools")
    assert others == []
    assert (out["capture"] / "segments" / f"pull-{pull_id}").is_dir()
    assert sorted(p.name for p in out["schemas"].iterdir()) == ["paged", "time"]
    assert sorted(snapshot_of(out, "paged")) == PAGED_FILES
    item = json.loads(snapshot_of(out, "paged")["get_item.json"])
    assert item["tool"]["description"] == "Fetch one item.***"  # the server echoed its env
    assert item["server_name"] == "paged" and item["server_version"] == "0.3.0"
    assert SECRET not in stdout + stderr + everything_written(out)
    (stored_item,) = query(out, "SELECT description FROM mcp_tools WHERE name = 'get_item'")
    assert stored_item == ("Fetch one item.***",)


def test_schema_change_is_a_new_version(env, out, capsys):
    assert pull(out, capsys, "--config", str(CLAUDE), "--server", "paged")[0] == 0
    first = snapshot_of(out, "paged")

    env.setenv("TOOLPROXY_TEST_VARIANT", "2")
    code, stdout, _ = pull(out, capsys, "--config", str(CLAUDE), "--server", "paged")
    assert code == 0
    assert table(stdout) == {"paged": ["stdio", "ok", "4", "0", "1", "1"]}
    second = snapshot_of(out, "paged")
    assert sorted(second) == [f for f in PAGED_FILES if f != "%2Ehidden.json"]
    assert second["get_item.json"] != first["get_item.json"]
    assert b'"verbose"' in second["get_item.json"]
    assert second["list.json"] == first["list.json"]

    code, stdout, _ = pull(out, capsys, "--config", str(CLAUDE), "--server", "paged")
    assert table(stdout) == {"paged": ["stdio", "ok", "4", "0", "0", "0"]}
    assert snapshot_of(out, "paged") == second

    versions = query(
        out,
        "SELECT schema_hash, pulls, first_seen, last_seen FROM mcp_tool_versions "
        "WHERE server = 'paged' AND name = 'get_item' ORDER BY first_seen",
    )
    assert len(versions) == 2
    (old_hash, old_pulls, old_first, old_last), (new_hash, new_pulls, new_first, new_last) = (
        versions
    )
    assert old_hash != new_hash
    assert (old_pulls, new_pulls) == (1, 2)
    assert old_first == old_last < new_first < new_last
    latest = query(out, "SELECT name FROM mcp_tools_latest WHERE server = 'paged' ORDER BY name")
    assert [r[0] for r in latest] == ["files/read", "get_item", "list", "Ünïcode tool"]
    unchanged = query(out, "SELECT pulls FROM mcp_tool_versions WHERE name = 'files/read'")
    assert unchanged == [(3,)]


def test_cursor_config_three_transports_and_401_as_json(env, out, capsys):
    code, stdout, _ = pull(out, capsys, "--config", str(CURSOR), "--json")
    assert code == 1
    report = json.loads(stdout)
    assert report["configs"] == [str(CURSOR)]
    servers = {s["server"]: s for s in report["servers"]}
    for name, transport in (("weather", "stdio"), ("weather-http", "http"), ("weather-sse", "sse")):
        assert servers[name]["status"] == "ok", servers[name]
        assert (servers[name]["transport"], servers[name]["tools"]) == (transport, 3)
        assert servers[name]["server_name"] == "weather"
        assert servers[name]["snapshot_changed"] is True
    locked = servers["locked"]
    assert (locked["status"], locked["error_kind"]) == ("failed", "unauthorized")
    assert "HTTP 401" in locked["error"]
    assert SECRET not in stdout + everything_written(out)
    stdio_doc = json.loads(snapshot_of(out, "weather")["get_weather.json"])
    http_doc = json.loads(snapshot_of(out, "weather-http")["get_weather.json"])
    assert stdio_doc["tool"] == http_doc["tool"]
    assert stdio_doc["schema_hash"] == schema_hash(stdio_doc["tool"]["inputSchema"])
    stored = query(out, "SELECT DISTINCT transport FROM mcp_tools ORDER BY 1")
    assert stored == [("http",), ("sse",), ("stdio",)]


def test_vscode_config_with_and_without_its_input(env, out, capsys, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env.setenv("TOOLPROXY_TEST_REPO", str(repo))
    code, stdout, _ = pull(out, capsys, "--config", str(VSCODE))
    assert code == 1
    rows = table(stdout)
    assert rows["git"][:2] == ["stdio", "ok"] and int(rows["git"][2]) >= 10
    assert rows["weather-sse"][:2] == ["sse", "ok"]
    assert rows["weather-http"] == ["http", "failed", "config"]
    assert "needs input 'weather-key'" in stdout and "TOOLPROXY_INPUT_WEATHER_KEY=" in stdout

    env.setenv("TOOLPROXY_INPUT_WEATHER_KEY", "input-secret-value")
    code, stdout, _ = pull(out, capsys, "--config", str(VSCODE), "--server", "weather-http")
    assert code == 0
    assert table(stdout)["weather-http"][:3] == ["http", "ok", "3"]


def test_adhoc_invalid_schema_and_hang_leave_nothing_half_written(env, out, capsys, remote):
    paged = f"{PY} {PAGED}"
    assert pull(out, capsys, "--stdio", paged, "--name", "paged")[0] == 0
    before = snapshot_of(out, "paged")

    env.setenv("PAGED_INVALID", "1")  # reaches the server: its env is ours plus the config's
    code, stdout, _ = pull(
        out,
        capsys,
        *("--stdio", paged, "--stdio", f"{PY} {HANG}", "--url", remote["http"]),
        *("--name", "paged", "--name", "hang", "--name", "w"),
        *("--header", f"Authorization: Bearer {SECRET}", "--timeout", "3"),
    )
    assert code == 1
    rows = table(stdout)
    assert rows["paged"] == ["stdio", "failed", "invalid_schema"]
    assert rows["hang"] == ["stdio", "failed", "timeout"]
    assert rows["w"][:3] == ["http", "ok", "3"]
    assert "tool 'get_item': inputSchema is not a valid JSON Schema at properties/id/type" in stdout
    assert "no answer within 3 s" in stdout
    assert snapshot_of(out, "paged") == before
    assert query(out, "SELECT count(DISTINCT pull_id) FROM mcp_tools WHERE server = 'paged'") == [
        (1,)
    ]
    assert not (out["schemas"] / "hang").exists()
    assert SECRET not in stdout + everything_written(out)


def test_unwritable_snapshot_fails_the_server_and_stores_nothing(env, out, capsys, remote):
    out["schemas"].parent.mkdir(parents=True)
    out["schemas"].write_text("a file, not a folder")
    code, stdout, _ = pull(out, capsys, "--url", remote["http"], "--name", "w")
    assert code == 1
    assert table(stdout) == {"w": ["http", "failed", "snapshot"]}
    assert "cannot write the snapshot under" in stdout
    assert query(out, "SELECT count(*) FROM mcp_tools") == [(0,)]


def test_discovery_reads_the_usual_places(monkeypatch, out, capsys, tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".cursor").mkdir(parents=True)
    (home / ".config" / "Claude").mkdir(parents=True)
    missing = {"command": "toolproxy-test-no-such-command"}
    (project / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"dup": missing}}))
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {"dup": missing, "other": missing}}))
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")

    code, stdout, stderr = pull(out, capsys)
    assert code == 1
    assert f"toolproxy: reading {Path('.cursor/mcp.json')}, {claude}" in stderr
    assert (
        f"server 'dup' in {claude} skipped: already defined in {Path('.cursor/mcp.json')}" in stderr
    )
    assert table(stdout) == {
        "dup": ["stdio", "failed", "not_found"],
        "other": ["stdio", "failed", "not_found"],
    }
    assert list(table(pull(out, capsys, "--server", "other")[1])) == ["other"]

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    code, _, stderr = pull(out, capsys)
    assert code == 2 and "no MCP config found" in stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--stdio", "x", "--timeout", "0"], "--timeout must be positive"),
        (["--config", str(CLAUDE), "--server", "nope"], "no server named nope; configured: crash"),
        (["--config", "/no/such/mcp.json"], "cannot read MCP config /no/such/mcp.json"),
        (["--stdio", "x", "--header", "A: b"], "--header applies to --url"),
        (["--config", str(FIXTURES / "crash_server.py")], "not valid JSON"),
    ],
)
def test_usage_errors_exit_2(env, out, capsys, argv, message):
    code, stdout, stderr = pull(out, capsys, *argv)
    assert code == 2 and stdout == ""
    assert stderr.startswith("toolproxy: ") and message in stderr


def test_empty_config_is_a_usage_error(out, capsys, tmp_path):
    empty = tmp_path / "mcp.json"
    empty.write_text('{"mcpServers": {}}')
    code, _, stderr = pull(out, capsys, "--config", str(empty))
    assert code == 2 and f"no servers in {empty}" in stderr


def test_check_tools():
    good = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert check_tools([{"name": "a", "inputSchema": good}]) is None
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    assert check_tools([{"name": "a", "inputSchema": draft7}]) is None
    unknown = {"$schema": "https://example.com/my-dialect", "type": "object"}
    assert check_tools([{"name": "a", "inputSchema": unknown}]) is None
    assert check_tools([{"name": "a", "inputSchema": good}] * 2) == (
        "tools/list returned tool 'a' twice"
    )
    assert check_tools([{"inputSchema": good}]) == "a tool has no name"
    assert check_tools([{"name": "a", "inputSchema": []}]) == (
        "tool 'a': inputSchema is not a JSON object"
    )
    bad_out = [{"name": "a", "inputSchema": good, "outputSchema": {"type": 5}}]
    assert check_tools(bad_out).startswith("tool 'a': outputSchema is not a valid JSON Schema")
    bad_top = [{"name": "a", "inputSchema": {"required": "x"}}]
    assert "inputSchema is not a valid JSON Schema at required: " in check_tools(bad_top)


def test_build_rows_compare_and_mask():
    spec = ServerSpec("s", "http", "t", secrets=("tok-123456",))
    raw = {
        "name": "a",
        "description": "uses tok-123456",
        "inputSchema": {"type": "object", "properties": {"tok-123456": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    at = datetime(2025, 1, 1, tzinfo=UTC)
    (row,) = build_rows(spec, Listing("n", "1", "2025-11-25", [raw]), "p", at)
    assert row.description == "uses ***" and list(row.input_schema["properties"]) == ["***"]
    assert row.schema_hash == schema_hash(row.input_schema)
    assert row.definition_hash == definition_hash(row) == schema_hash(tool_definition(row))
    assert (row.server, row.transport, row.server_name, row.pull_id) == ("s", "http", "n", "p")
    assert compare({"a": row.definition_hash, "gone": "x"}, [row]) == (0, 0, 1)
    assert compare({"a": "other"}, [row]) == (0, 1, 0)
    assert compare({}, [row]) == (1, 0, 0)
    assert mask_value([1, None, {"k": "tok-123456"}], ["tok-123456"]) == [1, None, {"k": "***"}]


def test_default_paths_and_workspace():
    cwd, home = PurePath("/p"), PurePath("/h")
    linux = default_paths(cwd, home, "linux", {})
    assert [str(p) for p in linux] == [
        "/p/.vscode/mcp.json",
        "/p/.cursor/mcp.json",
        "/p/.mcp.json",
        "/h/.cursor/mcp.json",
        "/h/.config/Claude/claude_desktop_config.json",
    ]
    xdg = default_paths(cwd, home, "linux", {"XDG_CONFIG_HOME": "/x"})[-1]
    assert str(xdg) == "/x/Claude/claude_desktop_config.json"
    mac = default_paths(cwd, home, "darwin", {})[-1]
    assert str(mac) == "/h/Library/Application Support/Claude/claude_desktop_config.json"
    win = default_paths(cwd, home, "win32", {"APPDATA": "/appdata"})[-1]
    assert str(win) == "/appdata/Claude/claude_desktop_config.json"
    assert workspace_of(PurePath("/w/.vscode/mcp.json"), cwd) == PurePath("/w")
    assert workspace_of(PurePath("/w/.cursor/mcp.json"), cwd) == PurePath("/w")
    assert workspace_of(PurePath("/h/.config/Claude/c.json"), cwd) == cwd


def test_merge_select_and_env_file(tmp_path):
    a1, a2, b = (ServerSpec(n, "stdio", s) for n, s in (("a", "x"), ("a", "y"), ("b", "y")))
    specs, notes = merge_specs([a1, a2, b])
    assert specs == [a1, b]
    assert notes == ["server 'a' in y skipped: already defined in x"]
    assert select_specs(specs, []) == specs
    assert select_specs(specs, ["b"]) == [b]
    with pytest.raises(UserError, match="no server named c, d; configured: a, b"):
        select_specs(specs, ["c", "d"])

    env_file = tmp_path / "s.env"
    env_file.write_text("A=from-file\nB=dotenv-secret\n")
    spec = ServerSpec("s", "stdio", "t", env={"A": "own"}, env_file=str(env_file))
    loaded = load_env_file(spec)
    assert loaded.env == {"A": "own", "B": "dotenv-secret"}
    assert "dotenv-secret" in loaded.secrets
    missing = load_env_file(ServerSpec("s", "stdio", "t", env_file=str(tmp_path / "nope")))
    assert missing.error.startswith("cannot read envFile ")
    assert load_env_file(a1) is a1


def test_render_table():
    results = [
        ServerResult("a", "stdio", "c.json", "ok", 2, 1, 1, 0),
        ServerResult("b", "http", "--url", "failed", error_kind="timeout", error="slow\nline 2"),
    ]
    text = render_table(results)
    lines = text.splitlines()
    assert lines[0].split() == [
        "server",
        "transport",
        "status",
        "tools",
        "new",
        "changed",
        "removed",
        "error",
    ]
    assert lines[2].split() == ["a", "stdio", "ok", "2", "1", "1", "0"]
    assert lines[3].split() == ["b", "http", "failed", "timeout"]
    assert lines[-2:] == ["b (--url): slow", "    line 2"]
    assert render_table(results[:1]).count("\n") == 2
