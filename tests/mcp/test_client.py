"""The MCP client against real servers: PyPI servers, FastMCP over three transports, and
servers that crash, hang, refuse or page badly."""

from __future__ import annotations

import logging
import subprocess
import sys

import httpx
import pytest
from mcp import McpError
from mcp.types import ErrorData

from tests.mcp_servers.launch import free_port, remote_servers
from tests.paths import TESTS
from toolproxy.mcp import client as mcpclient
from toolproxy.mcp.client import (
    describe_error,
    fetch_all,
    fetch_many,
    fetch_tools,
    quiet_sdk_logs,
)
from toolproxy.mcp.config import ServerSpec
from toolproxy.mcp.outcomes import Failure, Listing

PAGED = str(TESTS / "mcp_servers" / "paged.py")
WEATHER = str(TESTS / "mcp_servers" / "weather.py")
BAD = TESTS / "fixtures" / "mcp"
PY = sys.executable
SECRET = "tok-9f8e7d6c5b"


def stdio(name: str, *args: str, **fields) -> ServerSpec:
    return ServerSpec(name, "stdio", "test", command=PY, args=args, **fields)


@pytest.fixture(scope="module")
def remote():
    """Weather over streamable HTTP and SSE, and a server that answers 401."""
    with remote_servers(PY) as urls:
        yield urls


@pytest.fixture
def git_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def names(listing) -> list[str]:
    assert isinstance(listing, Listing), listing
    return [t["name"] for t in listing.tools]


async def test_pypi_time_and_git_servers(git_repo):
    time, git = await fetch_many(
        [
            stdio("time", "-m", "mcp_server_time", "--local-timezone", "Etc/UTC"),
            stdio("git", "-m", "mcp_server_git", "--repository", str(git_repo)),
        ],
        timeout=30,
    )
    assert names(time) == ["get_current_time", "convert_time"]
    assert time.server_name == "mcp-time" and time.server_version
    assert time.protocol_version
    current = time.tools[0]
    assert current["inputSchema"]["required"] == ["timezone"]
    assert current["annotations"]["readOnlyHint"] is True
    assert "git_status" in names(git) and "git_commit" in names(git)
    assert git.server_name == "mcp-git"


