"""The store's tables: every column of every table, and its DuckDB type (pure).

The capture's own tables are derived from the pydantic records (``toolproxy.records``), so a
new record field becomes a new column. The tables other packages write (grades, the judge's
cache, replay cells and diffs) are written out here, so the store imports nothing from
``grade`` or ``replay``; a test holds those packages' row models to these columns.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel

from toolproxy.records import (
    Exchange,
    McpMessage,
    McpTool,
    SchemaVerdict,
    ToolCall,
    ToolOffered,
    ToolResult,
)


def duckdb_type(annotation: Any) -> str:
    """The DuckDB column type for a pydantic field annotation.

    str -> VARCHAR, int -> BIGINT, float -> DOUBLE, bool -> BOOLEAN, datetime -> TIMESTAMPTZ,
    Literal of strings -> VARCHAR; anything structured (dict, list, tuple, models, Any,
    unions of several types) -> JSON. ``X | None`` maps as ``X``.
    """
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return duckdb_type(args[0]) if len(args) == 1 else "JSON"
    if origin is Literal:
        return "VARCHAR" if all(isinstance(a, str) for a in get_args(annotation)) else "JSON"
    simple = {str: "VARCHAR", bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE"}
    if annotation in simple:
        return simple[annotation]
    if annotation is datetime:
        return "TIMESTAMPTZ"
    return "JSON"


def model_columns(model: type[Any]) -> dict[str, str]:
    """Column name -> DuckDB type for every field of a pydantic model or a dataclass, in
    field order."""
    if dataclasses.is_dataclass(model):
        hints = get_type_hints(model)
        return {f.name: duckdb_type(hints[f.name]) for f in dataclasses.fields(model)}
    return {name: duckdb_type(f.annotation) for name, f in model.model_fields.items()}


# Child rows repeat these exchange columns so they can be filtered without a join.
_PARENT = {"exchange_id": "VARCHAR", "session_id": "VARCHAR", "started_at": "TIMESTAMPTZ"}


def child_rows(exchange: Exchange, children: Sequence[BaseModel]) -> list[dict[str, Any]]:
    """`children` (tools offered, calls, results, MCP messages of `exchange`) as rows of
    their table: each repeats its exchange's `_PARENT` columns."""
    link = {
        "exchange_id": exchange.exchange_id,
        "session_id": exchange.session_id,
        "started_at": exchange.started_at.isoformat(),
    }
    return [link | child.model_dump(mode="json") for child in children]


TABLES: dict[str, dict[str, str]] = {
    "exchanges": model_columns(Exchange),
    "tools_offered": _PARENT | model_columns(ToolOffered),
    "tool_calls": _PARENT | model_columns(ToolCall),
    "tool_results": _PARENT | model_columns(ToolResult),
    "mcp_messages": _PARENT | model_columns(McpMessage),
    "mcp_tools": model_columns(McpTool),
    # Rows the grade and replay packages write: their models (grade.model.GradeRow,
    # JudgeVerdict; replay.model.CellResult, CallDiff) must keep these columns, which
    # tests/store/test_tables.py holds them to. The store imports neither package.
    "grades": {
        "run": "VARCHAR",
        "graded_at": "VARCHAR",
        "source": "VARCHAR",
        "case_id": "VARCHAR",
        "exchange_id": "VARCHAR",
        "session_id": "VARCHAR",
        "model": "VARCHAR",
        "passed": "BOOLEAN",
        "label": "VARCHAR",
        "not_graded": "BOOLEAN",
        "reason": "VARCHAR",
        "calls": "JSON",
        "expected_tools": "JSON",
        "called_tools": "JSON",
        "leaked_format": "VARCHAR",
        "leaked_label": "VARCHAR",
        "tags": "JSON",
    },
    # one row per write of a run's grades, beside its grades file (store.gradewrites)
    "grade_writes": {
        "run": "VARCHAR",
        "rows": "BIGINT",
        "cases": "BIGINT",
        "passed": "BIGINT",
        "first_graded": "VARCHAR",
        "last_graded": "VARCHAR",
        "outcomes": "JSON",
        "bytes": "BIGINT",
    },
    "judge_cache": {
        "key": "VARCHAR",
        "model": "VARCHAR",
        "prompt": "VARCHAR",
        "verdict": "BOOLEAN",
        "reason": "VARCHAR",
        "judged_at": "VARCHAR",
        "score": "DOUBLE",
    },
    "schema_checks": model_columns(SchemaVerdict),
    "replay_cells": {
        "run": "VARCHAR",
        "candidate": "VARCHAR",
        "item_id": "VARCHAR",
        "repeat": "BIGINT",
        "finished_at": "VARCHAR",
        "status": "VARCHAR",
        "steps_done": "BIGINT",
        "steps_total": "BIGINT",
        "diverged_at": "BIGINT",
        "divergence": "VARCHAR",
        "error_kind": "VARCHAR",
        "error": "VARCHAR",
        "retry_count": "BIGINT",
        "recovered": "BOOLEAN",
        "first_exchange_id": "VARCHAR",
        "exchange_ids": "JSON",
        "turns": "JSON",
    },
    "replay_diffs": {
        "run": "VARCHAR",
        "candidate": "VARCHAR",
        "item_id": "VARCHAR",
        "repeat": "BIGINT",
        "step": "BIGINT",
        "index": "BIGINT",
        "recorded_tool": "VARCHAR",
        "replayed_tool": "VARCHAR",
        "recorded_arguments": "JSON",
        "replayed_arguments": "JSON",
        "same_tool": "BOOLEAN",
        "same_arguments": "BOOLEAN",
        "label": "VARCHAR",
    },
    "proxy_runs": {
        "proxy_id": "VARCHAR",
        "pid": "BIGINT",
        "event": "VARCHAR",  # 'start' | 'stats' | 'stop' | 'fallback' (worker died)
        "at": "TIMESTAMPTZ",
        "mode": "VARCHAR",
        "upstream": "VARCHAR",
        "listen": "VARCHAR",
        "flush_interval_s": "DOUBLE",
        "exchanges": "BIGINT",
        "parse_failures": "BIGINT",
        "internal_errors": "BIGINT",
        "recorder": "VARCHAR",  # 'worker' | 'in-process'
        "worker_lost": "BIGINT",  # times the worker process died and in-process took over
        "toolproxy_version": "VARCHAR",  # the toolproxy that recorded (null: before 0.1.0's)
    },
}
"""Table -> column -> DuckDB type: the one definition of the store's columns."""

KEY_COLUMNS: dict[str, str] = {
    "exchanges": "exchange_id",
    "tools_offered": "exchange_id",
    "tool_calls": "exchange_id",
    "tool_results": "exchange_id",
    "mcp_messages": "exchange_id",
    "mcp_tools": "pull_id",
    "grades": "run",
    "grade_writes": "run",
    "judge_cache": "key",
    "schema_checks": "schema_hash",
    "replay_cells": "run",
    "replay_diffs": "run",
    "proxy_runs": "proxy_id",
}
"""A column every real row has: a line whose key is null was unreadable and is dropped."""
