"""toolproxy.grade.rows: the rows of the grading tables (plain dataclasses, pydantic's verbs)."""

from __future__ import annotations

from toolproxy.grade.rows import GradeRow, JudgeVerdict
from toolproxy.store.tables import TABLES, model_columns


def test_a_grade_row_is_a_row_of_the_grades_table():
    row = GradeRow(
        run="r",
        graded_at="2026-11-24T00:00:00+00:00",
        case_id="c",
        passed=False,
        label="no_call",
        calls=[{"expected_tool": "f"}],
    )
    assert list(row.as_row()) == list(TABLES["grades"])
    assert row.as_row() == row.model_dump(mode="json")
    assert GradeRow.model_validate(row.as_row() | {"not_a_column": 1}) == row


def test_a_judge_verdict_is_a_row_of_the_judge_cache():
    verdict = JudgeVerdict(key="k", model="m", prompt="p", verdict=True, reason="r", judged_at="t")
    assert list(verdict.model_dump()) == list(TABLES["judge_cache"])


def test_a_copy_changes_the_copy_only():
    row = GradeRow(run="r", graded_at="t", case_id="c", passed=True)
    copy = row.model_copy(update={"source": "replay:x"})
    assert (copy.source, row.source) == ("replay:x", "capture")


def test_the_row_classes_keep_their_column_types():
    # store.tables reads them; a class compiled by mypyc would read every optional as JSON
    assert model_columns(GradeRow)["label"] == "VARCHAR"
    assert model_columns(GradeRow)["calls"] == "JSON"
    assert model_columns(JudgeVerdict)["score"] == "DOUBLE"
