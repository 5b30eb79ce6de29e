"""Pass rates per task family (case tag), and the report's matrix of runs × families."""

from __future__ import annotations

from toolproxy.grade.families import family_scores, matrix_rows
from toolproxy.grade.grades import CaseGrade
from toolproxy.grade.metrics import CaseRecord
from toolproxy.grade.rendering import csv_text
from toolproxy.grade.report import build_report, build_tables


def record(case_id: str, tags: list[str], passed: bool, label=None, not_graded=False):
    grade = CaseGrade(case_id=case_id, passed=passed, label=label, not_graded=not_graded)
    return CaseRecord(run="r", grade=grade, tags=tags)


RECORDS = [
    record("a#0", ["enums"], True),
    record("a#1", ["enums"], False, "hallucinated_param"),
    record("b#0", ["enums", "unions"], False, "schema_violation"),
    record("c#0", ["unions"], False, not_graded=True),
    record("d#0", [], True),  # untagged: in no family
]


def test_each_tag_counts_its_cases_and_rates_over_graded_ones() -> None:
    scores = family_scores(RECORDS)
    assert list(scores) == ["enums", "unions"]
    enums, unions = scores["enums"], scores["unions"]
    assert (enums.cases, enums.graded, enums.passed) == (3, 3, 1)
    assert enums.pass_rate == 1 / 3
    assert enums.labels == {"hallucinated_param": 1, "schema_violation": 1}
    assert (unions.cases, unions.graded, unions.passed, unions.pass_rate) == (2, 1, 0, 0.0)


def test_a_family_with_nothing_graded_has_no_rate() -> None:
    scores = family_scores([record("x", ["t"], False, not_graded=True)])
    assert scores["t"].pass_rate is None
    assert matrix_rows({"r": scores}, ["r"]) == [["t", "0/0 (n/a)"]]


def test_a_tag_repeated_on_one_case_counts_once() -> None:
    assert family_scores([record("x", ["t", "t"], True)])["t"].cases == 1


def test_the_report_shows_runs_by_family_with_the_top_failure() -> None:
    other = [r.model_copy(update={"run": "s"}) for r in RECORDS[:1]]
    report = build_report({"r": RECORDS, "s": other}, {}, baseline="r")
    table = next(t for t in build_tables(report) if t.title.startswith("Pass rate per task"))
    assert table.columns == ["family", "r*", "s"]
    assert table.rows == [
        ["enums", "1/3 (33%) hallucinated_param", "1/1 (100%)"],
        ["unions", "0/1 (0%) schema_violation", "-"],
    ]
    csv = csv_text(report)
    assert "r,true,family,enums.pass_rate,0.3333333333333333\n" in csv
    assert "s,false,family,enums.passed,1\n" in csv


def test_without_tags_there_is_no_family_table() -> None:
    report = build_report({"r": [record("x", [], True)]}, {})
    assert not any(t.title.startswith("Pass rate per task") for t in build_tables(report))
