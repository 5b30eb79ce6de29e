"""A grading run's summary, written beside its grades, so runs are listed without parsing
them (pure: files and JSON, no DuckDB).

Every write of a run's grades (`toolproxy grade`, a replay's grading) adds one row to table
`grade_writes` in the same segment write as its `grades` file (same folder, same seq): the
run, how many rows the file holds and how many distinct cases, how many of them passed, the
first and last `graded_at`, the rows per outcome (passed, a label, not graded), and the
file's size in bytes. Listing runs otherwise parses every grades file: the TUI's runs screen
and `report` without `--run` took 4.8 s and 3.4 s over ten runs of 90,818 cases, and a run's
label counts (the TUI's labels of a run) 1.30-1.35 s.

A summary stands in for a run's grades only while it is exact (`stands_for`): the run's
grades are all in that one file (not compacted, not in a file of several runs, not graded
again under its name), the file is the size it was written at, and no case appears twice in
it (then every row is its case's latest grade). Anything else is read from the grades.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from toolproxy.store.segments import SUFFIX, parse_segment_name

TABLE = "grade_writes"


class Written(NamedTuple):
    """What a write of a run's grades holds: rows, distinct cases, how many passed, the
    first and last `graded_at`, and the rows per outcome (`outcome`)."""

    run: str
    rows: int
    cases: int
    passed: int
    first_graded: str | None
    last_graded: str | None
    outcomes: dict[str, int]


def outcome(passed: bool | None, label: str | None) -> str:
    """A grade's outcome as `label_counts` counts it: `passed`, its label, or `not_graded`."""
    return "passed" if passed else "not_graded" if label is None else label


def written_of(
    run: str,
    case_ids: Sequence[str | None],
    outcomes: Sequence[str],
    graded_at: Sequence[str | None],
) -> Written:
    """`Written` of grades with these case ids, `outcome`s and `graded_at`s (one each per
    row)."""
    times = [t for t in graded_at if t is not None]
    first, last = min(times, default=None), max(times, default=None)
    counts = Counter(outcomes)
    passed = counts["passed"]
    by = dict(sorted(counts.items()))
    return Written(run, len(case_ids), len(set(case_ids)), passed, first, last, by)


def joined(run: str, parts: Sequence[Written]) -> Written:
    """The `Written` of parts of one write together (no case in two parts)."""
    firsts = [p.first_graded for p in parts if p.first_graded is not None]
    lasts = [p.last_graded for p in parts if p.last_graded is not None]
    outcomes: Counter[str] = Counter()
    for p in parts:
        outcomes.update(p.outcomes)
    return Written(
        run,
        sum(p.rows for p in parts),
        sum(p.cases for p in parts),
        sum(p.passed for p in parts),
        min(firsts, default=None),
        max(lasts, default=None),
        dict(sorted(outcomes.items())),
    )


def summary_row(written: Written, size: int) -> dict[str, Any]:
    """The `grade_writes` row of a write whose grades file holds `size` bytes."""
    return written._asdict() | {"bytes": size}


def written_size(data: bytes, parts: Sequence[Path] = ()) -> int:
    """The size of the grades file a write of `data` after the files `parts` makes."""
    return sum(p.stat().st_size for p in parts) + len(data)


def summary_of(grades_file: Path) -> dict[str, Any] | None:
    """The summary written with a grades segment file (None: none, or not one readable row:
    compacted meanwhile, written before summaries, damaged)."""
    parsed = parse_segment_name(grades_file.name)
    if parsed is None:
        return None
    sibling = grades_file.with_name(f"{TABLE}.{parsed[1]:010d}{SUFFIX}")
    try:
        lines = sibling.read_bytes().splitlines()
        row = orjson.loads(lines[0]) if len(lines) == 1 else None
    except (OSError, orjson.JSONDecodeError):
        return None
    return row if isinstance(row, dict) else None


def stands_for(summary: dict[str, Any] | None, run: str, size: int) -> bool:
    """Whether `summary` is exact for `run`, whose grades are all in one file of `size`
    bytes: it names the run, was written with a file of this size, counts no case twice,
    and its outcomes add up to its cases and its passed."""
    if summary is None or summary.get("run") != run:
        return False
    rows, cases, passed, written = (_count(summary.get(k)) for k in _COUNTS)
    times = (summary.get("first_graded"), summary.get("last_graded"))
    outcomes = summary.get("outcomes")
    return (
        written == size
        and rows == cases
        and cases is not None
        and isinstance(outcomes, dict)
        and all(_count(n) is not None and n > 0 for n in outcomes.values())
        and sum(outcomes.values()) == cases
        and outcomes.get("passed", 0) == passed
        and all(t is None or isinstance(t, str) for t in times)
    )


_COUNTS = ("rows", "cases", "passed", "bytes")


def _count(value: Any) -> int | None:
    """`value` when it is a count (an int, not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def standing(grades_file: Path, run: str) -> dict[str, Any] | None:
    """The summary written with `grades_file` when it stands for `run`, whose grades are
    all in that file (`stands_for`), else None."""
    summary = summary_of(grades_file)
    if summary is None or not stands_for(summary, run, _size(grades_file)):
        return None
    return summary


def rows_written(grades_file: Path) -> int | None:
    """How many rows a grades segment file holds, by the summary written with it, while
    the file is the size it was written at (None: count them)."""
    summary = summary_of(grades_file)
    if summary is None:
        return None
    rows, written = _count(summary.get("rows")), _count(summary.get("bytes"))
    return rows if written == _size(grades_file) else None


def _size(path: Path) -> int:
    """The file's size in bytes (-1: gone, compacted meanwhile)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return -1
