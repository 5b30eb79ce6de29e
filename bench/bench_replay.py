"""Replay throughput: 1,000 single-turn cases against an endpoint with 100 ms latency.

    .venv/bin/python bench/bench_replay.py [--cases 1000] [--latency 0.1] [--concurrency 50]
                                           [--rounds 3]

The endpoint is the scripted upstream in its own process (`toolproxy upstream --script`),
answering every request after `--latency` seconds with one tool call. Four arms, side by
side, interleaved over `--rounds` rounds (the median is reported, and the range):

1. floor    bare aiohttp POSTs of the same bodies at the same concurrency, nothing done
            with the answers: what this endpoint and machine allow at all
2. engine   `engine.run_matrix` into the capture through `sink.StoreSink` in this process
            (what a replay costs: SDK calls, closed-loop checks, rows written and fsynced)
3. engine/N the same cells over N worker processes (`workers.Workers`, `--workers`)
4. command  the whole `toolproxy replay --cases FILE --no-grade` in a process of its own,
            into a capture of its own (validating and planning the cases, reading the
            store, the summary too; `--workers auto`: N = min(CPUs, 4) for 1,000 cells),
            timed from `main(argv)` (not the interpreter's start or the imports)

Ideal = cases / concurrency x latency (2.0 s by default); the goal is <= 1.25x ideal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from toolproxy import store
from toolproxy.capture.proxy import free_port
from toolproxy.grade.expectations import load_cases
from toolproxy.replay.config import load_config
from toolproxy.replay.engine import plan_cells, run_matrix
from toolproxy.replay.plan import plan_from_cases
from toolproxy.replay.shares import count_workers, jobs_for
from toolproxy.replay.sink import StoreSink
from toolproxy.replay.workers import run_workers, usable_cpus

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


def bench_engine(folder: Path, capture: Path, run: str) -> tuple[float, int]:
    config = load_config(folder / "cands.yaml")
    items = list(plan_from_cases(load_cases([folder / "cases.jsonl"]), None))
    sink = StoreSink(capture, run, f"bench-{run}", candidates=config.candidates, items=items)
    started = time.perf_counter()
    results = asyncio.run(
        run_matrix(config, items, run, sink, set(), {"bench": None}, "recorded", None, None)
    )
    sink.close()
    wall = time.perf_counter() - started
    return wall, sum(r.status != "failed" for r in results)


def bench_floor(folder: Path, port: int, concurrency: int) -> float:
    import aiohttp

    bodies = [
        json.dumps({"model": "bench", "messages": c["messages"], "tools": c["tools"]})
        for c in map(json.loads, (folder / "cases.jsonl").read_text().splitlines())
    ]
    url = f"http://127.0.0.1:{port}/v1/chat/completions"

    async def play() -> None:
        limit = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one(body: str) -> None:
                async with limit, session.post(url, data=body) as response:
                    await response.read()

            await asyncio.gather(*(one(b) for b in bodies))

    started = time.perf_counter()
    asyncio.run(play())
    return time.perf_counter() - started


def bench_workers(folder: Path, capture: Path, workers: int, run: str) -> float:
    config = load_config(folder / "cands.yaml")
    items = list(plan_from_cases(load_cases([folder / "cases.jsonl"]), None))
    started = time.perf_counter()
    jobs = jobs_for(capture, run, config, plan_cells(config, items, set()), workers)
    run_workers(jobs, None, {"bench": len(items)})
    return time.perf_counter() - started


def bench_command(folder: Path, capture: Path, run: str) -> float:
    """The command in a process of its own, as users run it; timed from `main(argv)`, its
    modules imported first (the interpreter's start and the imports, ~2.5 s here, are a
    fixed cost of starting any `toolproxy` command, not of replaying)."""
    argv = ["replay", str(folder / "cands.yaml"), "-c", str(capture), "--run", run]
    argv += ["--cases", str(folder / "cases.jsonl"), "--no-grade", "--no-progress"]
    timed = (
        "import sys, time\n"
        "from toolproxy.cli.main import main\n"
        "import toolproxy.cli.replaying, toolproxy.replay.plan, toolproxy.replay.workers\n"
        "started = time.perf_counter()\n"
        "code = main(sys.argv[1:])\n"
        "print(f'bench-wall {time.perf_counter() - started:.6f}', file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", timed, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    if done.returncode != 0:
        raise SystemExit(f"toolproxy replay exited {done.returncode}: {done.stderr[-2000:]!r}")
    walls = [ln for ln in done.stderr.decode().splitlines() if ln.startswith("bench-wall ")]
    return float(walls[-1].split()[1])


CELLS = "SELECT run, count(*), count(DISTINCT item_id) FROM replay_cells GROUP BY 1"


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ideal = args.cases / args.concurrency * args.latency
    workers = count_workers("auto", args.cases, usable_cpus())
    names = ["floor", "engine", f"engine/{workers}", "command"]
    walls: dict[str, list[float]] = {name: [] for name in names}
    answered = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        write_inputs(folder, args.cases, args.latency, port, args.concurrency)
        upstream = subprocess.Popen(
            [sys.executable, "-m", "toolproxy.cli", "upstream"]
            + ["--script", str(folder / "script.json"), "--port", str(port)],
            stdout=subprocess.DEVNULL,
        )
        try:
            wait_ready(port)
            capture = store.init_capture(folder / "cap")
            rows: list[tuple[Any, ...]] = []
            for r in range(args.rounds):
                walls["floor"].append(bench_floor(folder, port, args.concurrency))
                wall, completed = bench_engine(folder, capture, f"engine-{r}")
                walls["engine"].append(wall)
                answered.append(completed)
                walls[names[2]].append(bench_workers(folder, capture, workers, f"workers-{r}"))
                # its own capture, as a user's first replay: the command reads the store
                # (cells done, the summary), the other arms only write
                fresh = store.init_capture(folder / f"cap-command-{r}")
                walls["command"].append(bench_command(folder, fresh, f"command-{r}"))
                rows += store.query(fresh, CELLS)[1]
            rows += store.query(capture, CELLS)[1]
        finally:
            upstream.terminate()
            upstream.wait()
    print(
        f"{args.cases} cases, {args.latency * 1000:.0f} ms latency, concurrency "
        f"{args.concurrency}, {args.rounds} round(s): ideal {ideal:.2f} s "
        f"(goal <= {1.25 * ideal:.2f} s)\n"
    )
    floor = statistics.median(walls["floor"])
    print(f"{'':9} {'median s':>9} {'x ideal':>8} {'x floor':>8} {'cells/s':>8}   range s")
    for name in names:
        wall = statistics.median(walls[name])
        print(
            f"{name:9} {wall:9.2f} {wall / ideal:8.2f} {wall / floor:8.2f} "
            f"{args.cases / wall:8.1f}   {min(walls[name]):.2f}-{max(walls[name]):.2f}"
        )
    written = {run: (n, distinct) for run, n, distinct in sorted(rows)}
    print(
        f"\nanswered (not failed) by the engine: {answered} of {args.cases}; "
        f"replay_cells (rows, distinct items) per run: {written}"
    )


if __name__ == "__main__":
    main_bench()
