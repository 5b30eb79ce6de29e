"""toolproxy.store.queries.grades: runs, latest grades, verdicts, the judge's cache and what
the grader and the report read."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import orjson

from tests.store.helpers import graded_rows, summaries_of_every_shape, summed
from toolproxy import store
from toolproxy.grade.rows import GradeRow
from toolproxy.store.queries import grades
from toolproxy.store.queries import runs as graded
from toolproxy.store.segments import SegmentWriter
from toolproxy.store.tables import TABLES


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
        assert graded.label_counts(r, "g1") == [("passed", 2)]  # b-0's re-grade wins
        assert graded.label_counts(r, "g2") == [("no_call", 1)]
        (case,) = grades.cases_with_label(r, "g2", "no_call")
        assert grades.cases_with_label(r, "g1", "wrong_tool") == []
    assert (case.case_id, case.exchange_id, case.label) == ("case-a1", "a-1", "no_call")


_LATEST = (  # latest_grades as one query over the whole view
    "SELECT g.*, e.exchange_id IS NOT NULL, e.input_tokens, e.output_tokens, e.ttfb_ms, "
    "e.decode_tps, e.finish_reason, coalesce(g.session_id, e.session_id), o.names, "
    "e.cached_input_tokens, e.scheme, e.host, e.port, e.path, e.latency_ms, e.started_at, "
    "coalesce(e.model_returned, e.model_requested) FROM (SELECT * FROM grades WHERE "
    "list_contains($runs, run) QUALIFY row_number() OVER (PARTITION BY run, case_id ORDER BY "
    "graded_at DESC) = 1) g LEFT JOIN exchanges e USING (exchange_id) LEFT JOIN (SELECT "
    "exchange_id, list(name ORDER BY position) AS names FROM tools_offered GROUP BY "
    "exchange_id) o USING (exchange_id) ORDER BY g.case_id NULLS LAST, g.run"
)
_JSON = [i for i, c in enumerate(grades.GRADE_COLUMNS) if TABLES["grades"][c] == "JSON"]


def _decoded(row: Sequence[object]) -> tuple[object, ...]:
    """A row with its JSON columns as values (DuckDB hands them over as text)."""
    return tuple(orjson.loads(v) if i in _JSON and isinstance(v, str) else v
                 for i, v in enumerate(row))  # fmt: skip


def _flat(row: grades.CaseRow) -> tuple[object, ...]:
    return _decoded(row.grade) + tuple(row[1:])


def _exchanged(cap: Path) -> None:
    """A run that stands for its grades, of the seeded capture's exchanges: known ones (one
    with its session from the exchange), one the capture lacks, none, a case id twice."""
    at = "2026-11-26T00:00:00+00:00"
    summed(cap, "grade-x", [
        GradeRow(run="filed", graded_at=at, case_id="k-2", exchange_id="a-0", session_id=None,
                 passed=False, label="no_call", calls=[{"label": "no_call", "args": []}],
                 expected_tools=["get_weather"], called_tools=[], tags=["t"]).as_row(),
        GradeRow(run="filed", graded_at=at, case_id="k-1", exchange_id="b-0",
                 session_id="own", passed=True).as_row(),
        GradeRow(run="filed", graded_at=at, case_id="k-3", exchange_id="x-9",
                 passed=False, label="wrong_tool").as_row(),
        GradeRow(run="filed", graded_at=at, case_id="k-0", passed=False,
                 label="no_call").as_row(),
    ])  # fmt: skip
    summed(cap, "grade-y", graded_rows("other", 2) + [
        GradeRow(run="other", graded_at=at, case_id="k-1", exchange_id="a-1",
                 passed=True).as_row()])  # fmt: skip


def test_a_standing_run_s_latest_grades_come_from_its_file_with_their_json_decoded(
    tmp_path, seeded_capture
):
    cap = tmp_path / "cap"
    shutil.copytree(seeded_capture, cap)
    _exchanged(cap)
    with store.reading(cap) as r:
        got = grades.latest_grades(r, ["filed", "g1", "other"])
        want = r.rows(_LATEST, {"runs": ["filed", "g1", "other"]})
        labelled = grades.cases_with_label(r, "filed", "no_call")
    # report and the TUI take the calls as values: no second parse of 272,454 JSON texts
    by_case = {(row.grade[0], row.grade[3]): row for row in got}
    assert by_case["filed", "k-2"].grade[_JSON[0]] == [{"label": "no_call", "args": []}]
    assert [case.calls for case in labelled] == [None, [{"label": "no_call", "args": []}]]
    assert [_flat(row) for row in got] == [_decoded(row) for row in want]
    a0 = by_case["filed", "k-2"]  # the exchange's session, usage and offered tools
    assert (a0.recorded, a0.session_id, a0.input_tokens, a0.offered) == (
        True, "s-a", 10, ["get_weather", "search"])  # fmt: skip
    assert by_case["filed", "k-1"].session_id == "own"
    assert not by_case["filed", "k-3"].recorded and not by_case["filed", "k-0"].recorded


def test_latest_grades_and_the_cases_of_a_label_are_what_the_view_says_in_every_shape(tmp_path):
    cap = summaries_of_every_shape(tmp_path)
    with store.reading(cap) as r:
        for run in graded.run_names(r):
            got = grades.latest_grades(r, [run])
            assert grades.latest_grades(r, [run, run]) == got  # a run named twice: once
            assert [_flat(row) for row in got] == [
                _decoded(row) for row in r.rows(_LATEST, {"runs": [run]})
            ], run
            for label in ("no_call", "wrong_tool", "passed", "not_graded", "truncation"):
                want = r.rows(
                    "SELECT case_id, exchange_id, session_id, model, label, reason, calls, "
                    "expected_tools, called_tools FROM (SELECT * FROM grades WHERE run = $run "
                    "QUALIFY row_number() OVER (PARTITION BY case_id ORDER BY graded_at DESC) "
                    "= 1) WHERE label = $label ORDER BY case_id",
                    {"run": run, "label": label},
                )
                found = grades.cases_with_label(r, run, label)
                assert [_decoded(row) for row in found] == [_decoded(row) for row in want]
        assert len(grades.cases_with_label(r, "summed", "no_call", limit=0)) == 0


def test_the_lines_of_a_label_are_trusted_only_while_the_summary_counts_them(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    path = summed(cap, "grade-1", graded_rows("summed", 6))
    lines = path.read_bytes().splitlines(keepends=True)
    # the same size, the same label, but not as orjson writes it: the needle misses it
    edited = lines[1].replace(b'"label":"no_call"', b'"label":"no\\u005fcall"')
    edited = edited.replace(b'"source":"capture"', b'"source":"ca"')
    assert len(edited) == len(lines[1]) and edited != lines[1]
    path.write_bytes(b"".join([lines[0], edited, *lines[2:]]))
    with store.reading(cap) as r:
        found = grades.cases_with_label(r, "summed", "no_call")
    assert [(case.case_id, case.label) for case in found] == [("summed-1", "no_call")]
