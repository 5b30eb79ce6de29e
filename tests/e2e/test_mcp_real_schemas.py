"""Drift, check and budget on real traffic against a real MCP server's schema.

The real schema comes from `mcp-server-time` (PyPI) over stdio through `toolproxy mcp
pull`. The agent (the real openai SDK through the real proxy) offers an edited copy of
it: a parameter renamed, an enum narrowed, a required field dropped, a description
changed, and one extra tool the server lacks. The scripted model calls a tool with
arguments valid for the copy but not for the real schema, and a tool no server exposes.
"""

from __future__ import annotations

import copy
import json
import math
import sys

import openai

from toolproxy import store
from toolproxy.cli.main import main
from toolproxy.records import McpTool, canonical_json
from toolproxy.scripted import Reply, Script, ScriptedCall

from .conftest import rows, wait_rows

PREFIX = "mcp__time__"
ZONES = ["UTC", "Europe/Paris", "Asia/Tokyo"]


def pull_time_server(capture, schemas, capsys) -> dict[str, McpTool]:
    """`toolproxy mcp pull` of the real server over stdio; its tools as stored."""
    capsys.readouterr()
    argv = ["mcp", "pull", "-c", str(capture), "--schemas", str(schemas), "--name", "time"]
    server = f"{sys.executable} -m mcp_server_time --local-timezone UTC"
    assert main([*argv, "--stdio", server]) == 0, capsys.readouterr()
    names, got = store.query(capture, "SELECT * FROM mcp_tools_latest")
    tools = {}
    for values in got:
        row = dict(zip(names, values, strict=True))
        for col in ("input_schema", "output_schema", "annotations"):
            row[col] = json.loads(row[col]) if row[col] is not None else None
        tools[row["name"]] = McpTool.model_validate(row)
    return tools


def edited_copy(real: dict[str, McpTool]) -> list[dict]:
    """The agent's tools block: the real tools, deliberately edited, plus one extra."""
    now = real["get_current_time"]
    now_schema = copy.deepcopy(now.input_schema)
    now_schema["properties"]["timezone"]["enum"] = ZONES  # enum narrowed (was any string)
    conv = real["convert_time"]
    conv_schema = copy.deepcopy(conv.input_schema)
    props = conv_schema["properties"]
    props["time_hhmm"] = props.pop("time")  # parameter renamed
    conv_schema["required"] = ["source_timezone", "time_hhmm"]  # target_timezone dropped
    return [
        tool(PREFIX + "get_current_time", "Get the time", now_schema),  # description changed
        tool(PREFIX + "convert_time", conv.description, conv_schema),
        tool(PREFIX + "list_timezones", "List timezones", {"type": "object", "properties": {}}),
    ]


