"""Capture store timings: segment write cost, and view reads before vs after compaction.

Run: .venv/bin/python bench/bench_store.py [--files 1000] [--rows-per-file 5]
Prints each pair side by side with its ratio; timings are medians of a few repeats.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproxy import store
from toolproxy.records import Exchange
from toolproxy.store.segments import TABLES, SegmentWriter


def exchange_row(i: int) -> dict[str, Any]:
    """A small but realistic exchanges row (~1.5 KB of JSON)."""
    return Exchange(
        exchange_id=f"ex-{i}",
        proxy_id="bench",
        session_id=f"s-{i % 17}",
        session_source="new",
        started_at=datetime.now(UTC),
        method="POST",
        scheme="https",
        host="api.example.com",
        port=443,
        path="/v1/chat/completions",
        wire_format="openai_chat",
        status_code=200,
        parse_status="ok",
        model_requested="gpt-test",
        model_returned="gpt-test",
        request_params={"temperature": 0.2, "max_tokens": 256},
        messages=[{"role": "user", "content": "What is the weather in Paris? " * 4}],
        assistant_text="Let me check that for you.",
        request_headers={"content-type": "application/json", "user-agent": "bench"},
        request_body='{"model":"gpt-test","messages":[' + '"x",' * 100 + '"y"]}',
        response_body='{"choices":[{"message":{"content":"ok"}}]}',
        input_tokens=40,
        output_tokens=8,
    ).model_dump(mode="json")


def timed(fn: Callable[[], Any], repeat: int = 5) -> float:
    """Median seconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def row(label: str, a: float, b: float, a_name: str, b_name: str) -> None:
    print(
        f"{label:<44} {a_name} {a * 1e3:9.2f} ms   {b_name} {b * 1e3:9.2f} ms   ratio {a / b:7.2f}x"
    )


def write_all(writer: SegmentWriter, rows: list[dict[str, Any]], batch: int) -> None:
    for i in range(0, len(rows), batch):
        writer.write({"exchanges": rows[i : i + batch]})


def bench_writes(tmp: Path) -> None:
    rows = [exchange_row(i) for i in range(1000)]
    for batch in (1000, 100, 10):
        synced = SegmentWriter(tmp / "writes", f"sync-{batch}")
        unsynced = SegmentWriter(tmp / "writes", f"nosync-{batch}", sync=False)
        row(
            f"write 1,000 exchange rows, {batch}/flush",
            timed(lambda: write_all(synced, rows, batch), repeat=3),  # noqa: B023 - runs now
            timed(lambda: write_all(unsynced, rows, batch), repeat=3),  # noqa: B023
            "fsync",
            "no-fsync",
        )


def bench_reads(tmp: Path, files: int, per_file: int) -> None:
    cap = store.init_capture(tmp / "reads")
    writer = SegmentWriter(cap, "reader-bench", sync=False)
    n = 0
    for _ in range(files):
        writer.write({"exchanges": [exchange_row(n + j) for j in range(per_file)]})
        n += per_file
    sql = "SELECT count(*), sum(length(request_body)), count(DISTINCT session_id) FROM exchanges"
    full = "SELECT * FROM exchanges"

    def run(q: str) -> Callable[[], Any]:
        def go() -> Any:
            with store.open_capture(cap) as con:
                return con.execute(q).fetchall()

        return go

    before = (timed(run(sql)), timed(run(full)), timed(run("SELECT count(*) FROM sessions")))
    # The reader the views do not use: read_json with explicit columns, over the same files.
    cols = ", ".join(f"'{c}': '{t}'" for c, t in TABLES["exchanges"].items())
    read_json = (
        f"SELECT * FROM read_json('{cap}/segments/*/exchanges.*.jsonl', "
        f"format='newline_delimited', columns={{{cols}}}, ignore_errors=true)"
    )
    alternative = (timed(run(read_json)), timed(run("SELECT * FROM exchanges")))
    t0 = time.perf_counter()
    stats = store.compact(cap)
    compact_s = time.perf_counter() - t0
    after = (timed(run(sql)), timed(run(full)), timed(run("SELECT count(*) FROM sessions")))
    assert run(sql)()[0][0] == n
    print(f"\n{files} segment files x {per_file} rows = {n} exchanges")
    labels = ("aggregate over exchanges view", "SELECT * FROM exchanges", "sessions view")
    for label, b, a in zip(labels, before, after, strict=True):
        row(label, b, a, "segments", "compacted")
    print(f"{'compact()':<44} {compact_s * 1e3:9.2f} ms for {stats.files} files")
    print("\nwhy the views read raw lines and type them with from_json:")
    row("SELECT * over the segment files", *alternative, "read_json(columns=)", "view")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rows-per-file", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_writes(Path(tmp))
        bench_reads(Path(tmp), args.files, args.rows_per_file)


if __name__ == "__main__":
    main()
