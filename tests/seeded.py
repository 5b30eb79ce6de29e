"""One seeded capture every store-reader test shares: small, but with the shapes readers
must tell apart (see `seed_capture`'s docstring). Written through the real segment writer,
read through a real DuckDB catalog."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tests.builders import chat_exchange
from toolproxy import store
from toolproxy.grade.rows import GradeRow
from toolproxy.records import (
    Exchange,
    McpMessage,
    McpTool,
    ToolCall,
    ToolOffered,
    ToolResult,
    schema_hash,
)
from toolproxy.replay.model import CallDiff, CellResult
from toolproxy.store.segments import SegmentWriter, child_rows

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
SEARCH = {"type": "object", "properties": {"q": {"type": "string"}}}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class CaptureRows:
    """Rows for a capture, built the way the recorder builds them: an exchange and its
    children (tools offered, calls, results, MCP messages) through `child_rows`. Every test
    that seeds a capture by hand uses this, then `write`s once."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {}

    def turn(
        self,
        ex: Exchange,
        calls: Sequence[ToolCall] = (),
        offered: Sequence[ToolOffered] = (),
        results: Sequence[ToolResult] = (),
        mcp: Sequence[McpMessage] = (),
    ) -> Exchange:
        self.add("exchanges", [ex.model_dump(mode="json")])
        for table, children in (
            ("tool_calls", calls),
            ("tools_offered", offered),
            ("tool_results", results),
            ("mcp_messages", mcp),
        ):
            if children:
                self.add(table, child_rows(ex, list(children)))
        return ex

    def add(self, table: str, rows: Sequence[dict[str, Any]]) -> CaptureRows:
        self.rows.setdefault(table, []).extend(rows)
        return self

    def models(self, table: str, models: Sequence[BaseModel]) -> CaptureRows:
        """Rows of a table whose row model is a pydantic model (pulls, grades, cells...)."""
        return self.add(table, [m.model_dump(mode="json") for m in models])

    def write(self, capture: Path, proxy_id: str = "seed") -> Path:
        """Write every row in one flush (creating the capture if needed)."""
        store.init_capture(capture)
        SegmentWriter(capture, proxy_id).write(self.rows)
        return capture


def weather_tool(position: int = 0) -> ToolOffered:
    return ToolOffered(
        position=position, name="get_weather", parameters=WEATHER, schema_hash=schema_hash(WEATHER)
    )


def search_tool(position: int = 0) -> ToolOffered:
    return ToolOffered(
        position=position, name="search", parameters=SEARCH, schema_hash=schema_hash(SEARCH)
    )


