"""Which runs a capture holds, and each run's counts: read from the summary written beside
its grades while it stands for them (`store.gradewrites`), else from only the run's own
segment files (`grades_of`), never every held grade."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import orjson

from toolproxy.store import gradewrites
from toolproxy.store.files import segment_folders
from toolproxy.store.filters import in_ids, latest_grades_sql
from toolproxy.store.reader import Reader
from toolproxy.store.rows import RunRow
from toolproxy.store.segments import SUFFIX, edge_lines


def grade_count(r: Reader, run: str) -> int:
    """How many grades run `run` holds (0: the name is free)."""
    source = grades_of(r, [run])
    return int(r.scalar(f"SELECT count(*) FROM {source} WHERE run = ?", [run]) or 0)


def held_runs(r: Reader) -> set[str]:
    """The name of every run the capture holds grades of, without reading every grade: the
    run each grades segment file's first and last lines name (`segment_runs`), and the
    runs in the rest of the `grades` view's rows (its cache, its pending Parquet files and
    the files `segment_runs` says to read whole), by their `run` column. Each name
    `grade_count` finds is here: a re-grade into a capture of many runs checks its name
    without reading them."""
    named, whole = segment_runs(r.root)
    return set(named.values()) | _runs_in(r, r.rows_of("grades", whole))


def segment_runs(root: Path) -> tuple[dict[Path, str], list[Path]]:
    """Each grades segment file with the run its first and last lines name, and the files
    that must be read whole: whose two lines name different runs or do not parse. Every
    writer puts one run in a file (`grade.runner.write_run`, `replay.grading.write_grades`),
    so a file's edge lines name its run. A file compacted meanwhile is left out: its rows
    are in the Parquet files."""
    named: dict[Path, str] = {}
    whole: list[Path] = []
    for folder in segment_folders(root):
        for path in folder.glob(f"grades.*{SUFFIX}"):  # what the view's glob matches
            try:
                runs = {_run_of(line) for line in edge_lines(path)}
            except FileNotFoundError:
                continue
            run = runs.pop() if len(runs) == 1 else None
            if run is not None:
                named[path] = run
            else:
                whole.append(path)
    return named, whole


def grades_of(r: Reader, runs: Collection[str]) -> str:
    """A subquery of the `grades` view's rows that reads, of its segment files, only those
    that may hold `runs` (`segment_runs`): a report of one run in a capture of ten parses
    one run's grades, not ten. Filter it by run as you would the view. The files are named
    in the query, so each must still be there when it runs: `toolproxy compact` deletes
    segment files only once no reader is open, and a background round (`autocompact`)
    leaves the files it compacted until its next round (`defer`)."""
    named, whole = segment_runs(r.root)
    wanted = set(runs)
    return r.rows_of("grades", [*(f for f, run in named.items() if run in wanted), *whole])


def _runs_in(r: Reader, source: str) -> set[str]:
    """The distinct runs a table or table function names."""
    return {row[0] for row in r.rows(f"SELECT DISTINCT run FROM {source}") if row[0] is not None}


def _run_of(line: bytes) -> str | None:
    """The run a grades segment line names (None: not a JSON object holding one)."""
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    run = row.get("run") if isinstance(row, dict) else None
    return run if isinstance(run, str) else None


def runs(r: Reader) -> list[RunRow]:
    """Every grading run, oldest first, with its latest-grade counts: a run whose grades are
    all in one file is counted by the summary written with them (`store.gradewrites`) while
    it stands for them, the others from their grades (reading only their files)."""
    standing, rest = standing_runs(r)
    found = [
        RunRow(run, s["cases"], s["passed"], s["first_graded"], s["last_graded"])
        for run, (_, s) in standing.items()
    ]
    if rest:
        found += r.typed(
            RunRow,
            "SELECT run, count(*), count(*) FILTER (WHERE passed), min(graded_at), "
            f"max(graded_at) FROM (SELECT * FROM {grades_of(r, rest)} "
            f"WHERE {in_ids('run', 'runs')} QUALIFY row_number() OVER "
            "(PARTITION BY run, case_id ORDER BY graded_at DESC) = 1) GROUP BY run",
            {"runs": sorted(rest)},
        )
    return sorted(found, key=lambda row: _oldest_first(row.first_graded, row.run))


def run_names(r: Reader) -> list[str]:
    """Every run's name, oldest first (by the first `graded_at` of any of its grades)."""
    standing, rest = standing_runs(r)
    firsts = [(s["first_graded"], run) for run, (_, s) in standing.items()]
    if rest:
        firsts += r.rows(
            f"SELECT min(graded_at), run FROM {grades_of(r, rest)} "
            f"WHERE {in_ids('run', 'runs')} GROUP BY run",
            {"runs": sorted(rest)},
        )
    return [run for _, run in sorted(firsts, key=lambda f: _oldest_first(*f))]


def _oldest_first(first: str | None, run: str) -> tuple[bool, str, str]:
    """SQL's `ORDER BY min(graded_at), run` (NULLs last) as a sort key."""
    return first is None, first or "", run


def standing_runs(r: Reader) -> tuple[dict[str, tuple[Path, dict[str, Any]]], set[str]]:
    """Each run whose summary stands for it (`gradewrites.stands_for`: the run's grades in
    one segment file and nowhere else) with that file and summary, and the names of the
    other runs the capture holds."""
    named, whole = segment_runs(r.root)
    elsewhere = _runs_in(r, r.rows_of("grades", whole))  # cache, Parquet, files of many runs
    files: dict[str, list[Path]] = {}
    for path, run in named.items():
        files.setdefault(run, []).append(path)
    standing: dict[str, tuple[Path, dict[str, Any]]] = {}
    for run, paths in files.items():
        if run not in elsewhere and len(paths) == 1:
            if (summary := gradewrites.standing(paths[0], run)) is not None:
                standing[run] = (paths[0], summary)
    return standing, (set(files) | elsewhere) - set(standing)


def label_counts(r: Reader, run: str) -> list[tuple[str, int]]:
    """(label, cases) over each case's latest grade in `run`, most frequent first
    (`passed` and `not_graded` count as labels of their own): by the run's summary while it
    stands for the run (`gradewrites`), else from its grades."""
    standing, _ = standing_runs(r)
    if run in standing:
        counted = standing[run][1]["outcomes"].items()
        return sorted(((str(k), int(n)) for k, n in counted), key=lambda kn: (-kn[1], kn[0]))
    return r.rows(
        "SELECT CASE WHEN passed THEN 'passed' WHEN label IS NULL THEN 'not_graded' "
        f"ELSE label END AS l, count(*) FROM ({latest_of(r, run)}) GROUP BY l "
        "ORDER BY 2 DESC, 1",
        {"run": run},
    )


def latest_of(r: Reader, run: str) -> str:
    """The latest grade of each case in `run` (parameter `$run`), reading only its files."""
    return latest_grades_sql("run", grades_of(r, [run]))
