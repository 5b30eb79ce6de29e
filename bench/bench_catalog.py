"""Parquet-backed catalog: reads before vs after on a 1M-exchange capture, compaction cost,
and a live capture's reads with and without background compaction.

Run: .venv/bin/python bench/bench_catalog.py [--exchanges 1000000] [--live-files 540]

1. Reads on a large compacted capture. "before" is the release before Parquet's view (its
   SQL frozen here), as temporary views; "after" is the stored view once compacted with no
   proxy running ("lean": cache table UNION ALL segments); "live" adds the pending-Parquet
   part the views have while a proxy records and compacts in the background. The rows are generated
   straight into the cache table and its Parquet file (as `compact` leaves them), so the
   million rows take seconds, not the hour of writing them as segments.
   Also shown, for the record: the same queries over the Parquet files alone (views with no
   cache), the design not kept because it was slower.
2. `compact()` of the same segment files: the old way (insert into the catalog only) vs
   now (write Parquet, then cache it).
3. A live capture: `status` over N pending segment files vs the same rows after one
   background compaction round (pending Parquet), side by side.
4. The read API on the big capture: a page of 50 sessions or exchanges, first and deep
   (keyset cursor vs OFFSET), a filtered page and count; and four reads in one batch
   (`store.reading`) vs one connection per query (`store.query`), side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from bench_store import exchange_row, timed  # type: ignore[import-not-found]

from toolproxy import store
from toolproxy.store import catalog, compaction
from toolproxy.store.autocompact import AutoCompactor
from toolproxy.store.connection import compacted_columns
from toolproxy.store.segments import (
    KEY_COLUMNS,
    MAX_LINE_BYTES,
    TABLES,
    SegmentWriter,
    segment_glob,
)

QUERIES: dict[str, str] = {
    "sessions, newest 50": "SELECT * FROM sessions ORDER BY last_seen DESC LIMIT 50",
    "count per model, tokens": "SELECT coalesce(model_returned, model_requested), count(*), "
    "sum(input_tokens), avg(latency_ms) FROM exchanges GROUP BY 1",
    "time range": "SELECT min(started_at), max(started_at) FROM exchanges",
    "one exchange by id": "SELECT * FROM exchanges WHERE exchange_id = 'ex-777'",
}


def line(label: str, a: float, b: float, a_name: str, b_name: str) -> None:
    print(f"{label:<30} {a_name} {a * 1e3:9.1f} ms   {b_name} {b * 1e3:9.1f} ms   {a / b:6.2f}x")


def generate(cap: Path, n: int) -> None:
    """n exchanges (1 in 3 with a tool call) in the cache tables and their Parquet files."""
    values = {
        "exchange_id": "'ex-' || i",
        "proxy_id": "'bench'",
        "session_id": "'s-' || (i // 7)",
        "session_source": "'new'",
        "started_at": "TIMESTAMPTZ '2026-01-01' + to_seconds(i)",
        "ended_at": "TIMESTAMPTZ '2026-01-01' + to_seconds(i) + INTERVAL 1 SECOND",
        "latency_ms": "(i % 1000)::DOUBLE",
        "method": "'POST'",
        "path": "'/v1/chat/completions'",
        "wire_format": "'openai_chat'",
        "status_code": "CASE WHEN i % 50 = 0 THEN 500 ELSE 200 END",
        "parse_status": "'ok'",
        "model_requested": "'model-' || (i % 3)",
        "request_body": "repeat('x', 800)",
        "response_body": "repeat('y', 300)",
        "input_tokens": "i % 100",
        "output_tokens": "i % 10",
    }
    calls = {
        "exchange_id": "'ex-' || (i * 3)",
        "session_id": "'s-' || (i * 3 // 7)",
        "started_at": "TIMESTAMPTZ '2026-01-01' + to_seconds(i * 3)",
        "index": "0",
        "call_id": "'c' || i",
        "name": "'tool_' || (i % 20)",
        "arguments_raw": "'{}'",
    }
    with closing(store.open_capture(cap, read_only=False)) as con:
        for table, spec, rows in (("exchanges", values, n), ("tool_calls", calls, n // 3)):
            cols = ", ".join(
                f"CAST({spec.get(c, 'NULL')} AS {t}) AS {catalog.quote(c)}"
                for c, t in TABLES[table].items()
            )
            select = f"SELECT {cols} FROM range({rows}) r(i)"
            final = cap / catalog.cached_dir(table) / f"bench.{table}.parquet"
            compaction.copy_to_parquet(con, select, final, {})
            con.execute(
                f"INSERT INTO {catalog.quote(catalog.compacted(table))} "
                f"SELECT * FROM read_parquet('{final}')"
            )
            con.execute(
                "INSERT INTO cached_parquet VALUES (?, ?, ?, now())", [final.name, table, rows]
            )
        con.execute("CHECKPOINT")


def schema1_view(cap: Path, table: str, present: set[str]) -> str:
    """A table's view exactly as the release before Parquet wrote it (frozen here, so the
    comparison is with what users ran, not with today's SQL minus a part)."""
    q, lit = catalog.quote, catalog.literal
    cols = TABLES[table]
    old = ", ".join(
        f"CAST({q(c) if c in present else 'NULL'} AS {t}) AS {q(c)}" for c, t in cols.items()
    )
    fields = ", ".join(f"r.{q(c)} AS {q(c)}" for c in cols)
    glob = lit(f"{cap}/{segment_glob(table)}")
    live = (
        f"SELECT {fields} FROM (SELECT from_json(json, {lit(json.dumps(cols))}) AS r, "
        f"filename FROM read_ndjson_objects({glob}, filename=true, ignore_errors=true, "
        f"hive_partitioning=false, maximum_object_size={MAX_LINE_BYTES})) "
        f"WHERE r.{q(KEY_COLUMNS[table])} IS NOT NULL"
    )
    return (
        f"CREATE OR REPLACE TEMP VIEW {q(table)} AS SELECT {old} FROM "
        f"{q(catalog.compacted(table))} UNION ALL {live} AND filename NOT IN "
        f"(SELECT {lit(f'{cap}/')} || file FROM compacted_segments)"
    )


