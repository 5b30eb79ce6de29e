"""Snapshot files: safe names, stable text, whole-folder replacement."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from toolproxy.mcp.snapshot import (
    MAX_STEM,
    file_stem,
    render_tool,
    server_files,
    tool_definition,
    write_server,
)
from toolproxy.records import McpTool


def tool(name: str = "get_item", description: str = "Fetch.", **extra) -> McpTool:
    fields = {
        "pull_id": "p1",
        "pulled_at": datetime(2025, 1, 1, tzinfo=UTC),
        "server": "srv",
        "transport": "stdio",
        "server_name": "paged",
        "server_version": "0.3.0",
        "protocol_version": "2025-11-25",
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
        "schema_hash": "a" * 16,
        "definition_hash": "b" * 16,
    }
    return McpTool(**(fields | extra))


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("get_item", "get_item"),
        ("a.b-c_D9", "a.b-c_D9"),
        ("files/read", "files%2Fread"),
        ("100%", "100%25"),
        ("a b", "a%20b"),
        (".hidden", "%2Ehidden"),
        ("..", "%2E."),
        ("Ü", "%C3%9C"),
        ("a\\b:c", "a%5Cb%3Ac"),
        ("", "%"),
    ],
)
def test_file_stem(name, stem):
    assert file_stem(name) == stem


def test_file_stem_long_names_and_distinct_names():
    long_a, long_b = "x" * 300 + "a", "x" * 300 + "b"
    assert len(file_stem(long_a)) == MAX_STEM
    assert file_stem(long_a) != file_stem(long_b)
    assert file_stem("/" * 100).startswith("%2F%2F")
    names = ["a/b", "a%2Fb", "a%2fb", ".a", "%2Ea", "a b", "a%20b", "", "%", "é", "%C3%A9"]
    assert len({file_stem(n) for n in names}) == len(names)


def test_render_tool_is_stable_and_has_no_timestamps():
    text = render_tool(tool())
    assert text.endswith("}\n")
    doc = json.loads(text)
    assert doc == {
        "server": "srv",
        "server_name": "paged",
        "server_version": "0.3.0",
        "protocol_version": "2025-11-25",
        "schema_hash": "a" * 16,
        "definition_hash": "b" * 16,
        "tool": {
            "name": "get_item",
            "title": None,
            "description": "Fetch.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "outputSchema": None,
            "annotations": {"readOnlyHint": True},
        },
    }
    assert list(doc) == sorted(doc)
    assert "pulled_at" not in text and "2025-01-01" not in text and "p1" not in text
    later = tool(pull_id="p2", pulled_at=datetime(2026, 1, 1, tzinfo=UTC), transport="http")
    assert render_tool(later) == text
    assert render_tool(tool(description="Fetché")).count("Fetché") == 1  # not \\u-escaped
    assert tool_definition(tool())["inputSchema"] == tool().input_schema


def test_server_files_names():
    files = server_files([tool("a/b"), tool(".x")])
    assert sorted(files) == ["%2Ex.json", "a%2Fb.json"]


def test_write_server_creates_replaces_and_drops(tmp_path):
    root = tmp_path / "schemas" / "mcp"
    files = server_files([tool("a"), tool("b")])
    assert write_server(root, "my/server", files) is True
    folder = root / "my%2Fserver"
    assert sorted(p.name for p in folder.iterdir()) == ["a.json", "b.json"]
    assert (folder / "a.json").read_text() == files["a.json"]
    stamp = (folder / "a.json").stat().st_mtime_ns

    assert write_server(root, "my/server", files) is False  # unchanged: nothing rewritten
    assert (folder / "a.json").stat().st_mtime_ns == stamp

    changed = server_files([tool("a", description="New.")])
    assert write_server(root, "my/server", changed) is True
    assert sorted(p.name for p in folder.iterdir()) == ["a.json"]  # b was dropped
    assert "New." in (folder / "a.json").read_text()
    assert sorted(p.name for p in root.iterdir()) == ["my%2Fserver"]  # no temp folders left

    assert write_server(root, "my/server", {}) is True
    assert list(folder.iterdir()) == []


def test_write_server_cleans_leftovers_and_replaces_a_file(tmp_path):
    (tmp_path / ".srv.tmp-dead").mkdir()
    (tmp_path / ".srv.old-dead").mkdir()
    (tmp_path / ".other.tmp-keep").mkdir()
    (tmp_path / "srv").write_text("not a folder")
    assert write_server(tmp_path, "srv", {"t.json": "{}\n"}) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.tmp-keep", "srv"]
    assert (tmp_path / "srv" / "t.json").read_text() == "{}\n"


def test_failed_write_leaves_the_old_folder(tmp_path):
    write_server(tmp_path, "srv", {"t.json": "old\n"})
    with pytest.raises(OSError):
        write_server(tmp_path, "srv", {"t.json": "new\n", "no/such/dir.json": "x"})
    assert (tmp_path / "srv" / "t.json").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["srv"]


def test_lone_surrogate_is_written_as_its_escape(tmp_path):
    text = render_tool(tool(description="bad \ud800 char"))
    write_server(tmp_path, "srv", {"t.json": text})
    assert json.loads((tmp_path / "srv" / "t.json").read_text())["tool"]["description"] == (
        "bad \ud800 char"
    )
    assert write_server(tmp_path, "srv", {"t.json": text}) is False
