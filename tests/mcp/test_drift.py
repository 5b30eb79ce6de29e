"""The drift report: offered copies vs the servers' latest tools, pure and over a capture."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from tests.builders import chat_exchange
from tests.seeded import CaptureRows
from toolproxy.cli.main import main
from toolproxy.mcp.drift import (
    CalledName,
    OfferedVersion,
    ServerTool,
    compute_drift,
    render_drift,
)
from toolproxy.records import McpTool, ToolCall, ToolOffered, schema_hash

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
STATUS = {"type": "object", "properties": {"repo_path": {"type": "string"}}}
LOG = {
    "type": "object",
    "properties": {"repo_path": {"type": "string"}, "max_count": {"type": "integer"}},
    "required": ["repo_path"],
}
SERVERS = [
    ServerTool(server="git", name="git_status", description="Status", input_schema=STATUS),
    ServerTool(server="git", name="git_log", description="Log", input_schema=LOG),
    ServerTool(server="time", name="get_current_time", description="Now", input_schema={}),
]


def version(name: str, schema: dict, description: str | None, n: int = 1) -> OfferedVersion:
    return OfferedVersion(
        name=name,
        description=description,
        parameters=schema,
        schema_hash=schema_hash(schema),
        exchanges=n,
        first_seen=T0 + timedelta(minutes=n),
        last_seen=T0 + timedelta(hours=n),
    )


def test_in_sync_drifted_missing_extra_and_unknown_calls():
    stale_log = {"type": "object", "properties": {"repo_path": {"type": "string"}}}
    report = compute_drift(
        [
            version("mcp__git__git_status", STATUS, "Status", 3),
            version("git_log", LOG, "Log", 1),
            version("git_log", stale_log, "Log", 2),
            version("Read", {"type": "object"}, "Read a file"),
        ],
        SERVERS,
        [
            CalledName(name="git_log", calls=4),
            CalledName(name="Read", calls=2),
            CalledName(name="made_up", calls=1),
        ],
    )
    assert report.servers == ["git", "time"]
    assert [(t.tool, t.offered_name, t.exchanges, t.in_sync) for t in report.tools] == [
        ("git_log", "git_log", 1, True),
        ("git_log", "git_log", 2, False),
        ("git_status", "mcp__git__git_status", 3, True),
    ]
    stale = report.tools[1]
    assert [(c.kind, c.path) for c in stale.changes] == [
        ("param_removed", "max_count"),
        ("required_changed", "repo_path"),
    ]
    assert [(m.server, m.tool) for m in report.missing] == [("time", "get_current_time")]
    assert [(e.name, e.exchanges) for e in report.extra] == [("Read", 1)]
    assert [(u.name, u.calls, u.offered) for u in report.unknown_calls] == [
        ("Read", 2, True),
        ("made_up", 1, False),
    ]
    assert report.summary == {
        "servers": 2,
        "tools": 3,
        "in_sync": 2,
        "drifted": 1,
        "changes": 2,
        "missing": 1,
        "extra": 1,
        "unknown_calls": 2,
    }


def test_json_shape_is_stable():
    report = compute_drift([version("git_log", {}, None)], SERVERS, [])
    data = report.model_dump(mode="json")
    assert list(data) == ["servers", "tools", "missing", "extra", "unknown_calls", "summary"]
    assert list(data["tools"][0]) == [
        "server",
        "tool",
        "offered_name",
        "offered_schema_hash",
        "server_schema_hash",
        "exchanges",
        "first_seen",
        "last_seen",
        "changes",
        "in_sync",
    ]
    assert list(data["tools"][0]["changes"][0]) == ["kind", "path", "keyword", "server", "offered"]
    assert data["tools"][0]["first_seen"] == "2024-05-01T12:01:00Z"


def test_description_drift_and_ambiguous_names():
    servers = [
        ServerTool(server="a", name="search", description="A", input_schema={}),
        ServerTool(server="b", name="search", description="B", input_schema={}),
    ]
    report = compute_drift(
        [version("search", {}, "A"), version("b__search", {}, "Find")], servers, []
    )
    # "search" alone could be either server: not guessed, so it is extra
    assert [e.name for e in report.extra] == ["search"]
    assert [
        (t.server, [(c.kind, c.server, c.offered) for c in t.changes]) for t in report.tools
    ] == [("b", [("description_changed", "B", "Find")])]
    assert [m.server for m in report.missing] == ["a"]


def test_render_shows_every_section():
    report = compute_drift(
        [version("git_log", STATUS, "Log"), version("x", {}, None)],
        SERVERS,
        [CalledName(name="y", calls=2, last_seen=T0)],
    )
    text = render_drift(report)
    assert text.startswith("1 offered version(s) of tools on 2 server(s) (git, time)")
    for heading in ("Tools offered", "Changes", "Missing", "Extra", "Calls to tool names"):
        assert heading in text
    assert "param_removed" in text and "max_count" in text
    assert re.search(r"required_changed +repo_path +required +optional", text)
    assert "(absent)" in text
    assert "2024-05-01 12:00:00" in text
    quiet = render_drift(compute_drift([], SERVERS[:1], []))
    assert "Changes" not in quiet and "Extra" not in quiet and "Missing" in quiet


# --- the command, on a real capture ----------------------------------------------------


def seed(capture, offered: list[tuple[str, dict, str]], calls: list[str], pulls: list) -> None:
    rows = CaptureRows()
    for n in range(2):
        ex = chat_exchange(f"ex{n}", "s", T0 + timedelta(seconds=n))
        tools = [
            ToolOffered(
                position=position,
                name=name,
                description=desc,
                parameters=schema,
                schema_hash=schema_hash(schema),
            )
            for position, (name, schema, desc) in enumerate(offered)
        ]
        tools.append(ToolOffered(position=9, name="web_search", kind="web_search", schema_hash="x"))
        made = [
            ToolCall(index=index, name=name, arguments_raw="{}")
            for index, name in enumerate(calls if n == 0 else [])
        ]
        rows.turn(ex, calls=made, offered=tools)
    pulled = [
        McpTool(
            pull_id=f"pull{i}",
            pulled_at=at,
            server=server,
            transport="stdio",
            name=name,
            description=desc,
            input_schema=schema,
            schema_hash=schema_hash(schema),
            definition_hash="d",
        )
        for i, (at, server, name, desc, schema) in enumerate(pulls)
    ]
    rows.models("mcp_tools", pulled).write(capture)


def test_drift_command_reads_the_latest_pull(tmp_path, capsys):
    capture = tmp_path / "cap"
    old = {"type": "object", "properties": {"repo_path": {"type": "string"}}}
    seed(
        capture,
        [("git_log", LOG, "Log"), ("get_current_time", {}, "Now")],
        ["git_log", "ghost", "ghost"],
        [
            (T0, "git", "git_log", "Log", old),  # an earlier pull, superseded
            (T0 + timedelta(days=1), "git", "git_log", "Log", LOG),
            (T0 + timedelta(days=1), "git", "git_status", "Status", STATUS),
            (T0, "time", "get_current_time", "Now", {"type": "object"}),
        ],
    )
    assert main(["mcp", "drift", "-c", str(capture), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(t["server"], t["tool"], t["exchanges"], t["in_sync"]) for t in data["tools"]] == [
        ("git", "git_log", 2, True),
        ("time", "get_current_time", 2, False),
    ]
    assert data["tools"][1]["changes"][0]["kind"] == "type_changed"
    assert data["missing"] == [{"server": "git", "tool": "git_status"}]
    assert data["extra"] == []  # the built-in web_search is not compared
    assert [(u["name"], u["calls"], u["offered"]) for u in data["unknown_calls"]] == [
        ("ghost", 2, False)
    ]

    assert main(["mcp", "drift", "-c", str(capture), "--server", "time"]) == 0
    text = capsys.readouterr().out
    assert "on 1 server(s) (time)" in text and "git_log" in text  # git_log is now extra


def test_drift_without_pulled_schemas_says_to_pull(tmp_path, capsys):
    capture = tmp_path / "cap"
    seed(capture, [("git_log", LOG, "Log")], [], [])
    assert main(["mcp", "drift", "-c", str(capture)]) == 2
    assert "run `toolproxy mcp pull` first" in capsys.readouterr().err
    seed(capture, [], [], [(T0, "git", "git_log", "Log", LOG)])
    assert main(["mcp", "drift", "-c", str(capture), "--server", "nope"]) == 2
    assert "for server(s) nope" in capsys.readouterr().err
