"""toolproxy.store.queries.runs: which runs a capture holds, and each run's counts, however
its grades were written."""

from __future__ import annotations

import pytest

from tests.store.helpers import (
    EVERY_RUN,
    SUMMED_RUNS,
    every_part,
    graded_rows,
    summaries_of_every_shape,
    summed,
)
from toolproxy import store
from toolproxy.store.queries import runs as graded
from toolproxy.store.rows import RunRow


def test_runs_oldest_first_counted_on_each_case_latest_grade(seeded_capture):
    with store.reading(seeded_capture) as r:
        runs = graded.runs(r)
        names = graded.run_names(r)
    assert names == ["g1", "g2"]
    assert [(x.run, x.cases, x.passed) for x in runs] == [("g1", 2, 2), ("g2", 1, 0)]


def test_grade_count_says_whether_a_run_name_is_free(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert graded.grade_count(r, "g1") == 3  # every row, re-grades included
        assert graded.grade_count(r, "new") == 0


def test_held_runs_names_what_the_view_holds_without_reading_it_all(seeded_capture):
    with store.reading(seeded_capture) as r:  # g1 and g2 share a file: read whole
        assert graded.held_runs(r) == set(graded.run_names(r)) == {"g1", "g2"}


def test_held_runs_finds_runs_in_every_part_of_the_store(tmp_path):
    cap = every_part(tmp_path)
    with store.reading(cap) as r:
        held = graded.held_runs(r)
        assert held == set(graded.run_names(r))
    assert held == EVERY_RUN


@pytest.mark.parametrize("runs", [[run] for run in sorted(EVERY_RUN)] + [["one-a", "pending"]])
def test_a_run_s_grades_are_read_from_its_files_alone_as_the_view_has_them(tmp_path, runs):
    cap = every_part(tmp_path)
    with store.reading(cap) as r:
        source = graded.grades_of(r, runs)
        pruned = r.rows(f"SELECT * FROM {source} WHERE list_contains($runs, run)", {"runs": runs})
        whole = r.rows("SELECT * FROM grades WHERE list_contains($runs, run)", {"runs": runs})
        assert sorted(pruned, key=str) == sorted(whole, key=str) != []
        assert graded.grade_count(r, runs[0]) == len(r.rows(
            "SELECT * FROM grades WHERE run = ?", [runs[0]]))  # fmt: skip
        named, _ = graded.segment_runs(r.root)
    listed = {f for f in named if str(f) in source}
    assert listed == {f for f, run in named.items() if run in runs}  # the others go unread


_LABELS = (  # what label_counts says, read from the grades
    "SELECT CASE WHEN passed THEN 'passed' WHEN label IS NULL THEN 'not_graded' ELSE label "
    "END AS l, count(*) FROM (SELECT * FROM grades WHERE run = $run QUALIFY row_number() "
    "OVER (PARTITION BY case_id ORDER BY graded_at DESC) = 1) GROUP BY l ORDER BY 2 DESC, 1"
)


def test_runs_and_their_names_are_what_the_grades_say_however_they_were_written(tmp_path):
    cap = summaries_of_every_shape(tmp_path)
    store.compact(cap)  # all but one in Parquet: none is summed any more
    summed(cap, "grade-10", graded_rows("after", 3))  # stands for its run
    summaries_of_every_shape(tmp_path / "segments")  # the same again, as segments
    for capture in (cap, tmp_path / "segments" / "cap"):
        with store.reading(capture) as r:
            assert graded.runs(r) == r.typed(
                RunRow,
                "SELECT run, count(*), count(*) FILTER (WHERE passed), min(graded_at), "
                "max(graded_at) FROM (SELECT * FROM grades QUALIFY row_number() OVER "
                "(PARTITION BY run, case_id ORDER BY graded_at DESC) = 1) GROUP BY run "
                "ORDER BY min(graded_at), run",
            )  # what the runs were before summaries: counted on every case's latest grade
            assert graded.run_names(r) == [
                row[0]
                for row in r.rows(
                    "SELECT run FROM grades GROUP BY run ORDER BY min(graded_at), run"
                )
            ]
            assert set(graded.run_names(r)) >= SUMMED_RUNS
            for run in graded.run_names(r):
                assert graded.label_counts(r, run) == r.rows(_LABELS, {"run": run}), run


def test_a_run_written_whole_is_counted_by_its_summary_without_reading_its_grades(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    path = summed(cap, "grade-1", graded_rows("summed", 6))
    summed(cap, "grade-2", graded_rows("other", 2, "2026-11-25T00:00:00+00:00"))
    lines = path.read_bytes().splitlines(keepends=True)
    # the middle lines edited to the same size: nothing but the summary can say 3 passed
    middle = [line.replace(b'"passed":true', b'"passed":null') for line in lines[1:-1]]
    path.write_bytes(b"".join([lines[0], *middle, lines[-1]]))
    with store.reading(cap) as r:
        assert [(x.run, x.cases, x.passed) for x in graded.runs(r)] == [
            ("other", 2, 1),
            ("summed", 6, 3),
        ]
        assert graded.label_counts(r, "summed") == [
            ("passed", 3),
            ("no_call", 1),
            ("not_graded", 1),
            ("wrong_tool", 1),
        ]
        assert r.rows("SELECT count(*) FILTER (WHERE passed) FROM grades WHERE run = 'summed'")[
            0
        ] == (2,)  # what parsing the edited file says
        assert r.rows(_LABELS, {"run": "summed"})[0] == ("not_graded", 2)
