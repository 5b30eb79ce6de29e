"""MCP capabilities side by side in one run.

    .venv/bin/python bench/bench_mcp.py [--calls 300]

1. MCP `tools/call` latency over streamable HTTP: direct vs bare mitmdump (streaming) vs
   mitmdump + toolproxy (recording and linking), with the real `mcp` client.
2. Schema checks: validators compiled once per schema (toolproxy.schema.validator's cache)
   vs compiling a validator for every call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import jsonschema
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port, wait_listening
from toolproxy.schema.validator import check_call

ROOT = Path(__file__).resolve().parent.parent
WEATHER = ROOT / "tests" / "mcp_servers" / "weather.py"


async def call_latencies(urls: dict[str, str], calls: int) -> dict[str, list[float]]:
    """Per-call milliseconds of `tools/call get_weather`, one MCP session per arm, the arms
    interleaved call by call so that machine noise hits them alike."""
    out: dict[str, list[float]] = {name: [] for name in urls}
    async with AsyncExitStack() as stack:
        sessions = {}
        for name, url in urls.items():
            read, write, *_ = await stack.enter_async_context(streamable_http_client(url))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions[name] = session
        for i in range(calls + 10):
            for name, session in sessions.items():
                t0 = time.perf_counter()
                await session.call_tool("get_weather", {"city": "Paris"})
                if i >= 10:  # the first ten warm up
                    out[name].append((time.perf_counter() - t0) * 1000)
    return out


def bench_schema_checks(n: int) -> tuple[float, float]:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    args = '{"city": "Paris", "unit": "celsius", "when": "2026-11-22T10:00:00Z", "tags": ["a"]}'
    t0 = time.perf_counter()
    for _ in range(n):
        check_call(args, schema)
    cached = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(n // 10):
        validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.FormatChecker()
        )
        jsonschema.Draft202012Validator.check_schema(schema)
        list(validator.iter_errors({"city": "Paris", "unit": "celsius"}))
    uncached = (n // 10) / (time.perf_counter() - t0)
    return cached, uncached


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="tools/call per arm")
    parser.add_argument("--checks", type=int, default=20_000, help="schema checks")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="toolproxy-bench-mcp-"))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(WEATHER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening("127.0.0.1", port, server)
        upstream = f"http://127.0.0.1:{port}"
        bare = RunningProxy(ProxySpec(tmp / "u", upstream, port=free_port(), with_addon=False))
        tool = RunningProxy(ProxySpec(tmp / "capture", upstream, port=free_port()))
        with bare, tool:
            arms = {
                "direct": f"{upstream}/mcp",
                "bare mitmdump": f"{bare.url}/mcp",
                "mitmdump + toolproxy": f"{tool.url}/mcp",
            }
            n = args.calls
            print(f"1. MCP tools/call latency, streamable HTTP, {n} calls per arm, interleaved")
            lat = asyncio.run(call_latencies(arms, n))
        base = statistics.median(lat["direct"])
        for name, values in lat.items():
            med = statistics.median(values)
            added = f"added {med - base:+7.2f} ms" if name != "direct" else ""
            print(f"  {name:<22} median {med:7.2f} ms  {added}")
        bare_add = statistics.median(lat["bare mitmdump"]) - base
        tool_add = statistics.median(lat["mitmdump + toolproxy"]) - base
        print(f"  toolproxy overhead / bare mitmdump overhead = {tool_add / bare_add:.2f}x")
        _, recorded = store.query(
            tmp / "capture", "SELECT count(*) FROM mcp_calls WHERE tool_name = 'get_weather'"
        )
        print(f"  tools/call rows recorded: {recorded[0][0]} of {args.calls + 10} calls")
    finally:
        server.terminate()
        server.wait()
    print(f"\n2. schema checks, {args.checks} calls")
    cached, uncached = bench_schema_checks(args.checks)
    print(f"  compiled once per schema  {cached:10.0f} calls/s")
    print(f"  compiled per call         {uncached:10.0f} calls/s")
    print(f"  ratio = {cached / uncached:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
