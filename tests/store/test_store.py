"""The capture store on real DuckDB files: views, compaction, concurrency, crashes, errors."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.builders import HOSTED, chat_exchange
from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade.model import GradeRow, JudgeVerdict
from toolproxy.records import (
    McpMessage,
    McpTool,
    SchemaVerdict,
    ToolCall,
    ToolOffered,
    ToolResult,
)
from toolproxy.replay.model import CallDiff, CellResult
from toolproxy.store import catalog
from toolproxy.store.segments import TABLES, SegmentWriter, child_rows, list_segments

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def exchange_rows(n: int, session: str = "s1", prefix: str = "ex", **extra: Any) -> dict:
    """Rows for ``n`` exchanges, each with one tool offered, one call and one result."""
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES if t != "proxy_runs"}
    for i in range(n):
        ex = chat_exchange(
            f"{prefix}-{i}",
            session,
            T0 + timedelta(seconds=i),
            **HOSTED,
            ended_at=T0 + timedelta(seconds=i, milliseconds=500),
            model_requested="gpt-a",
            request_params={"temperature": 0.5, "n": [1, 2]},
            messages=[{"role": "user", "content": f"hi {i}"}],
            input_tokens=10,
            **extra,
        )
        tool = ToolOffered(position=0, name="get", parameters={"type": "object"}, schema_hash="h")
        call = ToolCall(index=0, call_id=f"c{i}", name="get", arguments_raw="{}", arguments={})
        result = ToolResult(message_index=2, call_id=f"c{i}", content="ok", is_error=False)
        rows["exchanges"].append(ex.model_dump(mode="json"))
        rows["tools_offered"] += child_rows(ex, [tool])
        rows["tool_calls"] += child_rows(ex, [call])
        rows["tool_results"] += child_rows(ex, [result])
        message = McpMessage(
            position=0,
            direction="client",
            rpc_id=str(i),
            method="tools/call",
            tool_name="get",
            arguments={"i": i},
            result={"content": []},
            is_error=False,
        )
        rows["mcp_messages"] += child_rows(ex, [message])
        mcp_tool = McpTool(
            pull_id=f"{prefix}-pull-{i}",
            pulled_at=ex.started_at,
            server="srv",
            transport="stdio",
            name="get",
            input_schema={"type": "object"},
            schema_hash="h",
            definition_hash="d",
        )
        rows["mcp_tools"].append(mcp_tool.model_dump(mode="json"))
        grade = GradeRow(
            run=f"{prefix}-run",
            graded_at=ex.started_at.isoformat(),
            case_id=f"case-{i}",
            exchange_id=ex.exchange_id,
            passed=i % 2 == 0,
            label=None if i % 2 == 0 else "no_call",
            calls=[{"expected_tool": "get"}],
        )
        rows["grades"].append(grade.model_dump(mode="json"))
        verdict = JudgeVerdict(
            key=f"{prefix}-k{i}",
            model="judge",
            prompt="p",
            verdict=True,
            reason="r",
            judged_at=ex.started_at.isoformat(),
        )
        rows["judge_cache"].append(verdict.model_dump(mode="json"))
        checked = SchemaVerdict(
            schema_hash=f"{prefix}-h{i}",
            checker="jsonschema 4",
            valid=bool(i % 2),
            error=None
            if i % 2
            else "invalid schema: 'strng' is not valid under any of the given schemas",
            checked_at=ex.started_at.isoformat(),
        )
        rows["schema_checks"].append(checked.model_dump(mode="json"))
        cell = CellResult(
            run=f"{prefix}-replay",
            candidate="c",
            item_id=ex.exchange_id,
            repeat=0,
            finished_at=ex.started_at.isoformat(),
            status="completed",
            steps_done=1,
            steps_total=1,
            first_exchange_id=ex.exchange_id,
            exchange_ids=[ex.exchange_id],
        )
        rows["replay_cells"].append(cell.model_dump(mode="json"))
        diff = CallDiff(
            run=f"{prefix}-replay",
            candidate="c",
            item_id=ex.exchange_id,
            repeat=0,
            step=0,
            index=0,
            recorded_tool="get",
            replayed_tool="get",
            same_tool=True,
        )
        rows["replay_diffs"].append(diff.model_dump(mode="json"))
    return rows


def run_row(proxy_id: str, event: str, at: datetime, exchanges: int = 0) -> dict[str, Any]:
    return {
        "proxy_id": proxy_id,
        "pid": 123,
        "event": event,
        "at": at.isoformat(),
        "mode": "reverse",
        "upstream": "http://up",
        "listen": "127.0.0.1:8080",
        "flush_interval_s": 0.5,
        "exchanges": exchanges,
        "parse_failures": 0,
        "internal_errors": 0,
        "recorder": "worker",
        "worker_lost": 0,
    }


def count(cap: Path, table: str = "exchanges") -> int:
    return store.query(cap, f"SELECT count(*) FROM {table}")[1][0][0]


def python(code: str, **kwargs: Any) -> subprocess.Popen[str]:
    """Start a Python subprocess running ``code`` (dedented)."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 30) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out


