"""Capture overhead, side by side in one run: direct vs bare mitmdump vs mitmdump + toolproxy.

    .venv/bin/python bench/bench_capture.py            # full run (a few minutes)
    .venv/bin/python bench/bench_capture.py --quick    # smaller counts

Three measurements (issue #2 goals in brackets):
1. latency added per non-streamed call, vs direct and vs bare `mitmdump --set
   stream_large_bodies=1`  [toolproxy overhead <= 1.10 x bare overhead]
2. time to first SSE byte with the upstream's first chunk at 30 ms, added vs direct
   [toolproxy <= +5 ms median; bare default mitmdump buffers the whole stream]
3. N requests at concurrency 32: rows recorded / requests sent [100 %], throughput vs bare
   mitmdump [>= 0.9 x]
4. the same as 2. for Bedrock's ConverseStream, an AWS event stream (binary messages):
   time to its first byte and to its last, added vs direct, and every stream recorded
   whole (parse_status ok, its text)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from toolproxy import store
from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port, wait_listening
from toolproxy.scripted import Reply, Script, ScriptedCall

BODY = {
    "model": "bench",
    "messages": [{"role": "user", "content": "weather in Paris?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ],
}
CALL = ScriptedCall(name="get_weather", arguments={"city": "Paris", "unit": "celsius"})


def script() -> Script:
    return Script(
        replies={
            "bench": [Reply(tool_calls=[CALL])],
            # first chunk at 30 ms, then 10 events 20 ms apart: ~230 ms of stream
            "bench-sse": [
                Reply(
                    text="The weather in Paris is mild today, about 18 degrees.",
                    text_chunk_size=6,
                    first_byte_delay_s=0.030,
                    chunk_delay_s=0.020,
                )
            ],
            # Bedrock ConverseStream: its request names no model (the path does)
            "default": [
                Reply(
                    text="The weather in Paris is mild today, about 18 degrees.",
                    text_chunk_size=6,
                    first_byte_delay_s=0.030,
                    chunk_delay_s=0.020,
                )
            ],
        }
    )


@contextmanager
def upstream_process(tmp: Path) -> Iterator[str]:
    """The scripted upstream in its own process, so it does not share the client's GIL."""
    path = tmp / "script.json"
    path.write_text(script().model_dump_json())
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolproxy.cli",
            "upstream",
            "--script",
            str(path),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_listening("127.0.0.1", port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait()


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def bench_latency(arms: dict[str, str], rounds: int) -> dict[str, list[float]]:
    """Sequential non-streamed calls, arms interleaved each round so drift hits all alike."""
    clients = {name: httpx.Client(base_url=url, timeout=30) for name, url in arms.items()}
    out: dict[str, list[float]] = {name: [] for name in arms}
    for client in clients.values():  # warm up connections
        for _ in range(20):
            client.post("/v1/chat/completions", json=BODY).raise_for_status()
    for _ in range(rounds):
        for name, client in clients.items():
            t0 = time.perf_counter()
            client.post("/v1/chat/completions", json=BODY).raise_for_status()
            out[name].append((time.perf_counter() - t0) * 1000)
    for client in clients.values():
        client.close()
    return out


def bench_ttfb(arms: dict[str, str], rounds: int) -> dict[str, list[float]]:
    """Time from sending a streamed request to the first body byte."""
    body = {**BODY, "model": "bench-sse", "stream": True}
    clients = {name: httpx.Client(base_url=url, timeout=30) for name, url in arms.items()}
    out: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(rounds + 3):
        for name, client in clients.items():
            t0 = time.perf_counter()
            with client.stream("POST", "/v1/chat/completions", json=body) as r:
                first = None
                for chunk in r.iter_raw():
                    if chunk and first is None:
                        first = time.perf_counter()
            out[name].append(((first or time.perf_counter()) - t0) * 1000)
    for client in clients.values():
        client.close()
    return {name: values[3:] for name, values in out.items()}  # drop warm-up


CONVERSE = "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
CONVERSE_BODY = {"messages": [{"role": "user", "content": [{"text": "weather in Paris?"}]}]}


def bench_eventstream(arms: dict[str, str], rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(first byte, last byte) ms after sending, of a ConverseStream answer."""
    clients = {name: httpx.Client(base_url=url, timeout=30) for name, url in arms.items()}
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
    for _ in range(rounds + 3):
        for name, client in clients.items():
            t0 = time.perf_counter()
            first = None
            with client.stream("POST", CONVERSE, json=CONVERSE_BODY) as r:
                for chunk in r.iter_raw():
                    if chunk and first is None:
                        first = time.perf_counter()
            last = time.perf_counter()
            out[name].append((((first or last) - t0) * 1000, (last - t0) * 1000))
    for client in clients.values():
        client.close()
    return {name: values[3:] for name, values in out.items()}


def report_eventstream(arms: dict[str, str], rounds: int, capture: Path) -> None:
    n = max(20, rounds // 4)
    print(f"\n4. Bedrock ConverseStream (AWS event stream), first chunk at 30 ms, {n} rounds")
    times = bench_eventstream(arms, n)
    for edge, name in ((0, "first byte"), (1, "last byte")):
        base = statistics.median(v[edge] for v in times["direct"])
        print(f"  to the {name}:")
        for arm, values in times.items():
            print(row(arm, [v[edge] for v in values], base if arm != "direct" else None))
        added = statistics.median(v[edge] for v in times["mitmdump + toolproxy"]) - base
        print(f"  toolproxy added to the {name} = {added:+.2f} ms")
    time.sleep(1.0)  # the recorder's flush
    _, got = store.query(
        capture,
        "SELECT parse_status, assistant_text, count(*) FROM exchanges"
        " WHERE wire_format = 'bedrock_converse' GROUP BY ALL",
    )
    print(f"  recorded (parse_status, text, exchanges): {got}  (sent {n + 3})")


async def _load(url: str, total: int, concurrency: int) -> tuple[float, int]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    ok = 0
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(total):
            queue.put_nowait(i)

        async def worker() -> None:
            nonlocal ok
            while not queue.empty():
                queue.get_nowait()
                r = await client.post("/v1/chat/completions", json=BODY)
                ok += r.status_code == 200

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t0, ok


def bench_throughput(
    arms: dict[str, str], total: int, concurrency: int, slices: int = 5
) -> dict[str, tuple[float, int]]:
    """`total` requests per arm, sent in slices that alternate between arms (less drift)."""
    out = {name: (0.0, 0) for name in arms}
    for _ in range(slices):
        for name, url in arms.items():
            secs, ok = asyncio.run(_load(url, total // slices, concurrency))
            out[name] = (out[name][0] + secs, out[name][1] + ok)
    return out


def row(name: str, values: list[float], base: float | None) -> str:
    med = statistics.median(values)
    added = f"{med - base:+8.2f}" if base is not None else " " * 8
    return f"  {name:<28} median {med:8.2f} ms  p90 {pct(values, 0.9):8.2f} ms  added {added} ms"


def report_latency(arms: dict[str, str], rounds: int) -> None:
    print(f"1. non-streamed call latency, {rounds} rounds, arms interleaved")
    lat = bench_latency(arms, rounds)
    base = statistics.median(lat["direct"])
    for name, values in lat.items():
        print(row(name, values, base if name != "direct" else None))
    bare_add = statistics.median(lat["bare mitmdump (streaming)"]) - base
    tool_add = statistics.median(lat["mitmdump + toolproxy"]) - base
    ratio = tool_add / bare_add
    print(f"  toolproxy overhead / bare mitmdump overhead = {ratio:.2f}x  (goal <= 1.10)")


def report_ttfb(arms: dict[str, str], rounds: int) -> None:
    n = max(20, rounds // 4)
    print(f"\n2. time to first SSE byte, upstream first chunk at 30 ms, {n} rounds")
    ttfb = bench_ttfb(arms, n)
    base = statistics.median(ttfb["direct"])
    for name, values in ttfb.items():
        print(row(name, values, base if name != "direct" else None))
    added = statistics.median(ttfb["mitmdump + toolproxy"]) - base
    print(f"  toolproxy added TTFB = {added:+.2f} ms  (goal <= +5 ms)")


BARE = "bare mitmdump (streaming)"


def report_throughput(thr: dict[str, tuple[float, int]], total: int, recorded: int) -> None:
    rates = {name: total / secs for name, (secs, _) in thr.items()}
    for name, (secs, ok) in thr.items():
        print(f"  {name:<36} {rates[name]:8.1f} req/s  ({ok}/{total} OK in {secs:.2f} s)")
    ratio = rates["mitmdump + toolproxy"] / rates[BARE]
    print(f"  throughput toolproxy / bare = {ratio:.2f}x  (goal >= 0.90)")
    still = rates.get("toolproxy, no background compaction")
    if still:
        print(f"  without background compaction / bare = {still / rates[BARE]:.2f}x")
    print(f"  rows recorded / requests sent = {recorded}/{total} = {recorded / total:.1%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts")
    parser.add_argument("--rounds", type=int, default=None, help="latency rounds per arm")
    parser.add_argument("--total", type=int, default=None, help="requests for the load test")
    parser.add_argument(
        "--parts", default="1234", help="which measurements to run, e.g. 3 (default 1234)"
    )
    args = parser.parse_args()
    rounds = args.rounds or (100 if args.quick else 400)
    total = args.total or (1000 if args.quick else 5000)
    tmp = Path(tempfile.mkdtemp(prefix="toolproxy-bench-"))
    capture = tmp / "capture"
    with upstream_process(tmp) as upstream:
        bare = RunningProxy(ProxySpec(tmp / "unused", upstream, port=free_port(), with_addon=False))
        # bare mitmdump with its defaults buffers whole responses before forwarding
        buffered = RunningProxy(
            ProxySpec(
                tmp / "unused", upstream, port=free_port(), with_addon=False, bare_stream=False
            )
        )
        tool = RunningProxy(ProxySpec(capture, upstream, port=free_port()))
        # the same without the worker's background compaction, for its cost under load
        quiet = ["--set", "toolproxy_auto_compact=false"]
        still = RunningProxy(ProxySpec(tmp / "still", upstream, port=free_port(), extra=quiet))
        with bare, buffered, tool, still:
            arms = {
                "direct": upstream,
                "bare mitmdump (streaming)": bare.url,
                "mitmdump + toolproxy": tool.url,
            }
            if "1" in args.parts:
                report_latency(arms, rounds)
            if "2" in args.parts:
                report_ttfb({**arms, "bare mitmdump (default)": buffered.url}, rounds)
            if "4" in args.parts:
                report_eventstream(
                    {**arms, "bare mitmdump (default)": buffered.url}, rounds, capture
                )
            if "3" in args.parts:
                print(f"\n3. {total} requests at concurrency 32")
                store.compact(capture)
                _, before = store.query(capture, "SELECT count(*) FROM exchanges")
                loaded = {k: v for k, v in arms.items() if k != "direct"}
                loaded["toolproxy, no background compaction"] = still.url
                thr = bench_throughput(loaded, total, 32)
        if "3" in args.parts:
            # the proxies have stopped, so every recorder has flushed
            _, after = store.query(capture, "SELECT count(*) FROM exchanges")
            report_throughput(thr, total, after[0][0] - before[0][0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
