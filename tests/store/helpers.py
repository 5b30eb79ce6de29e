"""Rows and processes for the store's tests: a few exchanges with a row in every table."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from tests.builders import HOSTED, chat_exchange
from toolproxy import store
from toolproxy.grade.rows import GradeRow, JudgeVerdict
from toolproxy.grade.runner import grades_batch, written_by
from toolproxy.records import (
    McpMessage,
    McpTool,
    SchemaVerdict,
    ToolCall,
    ToolOffered,
    ToolResult,
)
from toolproxy.replay.model import CallDiff, CellResult
from toolproxy.store import compaction, gradewrites
from toolproxy.store.gradewrites import summary_row
from toolproxy.store.segments import TABLES, SegmentWriter, child_rows, encode_plain_row

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
        so_far = [GradeRow.model_validate(g) for g in rows["grades"]]  # a write of them all
        size = sum(len(encode_plain_row(g.as_row())) for g in so_far)
        rows["grade_writes"].append(summary_row(written_by(grade.run, so_far), size))
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
        "toolproxy_version": "0.1.0",
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


def summed_runs(capture: Path) -> dict[str, tuple[int, int, str | None, str | None]]:
    """Each grades segment file's run with its summary's counts, having checked the summary
    stands for the file (`store.gradewrites`) and says what the file's grades say."""
    found = {}
    for path in sorted(capture.glob("segments/grade-*/grades.*.jsonl")):
        summary = gradewrites.summary_of(path)
        assert summary is not None, path
        run = summary["run"]
        assert gradewrites.stands_for(summary, run, path.stat().st_size)
        _, rows = store.query(
            capture,
            "SELECT count(*), count(*) FILTER (WHERE passed), min(graded_at), max(graded_at) "
            f"FROM read_json('{path}', columns={{run: 'VARCHAR', graded_at: 'VARCHAR', "
            "passed: 'BOOLEAN'}) WHERE run = ?",
            [run],
        )
        counts = (summary["cases"], summary["passed"], summary["first_graded"])
        assert (*counts, summary["last_graded"]) == rows[0]
        found[run] = rows[0]
    return found


# --- grading runs in every shape a capture can hold them ---------------------------------


def run_rows(run: str, n: int = 3) -> list[dict[str, object]]:
    """`n` passed grades of `run`."""
    return [
        GradeRow(run=run, graded_at="2026-11-26T00:00:00+00:00", source="capture",
                 case_id=f"{run}-{i}", passed=True).as_row()
        for i in range(n)
    ]  # fmt: skip


def every_part(tmp_path: Path) -> Path:
    """A capture holding runs in every part of the store, and files of each shape."""
    cap = store.init_capture(tmp_path / "cap")
    SegmentWriter(cap, "old").write({"grades": run_rows("compacted")})
    store.compact(cap)  # in the catalog's cache now
    SegmentWriter(cap, "pend").write({"grades": run_rows("pending")})
    with duckdb.connect() as con:  # a pending Parquet file, as a background round leaves
        compaction.compact_folder(con, cap, cap / "segments" / "pend", set())
    w = SegmentWriter(cap, "grade-1")
    w.write({"grades": run_rows("one-a")})
    w.write({"grades": run_rows("one-b", 1)})  # a one-line file
    w.write({"grades": run_rows("mixed-a", 2) + run_rows("mixed-b", 2)})  # read whole
    damaged = SegmentWriter(cap, "grade-2").write({"grades": run_rows("damaged")})[0]
    damaged.write_bytes(b"{not json\n" + damaged.read_bytes())  # the first line: read whole
    w.write({"grades": run_rows("one-a", 2)})  # a run graded again under its name
    return cap


EVERY_RUN = {"compacted", "pending", "one-a", "one-b", "mixed-a", "mixed-b", "damaged"}


def summed(cap: Path, folder: str, rows: list[dict[str, object]]) -> Path:
    """A write of `rows` (one run's) with its summary, as `grade` and replays write them."""
    writer = SegmentWriter(cap, folder)
    graded = [GradeRow.model_validate(row) for row in rows]
    data = writer.encode("grades", rows)
    return writer.write_encoded(grades_batch(writer, data, written_by(graded[0].run, graded)))[0]


def graded_rows(run: str, n: int, at: str = "2026-11-26T00:00:00+00:00") -> list[dict[str, object]]:
    """`n` grades of `run`: passed, then failed (no_call, wrong_tool) and not graded."""
    labels = [None, "no_call", None, "wrong_tool", None]
    return [
        GradeRow(run=run, graded_at=at, case_id=f"{run}-{i}", passed=i % 5 in (0, 2),
                 label=labels[i % 5], not_graded=i % 5 == 4).as_row()
        for i in range(n)
    ]  # fmt: skip


def summaries_of_every_shape(tmp_path: Path) -> Path:
    """`every_part` and runs written with summaries: one that stands for its run, and each
    way one can stop standing for it."""
    cap = every_part(tmp_path)
    summed(cap, "grade-3", graded_rows("summed", 5, "2026-11-25T00:00:00+00:00"))
    summed(cap, "grade-4", graded_rows("twice", 4))
    summed(cap, "grade-5", graded_rows("twice", 2, "2026-11-27T00:00:00+00:00"))  # graded again
    grown = summed(cap, "grade-6", graded_rows("grown", 3))
    with grown.open("ab") as f:  # a line added since: not the file the summary counted
        f.write(encode_plain_row(graded_rows("grown", 1, "2026-11-28T00:00:00+00:00")[0]))
    summed(
        cap, "grade-7", graded_rows("dup", 2) + graded_rows("dup", 1, "2026-11-27T00:00:00+00:00")
    )
    lost = summed(cap, "grade-8", graded_rows("lost", 2))
    lost.with_name(lost.name.replace("grades.", "grade_writes.")).unlink()
    summed(cap, "grade-9", graded_rows("compacted-summed", 2))
    return cap


SUMMED_RUNS = EVERY_RUN | {"summed", "twice", "grown", "dup", "lost"}
