"""The TUI on a big capture, side by side with the CLI: first screen, filter, paging, a
200-turn session.

Run: .venv/bin/python bench/bench_tui.py [--exchanges 1000000] [--rounds 3]

The capture is bench_catalog's generated one (exchanges, 1 in 3 with a tool call, sessions
of 7 turns) plus one session of 200 turns with calls. Each figure is the median of
--rounds, interleaved:
1. first screen: `toolproxy tui CAPTURE` driven headless in a process of its own, from
   process start to the first page of sessions on screen, vs `toolproxy sessions -c
   CAPTURE` (the same page through the CLI) in a process of its own;
2. in the running app, from the key reaching the app to the first frame drawn with its
   result: applying a filter (`tool:tool_3 status:failed`, from enter), the next page,
   and opening the 200-turn session (its transcript on screen).
Goals (issue 13): first screen < 1.0 s, filter < 150 ms, paging < 50 ms, 200-turn session
< 300 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from bench_catalog import generate  # type: ignore[import-not-found]

from toolproxy import store
from toolproxy.store import catalog
from toolproxy.store.tables import TABLES

TOOLPROXY = str(Path(sys.executable).with_name("toolproxy"))
FIRST_SCREEN = """
import sys, time, asyncio
t0 = float(sys.argv[2])
from pathlib import Path
from toolproxy.tui.app import ToolproxyApp
async def main():
    app = ToolproxyApp(Path(sys.argv[1]))
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.screen.query("#sessions") or app.screen.query_one("#sessions").row_count == 0:
            await pilot.pause(0.005)
        print(time.time() - t0)