def views_of(con: Any, cap: Path, variant: str) -> None:
    """Shadow the stored views with the `variant` ones on this connection."""
    if variant == "after":
        return  # the stored views: lean once compacted with no proxy running
    if variant == "live":  # while recording: the pending-Parquet part too
        pending = compaction.pending_columns(con, cap)
        for s in catalog.view_ddl(cap, compacted_columns(con), temp=True, pending=pending):
            con.execute(s)
        return
    if variant == "before":  # schema 1: cache table UNION ALL segments
        have = compacted_columns(con)
        for table in TABLES:
            con.execute(schema1_view(cap, table, set(have.get(catalog.compacted(table), {}))))
        return
    for t in ("exchanges", "tool_calls"):  # "parquet only": the files and segments, no cache
        glob = f"{cap}/{catalog.cached_dir(t)}/*.parquet"
        live = catalog.segment_rows(t, catalog.literal(f"{cap}/{segment_glob(t)}"))
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {t} AS SELECT {catalog.typed(t, TABLES[t])} "
            f"FROM read_parquet('{glob}') UNION ALL {live} AND filename NOT IN "
            f"(SELECT '{cap}/' || file FROM compacted_segments)"
        )
    ddl = catalog.view_ddl(cap, {}, temp=True, pending=None)
    con.execute(next(s for s in ddl if " sessions AS" in s))


def reads(cap: Path, repeat: int = 15) -> None:
    variants = ("before", "after", "live", "parquet only")
    cons = {v: store.open_capture(cap) for v in variants}
    for variant, con in cons.items():
        views_of(con, cap, variant)
    timings: dict[str, dict[str, float]] = {v: {} for v in variants}
    for label, sql in QUERIES.items():
        assert sql is not None
        samples: dict[str, list[float]] = {v: [] for v in variants}
        for _ in range(repeat):  # interleaved, so drift on a shared machine hits all alike
            for variant, con in cons.items():
                t0 = time.perf_counter()
                con.execute(sql).fetchall()
                samples[variant].append(time.perf_counter() - t0)
        for variant in variants:
            timings[variant][label] = statistics.median(samples[variant])
    for con in cons.values():
        con.close()
    print(f"\n1. reads on the compacted capture (open connection, median of {repeat}, interleaved)")
    for label in timings["after"]:
        line(label, timings["before"][label], timings["after"][label], "before", "after ")
    print("   while a proxy records (views that also read pending Parquet files):")
    for label in timings["after"]:
        line(label, timings["before"][label], timings["live"][label], "before", "live  ")
    status = timed(lambda: store.summary(cap)) * 1e3
    print(f"{'status (open + all counts)':<30} after  {status:9.1f} ms")
    print("\n   the design not kept: views over the Parquet files alone, no cache table")
    for label in timings["after"]:
        line(label, timings["parquet only"][label], timings["after"][label], "parquet only", "kept")


def compaction_cost(tmp: Path, files: int) -> None:
    old, new = store.init_capture(tmp / "old"), store.init_capture(tmp / "new")
    for cap in (old, new):
        writer = SegmentWriter(cap, "p1", sync=False)
        for i in range(files):
            writer.write({"exchanges": [exchange_row(i * 5 + j) for j in range(5)]})
    names = [str(p) for p in (old / "segments" / "p1").glob("exchanges.*.jsonl")]
    t0 = time.perf_counter()
    with closing(store.open_capture(old, read_only=False)) as con:
        con.execute("SET preserve_insertion_order = false")
        con.execute(
            f"INSERT INTO exchanges_compacted {catalog.segment_rows('exchanges', '$files')}",
            {"files": names},
        )
        con.execute("CHECKPOINT")
    before = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.compact(new)
    after = time.perf_counter() - t0
    print(f"\n2. compaction of {files} segment files x 5 exchanges")
    line("compact()", before, after, "catalog only", "parquet+cache")


