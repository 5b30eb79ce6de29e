"""`toolproxy grade` of large JSONL case files on every core.

Loading, reading and grading are all Python, so one process uses one core. For JSONL files
of at least `MIN_CHARS` the parent reads each file, cuts its text at line boundaries into
one part per worker, and forks the workers. Each worker checks its part's cases (as
`load_cases` does), reads what the model did for them from the capture, grades them and
encodes their rows. The parent merges the parts: every problem of every file, numbered and
ordered as `load_cases` words them (duplicate ids across parts included), the summary, and
all rows and new schema verdicts written in one segment file, so a run is in the store
whole or not at all, as from one process.

Forking is safe only from a process with one thread: the parent never opens DuckDB (whose
threads a child would inherit locked; it only imports the client, which starts none, and
the first worker checks the run's name, in the read batch it opens anyway), and grades in
one process when it already has a second thread (`single_threaded`), when the platform
cannot fork, with a judge (its cache and endpoint are per process), or for YAML files.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproxy import store
from toolproxy.errors import Failure
from toolproxy.grade.casefile import ExpectationError, Issue, file_format, read_jsonl
from toolproxy.grade.expectations import Checked, FirstSeen, check_located, file_issues
from toolproxy.grade.labels import PRECEDENCE
from toolproxy.grade.rows import GradeRow
from toolproxy.grade.runner import (
    Grading,
    fresh_verdicts,
    grade_cases,
    read_inputs,
    refuse_taken,
    run_folder,
    summarize,
    write_run,
    written_by,
)
from toolproxy.store.gradewrites import Written, joined
from toolproxy.store.segments import SEGMENTS_DIR, part_name

MIN_CHARS = 2_000_000  # about 15,000 cases: below it forking costs more than it saves


@dataclass
class Outcome:
    """What `toolproxy grade` prints of a run: its summary (`runner.summarize`), the cases
    not graded with why, and the rows themselves when asked for."""

    summary: dict[str, Any]
    ungraded: list[tuple[str, str | None]]
    rows: list[GradeRow] | None = None
    processes: int = 1  # that graded it


def outcome_of(rows: Sequence[GradeRow], keep_rows: bool) -> Outcome:
    """The `Outcome` of rows graded in this process."""
    return _merged([_tally(rows)], rows if keep_rows else None)


@dataclass(frozen=True)
class Part:
    """Characters [start, end) of file `file` (a whole number of lines), from line
    `first_line`."""

    file: int
    start: int
    end: int
    first_line: int


@dataclass
class _Job:
    """Everything a worker needs, inherited through fork (nothing of it is pickled)."""

    capture: str
    run: str
    graded_at: str
    paths: list[Path]
    texts: list[str]
    parts: list[Part]
    keep_rows: bool
    staged: list[Path]  # part k's grades lines go to file k (`segments.part_name`)


@dataclass
class _Done:
    """One part, graded: what the parent merges (the cases themselves stay in the worker)."""

    read_issues: list[Issue]
    checked: Checked
    written: int = 0  # bytes of `grades` lines the part wrote to its staged file
    tally: _Tally | None = None
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    rows: list[GradeRow] | None = None
    summary: Written | None = None  # what the part's rows hold (`store.gradewrites`)


@dataclass
class _Tally:
    summary: dict[str, Any]  # runner.summarize's
    ungraded: list[tuple[str, str | None]]


_JOB: _Job | None = None
# A worker's cases, observations and rows, kept from being freed one object at a time (half
# a second per 50,000 cases): the pool ends the worker, and the system takes it all back.
_SPARED: list[Any] = []


def workers(asked: int | None) -> int:
    """How many processes grade: `asked`, or the cores this process may run on."""
    if asked is not None:
        return asked
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def single_threaded() -> bool:
    """Whether this process has exactly one thread (of any kind: DuckDB's are not Python's),
    so a fork copies no lock another thread holds; False where it cannot be told."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def cut(texts: Sequence[str], jobs: int) -> list[Part]:
    """Parts of about equal size, each a whole number of lines, at most `jobs` per file."""
    total = sum(len(t) for t in texts) or 1
    parts: list[Part] = []
    for f, text in enumerate(texts):
        n = max(1, min(jobs, round(jobs * len(text) / total)))
        bounds = [0]
        for k in range(1, n):
            nl = text.find("\n", max(bounds[-1], len(text) * k // n))
            if nl < 0:
                break
            bounds.append(nl + 1)
        bounds.append(len(text))
        line = 1
        for start, end in zip(bounds, bounds[1:], strict=False):
            if start < end or len(bounds) == 2:
                parts.append(Part(f, start, end, line))
            line += text.count("\n", start, end)
    return parts


def grade_in_parts(
    capture: Path | str,
    paths: Sequence[Path],
    run: str,
    jobs: int,
    keep_rows: bool,
    min_chars: int = MIN_CHARS,
) -> Outcome | None:
    """Grade the cases of `paths` as run `run` with `jobs` forked workers, store the run,
    and return its outcome; None when it is not worth it or not safe (the caller grades
    in one process): fewer than two jobs, a YAML or unreadable file (the one-process load
    words its error), less than `min_chars` of cases, or a process that cannot fork."""
    if jobs < 2 or not single_threaded() or "fork" not in multiprocessing.get_all_start_methods():
        return None
    texts = []
    for path in paths:
        try:
            if file_format(Path(path)) != "jsonl":
                return None
            texts.append(Path(path).read_text(encoding="utf-8"))
        except Exception:  # noqa: BLE001 - load_cases reports it, file by file
            return None
    if sum(len(t) for t in texts) < min_chars:
        return None
    global _JOB
    graded_at = datetime.now(UTC).isoformat()
    parts = cut(texts, jobs)
    # The DuckDB client, imported before the fork (an import starts no thread): each worker
    # would import it again, 0.2 s each.
    import toolproxy.store.reader  # noqa: F401

    # where each worker stages its lines: the run's folder, made by a worker only once the
    # capture opened (a folder of segments would make a capture of any path)
    folder = run_folder()
    stage = Path(capture) / SEGMENTS_DIR / folder
    staged = [stage / part_name("grades", k) for k in range(len(parts))]
    _JOB = _Job(
        str(capture), run, graded_at, [Path(p) for p in paths], texts, parts, keep_rows, staged
    )
    try:
        done = _run_workers(min(jobs, len(parts)), len(parts))
        _raise_issues(paths, parts, done)
        if any(d.written for d in done):
            verdicts = {v["schema_hash"]: v for d in done for v in d.verdicts}  # once per schema
            grades = [path for path, d in zip(staged, done, strict=True) if d.written]
            # no case is in two parts: a case id seen twice was refused (`_raise_issues`)
            written = joined(run, [d.summary for d in done if d.summary is not None])
            write_run(capture, [], list(verdicts.values()), written, folder, grades)
    finally:
        _JOB = None
        _clear(stage, staged)
    tallies = [d.tally for d in done if d.tally is not None]
    rows = [r for d in done for r in d.rows or []] if keep_rows else None
    outcome = _merged(tallies, rows)
    outcome.processes = min(jobs, len(parts))
    return outcome


def _run_workers(processes: int, parts: int) -> list[_Done]:
    """Each part graded by one of `processes` forked workers. A worker that dies (the
    system's out-of-memory killer) fails the run with a clear error, as does Ctrl-C, and
    no worker outlives it."""
    pool = ProcessPoolExecutor(
        processes, mp_context=multiprocessing.get_context("fork"), initializer=_worker_signals
    )
    stops = {signal.SIGINT, signal.SIGTERM}
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, stops)  # none lands mid-fork
        try:
            futures = [pool.submit(_grade_part, k) for k in range(parts)]  # forks them all
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a held Ctrl-C lands now
        return [f.result() for f in futures]
    except BrokenProcessPool:
        raise Failure(
            f"a grading worker died (killed by the system? {processes} processes graded "
            "at once: --jobs 1 grades in one); nothing was written"
        ) from None
    except BaseException:
        for proc in list(getattr(pool, "_processes", {}).values()):  # no public way in 3.12
            proc.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _raise_issues(paths: Sequence[Path], parts: Sequence[Part], done: Sequence[_Done]) -> None:
    """Every problem of every file, as `load_cases` would list them; raises if any."""
    issues: list[Issue] = []
    first: FirstSeen = {}
    for f, path in enumerate(paths):
        mine = [d for p, d in zip(parts, done, strict=True) if p.file == f]
        for d in mine:
            issues.extend(d.read_issues)
        merged, offset = Checked(), 0
        for d in mine:
            shifted = d.checked.shifted(offset)
            merged.problems += shifted.problems
            merged.ids += shifted.ids
            offset += d.checked.count
        issues.extend(file_issues(path, merged, first))
    if issues:
        raise ExpectationError(issues)


def _worker_signals() -> None:
    """A worker leaves Ctrl-C to the parent and dies quietly when the pool ends it (not
    through the command's own SIGTERM handler, which would print a traceback). Both came
    blocked from the parent, so neither could land before this."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _grade_part(k: int) -> _Done:
    """In a worker: check part `k`'s cases and, when all are well formed, grade them."""
    job = _JOB
    assert job is not None, "a worker's job is inherited through fork"
    part = job.parts[k]
    path = job.paths[part.file]
    read_issues: list[Issue] = []
    text = job.texts[part.file][part.start : part.end]
    checked = check_located(read_jsonl(path, text, read_issues, part.first_line))
    cases, checked.cases = checked.cases, []  # the cases stay here
    if read_issues or checked.problems:
        return _Done(read_issues, checked)
    ids = sorted({c.exchange_id for c in cases if c.exchange_id})
    with store.reading(job.capture) as r:
        if k == 0:  # the run's name, checked once, here: the parent never opens DuckDB
            refuse_taken(r, job.run)
        inputs = read_inputs(r, ids)
    grading = Grading(job.run, job.graded_at, None, inputs.server_tools)
    rows, lines = grade_cases(grading, cases, inputs)
    if lines:  # to a file, not back through the pool's pipe (36 MB a worker: 0.3 s)
        job.staged[k].parent.mkdir(parents=True, exist_ok=True)  # the capture opened above
        job.staged[k].write_bytes(lines)
    verdicts = fresh_verdicts(inputs.known, job.graded_at)
    kept = rows if job.keep_rows else None
    _SPARED.append((cases, inputs, rows))
    summary = written_by(job.run, rows)
    return _Done(read_issues, checked, len(lines), _tally(rows), verdicts, kept, summary)


def _clear(stage: Path, staged: Sequence[Path]) -> None:
    """The workers' staged files gone, and their folder too when nothing was written."""
    for path in staged:
        path.unlink(missing_ok=True)
    try:
        stage.rmdir()  # only when empty (or absent): a run that wrote nothing leaves none
    except OSError:
        pass


def _tally(rows: Sequence[GradeRow]) -> _Tally:
    return _Tally(summarize(rows), [(r.case_id, r.reason) for r in rows if r.not_graded])


def _merged(tallies: Sequence[_Tally], rows: Sequence[GradeRow] | None) -> Outcome:
    """One outcome of parts graded apart: their summaries added up."""
    labels: Counter[str] = Counter()
    for t in tallies:
        labels.update(t.summary["by_label"])
    summary = {
        key: sum(t.summary[key] for t in tallies)
        for key in ("cases", "passed", "failed", "not_graded")
    }
    summary["by_label"] = {label: labels[label] for label in PRECEDENCE if labels[label]}
    summary["matcher_hints"] = sum(t.summary["matcher_hints"] for t in tallies)
    ungraded = [u for t in tallies for u in t.ungraded]
    return Outcome(summary, ungraded, list(rows) if rows is not None else None)