@pytest.fixture
def cap(tmp_path: Path) -> Path:
    return store.init_capture(tmp_path / "cap")


def test_init_creates_catalog_and_placeholders(cap: Path) -> None:
    assert (cap / store.CATALOG).is_file()
    assert sorted(p.name for p in (cap / "segments" / "_schema").iterdir()) == sorted(
        f"{t}.0000000000.jsonl" for t in TABLES
    )
    before = (cap / store.CATALOG).stat().st_mtime_ns
    assert store.init_capture(cap / store.CATALOG) == cap  # the catalog path works too
    assert (cap / store.CATALOG).stat().st_mtime_ns == before  # current: nothing rewritten


def test_views_work_with_zero_segments(cap: Path) -> None:
    for view in [*TABLES, *catalog.DERIVED_VIEWS]:
        assert count(cap, view) == 0
    shutil.rmtree(cap / "segments")  # open_capture puts the placeholders back
    assert count(cap) == 0


@pytest.mark.parametrize("compacted", [False, True])
def test_round_trip_of_every_table(cap: Path, compacted: bool) -> None:
    writer = SegmentWriter(cap, "p1")
    batch = exchange_rows(2) | {"proxy_runs": [run_row("p1", "start", T0)]}
    writer.write(batch)
    if compacted:
        assert store.compact(cap).files == len(TABLES)
        assert not list_segments(cap)["exchanges"]
    for table, rows in batch.items():
        names, got = store.query(cap, f"SELECT * FROM {table}")
        assert names == list(TABLES[table])
        for want, values in zip(rows, sorted(got, key=str), strict=True):
            row = dict(zip(names, values, strict=True))
            for col, kind in TABLES[table].items():
                if kind == "JSON" and row[col] is not None:
                    row[col] = json.loads(row[col])
                elif kind == "TIMESTAMPTZ" and row[col] is not None:
                    row[col] = row[col].astimezone(UTC).isoformat().replace("+00:00", "Z")
                    want[col] = datetime.fromisoformat(want[col]).isoformat()
                    want[col] = want[col].replace("+00:00", "Z")
            assert row == want