def tool(name: str, description: str | None, parameters: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


CALLS = Reply(
    tool_calls=[
        # valid for the copy (time_hhmm, no target) but not for the real schema
        ScriptedCall(
            name=PREFIX + "convert_time",
            arguments={"source_timezone": "UTC", "time_hhmm": "10:00"},
        ),
        ScriptedCall(name=PREFIX + "get_current_time", arguments={"timezone": "Europe/Paris"}),
        ScriptedCall(name=PREFIX + "list_timezones", arguments={}),
        ScriptedCall(name="search_web", arguments={"q": "time zones"}),
    ]
)


def cli_json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["mcp", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_drift_check_budget_on_an_edited_copy_of_a_real_schema(
    upstream, proxy, capture, capsys, tmp_path
):
    real = pull_time_server(capture, tmp_path / "schemas", capsys)
    assert set(real) == {"get_current_time", "convert_time"}
    assert "time" in real["convert_time"].input_schema["required"]
    assert (tmp_path / "schemas" / "time" / "convert_time.json").exists()
    tools = edited_copy(real)
    upstream.set_script(
        Script.of(CALLS, Reply(text="no tools"), Reply(text="done"), deterministic=True)
    )
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-test", max_retries=0)
    messages = [{"role": "user", "content": "What time is it in Paris, and 10:00 UTC there?"}]
    first = client.chat.completions.create(model="m", messages=messages, tools=tools)
    assert len(first.choices[0].message.tool_calls) == 4
    # the same conversation without tools: its usage difference measures the tools block
    client.chat.completions.create(model="m", messages=messages)
    follow = [
        *messages,
        first.choices[0].message.model_dump(exclude_none=True),
        *[
            {"role": "tool", "tool_call_id": c.id, "content": "ok"}
            for c in first.choices[0].message.tool_calls
        ],
    ]
    client.chat.completions.create(model="m", messages=follow, tools=tools)
    wait_rows(capture, "SELECT 1 FROM exchanges", 3)
    wait_rows(capture, "SELECT 1 FROM tool_calls", 4)

    drift = cli_json(capsys, "drift", "-c", str(capture))
    assert drift["servers"] == ["time"]
    changes = {
        (t["tool"], c["kind"], c["path"], json.dumps(c["server"]), json.dumps(c["offered"]))
        for t in drift["tools"]
        for c in t["changes"]
    }
    time_param = real["convert_time"].input_schema["properties"]["time"]
    assert changes == {
        ("convert_time", "param_removed", "time", json.dumps(time_param), "null"),
        ("convert_time", "param_added", "time_hhmm", "null", json.dumps(time_param)),
        ("convert_time", "required_changed", "target_timezone", "true", "false"),
        ("get_current_time", "enum_changed", "timezone", "null", json.dumps(ZONES)),
        (
            "get_current_time",
            "description_changed",
            "",
            json.dumps(real["get_current_time"].description),
            json.dumps("Get the time"),
        ),
    }
    assert [(t["tool"], t["offered_name"], t["exchanges"]) for t in drift["tools"]] == [
        ("convert_time", PREFIX + "convert_time", 2),
        ("get_current_time", PREFIX + "get_current_time", 2),
    ]
    assert drift["missing"] == []
    assert [(e["name"], e["exchanges"]) for e in drift["extra"]] == [(PREFIX + "list_timezones", 2)]
    assert {(u["name"], u["calls"], u["offered"]) for u in drift["unknown_calls"]} == {
        (PREFIX + "list_timezones", 1, True),
        ("search_web", 1, False),
    }

    check = cli_json(capsys, "check", "-c", str(capture))
    got = {c["name"]: c for c in check["calls"]}
    conv = got[PREFIX + "convert_time"]
    assert (conv["source"], conv["server"], conv["tool"]) == ("mcp_server", "time", "convert_time")
    assert not conv["check"]["valid"]
    assert {(e["validator"], e["message"]) for e in conv["check"]["errors"]} == {
        ("required", "'time' is a required property"),
        ("required", "'target_timezone' is a required property"),
    }
    assert got[PREFIX + "get_current_time"]["source"] == "mcp_server"
    assert got[PREFIX + "get_current_time"]["check"]["valid"]
    assert (got[PREFIX + "list_timezones"]["source"], got["search_web"]["source"]) == (
        "offered",
        "none",
    )
    assert check["summary"] == {
        "calls": 4,
        "valid": 3,
        "invalid": 1,
        "by_source": {"mcp_server": 2, "offered": 1, "none": 1},
        "lost_in_text": 0,
        "lost_by_format": {},
    }
    failed = cli_json(capsys, "check", "-c", str(capture), "--failed")
    assert [c["name"] for c in failed["calls"]] == [PREFIX + "convert_time"]

    budget = cli_json(capsys, "budget", "-c", str(capture))
    per_tool = {t["name"]: t for t in budget["tools"]}
    assert set(per_tool) == {t["function"]["name"] for t in tools}
    for sent in tools:
        row = per_tool[sent["function"]["name"]]
        assert row["method"] == "estimate_chars_div_4"
        assert row["requests"] == 2
        assert row["avg_tokens"] == math.ceil(len(canonical_json(sent)) / 4)
    usage = dict(
        rows(
            capture,
            "SELECT (SELECT count(*) FROM tools_offered t WHERE t.exchange_id = e.exchange_id), "
            "input_tokens FROM exchanges e WHERE json_array_length(messages) = 1",
        )
    )
    by_method = {r["method"]: r for r in budget["requests"]}
    assert by_method["provider_usage_diff"]["tools_tokens"] == usage[3] - usage[0]
    assert by_method["estimate_chars_div_4"]["input_tokens"] > usage[3]  # the follow-up
    assert budget["capture"]["method"] == "mixed"
    assert budget["capture"]["prompt_tokens"] == sum(
        r[0] for r in rows(capture, "SELECT input_tokens FROM exchanges")
    )
    assert store.query(capture, "SELECT count(*) FROM mcp_tools_latest")[1] == [(2,)]
