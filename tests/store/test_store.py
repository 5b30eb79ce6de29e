"""The capture store as a package, on real DuckDB files: processes writing and reading at once,
crashes, and the package's names loading their modules on first use."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.store.helpers import count, finish, python
from toolproxy import store


def test_reader_process_while_writer_process_writes(cap: Path, tmp_path: Path) -> None:
    # Halfway, the writer waits until the reader has seen the first half (the reader
    # reports each count in a file): the reader sees the capture mid-write however slow
    # the machine, with no timing assumed.
    flushes, per_flush = 40, 3
    progress = tmp_path / "progress"
    writer = python(f"""
        import time
        from pathlib import Path
        from toolproxy.store.segments import SegmentWriter
        w = SegmentWriter({str(cap)!r}, "writer")
        progress = Path({str(progress)!r})
        for i in range({flushes}):
            if i == {flushes // 2}:
                deadline = time.monotonic() + 120
                while not (progress.exists() and int(progress.read_text() or 0) >= i * {per_flush}):
                    assert time.monotonic() < deadline, "the reader never saw the first half"
                    time.sleep(0.01)
            rows = [{{"exchange_id": f"{{i}}-{{j}}"}} for j in range({per_flush})]
            w.write({{"exchanges": rows}})
            time.sleep(0.01)
        """)
    reader = python(f"""
        import os, time
        from toolproxy import store
        seen = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            seen.append(store.query({str(cap)!r}, "SELECT count(*) FROM exchanges")[1][0][0])
            with open({str(progress)!r} + ".tmp", "w") as f:
                f.write(str(seen[-1]))
            os.replace({str(progress)!r} + ".tmp", {str(progress)!r})
            if seen[-1] == {flushes * per_flush}:
                break
        print(*seen)
        """)
    finish(writer)
    seen = [int(n) for n in finish(reader).split()]
    assert seen == sorted(seen)  # never goes back, never sees a partial file
    assert all(n % per_flush == 0 for n in seen)
    assert seen[-1] == flushes * per_flush
    assert any(0 < n < flushes * per_flush for n in seen)  # it saw the capture mid-write


def test_two_writer_processes_into_one_capture(cap: Path) -> None:
    code = """
        import sys
        from toolproxy.store.segments import SegmentWriter
        w = SegmentWriter({cap!r}, sys.argv[1])
        for i in range(25):
            w.write({{"exchanges": [{{"exchange_id": f"{{sys.argv[1]}}-{{i}}"}}],
                      "tool_calls": [{{"exchange_id": f"{{sys.argv[1]}}-{{i}}"}}]}})
        """
    procs = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(code.format(cap=str(cap))), name])
        for name in ("alpha", "beta")
    ]
    assert [p.wait(timeout=30) for p in procs] == [0, 0]
    _, rows = store.query(cap, "SELECT exchange_id FROM exchanges")
    assert sorted(r[0] for r in rows) == sorted(
        f"{n}-{i}" for n in ("alpha", "beta") for i in range(25)
    )
    assert count(cap, "tool_calls") == 50
    store.compact(cap)
    assert count(cap) == 50


def test_kill_9_loses_nothing_that_was_flushed(cap: Path) -> None:
    small, big = 20, 4000
    writer = python(f"""
        import time
        from toolproxy.store.segments import SegmentWriter
        w = SegmentWriter({str(cap)!r}, "victim")
        def rows(i, n):
            body = "x" * 5000
            return [{{"exchange_id": f"{{i}}-{{j}}", "request_body": body, "arguments_raw": body}}
                    for j in range(n)]
        for i in range(5):
            w.write({{"tool_calls": rows(i, {small}), "exchanges": rows(i, {small})}})
        print("flushed", flush=True)
        w.write({{"tool_calls": rows(5, {big}), "exchanges": rows(5, {big})}})
        time.sleep(60)
        """)
    assert writer.stdout is not None and writer.stdout.readline() == "flushed\n"
    victim = cap / "segments" / "victim"
    deadline = time.monotonic() + 10
    # Kill while the big flush is on its way to disk (or, if we are late, just after).
    while time.monotonic() < deadline:
        if any(p.name.split(".")[1] == f"{6:010d}" and p.stat().st_size for p in victim.iterdir()):
            break
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=10)
    assert writer.returncode == -signal.SIGKILL
    counts = {}
    for table, body in [("tool_calls", "arguments_raw"), ("exchanges", "request_body")]:
        _, rows = store.query(cap, f"SELECT exchange_id, length({body}) FROM {table}")
        assert len(rows) in (5 * small, 5 * small + big)  # a flush is all or nothing
        assert all(length == 5000 for _, length in rows)
        assert len({r[0] for r in rows}) == len(rows)
        counts[table] = len(rows)
    assert counts["tool_calls"] >= counts["exchanges"]  # children land before exchanges
    store.compact(cap)
    assert count(cap) == counts["exchanges"]


def test_the_package_names_load_their_module_on_first_use() -> None:
    code = (
        "import sys, toolproxy.store.segments, toolproxy.store.tables\n"
        "print('duckdb' in sys.modules)\n"
        "from toolproxy import store\n"
        "print(store.QueryError.__module__, 'duckdb' in sys.modules)\n"
        "try:\n"
        "    store.nothing_here\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    out = finish(python(code)).split("\n")
    assert out[:3] == [
        "False",
        "toolproxy.store.connection True",
        "module 'toolproxy.store' has no attribute 'nothing_here'",
    ]