def seed_capture(path: Path) -> Path:
    """A capture holding:

    - session `s-a` (gpt-a, Chat Completions): `a-0` calls get_weather(Paris) and `a-1`
      carries its result then calls get_weather(Rome) (reusing the call id `c1`), `a-2`
      answers in text "It is sunny in Rome"; 10 input and 5 output tokens each;
    - session `s-b` (claude-x, Anthropic): `b-0` calls search(q=flights), `b-1` failed
      upstream with a 500;
    - session `s-c` (resp-m, Responses): `c-0` offered get_weather and answered in text,
      parse status partial;
    - session `s-r`: `r-0`, written by a replay (proxy `replay:run1`);
    - session `s-m`: `m-0`, MCP traffic whose tools/call executed `a-0`'s call;
    - MCP server `weather` pulled once with get_weather;
    - grading run `g1` (a-0 passed; b-0 wrong_tool, then re-graded as passed later) and
      run `g2` (a-1 no_call);
    - replay run `rp` (candidate `cand`: item `s-a` completed, item `s-b` failed) with one
      diff per call of `a-0`.
    """
    seed = CaptureRows()
    usage = {"input_tokens": 10, "output_tokens": 5, "ttfb_ms": 100.0, "decode_tps": 50.0}
    a_common = {
        "model_requested": "gpt-a",
        "model_returned": "gpt-a-2026",
        "status_code": 200,
        **usage,
    }
    ask = [{"role": "user", "content": "weather in Paris?"}]
    seed.turn(
        chat_exchange("a-0", "s-a", at(0), messages=ask, finish_reason="tool_calls", **a_common),
        calls=[
            ToolCall(
                index=0,
                call_id="c1",
                name="get_weather",
                arguments_raw='{"city":"Paris"}',
                arguments={"city": "Paris"},
            )
        ],
        offered=[weather_tool(), search_tool(1)],
    )
    seed.turn(
        chat_exchange(
            "a-1", "s-a", at(1), messages=[*ask, {"role": "tool", "content": "18C"}], **a_common
        ),
        calls=[
            ToolCall(
                index=0,
                call_id="c1",
                name="get_weather",
                arguments_raw='{"city":"Rome"}',
                arguments={"city": "Rome"},
            )
        ],
        offered=[weather_tool()],
        results=[
            ToolResult(
                message_index=2,
                call_id="c1",
                content="18C",
                is_error=False,
                call_exchange_id="a-0",
                call_index=0,
            )
        ],
    )
    seed.turn(
        chat_exchange("a-2", "s-a", at(2), assistant_text="It is sunny in Rome", **a_common),
        offered=[weather_tool()],
        results=[
            ToolResult(
                message_index=4,
                call_id="c1",
                content="sunny",
                is_error=False,
                call_exchange_id="a-1",
                call_index=0,
            )
        ],
    )
    anthropic = {
        "wire_format": "anthropic_messages",
        "path": "/v1/messages",
        "model_requested": "claude-x",
    }
    seed.turn(
        chat_exchange("b-0", "s-b", at(3), **anthropic, status_code=200),
        calls=[
            ToolCall(
                index=0,
                call_id="t1",
                name="search",
                arguments_raw='{"q":"flights"}',
                arguments={"q": "flights"},
            )
        ],
        offered=[search_tool()],
    )
    seed.turn(
        chat_exchange("b-1", "s-b", at(4), **anthropic, status_code=500, error_kind="upstream"),
    )
    seed.turn(
        chat_exchange(
            "c-0",
            "s-c",
            at(5),
            wire_format="openai_responses",
            path="/v1/responses",
            model_requested="resp-m",
            parse_status="partial",
            assistant_text="Hello there",
        ),
        offered=[weather_tool()],
    )
    seed.turn(chat_exchange("r-0", "s-r", at(6), proxy_id="replay:run1", model_requested="cand-m"))
    call = McpMessage(
        position=0,
        direction="client",
        rpc_id="1",
        method="tools/call",
        tool_name="get_weather",
        arguments={"city": "Paris"},
        result={"content": [{"type": "text", "text": "18C"}]},
        is_error=False,
        linked_exchange_id="a-0",
        linked_call_id="c1",
    )
    seed.turn(
        chat_exchange("m-0", "s-m", at(7), wire_format="mcp", path="/mcp", parse_status="ok"),
        mcp=[call],
    )
    seed.models(
        "mcp_tools",
        [
            McpTool(
                pull_id="pull-1",
                pulled_at=at(-60),
                server="weather",
                transport="stdio",
                name="get_weather",
                description="Weather for a city",
                input_schema=WEATHER,
                annotations={"readOnlyHint": True},
                schema_hash=schema_hash(WEATHER),
                definition_hash="def-1",
            )
        ],
    )
    capture = seed.write(path)
    grades = [
        _grade("g1", "case-a0", "a-0", "s-a", True, None, at(10)),
        _grade("g1", "case-b0", "b-0", "s-b", False, "wrong_tool", at(11)),
        _grade("g1", "case-b0", "b-0", "s-b", True, None, at(12)),
        _grade("g2", "case-a1", "a-1", "s-a", False, "no_call", at(13)),
    ]
    cells = [
        CellResult(
            run="rp",
            candidate="cand",
            item_id="s-a",
            repeat=0,
            finished_at=at(20).isoformat(),
            status="completed",
            steps_done=2,
            steps_total=2,
            first_exchange_id="r-0",
            exchange_ids=["r-0"],
        ),
        CellResult(
            run="rp",
            candidate="cand",
            item_id="s-b",
            repeat=0,
            finished_at=at(21).isoformat(),
            status="failed",
            error_kind="timeout",
        ),
    ]
    diffs = [
        CallDiff(
            run="rp",
            candidate="cand",
            item_id="s-a",
            repeat=0,
            step=1,
            index=0,
            recorded_tool="get_weather",
            replayed_tool="get_weather",
            recorded_arguments={"city": "Paris"},
            replayed_arguments={"city": "Paris"},
            same_tool=True,
            same_arguments=True,
        ),
        CallDiff(
            run="rp",
            candidate="cand",
            item_id="s-a",
            repeat=0,
            step=2,
            index=0,
            recorded_tool="get_weather",
            replayed_tool="search",
            recorded_arguments={"city": "Rome"},
            replayed_arguments={"q": "Rome"},
            label="wrong_tool",
        ),
    ]
    SegmentWriter(capture, "seed-runs").write(
        {
            "grades": [g.as_row() for g in grades],
            "replay_cells": [c.model_dump(mode="json") for c in cells],
            "replay_diffs": [d.model_dump(mode="json") for d in diffs],
        }
    )
    return capture


def _grade(
    run: str,
    case: str,
    exchange: str,
    session: str,
    passed: bool,
    label: str | None,
    when: datetime,
) -> GradeRow:
    return GradeRow(
        run=run,
        graded_at=when.isoformat(),
        source="capture",
        case_id=case,
        exchange_id=exchange,
        session_id=session,
        model="m",
        passed=passed,
        label=label,
    )
