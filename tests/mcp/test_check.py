"""`toolproxy mcp check`: the adapter over schemacheck, on a real capture."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.builders import chat_exchange
from tests.seeded import CaptureRows
from toolproxy.cli.main import main
from toolproxy.mcp.check import CallCheck, summarize
from toolproxy.records import McpTool, ToolCall, ToolOffered, schema_hash
from toolproxy.schema.validator import SchemaCheck, check_call

REAL = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city", "unit"],
}
SENT = {"type": "object", "properties": {"city": {"type": "string"}}}


def test_summary_counts_by_source():
    def call(source: str, valid: bool) -> CallCheck:
        return CallCheck(exchange_id="e", source=source, check=SchemaCheck(valid=valid))  # type: ignore[arg-type]

    checks = [call("mcp_server", False), call("mcp_server", True), call("none", True)]
    lost = call("offered", True).model_copy(update={"leaked": "hermes"})
    assert summarize([*checks, lost]) == {
        "calls": 3,
        "valid": 2,
        "invalid": 1,
        "by_source": {"mcp_server": 2, "offered": 0, "none": 1},
        "lost_in_text": 1,
        "lost_by_format": {"hermes": 1},
    }
    assert checks[0].first_error is None
    bad = CallCheck(exchange_id="e", source="none", check=check_call("{", None))
    assert bad.first_error and bad.first_error.startswith("Expecting")


# --- the command, on a real capture ----------------------------------------------------

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def seed(
    capture, sessions: dict[str, list[tuple[str, str]]], texts: dict[str, str] | None = None
) -> None:
    """One exchange per session offering SENT as get_weather and local_tool, with calls
    (and `texts`: the reply's text per session)."""
    rows = CaptureRows()
    for n, (session, calls) in enumerate(sessions.items()):
        ex = chat_exchange(
            f"ex{n}",
            session,
            T0 + timedelta(seconds=n),
            model_requested=f"model-{n}",
            assistant_text=(texts or {}).get(session),
        )
        tools = [
            ToolOffered(
                position=position, name=name, parameters=SENT, schema_hash=schema_hash(SENT)
            )
            for position, name in enumerate(["get_weather", "local_tool"])
        ]
        made = [
            ToolCall(index=i, name=name, arguments_raw=raw) for i, (name, raw) in enumerate(calls)
        ]
        rows.turn(ex, calls=made, offered=tools)
    real = McpTool(
        pull_id="p1",
        pulled_at=T0,
        server="wx",
        transport="stdio",
        name="get_weather",
        input_schema=REAL,
        schema_hash=schema_hash(REAL),
        definition_hash="d",
    )
    rows.models("mcp_tools", [real]).write(capture)


def test_check_command_text_and_filters(tmp_path, capsys):
    capture = tmp_path / "cap"
    seed(
        capture,
        {
            "s1": [("get_weather", '{"city": "Paris"}'), ("local_tool", '{"city": "x"}')],
            "s2": [("mcp__wx__get_weather", '{"city": "Oslo", "unit": "c"}'), ("ghost", "{")],
        },
    )
    assert main(["mcp", "check", "-c", str(capture)]) == 0
    out = capsys.readouterr().out
    assert "mcp_server wx:get_weather" in out and "'unit' is a required property" in out
    assert out.strip().endswith(
        "4 calls: 2 valid, 2 invalid (schema: mcp_server 2, offered 1, none 1)"
    )
    assert main(["mcp", "check", "-c", str(capture), "--json", "--session", "s2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["name"], c["source"], c["model"]) for c in data["calls"]] == [
        ("mcp__wx__get_weather", "mcp_server", "model-1"),
        ("ghost", "none", "model-1"),
    ]
    assert data["calls"][1]["first_error"].startswith("Expecting")
    assert main(["mcp", "check", "-c", str(capture), "--json", "--failed"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in data["calls"]] == ["get_weather", "ghost"]
    assert data["summary"]["calls"] == 4  # the summary covers every call, not just those shown
    one = tmp_path / "one"
    seed(one, {"s1": [("get_weather", '{"city": "Paris"}')]})
    assert main(["mcp", "check", "-c", str(one)]) == 0
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith("1 call: 0 valid, 1 invalid (schema: mcp_server 1, offered 0, none 0)")
    )


def test_check_command_on_a_missing_capture_is_a_clear_error(tmp_path, capsys):
    assert main(["mcp", "check", "-c", str(tmp_path / "nope")]) == 2
    assert "not a toolproxy capture" in capsys.readouterr().err


def test_calls_lost_in_text_are_checked_in_a_section_of_their_own(tmp_path, capsys):
    capture = tmp_path / "cap"
    lost = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    seed(
        capture,
        {"s1": [("get_weather", '{"city": "Oslo", "unit": "c"}')], "s2": [], "s3": []},
        texts={"s1": "calling", "s2": lost, "s3": "[not, a, call]"},
    )
    assert main(["mcp", "check", "-c", str(capture)]) == 0
    out = capsys.readouterr().out
    recorded, section = out.split("Tool calls lost in text")
    assert "s2" not in recorded and "s2" in section and "hermes" in section
    assert "'unit' is a required property" in section  # checked against the real schema
    assert out.strip().endswith("1 call lost in text (hermes 1)")
    assert main(["mcp", "check", "-c", str(capture), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["session_id"], c["leaked"]) for c in data["calls"]] == [
        ("s1", None),
        ("s2", "hermes"),
    ]
    assert data["summary"]["calls"] == 1 and data["summary"]["lost_in_text"] == 1
