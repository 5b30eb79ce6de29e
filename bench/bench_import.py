"""`toolproxy import` of a flow file vs reading the same file with mitmproxy alone, side by
side in one run.

* read: mitmproxy's `FlowReader` over the file (what any tool reading it pays);
* import: `import_traffic` into a fresh capture (read, parse, redact, stitch, write);
* HAR: the same flows as a HAR file, imported.

The flows are chat completions with one tool call each, in conversations of 4 turns that
continue each other (so session stitching has real work), keys in their headers.

Run: .venv/bin/python bench/bench_import.py [--flows 20000]
Prints flows/s for each and the import's time relative to the read (median of 3 rounds).
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from mitmproxy import http
from mitmproxy.io import FlowReader, FlowWriter
from mitmproxy.test import tflow, tutils

from toolproxy.capture.importer import import_traffic

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def turn(conversation: int, step: int, started: float) -> http.HTTPFlow:
    messages: list[dict] = [{"role": "user", "content": f"Weather {conversation}?"}]
    for s in range(step):
        call_id = f"call_{conversation}_{s}"
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [_call(call_id, s)]},
            {"role": "tool", "tool_call_id": call_id, "content": f"sunny {s}"},
        ]
    body = {"model": "gpt-4o-mini", "messages": messages, "tools": TOOLS}
    reply = {
        "id": f"chatcmpl-{conversation}-{step}",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [_call(f"call_{conversation}_{step}", step)],
                },
            }
        ],
        "usage": {"prompt_tokens": 40 + step * 20, "completion_tokens": 9, "total_tokens": 60},
    }
    request = tutils.treq(
        method=b"POST",
        host="api.openai.com",
        port=443,
        scheme=b"https",
        path=b"/v1/chat/completions",
        headers=http.Headers(content_type="application/json", authorization="Bearer sk-bench"),
        content=json.dumps(body).encode(),
        timestamp_start=started,
        timestamp_end=started + 0.001,
    )
    response = tutils.tresp(
        headers=http.Headers(content_type="application/json"),
        content=json.dumps(reply).encode(),
        timestamp_start=started + 0.3,
        timestamp_end=started + 0.4,
    )
    return tflow.tflow(req=request, resp=response)


def _call(call_id: str, step: int) -> dict:
    arguments = json.dumps({"city": f"city {step}"})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }


def make_flows(n: int) -> list[http.HTTPFlow]:
    return [turn(i // 4, i % 4, 1_700_000_000.0 + i) for i in range(n)]


def har_entry(flow: http.HTTPFlow) -> dict:
    assert flow.response is not None  # make_flows answers every request
    when = datetime.fromtimestamp(flow.request.timestamp_start, UTC).isoformat()
    return {
        "startedDateTime": when.replace("+00:00", "Z"),
        "time": 400,
        "request": {
            "method": "POST",
            "url": flow.request.url,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": k, "value": v} for k, v in flow.request.headers.items()],
            "postData": {"mimeType": "application/json", "text": flow.request.get_text()},
        },
        "response": {
            "status": 200,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": k, "value": v} for k, v in flow.response.headers.items()],
            "content": {
                "mimeType": "application/json",
                "encoding": "base64",
                "text": base64.b64encode(flow.response.content or b"").decode(),
            },
        },
    }


def timed(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-import-"))
    try:
        flows = make_flows(args.flows)
        flow_file, har_file = work / "flows.mitm", work / "traffic.har"
        with flow_file.open("wb") as f:
            writer = FlowWriter(f)
            for flow in flows:
                writer.add(flow)
        har = {"log": {"version": "1.2", "entries": [har_entry(f) for f in flows]}}
        har_file.write_text(json.dumps(har))

        def read() -> None:
            with flow_file.open("rb") as f:
                assert sum(1 for _ in FlowReader(f).stream()) == args.flows

        def importing(path: Path) -> Callable[[], None]:
            def run() -> None:
                capture = work / "capture"
                shutil.rmtree(capture, ignore_errors=True)
                done = import_traffic([path], capture)
                assert done.exchanges == args.flows and not done.problems, done

            return run

        base = timed(read, args.rounds)
        results = {
            "mitmproxy FlowReader (read only)": base,
            "toolproxy import, flow file": timed(importing(flow_file), args.rounds),
            "toolproxy import, HAR file": timed(importing(har_file), args.rounds),
        }
        print(f"{args.flows:,} flows, median of {args.rounds} rounds")
        for name, seconds in results.items():
            rate = args.flows / seconds
            print(f"  {name:36} {seconds:7.2f} s  {rate:9,.0f} flows/s  {seconds / base:5.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