asyncio.run(main())
"""


def long_session(cap: Path, turns: int) -> None:
    """One session of `turns` exchanges, each with a call, in the cache tables."""
    values = {
        "exchange_id": "'long-' || i",
        "proxy_id": "'bench'",
        "session_id": "'s-long'",
        "started_at": "TIMESTAMPTZ '2027-01-01' + to_seconds(i)",
        "wire_format": "'openai_chat'",
        "status_code": "200",
        "parse_status": "'ok'",
        "model_requested": "'model-long'",
        "messages": """'[{"role": "user", "content": "turn ' || i || '"}]'""",
        "assistant_text": "'ok'",
        "input_tokens": "i",
    }
    calls = {
        "exchange_id": "'long-' || i",
        "session_id": "'s-long'",
        "started_at": "TIMESTAMPTZ '2027-01-01' + to_seconds(i)",
        "index": "0",
        "call_id": "'lc' || i",
        "name": "'get_weather'",
        "arguments_raw": """'{"city": "Paris"}'""",
        "arguments": """'{"city": "Paris"}'""",
    }
    with closing(store.open_capture(cap, read_only=False)) as con:
        for table, spec in (("exchanges", values), ("tool_calls", calls)):
            cols = ", ".join(
                f"CAST({spec.get(c, 'NULL')} AS {t}) AS {catalog.quote(c)}"
                for c, t in TABLES[table].items()
            )
            con.execute(
                f"INSERT INTO {catalog.quote(catalog.compacted(table))} "
                f"SELECT {cols} FROM range({turns}) r(i)"
            )
        con.execute("CHECKPOINT")


def first_screens(cap: Path, rounds: int) -> None:
    tui, cli = [], []
    for _ in range(rounds):
        t0 = time.time()
        done = subprocess.run(
            [sys.executable, "-c", FIRST_SCREEN, str(cap), str(t0)],
            capture_output=True,
            text=True,
            check=True,
        )
        tui.append(float(done.stdout.strip().splitlines()[-1]))
        t0 = time.perf_counter()
        subprocess.run([TOOLPROXY, "sessions", "-c", str(cap)], capture_output=True, check=True)
        cli.append(time.perf_counter() - t0)
    a, b = statistics.median(tui), statistics.median(cli)
    print(f"1. first screen, process start to the first page, median of {rounds}")
    print(f"   toolproxy tui       {a:6.2f} s  (goal < 1.0 s)")
    print(f"   toolproxy sessions  {b:6.2f} s  (tui / sessions = {a / b:4.2f}x)")


WAIT = 60.0  # seconds a key's result may take to show before in_app gives up


async def in_app(cap: Path, rounds: int) -> None:
    """Each figure runs from the key reaching the app to the first frame drawn after its
    result is in the widgets (the frame the terminal would show), as a person sees it. Keys
    are sent the way Pilot sends them, but not awaited through Pilot's own settling (which
    alone costs ~50 ms a key); reads ahead that finish later are not waited for, and each
    round starts only once every worker is done."""
    from textual import events
    from textual.widgets import Input, Static
    from textual.worker import WorkerCancelled

    from toolproxy.tui.app import ToolproxyApp
    from toolproxy.tui.transcript import TranscriptScreen

    timings: dict[str, list[float]] = {
        "filter (enter)": [],
        "next page": [],
        "200-turn session": [],
    }
    app = ToolproxyApp(cap)
    frames: list[float] = []
    display = app._display

    def drawn(screen, renderable):  # type: ignore[no-untyped-def]
        if renderable is not None:
            frames.append(time.perf_counter())
        return display(screen, renderable)

    app._display = drawn  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:

        async def settle() -> None:
            try:
                await app.workers.wait_for_complete()
            except WorkerCancelled:
                pass
            await pilot.pause()

        def status() -> str:
            return str(app.screen.query_one("#status", Static).content)

        def send(key: str, char: str | None) -> float:
            event = events.Key(key, char)
            event.set_sender(app)
            t0 = time.perf_counter()
            app._driver.send_message(event)  # type: ignore[union-attr]
            return t0

        async def shown(what: str, done) -> float:  # type: ignore[no-untyped-def]
            """When the first frame after `done()` came true was drawn (an error naming
            `what` and the status line if it has not come true within WAIT seconds)."""
            deadline = time.perf_counter() + WAIT
            while not done():
                if time.perf_counter() > deadline:
                    raise SystemExit(
                        f"bench_tui: {what}: not shown within {WAIT:.0f} s; status: {status()!r}"
                    )
                await asyncio.sleep(0.001)
            ready = time.perf_counter()
            while not frames or frames[-1] < ready:
                await asyncio.sleep(0.001)
            return next(f for f in frames if f >= ready)

        await settle()
        for _ in range(rounds):
            await pilot.press("slash")
            app.screen.query_one("#filter", Input).value = "tool:tool_3 status:failed"
            await pilot.pause()
            t0 = send("enter", "\r")
            t1 = await shown("filter (enter)", lambda: "filter: tool:tool_3" in status())
            timings["filter (enter)"].append(t1 - t0)
            await settle()
            await pilot.press("escape")
            await settle()
            t0 = send("right_square_bracket", "]")
            t1 = await shown("next page", lambda: status().startswith("sessions 101-200 of"))
            timings["next page"].append(t1 - t0)
            await settle()
            await pilot.press("left_square_bracket")
            await settle()
            t0 = time.perf_counter()
            app.push_screen(TranscriptScreen(cap, "s-long", cap.parent / "cases.yaml"))
            t1 = await shown(
                "200-turn session",
                lambda: (
                    isinstance(app.screen, TranscriptScreen)
                    and len(app.screen.turns) == 200
                    and status().startswith("200 turn(s)")
                ),
            )
            timings["200-turn session"].append(t1 - t0)
            await settle()
            await pilot.press("escape")
            await settle()
    goals = {"filter (enter)": 0.150, "next page": 0.050, "200-turn session": 0.300}
    print(f"2. in the running app, key to the frame that shows the result, median of {rounds}")
    for label, times in timings.items():
        ms = statistics.median(times) * 1e3
        print(f"   {label:<18} {ms:7.1f} ms  (goal < {goals[label] * 1e3:.0f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exchanges", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cap = store.init_capture(Path(tmp) / "big")
        generate(cap, args.exchanges)
        long_session(cap, 200)
        print(f"{args.exchanges:,} exchanges + one session of 200 turns")
        first_screens(cap, args.rounds)
        asyncio.run(in_app(cap, args.rounds))


if __name__ == "__main__":
    main()
