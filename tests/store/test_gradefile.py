"""toolproxy.store.gradefile: a run's grades read from its one file, as its writers wrote them."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from toolproxy.grade.rows import GradeRow
from toolproxy.store import gradefile
from toolproxy.store.segments import encode_plain_row
from toolproxy.store.tables import TABLES

CALLS = [{"expected_tool": "get", "actual_tool": "get", "label": "no_call", "args": []}]


def _rows(run: str = "r") -> list[dict[str, object]]:
    return [
        GradeRow(run=run, graded_at="2026-11-26T00:00:00+00:00", case_id="c-1", passed=False,
                 label="no_call", calls=CALLS, expected_tools=["get"], called_tools=[],
                 tags=["family"]).as_row(),
        GradeRow(run=run, graded_at="2026-11-26T00:00:00+00:00", case_id="c-2",
                 passed=True).as_row(),
    ]  # fmt: skip


def _file(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "grades.0000000001.jsonl"
    path.write_bytes(b"".join(encode_plain_row(row) for row in rows))
    return path


def test_rows_come_in_the_table_s_column_order_with_json_columns_decoded(tmp_path):
    path = _file(tmp_path, _rows())
    first, second = gradefile.read_rows(path, "r") or []
    assert gradefile.COLUMNS == tuple(TABLES["grades"])
    assert dict(zip(gradefile.COLUMNS, first, strict=True)) == _rows()[0]
    assert first[gradefile.COLUMNS.index("calls")] == CALLS  # a value, not text to parse
    assert second[gradefile.COLUMNS.index("passed")] is True


def test_a_needle_keeps_only_the_lines_that_hold_it(tmp_path):
    path = _file(tmp_path, _rows())
    (row,) = gradefile.read_rows(path, "r", gradefile.label_needle("no_call")) or []
    assert row[gradefile.COLUMNS.index("case_id")] == "c-1"
    assert gradefile.read_rows(path, "r", gradefile.label_needle("wrong_tool")) == []
    assert gradefile.label_needle('a "b"') in orjson.dumps({"label": 'a "b"'})


@pytest.mark.parametrize(
    "edit",
    [
        lambda row: row | {"passed": "yes"},  # typed unlike the table: DuckDB reads NULL
        lambda row: row | {"case_id": 7},
        lambda row: row | {"run": "other"},  # another run's line
        lambda row: {k: v for k, v in row.items() if k != "tags"},  # a column missing
        lambda row: row | {"extra": 1},  # a column the table does not have
        lambda row: [row],  # not an object
    ],
)
def test_a_line_not_as_its_writers_write_it_sends_the_read_to_duckdb(tmp_path, edit):
    rows = _rows()
    path = _file(tmp_path, [rows[0], edit(rows[1])])
    assert gradefile.read_rows(path, "r") is None
    assert gradefile.read_rows(path, "r", b"never there") == []  # unread lines are not judged


def test_a_damaged_line_or_a_gone_file_is_none(tmp_path):
    path = _file(tmp_path, _rows())
    path.write_bytes(path.read_bytes() + b'{"run": "r", cut\n')
    assert gradefile.read_rows(path, "r") is None
    assert gradefile.read_rows(tmp_path / "gone.jsonl", "r") is None
