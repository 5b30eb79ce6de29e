"""toolproxy.store.gradewrites: a write's summary, found beside its grades file, and when it
stands for the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolproxy import store
from toolproxy.store import gradewrites
from toolproxy.store.gradewrites import Written, summary_row, written_of
from toolproxy.store.segments import TABLES, SegmentWriter

T1, T2 = "2026-11-27T10:00:00+00:00", "2026-11-27T11:00:00+00:00"


def test_a_write_is_counted_by_rows_distinct_cases_and_outcomes():
    outcomes = ["passed", "no_call", "passed", "not_graded", "no_call"]
    written = written_of("r", ["a", "b", "a", None, None], outcomes, [T2, None, T1, T1, T2])
    counted = {"no_call": 2, "not_graded": 1, "passed": 2}
    assert written == Written("r", 5, 3, 2, T1, T2, counted)
    assert written_of("r", [], [], []) == Written("r", 0, 0, 0, None, None, {})
    assert summary_row(written, 10) == {
        "run": "r", "rows": 5, "cases": 3, "passed": 2, "first_graded": T1, "last_graded": T2,
        "outcomes": counted, "bytes": 10,
    }  # fmt: skip
    assert list(summary_row(written, 10)) == list(TABLES[gradewrites.TABLE])  # its columns


def test_an_outcome_is_passed_a_label_or_not_graded():
    assert gradewrites.outcome(True, None) == "passed"
    assert gradewrites.outcome(True, "no_call") == "passed"  # as `label_counts` has it
    assert gradewrites.outcome(False, "no_call") == "no_call"
    assert gradewrites.outcome(False, None) == gradewrites.outcome(None, None) == "not_graded"


def test_the_size_of_a_file_written_after_parts(tmp_path):
    part = tmp_path / "part"
    part.write_bytes(b"x" * 7)
    assert gradewrites.written_size(b"abc", [part, part]) == 17
    assert gradewrites.written_size(b"") == 0


def _write(tmp_path: Path, summaries: list[dict] | None) -> Path:
    cap = store.init_capture(tmp_path / "cap")
    writer = SegmentWriter(cap, "grade-1")
    writer.write({"judge_cache": [{"key": "k"}]})  # seq 1: the grades are seq 2
    batch = {"grades": [{"run": "r", "case_id": "a"}]}
    if summaries is not None:
        batch[gradewrites.TABLE] = summaries
    return writer.write(batch)[0]


def test_a_summary_is_the_row_written_in_the_same_write(tmp_path):
    row = summary_row(Written("r", 1, 1, 0, T1, T1, {"no_call": 1}), 5)
    grades_file = _write(tmp_path, [row])
    assert grades_file.name == "grades.0000000002.jsonl"
    assert gradewrites.summary_of(grades_file) == row


@pytest.mark.parametrize("summaries", [None, [{"run": "r"}, {"run": "r"}]])
def test_no_summary_or_more_than_one_row_is_none(tmp_path, summaries):
    assert gradewrites.summary_of(_write(tmp_path, summaries)) is None


def test_a_damaged_summary_or_a_name_that_is_no_segment_is_none(tmp_path):
    grades_file = _write(tmp_path, [{"run": "r"}])
    grades_file.with_name("grade_writes.0000000002.jsonl").write_bytes(b"{not json\n")
    assert gradewrites.summary_of(grades_file) is None
    grades_file.with_name("grade_writes.0000000002.jsonl").write_bytes(b"[1]\n")
    assert gradewrites.summary_of(grades_file) is None
    assert gradewrites.summary_of(grades_file.with_name("grades.jsonl")) is None


EXACT = summary_row(Written("r", 3, 3, 2, T1, T2, {"passed": 2, "no_call": 1}), 100)


@pytest.mark.parametrize(
    ("change", "stands"),
    [
        ({}, True),
        ({"first_graded": None, "last_graded": None}, True),
        ({"run": "other"}, False),  # another run's
        ({"bytes": 101}, False),  # the file changed since
        ({"rows": 4}, False),  # a case graded twice in the write: rows are not cases
        ({"passed": 4}, False),
        ({"passed": -1}, False),
        ({"passed": True}, False),  # not a count
        ({"cases": "3", "rows": "3"}, False),
        ({"first_graded": 1}, False),
        ({"outcomes": {"passed": 2}}, False),  # not every case
        ({"outcomes": {"passed": 1, "no_call": 2}}, False),  # not its passed
        ({"outcomes": {"passed": 2, "no_call": 1, "wrong_tool": 0}}, False),
        ({"outcomes": {"passed": 2, "no_call": 1.0}}, False),
        ({"outcomes": None}, False),
    ],
)
def test_a_summary_stands_for_its_run_only_while_exact(change, stands):
    assert gradewrites.stands_for(EXACT | change, "r", 100) is stands
    assert gradewrites.stands_for(None, "r", 100) is False


def test_a_file_s_summary_stands_or_counts_its_rows_while_the_file_is_as_written(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    writer = SegmentWriter(cap, "grade-1")
    data = writer.encode("grades", [{"run": "r", "case_id": "a", "passed": True}])
    summary = summary_row(Written("r", 1, 1, 1, T1, T1, {"passed": 1}), len(data))
    path = writer.write_encoded({"grades": data, gradewrites.TABLE: writer.encode(
        gradewrites.TABLE, [summary])})[0]  # fmt: skip
    assert gradewrites.standing(path, "r") == summary
    assert gradewrites.standing(path, "other") is None
    assert gradewrites.rows_written(path) == 1
    with path.open("ab") as f:
        f.write(data)  # a line more than the summary counted
    assert gradewrites.standing(path, "r") is None
    assert gradewrites.rows_written(path) is None
    path.unlink()  # compacted meanwhile
    assert gradewrites.standing(path, "r") is gradewrites.rows_written(path) is None


def test_parts_of_one_write_join_into_its_summary():
    one = written_of("r", ["a", "b"], ["passed", "no_call"], [T2, T2])
    two = written_of("r", ["c"], ["passed"], [T1])
    assert gradewrites.joined("r", [one, two]) == written_of(
        "r", ["a", "b", "c"], ["passed", "no_call", "passed"], [T2, T2, T1]
    )
    assert gradewrites.joined("r", []) == written_of("r", [], [], [])
