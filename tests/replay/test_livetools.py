"""Live tools against the real FastMCP weather server over stdio."""

from __future__ import annotations

import sys

from tests.paths import MCP_SERVERS
from toolproxy.mcp.config import ServerSpec
from toolproxy.replay.engine import LiveResult
from toolproxy.replay.livetools import McpLiveTools, allowed

WEATHER = str(MCP_SERVERS / "weather.py")


def weather() -> ServerSpec:
    return ServerSpec("weather", "stdio", "test", command=sys.executable, args=(WEATHER,))


async def test_read_only_tool_runs_and_destructive_is_refused_with_prefixed_names():
    async with McpLiveTools([weather()]) as live:
        got = await live.call("mcp__weather__get_weather", {"city": "Paris"})
        assert isinstance(got, LiveResult) and not got.is_error
        assert '"city":"Paris"' in got.content.replace(" ", "")
        assert await live.call("delete_note", {"note_id": "n1"}) is None
        assert "read-only" in live.refused["delete_note"]
        assert await live.call("no_such_tool", {}) is None
        assert "no MCP server" in live.refused["no_such_tool"]
        # one session for the run, reused by every call
        again = await live.call("get_weather", {"city": "Lyon", "unit": "fahrenheit"})
        assert again is not None and "64.4" in again.content
        assert list(live._sessions) == ["weather"]


async def test_side_effects_run_when_allowed_and_tool_errors_are_results():
    async with McpLiveTools([weather()], allow_side_effects=True) as live:
        done = await live.call("delete_note", {"note_id": "n1"})
        assert done == LiveResult(content="deleted n1", is_error=False)
        failed = await live.call("delete_note", {"note_id": "x9"})
        assert failed is not None and failed.is_error and "no such note" in failed.content


async def test_given_tool_listing_decides_without_listing_and_closes_servers():
    listed = {
        "weather": [
            {"name": "get_weather", "annotations": {"readOnlyHint": False}},
            {"name": "search_notes", "annotations": {"idempotentHint": True}},
        ]
    }
    live = McpLiveTools([weather()], server_tools=listed)
    async with live:
        assert await live.call("get_weather", {"city": "Paris"}) is None
        notes = await live.call("search_notes", {"query": "tea", "limit": 2})
        assert notes is not None and "tea #0" in notes.content and "tea #1" in notes.content
        session = live._sessions["weather"]
    assert live._sessions == {} and session._task is not None and session._task.done()


async def test_a_server_that_cannot_start_refuses_its_tools():
    broken = ServerSpec("weather", "stdio", "test", command="/nonexistent/toolproxy-mcp")
    listed = {"weather": [{"name": "get_weather", "annotations": {"readOnlyHint": True}}]}
    async with McpLiveTools([broken], server_tools=listed) as live:
        assert await live.call("get_weather", {"city": "Paris"}) is None
        assert "not_found" in live.refused["get_weather"]


def test_allowed_reads_the_annotations():
    assert allowed({"annotations": {"readOnlyHint": True}}, False)
    assert allowed({"annotations": {"idempotentHint": True}}, False)
    assert not allowed({"annotations": {"destructiveHint": True}}, False)
    assert not allowed({}, False)
    assert allowed({}, True)
