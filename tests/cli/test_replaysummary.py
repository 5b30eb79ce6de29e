"""toolproxy.cli.replaysummary: what `toolproxy replay` prints when it ends."""

from __future__ import annotations

from toolproxy.cli.replaysummary import (
    hint_notes,
    render_summary,
    report_baseline,
    report_command,
)
from toolproxy.grade.rows import GradeRow
from toolproxy.replay.model import Candidate, ReplayConfig


def config(*names: str, baseline: str | None = None) -> ReplayConfig:
    return ReplayConfig(
        candidates=[
            Candidate(name=n, base_url="http://h/v1", model=n, baseline=n == baseline)
            for n in names
        ]
    )


def row(run: str, case: str, label: str | None = None, detail: str = "") -> GradeRow:
    args = [{"name": "city", "bucket": "hallucinated", "detail": detail}] if detail else []
    return GradeRow(
        run=run,
        case_id=case,
        passed=label is None,
        label=label,
        calls=[{"args": args}],
        graded_at="2026-11-30T00:00:00+00:00",
    )


def test_the_baseline_is_the_marked_candidate_else_the_recorded_model_else_the_first():
    graded = {"r:a": [row("r:a", "c")], "r:recorded": [row("r:recorded", "c")]}
    assert report_baseline(config("a", "b", baseline="b"), "r", graded) == "r:b"
    assert report_baseline(config("a", "b"), "r", graded) == "r:recorded"
    assert report_baseline(config("a", "b"), "r", {"r:a": []}) == "r:a"


def test_the_report_line_puts_the_recorded_model_first_and_quotes():
    graded = {"my run:b": [row("my run:b", "c")], "my run:recorded": [row("x", "c")]}
    line = report_command("/tmp/a cap", "my run", config("b"), graded, "my run:recorded")
    assert line == (
        "toolproxy report -c '/tmp/a cap' -r 'my run:recorded' -r 'my run:b' "
        "--baseline 'my run:recorded'"
    )
    assert report_command("cap", "r", config("b"), {"r:b": []}, "r:b") is None


def test_the_summary_table_rounds_and_blanks():
    table = render_summary([{"candidate": "a", "pass_rate": 0.66666, "tps": None}])
    assert "0.667" in table and "None" not in table


def test_the_matcher_hint_counts_every_run_and_names_the_first():
    hinted = "expected {'regex': '^P'}, got 'Paris' (if a matcher was meant: write {match: regex})"
    graded = {
        "r:a": [row("r:a", "c", "hallucinated_param", hinted), row("r:a", "d")],
        "r:b": [row("r:b", "c", "hallucinated_param", hinted)],
    }
    (note,) = hint_notes("cap", graded)
    assert note.startswith("warning: 2 failed cases expect a mapping that looks like a matcher")
    assert note.endswith("toolproxy tui cap --run r:a")
    assert hint_notes("cap", {"r:a": [row("r:a", "d")]}) == []
