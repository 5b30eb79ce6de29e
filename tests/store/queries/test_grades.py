"""toolproxy.store.queries.grades: runs, latest grades, verdicts, the judge's cache and what
the grader and the report read."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from toolproxy import store
from toolproxy.grade.rows import GradeRow
from toolproxy.grade.runner import grades_batch, written_by
from toolproxy.store import compaction
from toolproxy.store.queries import grades
from toolproxy.store.rows import RunRow
from toolproxy.store.segments import SegmentWriter, encode_plain_row


def test_runs_oldest_first_counted_on_each_case_latest_grade(seeded_capture):
    with store.reading(seeded_capture) as r:
        runs = grades.runs(r)
        names = grades.run_names(r)
    assert names == ["g1", "g2"]
    assert [(x.run, x.cases, x.passed) for x in runs] == [("g1", 2, 2), ("g2", 1, 0)]


def test_grade_count_says_whether_a_run_name_is_free(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert grades.grade_count(r, "g1") == 3  # every row, re-grades included
        assert grades.grade_count(r, "new") == 0


def test_latest_grades_join_the_exchange_numbers(seeded_capture):
    with store.reading(seeded_capture) as r:
        rows = grades.latest_grades(r, ["g1"])
        started = r.rows("SELECT exchange_id, started_at FROM exchanges")
    # the start time, as DuckDB gives it, to the microsecond, in UTC
    assert {row.grade[4]: row.started_at for row in rows} == {
        x: at for x, at in started if x in ("a-0", "b-0")
    }
    assert {row.started_at.utcoffset() for row in rows} == {timedelta(0)}
    by_case = {
        dict(zip(grades.GRADE_COLUMNS, row.grade, strict=True))["case_id"]: row for row in rows
    }
    assert sorted(by_case) == ["case-a0", "case-b0"]
    b0 = dict(zip(grades.GRADE_COLUMNS, by_case["case-b0"].grade, strict=True))
    assert (b0["passed"], b0["label"]) == (True, None)  # the re-grade wins
    a0 = by_case["case-a0"]
    assert (a0.recorded, a0.input_tokens, a0.ttfb_ms, a0.offered) == (
        True,
        10,
        100.0,
        ["get_weather", "search"],
    )


def test_latest_grades_keep_each_case_s_latest_grade_in_case_order(tmp_path):
    # as a capture holds them: runs in any order, a re-grade written before an older
    # grade of the same case (another grader's file), the same case id in two runs
    def row(run: str, case: str, at: str, label: str | None) -> dict[str, object]:
        return GradeRow(run=run, graded_at=f"2026-11-26T00:00:0{at}+00:00", case_id=case,
                        passed=label is None, label=label).as_row()  # fmt: skip

    cap = store.init_capture(tmp_path / "cap")
    SegmentWriter(cap, "w1").write({"grades": [
        row("r2", "c-3", "1", "no_call"), row("r1", "c-2", "5", None),
        row("r1", "c-10", "1", None), row("r2", "c-1", "2", "wrong_tool"),
    ]})  # fmt: skip
    SegmentWriter(cap, "w2").write({"grades": [
        row("r1", "c-2", "3", "no_call"), row("r1", "c-1", "1", "no_call"),
        row("r1", "c-1", "4", None), row("r2", "c-3", "2", None),
    ]})  # fmt: skip
    with store.reading(cap) as r:
        rows = grades.latest_grades(r, ["r1", "r2"])
    got = [(g[0], g[3], g[1][-7], g[8]) for g in (row.grade for row in rows)]
    assert [(case, run) for run, case, _, _ in got] == [
        ("c-1", "r1"),
        ("c-1", "r2"),
        ("c-10", "r1"),
        ("c-2", "r1"),
        ("c-3", "r2"),
    ]  # by case id (as text), each (run, case) once
    assert {(run, case): (at, label) for run, case, at, label in got} == {
        ("r1", "c-1"): ("4", None),
        ("r2", "c-1"): ("2", "wrong_tool"),
        ("r1", "c-10"): ("1", None),
        ("r1", "c-2"): ("5", None),
        ("r2", "c-3"): ("2", None),
    }  # the latest grade of each, wherever it was written


def test_observation_rows_read_each_schema_once(seeded_capture):
    with store.reading(seeded_capture) as r:
        found = grades.observation_rows(r, ["a-0", "a-1", "nope"])
    assert sorted(x.exchange_id for x in found.exchanges) == ["a-0", "a-1"]
    assert [(c[0], c[5]) for c in found.calls] == [  # exchange_id, arguments
        ("a-0", '{"city":"Paris"}'),
        ("a-1", '{"city":"Rome"}'),
    ]  # as stored: the grader decodes
    assert [(x, p, n) for x, p, n, _ in found.offered] == [
        ("a-0", 0, "get_weather"),
        ("a-0", 1, "search"),
        ("a-1", 0, "get_weather"),
    ]
    assert len(found.schemas) == 2


def test_session_calls_and_transcripts(seeded_capture):
    with store.reading(seeded_capture) as r:
        calls = grades.session_calls(r, ["s-a"])
        messages, transcript_calls = grades.transcripts(r, ["a-1"])
    assert [(c.exchange_id, c.result) for c in calls] == [("a-0", "18C"), ("a-1", "sunny")]
    ((xid, text, reply),) = messages
    assert xid == "a-1" and "18C" in text and reply is None
    assert transcript_calls == [("a-1", "c1", "get_weather", '{"city":"Rome"}', "sunny")]


def test_verdicts_and_judge_cache_are_read_by_key(tmp_path):
    from toolproxy.store.segments import SegmentWriter

    capture = store.init_capture(tmp_path / "cap")
    SegmentWriter(capture, "w").write(
        {
            "schema_checks": [
                {"schema_hash": "h1", "checker": "js-1", "valid": False, "error": "bad"},
                {"schema_hash": "h2", "checker": "js-2", "valid": True},
            ],
            "judge_cache": [
                {"key": "k", "model": "m", "verdict": True, "reason": "ok", "judged_at": "1"},
                {"key": "k2", "model": "other", "verdict": False, "judged_at": "2"},
                {"key": "k3", "model": "m", "verdict": False, "score": 0.5, "judged_at": "3"},
            ],
        }
    )
    with store.reading(capture) as r:
        assert grades.schema_verdicts(r, "js-1") == [("h1", False, "bad")]
        # a row from before graded scores has none
        assert grades.judge_cache(r, "m") == [("k", True, None, "ok"), ("k3", False, 0.5, None)]


def test_label_counts_and_the_cases_of_a_label(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert grades.label_counts(r, "g1") == [("passed", 2)]  # b-0's re-grade wins
        assert grades.label_counts(r, "g2") == [("no_call", 1)]
        (case,) = grades.cases_with_label(r, "g2", "no_call")
        assert grades.cases_with_label(r, "g1", "wrong_tool") == []
    assert (case.case_id, case.exchange_id, case.label) == ("case-a1", "a-1", "no_call")


def _run_rows(run: str, n: int = 3) -> list[dict[str, object]]:
    return [
        GradeRow(run=run, graded_at="2026-11-26T00:00:00+00:00", source="capture",
                 case_id=f"{run}-{i}", passed=True).as_row()
        for i in range(n)
    ]  # fmt: skip


def test_held_runs_names_what_the_view_holds_without_reading_it_all(seeded_capture):
    with store.reading(seeded_capture) as r:  # g1 and g2 share a file: read whole
        assert grades.held_runs(r) == set(grades.run_names(r)) == {"g1", "g2"}


def _every_part(tmp_path: Path) -> Path:
    """A capture holding runs in every part of the store, and files of each shape."""
    cap = store.init_capture(tmp_path / "cap")
    SegmentWriter(cap, "old").write({"grades": _run_rows("compacted")})
    store.compact(cap)  # in the catalog's cache now
    SegmentWriter(cap, "pend").write({"grades": _run_rows("pending")})
    with duckdb.connect() as con:  # a pending Parquet file, as a background round leaves
        compaction.compact_folder(con, cap, cap / "segments" / "pend", set())
    w = SegmentWriter(cap, "grade-1")
    w.write({"grades": _run_rows("one-a")})
    w.write({"grades": _run_rows("one-b", 1)})  # a one-line file
    w.write({"grades": _run_rows("mixed-a", 2) + _run_rows("mixed-b", 2)})  # read whole
    damaged = SegmentWriter(cap, "grade-2").write({"grades": _run_rows("damaged")})[0]
    damaged.write_bytes(b"{not json\n" + damaged.read_bytes())  # the first line: read whole
    w.write({"grades": _run_rows("one-a", 2)})  # a run graded again under its name
    return cap


EVERY_RUN = {"compacted", "pending", "one-a", "one-b", "mixed-a", "mixed-b", "damaged"}


def test_held_runs_finds_runs_in_every_part_of_the_store(tmp_path):
    cap = _every_part(tmp_path)
    with store.reading(cap) as r:
        held = grades.held_runs(r)
        assert held == set(grades.run_names(r))
    assert held == EVERY_RUN


@pytest.mark.parametrize("runs", [[run] for run in sorted(EVERY_RUN)] + [["one-a", "pending"]])
def test_a_run_s_grades_are_read_from_its_files_alone_as_the_view_has_them(tmp_path, runs):
    cap = _every_part(tmp_path)
    with store.reading(cap) as r:
        source = grades.grades_of(r, runs)
        pruned = r.rows(f"SELECT * FROM {source} WHERE list_contains($runs, run)", {"runs": runs})
        whole = r.rows("SELECT * FROM grades WHERE list_contains($runs, run)", {"runs": runs})
        assert sorted(pruned, key=str) == sorted(whole, key=str) != []
        assert grades.grade_count(r, runs[0]) == len(r.rows(
            "SELECT * FROM grades WHERE run = ?", [runs[0]]))  # fmt: skip
        named, _ = grades.segment_runs(r.root)
    listed = {f for f in named if str(f) in source}
    assert listed == {f for f, run in named.items() if run in runs}  # the others go unread


def _summed(cap: Path, folder: str, rows: list[dict[str, object]]) -> Path:
    """A write of `rows` (one run's) with its summary, as `grade` and replays write them."""
    writer = SegmentWriter(cap, folder)
    graded = [GradeRow.model_validate(row) for row in rows]
    data = writer.encode("grades", rows)
    return writer.write_encoded(grades_batch(writer, data, written_by(graded[0].run, graded)))[0]


def _graded(run: str, n: int, at: str = "2026-11-26T00:00:00+00:00") -> list[dict[str, object]]:
    """`n` grades of `run`: passed, then failed (no_call, wrong_tool) and not graded."""
    labels = [None, "no_call", None, "wrong_tool", None]
    return [
        GradeRow(run=run, graded_at=at, case_id=f"{run}-{i}", passed=i % 5 in (0, 2),
                 label=labels[i % 5], not_graded=i % 5 == 4).as_row()
        for i in range(n)
    ]  # fmt: skip


def _summaries_of_every_shape(tmp_path: Path) -> Path:
    """`_every_part` and runs written with summaries: one that stands for its run, and each
    way one can stop standing for it."""
    cap = _every_part(tmp_path)
    _summed(cap, "grade-3", _graded("summed", 5, "2026-11-25T00:00:00+00:00"))
    _summed(cap, "grade-4", _graded("twice", 4))
    _summed(cap, "grade-5", _graded("twice", 2, "2026-11-27T00:00:00+00:00"))  # graded again
    grown = _summed(cap, "grade-6", _graded("grown", 3))
    with grown.open("ab") as f:  # a line added since: not the file the summary counted
        f.write(encode_plain_row(_graded("grown", 1, "2026-11-28T00:00:00+00:00")[0]))
    _summed(cap, "grade-7", _graded("dup", 2) + _graded("dup", 1, "2026-11-27T00:00:00+00:00"))
    lost = _summed(cap, "grade-8", _graded("lost", 2))
    lost.with_name(lost.name.replace("grades.", "grade_writes.")).unlink()
    _summed(cap, "grade-9", _graded("compacted-summed", 2))
    return cap


SUMMED_RUNS = EVERY_RUN | {"summed", "twice", "grown", "dup", "lost"}


_LABELS = (  # what label_counts says, read from the grades
    "SELECT CASE WHEN passed THEN 'passed' WHEN label IS NULL THEN 'not_graded' ELSE label "
    "END AS l, count(*) FROM (SELECT * FROM grades WHERE run = $run QUALIFY row_number() "
    "OVER (PARTITION BY case_id ORDER BY graded_at DESC) = 1) GROUP BY l ORDER BY 2 DESC, 1"
)


def test_runs_and_their_names_are_what_the_grades_say_however_they_were_written(tmp_path):
    cap = _summaries_of_every_shape(tmp_path)
    store.compact(cap)  # all but one in Parquet: none is summed any more
    _summed(cap, "grade-10", _graded("after", 3))  # stands for its run
    _summaries_of_every_shape(tmp_path / "segments")  # the same again, as segments
    for capture in (cap, tmp_path / "segments" / "cap"):
        with store.reading(capture) as r:
            assert grades.runs(r) == r.typed(
                RunRow,
                "SELECT run, count(*), count(*) FILTER (WHERE passed), min(graded_at), "
                "max(graded_at) FROM (SELECT * FROM grades QUALIFY row_number() OVER "
                "(PARTITION BY run, case_id ORDER BY graded_at DESC) = 1) GROUP BY run "
                "ORDER BY min(graded_at), run",
            )  # what the runs were before summaries: counted on every case's latest grade
            assert grades.run_names(r) == [
                row[0]
                for row in r.rows(
                    "SELECT run FROM grades GROUP BY run ORDER BY min(graded_at), run"
                )
            ]
            assert set(grades.run_names(r)) >= SUMMED_RUNS
            for run in grades.run_names(r):
                assert grades.label_counts(r, run) == r.rows(_LABELS, {"run": run}), run


def test_a_run_written_whole_is_counted_by_its_summary_without_reading_its_grades(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    path = _summed(cap, "grade-1", _graded("summed", 6))
    _summed(cap, "grade-2", _graded("other", 2, "2026-11-25T00:00:00+00:00"))
    lines = path.read_bytes().splitlines(keepends=True)
    # the middle lines edited to the same size: nothing but the summary can say 3 passed
    middle = [line.replace(b'"passed":true', b'"passed":null') for line in lines[1:-1]]
    path.write_bytes(b"".join([lines[0], *middle, lines[-1]]))
    with store.reading(cap) as r:
        assert [(x.run, x.cases, x.passed) for x in grades.runs(r)] == [
            ("other", 2, 1),
            ("summed", 6, 3),
        ]
        assert grades.label_counts(r, "summed") == [
            ("passed", 3),
            ("no_call", 1),
            ("not_graded", 1),
            ("wrong_tool", 1),
        ]
        assert r.rows("SELECT count(*) FILTER (WHERE passed) FROM grades WHERE run = 'summed'")[
            0
        ] == (2,)  # what parsing the edited file says
        assert r.rows(_LABELS, {"run": "summed"})[0] == ("not_graded", 2)