def test_derived_views(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    writer.write(exchange_rows(3, session="a"))
    writer.write(exchange_rows(1, session="b", prefix="bx", error_kind="upstream"))
    writer.write(
        {"proxy_runs": [run_row("p1", "start", T0), run_row("p1", "stop", T0 + timedelta(1), 4)]}
    )
    names, rows = store.list_sessions(cap, limit=10)
    sessions = {r[0]: dict(zip(names, r, strict=True)) for r in rows}
    assert sessions["a"]["exchanges"] == 3
    assert sessions["a"]["tool_calls"] == 3
    assert sessions["a"]["models"] == ["gpt-a"]
    assert sessions["a"]["errors"] == 0
    assert sessions["b"]["errors"] == 1
    assert sessions["a"]["last_seen"] == T0 + timedelta(seconds=2, milliseconds=500)
    assert len(store.list_sessions(cap, limit=1)[1]) == 1
    names, rows = store.query(cap, "SELECT model, wire_format, proxy_id FROM calls")
    assert set(rows) == {("gpt-a", "openai_chat", "p1")}
    names, rows = store.query(cap, "SELECT event, exchanges FROM proxy_runs_latest")
    assert rows == [("stop", 4)]


def test_query_errors_are_user_errors(cap: Path) -> None:
    with pytest.raises(store.QueryError, match="nonsense") as info:
        store.query(cap, "SELECT nonsense FROM exchanges")
    assert isinstance(info.value, UserError)
    with pytest.raises(store.QueryError):
        store.query(cap, "DELETE FROM exchanges_compacted")  # readers are read-only


def test_summary(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    writer.write(exchange_rows(2) | {"proxy_runs": [run_row("p1", "start", T0)]})
    info = store.summary(cap)
    assert info["capture"] == str(cap)
    assert info["tables"] == dict.fromkeys(TABLES, 2) | {"proxy_runs": 1}
    assert info["segments_pending"] == len(TABLES)
    assert info["sessions"] == 1
    assert info["first"] == T0
    assert info["last"] == T0 + timedelta(seconds=1, milliseconds=500)
    assert [p["proxy_id"] for p in info["proxies"]] == ["p1"]
    store.compact(cap)
    assert store.summary(cap)["segments_pending"] == 0
    assert store.summary(cap)["tables"]["exchanges"] == 2


def test_export_jsonl(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(3))
    buf = io.StringIO()
    assert store.export_jsonl(cap, "exchanges", buf) == 3
    rows = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert [r["exchange_id"] for r in rows] == ["ex-0", "ex-1", "ex-2"]
    assert rows[0]["request_params"] == {"temperature": 0.5, "n": [1, 2]}
    assert datetime.fromisoformat(rows[0]["started_at"]) == T0
    out = tmp_path / "calls.jsonl"
    assert store.export_jsonl(cap, "tool_calls", out) == 3
    assert json.loads(out.read_text().splitlines()[0])["arguments"] == {}
    with pytest.raises(ValueError, match="unknown table"):
        store.export_jsonl(cap, "sessions; DROP TABLE meta", buf)


def test_compaction_is_idempotent_and_never_double_counts(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    (first,) = writer.write({"exchanges": exchange_rows(3)["exchanges"]})
    saved = first.read_bytes()
    stats = store.compact(cap)
    assert (stats.files, stats.rows, stats.deleted) == (1, {"exchanges": 3}, 1)
    assert not first.exists()
    assert store.compact(cap) == store.CompactStats()
    # As if compaction crashed after its commit but before deleting the file.
    first.write_bytes(saved)
    assert count(cap) == 3
    assert store.summary(cap)["segments_pending"] == 0
    stats = store.compact(cap)
    assert (stats.files, stats.deleted) == (0, 1)
    assert not first.exists()
    assert count(cap) == 3


def test_writes_after_compaction_and_restarted_writer(cap: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    store.compact(cap)
    # The same proxy id after a restart must not reuse a compacted file name.
    again = SegmentWriter(cap, "p1")
    (path, *_) = again.write({"exchanges": exchange_rows(1, prefix="new")["exchanges"]})
    assert path.name == "exchanges.0000000002.jsonl"
    assert count(cap) == 3
    store.compact(cap)
    assert count(cap) == 3
    assert count(cap, "tool_calls") == 2


def test_corrupt_lines_are_skipped_and_the_file_kept(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    (path,) = writer.write({"exchanges": exchange_rows(2)["exchanges"]})
    with open(path, "a") as f:
        f.write('{"exchange_id": "half\n')
        f.write("not json at all\n")
    writer.write({"exchanges": exchange_rows(1, prefix="ok")["exchanges"]})
    assert count(cap) == 3
    assert count(cap, "sessions") == 1
    stats = store.compact(cap)
    assert stats.rejected == ["segments/p1/exchanges.0000000001.jsonl"]
    assert stats.rows == {"exchanges": 3}
    assert (cap / "rejected" / "p1" / path.name).exists()
    assert not path.exists()
    assert count(cap) == 3


def test_rows_larger_than_duckdbs_default_limit_are_read(cap: Path) -> None:
    body = "x" * (20 * 1024 * 1024)  # DuckDB's default maximum_object_size is 16 MiB
    SegmentWriter(cap, "p1").write({"exchanges": [{"exchange_id": "big", "request_body": body}]})
    assert store.query(cap, "SELECT length(request_body) FROM exchanges")[1] == [(len(body),)]
    store.compact(cap)
    assert store.query(cap, "SELECT length(request_body) FROM exchanges")[1] == [(len(body),)]


def test_compaction_removes_only_stale_tmp_files(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    stale = writer.dir / "exchanges.0000000005.jsonl.tmp"
    fresh = writer.dir / "exchanges.0000000006.jsonl.tmp"
    stale.write_text('{"exchange_id": "x"')
    fresh.write_text('{"exchange_id": "y"')
    old = time.time() - 2 * store.STALE_TMP_S
    os.utime(stale, (old, old))
    assert count(cap) == 0  # readers never see .tmp files
    assert store.compact(cap).tmp_removed == 1
    assert not stale.exists()
    assert fresh.exists()


def test_reader_process_while_writer_process_writes(cap: Path) -> None:
    flushes, per_flush = 40, 3
    writer = python(f"""
        import time
        from toolproxy.store.segments import SegmentWriter
        w = SegmentWriter({str(cap)!r}, "writer")
        for i in range({flushes}):
            rows = [{{"exchange_id": f"{{i}}-{{j}}"}} for j in range({per_flush})]
            w.write({{"exchanges": rows}})
            time.sleep(0.01)
        """)
    reader = python(f"""
        import time
        from toolproxy import store
        seen = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            seen.append(store.query({str(cap)!r}, "SELECT count(*) FROM exchanges")[1][0][0])
            if seen[-1] == {flushes * per_flush}:
                break
        print(*seen)
        """)
    finish(writer)
    seen = [int(n) for n in finish(reader).split()]
    assert seen == sorted(seen)  # never goes back, never sees a partial file
    assert all(n % per_flush == 0 for n in seen)
    assert seen[-1] == flushes * per_flush
    assert len(seen) > 1


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


HOLD = """
    import duckdb, sys, time
    con = duckdb.connect({db!r}, read_only={ro})
    print("ready", flush=True)
    sys.stdin.readline()
    """


def hold(db: Path, read_only: bool) -> subprocess.Popen[str]:
    """A process that keeps the catalog open until its stdin is closed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLD.format(db=str(db), ro=read_only))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=10)


def test_capture_busy_when_another_process_writes(cap: Path) -> None:
    holder = hold(cap / store.CATALOG, read_only=False)
    try:
        with pytest.raises(store.CaptureBusy, match=re.escape(str(cap))):
            store.open_capture(cap, busy_timeout_s=0.2)
        with pytest.raises(store.CaptureBusy, match="read-write"):
            store.compact(cap, busy_timeout_s=0.2)
    finally:
        release(holder)
    assert count(cap) == 0


def test_readers_share_but_block_compaction(cap: Path) -> None:
    holder = hold(cap / store.CATALOG, read_only=True)
    try:
        assert count(cap) == 0
        with pytest.raises(store.CaptureBusy):
            store.compact(cap, busy_timeout_s=0.2)
    finally:
        release(holder)
    assert store.compact(cap).files == 0


def test_capture_busy_within_one_process(cap: Path) -> None:
    con = store.open_capture(cap, read_only=False)
    try:
        with pytest.raises(store.CaptureBusy):
            store.open_capture(cap, busy_timeout_s=0)
    finally:
        con.close()


def test_concurrent_init_calls(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    code = f"from toolproxy import store; print(store.init_capture({str(target)!r}))"
    procs = [python(code) for _ in range(3)]
    assert {finish(p).strip() for p in procs} == {str(target)}
    assert count(target) == 0


def test_not_a_capture(tmp_path: Path) -> None:
    with pytest.raises(store.NotACapture, match="no capture.duckdb"):
        store.open_capture(tmp_path / "missing")
    with pytest.raises(store.NotACapture):
        store.summary(tmp_path)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / store.CATALOG).write_text("not a database" * 100)
    with pytest.raises(store.NotACapture, match="not a DuckDB database"):
        store.open_capture(junk)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    duckdb.connect(str(foreign / store.CATALOG)).execute("CREATE TABLE t (a INT)").close()
    with pytest.raises(store.NotACapture, match="no toolproxy meta"):
        store.open_capture(foreign)
    with pytest.raises(store.NotACapture, match="no toolproxy meta"):
        store.init_capture(foreign)
    empty = tmp_path / "empty"
    empty.mkdir()
    duckdb.connect(str(empty / store.CATALOG)).close()
    with pytest.raises(store.NotACapture, match="never initialised"):
        store.open_capture(empty)
    assert count(store.init_capture(empty)) == 0


def test_glob_characters_in_the_path_are_refused(tmp_path: Path) -> None:
    with pytest.raises(store.CaptureError, match="cannot contain"):
        store.init_capture(tmp_path / "run[1]")


def test_newer_schema_is_refused(cap: Path) -> None:
    with store.open_capture(cap, read_only=False) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(store.CaptureError, match="upgrade toolproxy"):
        store.open_capture(cap)


def test_plain_duckdb_reads_views_from_any_directory(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    store.compact(cap)
    SegmentWriter(cap, "p2").write(exchange_rows(1, prefix="late"))
    code = f"""
        import duckdb
        con = duckdb.connect({str(cap / store.CATALOG)!r}, read_only=True)
        print(con.execute("SELECT count(*) FROM exchanges").fetchone()[0])
        """
    assert finish(python(code, cwd=tmp_path)).strip() == "3"


def test_moved_capture_is_repaired(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    store.compact(cap)
    SegmentWriter(cap, "p1").write(exchange_rows(1, prefix="late"))
    moved = tmp_path / "moved"
    shutil.move(cap, moved)
    assert count(moved) == 3  # repaired: the stored views now point at the new place
    plain = duckdb.connect(str(moved / store.CATALOG), read_only=True)
    assert plain.execute("SELECT count(*) FROM exchanges").fetchone() == (3,)
    plain.close()


def test_moved_capture_read_while_someone_else_reads(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    moved = tmp_path / "moved"
    shutil.move(cap, moved)
    holder = hold(moved / store.CATALOG, read_only=True)  # no write access for a repair
    try:
        assert count(moved) == 2  # temporary views on our own connection
    finally:
        release(holder)


def test_columns_added_to_the_records_are_migrated(cap: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(1))
    store.compact(cap)
    # Pretend this capture was made before `conversation_key` existed.
    with store.open_capture(cap, read_only=False) as con:
        con.execute("DROP VIEW sessions")
        con.execute("DROP VIEW calls")
        con.execute("DROP VIEW exchanges")
        con.execute("ALTER TABLE exchanges_compacted DROP COLUMN conversation_key")
        con.execute("UPDATE meta SET value = 'old' WHERE key = 'columns_hash'")
    holder = hold(cap / store.CATALOG, read_only=True)
    try:  # read-only: the missing column reads as NULL through temporary views
        assert store.query(cap, "SELECT conversation_key FROM exchanges")[1] == [(None,)]
    finally:
        release(holder)
    assert store.query(cap, "SELECT conversation_key FROM exchanges")[1] == [(None,)]
    with store.open_capture(cap) as con:
        names = {r[0] for r in con.execute("DESCRIBE exchanges_compacted").fetchall()}
    assert "conversation_key" in names


def test_a_read_batch_answers_each_statement_on_one_connection(tmp_path):
    capture = store.init_capture(tmp_path / "cap")
    with store.reading(capture) as r:
        (a_names, a_rows), (b_names, b_rows) = (
            r.named("SELECT ? AS x", [1]),
            r.named("SELECT count(*) AS n FROM exchanges"),
        )
    assert (a_names, a_rows, b_names, b_rows) == (["x"], [(1,)], ["n"], [(0,)])
    with pytest.raises(store.QueryError, match="nope"), store.reading(capture) as r:
        r.named("SELECT 1")
        r.named("SELECT * FROM nope")


def test_compact_stats_say_what_happened_in_words() -> None:
    assert store.CompactStats().summary() == "nothing to compact"
    stats = store.CompactStats(
        files=3,
        rows={"tool_calls": 2, "exchanges": 4, "grades": 0},
        rejected=["segments/p1/exchanges.0000000001.jsonl"],
    )
    assert stats.summary() == (
        "compacted 3 segment files (exchanges 4, tool_calls 2); "
        "1 with unreadable lines kept under rejected/"
    )
