"""Replay throughput: 1,000 single-turn cases against an endpoint with 100 ms latency.

    .venv/bin/python bench/bench_replay.py [--cases 1000] [--latency 0.1] [--concurrency 50]

The endpoint is the scripted upstream in its own process (`toolproxy upstream --script`),
answering every request after `--latency` seconds with one tool call. Two measurements,
side by side:

1. engine   `engine.run_matrix` into the capture through `sink.StoreSink` (what a replay
            costs: SDK calls, closed-loop checks, rows written and fsynced)
2. command  the whole `toolproxy replay --cases FILE --no-grade` (planning and summary too)

Ideal = cases / concurrency x latency (2.0 s by default); the goal is <= 1.25x ideal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from toolproxy import store
from toolproxy.cli import main
from toolproxy.grade.expectations import load_cases
from toolproxy.proxy import free_port
from toolproxy.replay.config import load_config
from toolproxy.replay.engine import run_matrix
from toolproxy.replay.plan import plan_from_cases
from toolproxy.replay.sink import StoreSink

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def write_inputs(folder: Path, n: int, latency: float, port: int, concurrency: int) -> None:
    (folder / "script.json").write_text(
        json.dumps(
            {
                "replies": {
                    "default": [
                        {
                            "delay_s": latency,
                            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                        }
                    ]
                }
            }
        )
    )
    with (folder / "cases.jsonl").open("w") as f:
        for i in range(n):
            case = {
                "id": f"case-{i}",
                "messages": [{"role": "user", "content": f"weather in Paris? ({i})"}],
                "tools": [TOOL],
                "calls": [{"tool": "get_weather", "args": {"city": "Paris"}}],
            }
            f.write(json.dumps(case) + "\n")
    (folder / "cands.yaml").write_text(
        "repeats: 1\nstream: never\ncandidates:\n"
        f"  - name: bench\n    base_url: http://127.0.0.1:{port}/v1\n    model: bench\n"
        f"    concurrency: {concurrency}\n    retries: 0\n"
    )


def wait_ready(port: int) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).read()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the scripted upstream did not start")


def bench_engine(folder: Path, capture: Path) -> tuple[float, int]:
    config = load_config(folder / "cands.yaml")
    items = list(plan_from_cases(load_cases([folder / "cases.jsonl"]), None))
    sink = StoreSink(capture, "engine", "bench-engine", candidates=config.candidates, items=items)
    started = time.perf_counter()
    results = asyncio.run(
        run_matrix(config, items, "engine", sink, set(), {"bench": None}, "recorded", None, None)
    )
    sink.close()
    wall = time.perf_counter() - started
    return wall, sum(r.status != "failed" for r in results)


def bench_command(folder: Path, capture: Path) -> float:
    argv = ["replay", str(folder / "cands.yaml"), "-c", str(capture), "--run", "command"]
    argv += ["--cases", str(folder / "cases.jsonl"), "--no-grade", "--no-progress"]
    started = time.perf_counter()
    with open(os.devnull, "w") as null:
        saved, sys.stdout = sys.stdout, null
        try:
            code = main(argv)
        finally:
            sys.stdout = saved
    if code != 0:
        raise SystemExit(f"toolproxy replay exited {code}")
    return time.perf_counter() - started


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    ideal = args.cases / args.concurrency * args.latency
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        write_inputs(folder, args.cases, args.latency, port, args.concurrency)
        upstream = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolproxy.cli",
                "upstream",
                "--script",
                str(folder / "script.json"),
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
        )
        try:
            wait_ready(port)
            capture = store.init_capture(folder / "cap")
            engine_s, completed = bench_engine(folder, capture)
            command_s = bench_command(folder, capture)
            _, rows = store.query(
                capture,
                "SELECT run, count(*), count(DISTINCT item_id) FROM replay_cells GROUP BY 1",
            )
        finally:
            upstream.terminate()
            upstream.wait()
    written = {run: (n, distinct) for run, n, distinct in rows}
    print(
        f"{args.cases} cases, {args.latency * 1000:.0f} ms latency, concurrency "
        f"{args.concurrency}: ideal {ideal:.2f} s (goal <= {1.25 * ideal:.2f} s)\n"
    )
    print(f"{'':8} {'wall s':>8} {'x ideal':>8} {'cells/s':>8}")
    for name, wall in (("engine", engine_s), ("command", command_s)):
        print(f"{name:8} {wall:8.2f} {wall / ideal:8.2f} {args.cases / wall:8.1f}")
    print(
        f"\nanswered (not failed) {completed}/{args.cases}; "
        f"replay_cells (rows, distinct items) per run: {written}"
    )


if __name__ == "__main__":
    main_bench()