async def test_weather_over_three_transports(remote):
    listings = await fetch_many(
        [
            stdio("weather", WEATHER),
            ServerSpec("weather", "http", "test", url=remote["http"], headers={"X-K": SECRET}),
            ServerSpec("weather", "sse", "test", url=remote["sse"]),
        ],
        timeout=30,
    )
    for listing in listings:
        assert names(listing) == ["get_weather", "search_notes", "delete_note"]
        assert listing.server_name == "weather"
    assert listings[0].tools == listings[1].tools == listings[2].tools
    weather = listings[0].tools[0]
    assert weather["title"] == "Current weather"
    assert weather["inputSchema"]["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert weather["outputSchema"]["properties"]["temperature"]["type"] == "number"
    assert weather["annotations"] == {"readOnlyHint": True, "idempotentHint": True}


async def test_pages_follow_next_cursor_and_env_reaches_the_server():
    listing = await fetch_tools(stdio("paged", PAGED, env={"PAGED_VARIANT": "2"}), 30)
    assert names(listing) == ["get_item", "files/read", "Ünïcode tool", "list"]
    assert (listing.server_name, listing.server_version) == ("paged", "0.3.0")
    assert "verbose" in listing.tools[0]["inputSchema"]["properties"]


async def test_a_cursor_that_never_moves_is_a_failure():
    failure = await fetch_tools(stdio("loop", PAGED, env={"PAGED_LOOP": "1"}), 30)
    assert failure.kind == "protocol"
    assert failure.message.startswith("tools/list repeated the cursor '2'; stopped paging")


async def test_too_many_pages_is_a_failure(monkeypatch):
    monkeypatch.setattr(mcpclient, "MAX_PAGES", 2)  # the paged server needs 3
    failure = await fetch_tools(stdio("paged", PAGED), 30)
    assert failure.kind == "protocol"
    assert failure.message.startswith("tools/list still had more after 2 pages")


async def test_command_not_found():
    spec = ServerSpec("x", "stdio", "t", command="toolproxy-test-no-such-command")
    assert await fetch_tools(spec, 5) == Failure(
        "not_found", "command not found: toolproxy-test-no-such-command"
    )
    not_exec = ServerSpec("x", "stdio", "t", command=str(BAD))  # a directory
    failure = await fetch_tools(not_exec, 5)
    assert failure.kind == "cannot_start" and str(BAD) in failure.message


async def test_crash_on_start_shows_stderr_with_secrets_masked():
    spec = stdio(
        "crash",
        str(BAD / "crash_server.py"),
        env={"CRASH_TOKEN": SECRET},
        secrets=(SECRET,),
    )
    failure = await fetch_tools(spec, 30)
    assert failure.kind == "crashed"
    assert failure.message.startswith("the server exited while waiting for initialize")
    assert "starting crash server\nfatal: cannot log in with token ***" in failure.message
    assert SECRET not in failure.message


async def test_crash_without_stderr_says_so(tmp_path):
    script = tmp_path / "quiet.py"
    script.write_text("raise SystemExit(1)\n")
    failure = await fetch_tools(stdio("quiet", str(script)), 30)
    assert failure.kind == "crashed" and "(it wrote nothing to stderr)" in failure.message


async def test_hang_times_out_and_does_not_block_the_others():
    hang, paged = await fetch_many(
        [stdio("hang", str(BAD / "hang_server.py")), stdio("paged", PAGED)], timeout=2.5
    )
    assert hang.kind == "timeout"
    assert hang.message.startswith("no answer within 2.5 s (while waiting for initialize)")
    assert "hang server up" in hang.message
    assert len(names(paged)) == 5


async def test_http_failures(remote):
    locked = ServerSpec(
        "l", "http", "t", url=remote["locked"], headers={"Authorization": f"Bearer {SECRET}"}
    )
    locked_sse = ServerSpec("l", "sse", "t", url=remote["locked"].replace("/mcp", "/sse"))
    wrong_path = ServerSpec("w", "http", "t", url=remote["http"].replace("/mcp", "/nope"))
    refused = ServerSpec("r", "http", "t", url=f"http://127.0.0.1:{free_port()}/mcp")
    results = await fetch_many([locked, locked_sse, wrong_path, refused], timeout=10)
    for failure in results[:2]:
        assert failure.kind == "unauthorized"
        assert failure.message.startswith("HTTP 401 Unauthorized: the server refused")
        assert "asks for Bearer authentication" in failure.message
        assert SECRET not in failure.message
    assert results[2] == Failure(
        "http_error", "HTTP 404 Not Found while waiting for initialize: is the URL right?"
    )
    assert results[3].kind == "connect"


async def test_config_error_is_reported_without_connecting():
    spec = ServerSpec("x", "http", "t", error="needs input 'k'")
    assert await fetch_tools(spec, 5) == Failure("config", "needs input 'k'")


def test_describe_error_cases():
    spec = ServerSpec("s", "http", "t", url="http://h/mcp")
    request = httpx.Request("POST", "http://h/mcp")
    forbidden = httpx.HTTPStatusError(
        "x", request=request, response=httpx.Response(403, request=request)
    )
    nested = ExceptionGroup("g", [ExceptionGroup("h", [forbidden])])
    assert describe_error(nested, spec, "initializing", 5).kind == "forbidden"
    teapot = httpx.HTTPStatusError(
        "x", request=request, response=httpx.Response(418, request=request)
    )
    assert describe_error(teapot, spec, "s", 5) == Failure(
        "http_error", "HTTP 418 I'm a teapot from the server"
    )
    rpc = McpError(ErrorData(code=-32601, message="Method not found"))
    assert describe_error(rpc, spec, "waiting for tools/list (page 1)", 5) == Failure(
        "protocol",
        "the server answered with an error while waiting for tools/list (page 1): Method not found",
    )
    assert describe_error(ValueError("odd"), spec, "x", 5) == Failure(
        "protocol", "ValueError while x: odd"
    )
    assert describe_error(TimeoutError(), spec, "x", 1.5).message == (
        "no answer within 1.5 s (while x)"
    )


def test_fetch_all_is_synchronous_and_keeps_order():
    results = fetch_all(
        [ServerSpec("a", "stdio", "t", error="e1"), ServerSpec("b", "stdio", "t", error="e2")], 5
    )
    assert [r.message for r in results] == ["e1", "e2"]


def test_quiet_sdk_logs_holds_records_and_restores():
    logger = logging.getLogger("mcp.client.test")
    before = (logging.getLogger("mcp").propagate, list(logging.getLogger("mcp").handlers))
    with quiet_sdk_logs() as held:
        logger.error("noisy")
    assert [r.getMessage() for r in held] == ["noisy"]
    after = (logging.getLogger("mcp").propagate, list(logging.getLogger("mcp").handlers))
    assert after == before


# --- tools/call: call_tool and Session (replay's live tools) ---------------------------


async def test_call_tool_runs_one_call_and_reports_tool_errors():
    spec = stdio("weather", WEATHER)
    text, is_error = await mcpclient.call_tool(spec, "get_weather", {"city": "Oslo"}, 30)
    assert not is_error and '"city":"Oslo"' in text.replace(" ", "")
    text, is_error = await mcpclient.call_tool(spec, "delete_note", {"note_id": "zz"}, 30)
    assert is_error and "no such note: zz" in text


async def test_call_tool_failures_are_values():
    missing = await mcpclient.call_tool(
        ServerSpec("x", "stdio", "test", command="/nonexistent/cmd"), "t", {}, 5
    )
    assert isinstance(missing, Failure) and missing.kind == "not_found"
    unknown = await mcpclient.call_tool(stdio("weather", WEATHER), "no_such_tool", {}, 30)
    # FastMCP answers an unknown tool with an error result, not a protocol error
    assert isinstance(unknown, tuple) and unknown[1] is True and "no_such_tool" in unknown[0]


async def test_session_serves_many_calls_and_lists_tools_once():
    session = mcpclient.Session(stdio("weather", WEATHER), 30)
    try:
        assert await session.start() is None
        assert session.listing is not None
        assert "get_weather" in [t["name"] for t in session.listing.tools]
        notes = await session.call("search_notes", {"query": "q", "limit": 1})
        assert notes == ("q #0", False)
    finally:
        await session.close()
    assert session._task is not None and session._task.done()


async def test_session_of_a_server_that_crashes_at_start_says_so():
    session = mcpclient.Session(stdio("dies", "-c", "import sys; sys.exit(3)"), 10)
    failure = await session.call("anything", {})
    await session.close()
    assert isinstance(failure, Failure) and failure.kind in ("crashed", "protocol")


def test_result_text_joins_text_and_falls_back_to_structured_content():
    from mcp.types import CallToolResult, ImageContent, TextContent

    both = CallToolResult(
        content=[
            TextContent(type="text", text="a"),
            ImageContent(type="image", data="", mimeType="image/png"),
        ],
        isError=True,
    )
    assert mcpclient.result_text(both) == ("a\n[image]", True)
    structured = CallToolResult(content=[], structuredContent={"t": 1})
    assert mcpclient.result_text(structured) == ('{"t": 1}', False)
