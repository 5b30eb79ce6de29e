"""What `toolproxy replay` prints when it ends: a summary row per candidate and one for
the recorded production model, the `toolproxy report` line to run next, and the warning
about cases that expect a matcher written wrong."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolproxy import store
from toolproxy.cli.output import tui_command
from toolproxy.grade.rows import GradeRow
from toolproxy.replay.config import baseline_of
from toolproxy.replay.grading import grade_run_name
from toolproxy.replay.model import RECORDED, ReplayConfig, ReplayItem
from toolproxy.replay.summary import CellBrief, candidate_rows, mean, pass_rate
from toolproxy.store.queries import replays as replay_reads
from toolproxy.util.table import format_table


def summarize(
    capture: Path,
    run: str,
    config: ReplayConfig,
    items: Sequence[ReplayItem],
    grades: dict[str, list[GradeRow]],
    briefs: Sequence[CellBrief],
) -> list[dict[str, Any]]:
    """One row per candidate (from the `briefs` of every finished cell), then the recorded
    model's row when it was graded."""
    rates = {c.name: pass_rate(grades.get(grade_run_name(run, c.name))) for c in config.candidates}
    rows = candidate_rows(config, len(items), briefs, rates)
    recorded = grades.get(grade_run_name(run, RECORDED))
    if recorded:
        ids = sorted({s.exchange_id for i in items for s in i.steps if s.exchange_id})
        with store.reading(capture) as r:
            found = replay_reads.recorded_speed(r, ids)
        rows.append(
            {
                "candidate": RECORDED,
                "model": ", ".join(sorted({m for m, _, _ in found if m})),
                "cells": "",
                "completed": "",
                "diverged": "",
                "failed": "",
                "retries": "",
                "recovered": "",
                "pass_rate": pass_rate(recorded),
                "ttft_ms": mean([t for _, t, _ in found]),
                "tps": mean([t for _, _, t in found]),
            }
        )
    return rows


def render_summary(rows: Sequence[dict[str, Any]]) -> str:
    """The summary as a plain table."""
    columns = list(rows[0]) if rows else []
    return format_table(columns, [[_show(r[c]) for c in columns] for r in rows])


def report_baseline(config: ReplayConfig, run: str, grades: dict[str, list[GradeRow]]) -> str:
    """The report's baseline: a candidate marked `baseline: true`, else the recorded
    production model when graded, else the first candidate."""
    marked = [c for c in config.candidates if c.baseline]
    if marked:
        return grade_run_name(run, marked[0].name)
    if grade_run_name(run, RECORDED) in grades:
        return grade_run_name(run, RECORDED)
    return grade_run_name(run, baseline_of(config).name)


def report_command(
    capture: Path, run: str, config: ReplayConfig, grades: dict[str, list[GradeRow]], baseline: str
) -> str | None:
    """The `toolproxy report` line comparing every graded run of this replay."""
    names = [n for n in grades if grades[n]]
    if not names:
        return None
    ordered = sorted(names, key=lambda n: (not n.endswith(f":{RECORDED}"), n))
    runs = " ".join(f"-r {_quote(n)}" for n in ordered)
    return f"toolproxy report -c {_quote(str(capture))} {runs} --baseline {_quote(baseline)}"


def _show(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    return "" if value is None else value


def _quote(text: str) -> str:
    return shlex.quote(text)


def hint_notes(capture: Path, grades: dict[str, list[GradeRow]]) -> list[str]:
    """The warning `grade` gives for failed cases that expect a matcher written wrong
    (`grade.literalhint`), over every graded run, naming the first such run to browse."""
    from toolproxy.grade.literalhint import hint_warning, hinted_failures

    counts = {run: n for run, rows in grades.items() if (n := hinted_failures(rows))}
    if not counts:
        return []
    return [hint_warning(sum(counts.values()), tui_command(capture, next(iter(counts))))]
