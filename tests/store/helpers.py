"""Rows and processes for the store's tests: a few exchanges with a row in every table."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.builders import HOSTED, chat_exchange
from toolproxy import store
from toolproxy.grade.rows import GradeRow, JudgeVerdict
from toolproxy.grade.runner import written_by
from toolproxy.records import (
    McpMessage,
    McpTool,
    SchemaVerdict,
    ToolCall,
    ToolOffered,
    ToolResult,
)
from toolproxy.replay.model import CallDiff, CellResult
from toolproxy.store import gradewrites
from toolproxy.store.gradewrites import summary_row
from toolproxy.store.segments import TABLES, child_rows, encode_plain_row

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
