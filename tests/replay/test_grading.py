"""toolproxy.replay.grading: cases attached to replayed steps, cells read back, the recorded
model's own calls as cases (the seeded capture)."""

from __future__ import annotations

from tests.store.helpers import summed_runs
from toolproxy import store
from toolproxy.grade.model import Case
from toolproxy.grade.rows import GradeRow
from toolproxy.replay.grading import (
    attach_cases,
    grade_run_name,
    load_cells,
    recorded_cases,
    repeat_id,
    write_grades,
)
from toolproxy.replay.model import ReplayItem, Step
from toolproxy.store.queries import runs as graded


def item(item_id: str, *exchanges: str, case_id: str | None = None) -> ReplayItem:
    return ReplayItem(
        item_id=item_id,
        kind="case" if case_id else "session",
        session_id="s-a",
        wire_format="openai_chat",
        steps=[Step(exchange_id=x, messages=[]) for x in exchanges] or [Step(messages=[])],
        case_id=case_id,
    )


def test_names_of_runs_and_repeats():
    assert grade_run_name("r1", "cand") == "r1:cand"
    assert repeat_id("case-1", 2) == "case-1#2"


def test_cases_attach_by_case_id_else_by_the_steps_exchange():
    cases = [
        Case(id="by-id", expect="no_call"),
        Case(id="by-exchange", exchange_id="a-1", expect="no_call"),
    ]
    found = attach_cases([item("x", case_id="by-id"), item("s-a", "a-0", "a-1")], cases)
    assert [(f.item_id, f.step, f.case.id) for f in found] == [
        ("x", 0, "by-id"),
        ("s-a", 1, "by-exchange"),
    ]


def test_cells_are_read_back_as_results(seeded_capture):
    cells = sorted(load_cells(seeded_capture, "rp"), key=lambda c: c.item_id)
    assert [(c.item_id, c.status, c.exchange_ids) for c in cells] == [
        ("s-a", "completed", ["r-0"]),
        ("s-b", "failed", []),
    ]
    assert load_cells(seeded_capture, "nope") == []


def test_recorded_cases_accept_the_calls_the_replayed_steps_made(seeded_capture):
    cases = recorded_cases(seeded_capture, [item("s-a", "a-0", "a-2")])
    assert [(c.exchange_id, c.expect) for c in cases] == [("a-0", "call"), ("a-2", "no_call")]
    assert recorded_cases(seeded_capture, [item("s-a")]) == []


def test_each_run_s_grades_are_written_with_their_summary(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    at = "2026-11-27T00:00:00+00:00"
    rows = {
        grade_run_name("r1", name): [
            GradeRow(run=grade_run_name("r1", name), graded_at=at, source=f"replay:{name}",
                     case_id=repeat_id("case-1", k), passed=k == 0)
            for k in range(n)
        ]
        for name, n in (("cand", 3), ("recorded", 1))
    }  # fmt: skip
    write_grades(cap, rows)
    assert summed_runs(cap) == {"r1:cand": (3, 1, at, at), "r1:recorded": (1, 1, at, at)}
    with store.reading(cap) as r:
        assert [(x.run, x.cases, x.passed) for x in graded.runs(r)] == [
            ("r1:cand", 3, 1),
            ("r1:recorded", 1, 1),
        ]