def live(tmp: Path, files: int) -> None:
    cap = store.init_capture(tmp / "live", live=True)  # as a recording proxy leaves it
    writer = SegmentWriter(cap, "p1", sync=False)
    for i in range(files):
        writer.write({"exchanges": [exchange_row(i * 3 + j) for j in range(3)]})
    pending = timed(lambda: store.summary(cap))
    AutoCompactor(cap, "p1").run_once(force=True)
    writer.write({"exchanges": [exchange_row(10**7)]})  # a fresh flush after the round
    compacted = timed(lambda: store.summary(cap))
    print(f"\n3. a live capture: status with {files} pending segment files")
    line("status", pending, compacted, "segments", "after a background round")


def read_api(cap: Path, n: int, repeat: int = 9) -> None:
    from toolproxy.store import ExchangeFilter
    from toolproxy.store.paging import encode_cursor
    from toolproxy.store.queries import exchanges, grades
    from toolproxy.store.queries import runs as graded

    with store.reading(cap) as r:
        deep_x = r.rows(
            f"SELECT started_at, exchange_id FROM exchanges WHERE exchange_id = 'ex-{n // 2}'"
        )[0]
        sessions = exchanges.count_sessions(r)
        deep_s = r.rows(
            "SELECT last_seen, session_id FROM sessions ORDER BY last_seen DESC, session_id DESC "
            f"LIMIT 1 OFFSET {sessions // 2}"
        )[0]
        arms: dict[str, Any] = {
            "sessions view, newest 50": lambda: r.rows(QUERIES["sessions, newest 50"]),
            "sessions page 1 (50)": lambda: exchanges.sessions(r, limit=50),
            "sessions page at the middle": lambda: exchanges.sessions(
                r, limit=50, cursor=encode_cursor(deep_s)
            ),
            "exchanges page 1 (50)": lambda: exchanges.exchanges(r, limit=50),
            f"exchanges page at {n // 2:,} (keyset)": lambda: exchanges.exchanges(
                r, limit=50, cursor=encode_cursor(deep_x)
            ),
            f"exchanges at {n // 2:,} by OFFSET": lambda: r.rows(
                f"SELECT * FROM exchanges ORDER BY started_at, exchange_id LIMIT 50 OFFSET {n // 2}"
            ),
            "filtered page (tool_3, failed)": lambda: exchanges.exchanges(
                r, ExchangeFilter(tools=["tool_3"], status="failed"), limit=50
            ),
            "filtered count (tool_3, failed)": lambda: exchanges.count_exchanges(
                r, ExchangeFilter(tools=["tool_3"], status="failed")
            ),
        }
        samples: dict[str, list[float]] = {k: [] for k in arms}
        for _ in range(repeat):
            for label, fn in arms.items():
                t0 = time.perf_counter()
                fn()
                samples[label].append(time.perf_counter() - t0)
    print(
        f"\n4. the read API on {sessions:,} sessions (open batch, median of {repeat}, interleaved)"
    )
    for label, times in samples.items():
        print(f"{label:<36} {statistics.median(times) * 1e3:9.1f} ms")

    four = [
        "SELECT count(*) FROM grades WHERE run = 'x'",
        "SELECT DISTINCT schema_hash, valid, error FROM schema_checks WHERE checker = 'c'",
        "SELECT DISTINCT server, name, input_schema FROM mcp_tools_latest",
        "SELECT * FROM exchanges WHERE exchange_id = 'ex-777'",
    ]

    def per_query() -> None:
        for sql in four:
            store.query(cap, sql)

    def one_batch() -> None:
        with store.reading(cap) as r:
            graded.grade_count(r, "x")
            grades.schema_verdicts(r, "c")
            r.rows(four[2])
            r.rows(four[3])

    a = statistics.median(timed_runs(per_query, repeat))
    b = statistics.median(timed_runs(one_batch, repeat))
    line("4 reads (a grade run's)", a, b, "a connection each", "one batch")


def timed_runs(fn: Any, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exchanges", type=int, default=1_000_000)
    parser.add_argument("--live-files", type=int, default=540)
    parser.add_argument("--compact-files", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cap = store.init_capture(Path(tmp) / "big")
        t0 = time.perf_counter()
        generate(cap, args.exchanges)
        print(f"generated {args.exchanges} exchanges in {time.perf_counter() - t0:.1f} s")
        reads(cap)
        read_api(cap, args.exchanges)
        compaction_cost(Path(tmp), args.compact_files)
        live(Path(tmp), args.live_files)


if __name__ == "__main__":
    main()
