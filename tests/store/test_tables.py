"""toolproxy.store.tables: the store's columns, and the row models other packages write."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import pytest

from toolproxy.grade.rows import GradeRow, JudgeVerdict
from toolproxy.records import Exchange, ToolCall, ToolOffered, ToolResult, Usage
from toolproxy.replay.model import CallDiff, CellResult
from toolproxy.store.tables import KEY_COLUMNS, TABLES, duckdb_type, model_columns


@pytest.mark.parametrize(
    ("table", "model"),
    [
        ("grades", GradeRow),
        ("judge_cache", JudgeVerdict),
        ("replay_cells", CellResult),
        ("replay_diffs", CallDiff),
    ],
)
def test_rows_other_packages_write_have_exactly_the_store_columns(table, model):
    assert model_columns(model) == TABLES[table]


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, "VARCHAR"),
        (str | None, "VARCHAR"),
        (int, "BIGINT"),
        (int | None, "BIGINT"),
        (float | None, "DOUBLE"),
        (bool, "BOOLEAN"),
        (bool | None, "BOOLEAN"),
        (datetime, "TIMESTAMPTZ"),
        (datetime | None, "TIMESTAMPTZ"),
        (Literal["a", "b"], "VARCHAR"),
        (Literal[1, 2], "JSON"),
        (dict[str, Any], "JSON"),
        (list[int], "JSON"),
        (tuple[str, int], "JSON"),
        (Any, "JSON"),
        (Usage, "JSON"),
        (int | str, "JSON"),
    ],
)
def test_duckdb_type_maps_annotations(annotation: Any, expected: str) -> None:
    assert duckdb_type(annotation) == expected


def test_tables_follow_the_records() -> None:
    assert list(TABLES["exchanges"]) == list(Exchange.model_fields)
    assert TABLES["exchanges"]["started_at"] == "TIMESTAMPTZ"
    assert TABLES["exchanges"]["request_params"] == "JSON"
    assert TABLES["exchanges"]["session_source"] == "VARCHAR"
    for table, model in [
        ("tools_offered", ToolOffered),
        ("tool_calls", ToolCall),
        ("tool_results", ToolResult),
    ]:
        assert list(TABLES[table]) == ["exchange_id", "session_id", "started_at"] + list(
            model.model_fields
        )
    assert TABLES["tool_calls"]["arguments"] == "JSON"
    assert TABLES["tool_results"]["is_error"] == "BOOLEAN"
    assert TABLES["proxy_runs"]["at"] == "TIMESTAMPTZ"
    assert TABLES["proxy_runs"]["flush_interval_s"] == "DOUBLE"
    assert set(KEY_COLUMNS) == set(TABLES)
    assert all(KEY_COLUMNS[t] in TABLES[t] for t in TABLES)
