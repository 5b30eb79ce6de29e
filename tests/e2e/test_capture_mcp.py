"""MCP through the proxy: real mitmdump in front of a real FastMCP server (streamable HTTP,
SSE and JSON responses), driven by the real `mcp` client; and a model tool call linked to
the MCP call that executed it, with both kinds of traffic through one explicit proxy."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port, wait_listening
from toolproxy.scripted import Reply, Script, ScriptedCall

from .conftest import assert_clean, rows, wait_rows

WEATHER = Path(__file__).resolve().parents[1] / "mcp_servers" / "weather.py"
TOKEN = "tok-mcp-e2e-0123456789"
TIMEOUT = httpx.Timeout(30, read=60)


@contextmanager
def weather_server(json_response: bool = False) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """tests/mcp_servers/weather.py over streamable HTTP; yields (base url, process)."""
    port = free_port()
    argv = [sys.executable, str(WEATHER), "--http", str(port)]
    proc = subprocess.Popen(
        argv + (["--json"] if json_response else []),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Listening before any proxy starts: in reverse mode mitmdump connects upstream as
        # soon as a client connects, its own start-up probe included, and an upstream not
        # yet up is recorded as a failed connection (a fresh venv imports FastMCP slowly).
        wait_listening("127.0.0.1", port, proc)
        yield f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(10)


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", exclude={"meta"}) if value is not None else None


async def drive(url: str, client: httpx.AsyncClient) -> dict[str, Any]:
    """What an agent does with an MCP server, and everything it got back."""
    got: dict[str, Any] = {}
    async with client, streamable_http_client(url, http_client=client) as (read, write, sid):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            got["server"] = (init.serverInfo.name, init.protocolVersion)
            got["tools"] = [dump(t) for t in (await session.list_tools()).tools]
            got["ok"] = dump(await session.call_tool("get_weather", {"city": "Paris"}))
            got["is_error"] = dump(await session.call_tool("delete_note", {"note_id": "x1"}))
            got["unknown"] = dump(await session.call_tool("no_such_tool", {}))
            got["echo"] = dump(await session.call_tool("search_notes", {"query": TOKEN}))
            try:
                await session.set_logging_level("debug")
            except McpError as exc:
                got["rpc_error"] = (exc.error.code, exc.error.message)
            # What the SDK never sends: a tools/call without a name, and a broken body.
            headers = {
                "mcp-session-id": sid() or "",
                "mcp-protocol-version": init.protocolVersion,
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
            }
            bad_params = await client.post(
                url,
                headers=headers,
                content=b'{"jsonrpc":"2.0","id":"raw-1","method":"tools/call","params":{}}',
            )
            got["bad_params"] = (bad_params.status_code, "-32602" in bad_params.text)
            garbage = await client.post(url, headers=headers, content=b'{"jsonrpc":"2.0","id')
            got["garbage"] = (garbage.status_code, json.loads(garbage.text)["error"]["code"])
            got["session"] = sid()
    return got


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_mcp_traffic_through_the_proxy_is_recorded(capture, json_response):
    with weather_server(json_response) as (base, _):
        spec = ProxySpec(capture, upstream=base, port=free_port(), flush_interval=0.05)
        with RunningProxy(spec) as proxy:
            direct = await drive(f"{base}/mcp", httpx.AsyncClient(timeout=TIMEOUT))
            auth = {"authorization": f"Bearer {TOKEN}"}
            proxied = await drive(
                f"{proxy.url}/mcp", httpx.AsyncClient(headers=auth, timeout=TIMEOUT)
            )
            # initialize, initialized, GET stream, tools/list, 4 calls, setLevel, 2 raw, DELETE
            wait_rows(capture, "SELECT 1 FROM exchanges", 12)
            assert_clean(proxy.stop())

    session = proxied.pop("session")
    assert direct.pop("session") != session
    assert proxied == direct  # the client got exactly what it gets without the proxy
    assert proxied["server"][0] == "weather"
    assert proxied["is_error"]["isError"] and proxied["unknown"]["isError"]
    assert proxied["rpc_error"] == (-32601, "Method not found")
    assert proxied["bad_params"] == (200, True) and proxied["garbage"] == (400, -32700)

    # The client sends notifications and opens its GET stream in tasks of their own, so
    # only the requests (each awaited) are in a fixed order; key exchanges by what they held.
    exchanges = rows(
        capture,
        "SELECT e.method, m.method, m.rpc_id, e.wire_format, e.session_id, e.session_source, "
        "e.streamed, e.parse_status, e.status_code FROM exchanges e LEFT JOIN mcp_messages m "
        "ON m.exchange_id = e.exchange_id AND m.position = 0",
    )
    assert {e[3] for e in exchanges} == {"mcp"}, exchanges
    assert len({e[4] for e in exchanges}) == 1  # one MCP session, one toolproxy session
    stream = not json_response  # requests are answered as event streams in SSE mode
    assert {e[:3]: e[5:] for e in exchanges} == {
        ("POST", "initialize", "0"): ("new", stream, "ok", 200),
        ("POST", "notifications/initialized", None): ("mcp_session", False, "ok", 202),
        ("GET", None, None): ("mcp_session", True, "ok", 200),
        ("POST", "tools/list", "1"): ("mcp_session", stream, "ok", 200),
        ("POST", "tools/call", "2"): ("mcp_session", stream, "ok", 200),
        ("POST", "tools/call", "3"): ("mcp_session", stream, "ok", 200),
        ("POST", "tools/call", "4"): ("mcp_session", stream, "ok", 200),
        ("POST", "tools/call", "5"): ("mcp_session", stream, "ok", 200),
        ("POST", "logging/setLevel", "6"): ("mcp_session", stream, "ok", 200),
        ("POST", "tools/call", "raw-1"): ("mcp_session", stream, "ok", 200),
        # the broken body: kept as an error value, with the server's answer as its row
        ("POST", None, "server-error"): ("mcp_session", False, "error", 400),
        ("DELETE", None, None): ("mcp_session", False, "ok", 200),
    }

    messages = rows(
        capture,
        "SELECT m.direction, m.method, m.rpc_id, m.mcp_session_id, m.error_code "
        "FROM mcp_messages m ORDER BY m.started_at, m.position",
    )
    assert {m[3] for m in messages} == {session}
    assert sorted(m[:3] + (m[4],) for m in messages if m[2] is not None) == sorted(
        [
            ("client", "initialize", "0", None),
            ("client", "tools/list", "1", None),
            ("client", "tools/call", "2", None),
            ("client", "tools/call", "3", None),
            ("client", "tools/call", "4", None),
            ("client", "tools/call", "5", None),
            ("client", "logging/setLevel", "6", -32601),
            ("client", "tools/call", "raw-1", -32602),
            ("server", None, "server-error", -32700),
        ]
    )
    assert [m[:3] for m in messages if m[2] is None] == [
        ("client", "notifications/initialized", None)
    ]

    init = rows(capture, "SELECT params, result FROM mcp_messages WHERE method = 'initialize'")
    params, result = (json.loads(v) for v in init[0])
    assert params["clientInfo"]["name"] == "mcp"
    assert result["serverInfo"]["name"] == "weather"
    assert result["protocolVersion"] == proxied["server"][1]
    listed = rows(capture, "SELECT result FROM mcp_messages WHERE method = 'tools/list'")
    assert [t["name"] for t in json.loads(listed[0][0])["tools"]] == [
        t["name"] for t in proxied["tools"]
    ]

    calls = rows(
        capture,
        "SELECT tool_name, arguments, is_error, error_code, result FROM mcp_calls "
        "ORDER BY started_at",  # each call awaited its answer: a fixed order
    )
    assert [(c[0], json.loads(c[1]), c[2], c[3]) for c in calls] == [
        ("get_weather", {"city": "Paris"}, False, None),
        ("delete_note", {"note_id": "x1"}, True, None),
        ("no_such_tool", {}, True, None),
        ("search_notes", {"query": "[REDACTED]"}, False, None),
        (None, {}, None, -32602),
    ]
    assert json.loads(calls[0][4])["structuredContent"] == proxied["ok"]["structuredContent"]

    # The bearer token never reaches the store, though the arguments and result echo it.
    everything = rows(capture, "SELECT to_json(m)::VARCHAR FROM mcp_messages m") + rows(
        capture, "SELECT to_json(e)::VARCHAR FROM exchanges e"
    )
    text = json.dumps(everything)
    assert TOKEN not in text and "[REDACTED] #0" in text


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "weather__get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


async def test_model_call_is_linked_to_its_mcp_execution(upstream, capture):
    call = ScriptedCall(name="weather__get_weather", arguments={"city": "Paris"}, id="call_w1")
    upstream.set_script(
        Script.of(Reply(tool_calls=[call]), Reply(text="18 degrees"), deterministic=True)
    )
    with weather_server() as (base, _):
        spec = ProxySpec(capture, upstream=None, port=free_port(), flush_interval=0.05)
        with RunningProxy(spec) as proxy:
            model = openai.AsyncOpenAI(
                base_url=f"{upstream.url}/v1",
                api_key="sk-link-test",
                max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(proxy=proxy.url),
            )
            messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
            first = await model.chat.completions.create(
                model="m", messages=messages, tools=[WEATHER_TOOL]
            )
            tool_call = first.choices[0].message.tool_calls[0]
            mcp_client = httpx.AsyncClient(proxy=proxy.url, timeout=TIMEOUT)
            async with (
                mcp_client,
                streamable_http_client(f"{base}/mcp", http_client=mcp_client) as (
                    read,
                    write,
                    _,
                ),
            ):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    server_tool = tool_call.function.name.split("__", 1)[1]
                    result = await session.call_tool(
                        server_tool, json.loads(tool_call.function.arguments)
                    )
            messages += [
                first.choices[0].message.to_dict(),
                {"role": "tool", "tool_call_id": tool_call.id, "content": result.content[0].text},
            ]
            final = await model.chat.completions.create(
                model="m", messages=messages, tools=[WEATHER_TOOL]
            )
            assert final.choices[0].message.content == "18 degrees"
            wait_rows(capture, "SELECT 1 FROM exchanges WHERE wire_format = 'openai_chat'", 2)
            wait_rows(capture, "SELECT 1 FROM exchanges WHERE method = 'DELETE'", 1)
            assert_clean(proxy.stop())

    chat = rows(
        capture,
        "SELECT exchange_id, session_id, session_source FROM exchanges "
        "WHERE wire_format = 'openai_chat' ORDER BY started_at",
    )
    (first_id, model_session, _), (_, follow_session, follow_source) = chat
    assert (follow_session, follow_source) == (model_session, "continued")

    linked = rows(
        capture,
        "SELECT c.tool_name, c.linked_exchange_id, c.linked_call_id, c.session_id, "
        "e.session_source FROM mcp_calls c JOIN exchanges e USING (exchange_id)",
    )
    assert linked == [("get_weather", first_id, "call_w1", model_session, "linked")]

    # One session shows the call, its execution and its result.
    story = rows(
        capture,
        "SELECT 'call', call_id FROM tool_calls WHERE session_id = $s "
        "UNION ALL SELECT 'execution', linked_call_id FROM mcp_calls WHERE session_id = $s "
        "UNION ALL SELECT 'result', call_id FROM tool_results WHERE session_id = $s",
        {"s": model_session},
    )
    assert sorted(story) == [("call", "call_w1"), ("execution", "call_w1"), ("result", "call_w1")]
    # The rest of the MCP session (initialize, the GET stream, DELETE) keeps its own session.
    others = rows(
        capture,
        "SELECT DISTINCT session_id FROM exchanges WHERE wire_format = 'mcp' "
        "AND session_source <> 'linked'",
    )
    assert len(others) == 1 and others[0][0] != model_session
