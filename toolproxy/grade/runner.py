"""`toolproxy grade`: grade expectation cases against the capture, stored as a named run.

Cases come from `expectations.load_cases`, what the model did from `observe`, the real
tool schemas from `mcp_tools_latest`, and each case is graded by `checker.make_grader`.
One `GradeRow` per case goes into the `grades` table, all in one segment file, so a run
is in the store whole or not at all. A run name that already has rows is refused.

A case is not graded (`not_graded`, never passed) when there is nothing to grade yet (see
`observe.Ungradable`) or a judge field could not be judged: no judge configured, or the
judge endpoint failed (`reason` says which; the judge is then left out for that case).
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade.checker import make_grader
from toolproxy.grade.expectations import load_cases
from toolproxy.grade.grades import CaseGrade
from toolproxy.grade.judge import Judge, JudgeError, make_judge
from toolproxy.grade.labels import PRECEDENCE
from toolproxy.grade.literalhint import hinted_failures
from toolproxy.grade.model import Case, Observation
from toolproxy.grade.observe import Ungradable, observe_case, read_observations
from toolproxy.grade.rows import GradeRow
from toolproxy.records import SchemaVerdict
from toolproxy.schema.compiling import cache_room, new_verdicts, remember_verdicts
from toolproxy.schema.validator import CHECKER
from toolproxy.store.gradewrites import TABLE as GRADE_WRITES
from toolproxy.store.gradewrites import Written, outcome, summary_row, written_of, written_size
from toolproxy.store.queries import grades as grade_reads
from toolproxy.store.queries import mcp as mcp_reads
from toolproxy.store.queries import runs as held
from toolproxy.store.segments import SegmentWriter, encode_plain_row
from toolproxy.util.words import counted

Grader = Callable[[Case, Observation], CaseGrade]


@dataclass
class Grading:
    """Grades cases into rows of one run; notices when the judge fails on a case."""

    run: str
    graded_at: str
    judge: Judge | None
    server_tools: Sequence[tuple[str, str, Any]] = ()
    failures: list[str] = field(default_factory=list)  # judge errors of the current case

    def __post_init__(self) -> None:
        watched = self._watch(self.judge) if self.judge is not None else None
        self.grader: Grader = make_grader(watched, self.server_tools)
        # grades without a judge, for a case whose judge error escaped the grader
        self.fallback: Grader = make_grader(None, self.server_tools)

    def _watch(self, judge: Judge) -> Judge:
        def watched(criterion: str, value: Any) -> tuple[float, str]:
            try:
                return judge(criterion, value)
            except JudgeError as exc:
                self.failures.append(str(exc))
                raise

        return watched

    def grade(self, case: Case, observed: Observation | Ungradable) -> GradeRow:
        """One case's row (never passed when something could not be graded)."""
        base: dict[str, Any] = {
            "run": self.run,
            "graded_at": self.graded_at,
            "case_id": case.id,
            "tags": list(case.tags) or None,
        }
        expected = [c.tool for c in case.calls]
        if isinstance(observed, Ungradable):
            return GradeRow(
                **base,
                exchange_id=case.exchange_id,
                passed=False,
                not_graded=True,
                reason=f"{observed.kind}: {observed.reason}",
                calls=[],
                expected_tools=expected,
                called_tools=[],
            )
        self.failures.clear()
        try:
            grade = self.grader(case, observed)
        except JudgeError:
            grade = self.fallback(case, observed)
        reason = None
        if self.failures:
            reason = f"judge_failed: {self.failures[0]}"
            for arg in (a for c in grade.calls for a in c.args if a.bucket == "not_graded"):
                arg.judge_reason = arg.judge_reason or self.failures[0]
        elif grade.not_graded:
            reason = "no_judge: a judge field needs --judge-url and --judge-model"
        not_graded = grade.not_graded or bool(self.failures)
        return GradeRow(
            **base,
            exchange_id=grade.exchange_id or observed.exchange_id,
            session_id=grade.session_id or observed.session_id,
            model=grade.model or observed.model,
            passed=grade.passed and not not_graded,
            label=grade.label,
            not_graded=not_graded,
            reason=reason,
            calls=[c.model_dump(mode="json") for c in grade.calls],
            expected_tools=grade.expected_tools or expected,
            called_tools=grade.called_tools,
            leaked_format=grade.leaked_format,
            leaked_label=grade.leaked_label,
        )


def summarize(rows: Sequence[GradeRow]) -> dict[str, Any]:
    """Counts of a run: cases = passed + failed + not graded. Failed: the case has a label
    (by label, in precedence order); not graded: no label, and something could not be graded
    (a case with a label failed, whether or not a judge field was graded)."""
    labels = Counter(r.label for r in rows if r.label is not None)
    return {
        "cases": len(rows),
        "passed": sum(r.passed for r in rows),
        "failed": sum(r.label is not None for r in rows),
        "not_graded": sum(not r.passed and r.label is None for r in rows),
        "by_label": {label: labels[label] for label in PRECEDENCE if labels[label]},
        # failed cases whose expectation holds a mapping that looks like a matcher written
        # wrong (`literalhint`): `grade` warns, as the case may never pass as written
        "matcher_hints": hinted_failures(rows),
    }


def load_server_tools(capture: Path | str) -> list[tuple[str, str, Any]]:
    """(server, tool, input_schema) of each MCP server's latest pull, for resolve_schema."""
    with store.reading(capture) as r:
        return mcp_reads.server_tools(r)


def refuse_taken(r: store.Reader, run: str) -> None:
    """Raise UserError when `run` already has grades in the capture `r` reads (the check
    reads no other run's grades: `held_runs`; only a refusal counts the run's)."""
    if run in held.held_runs(r):
        raise UserError(_run_taken(run, held.grade_count(r, run), r.capture))


def _run_taken(run: str, count: int, capture: Path | str) -> str:
    return (
        f"run {run!r} already has {counted(count, 'grade')} in {capture}; "
        "grade into a new --run name (runs are never overwritten)"
    )


def build_judge(
    url: str | None, model: str | None, key_env: str, capture: Path | str
) -> Judge | None:
    """The judge asked for, or None when none is configured (url and model go together)."""
    if bool(url) != bool(model):
        raise UserError("--judge-url and --judge-model go together (the judge's model is pinned)")
    if not url or not model:
        return None
    return make_judge(url, model, key_env, capture)


def grade_run(
    capture: Path | str, cases: Sequence[Case], run: str, judge: Judge | None
) -> list[GradeRow]:
    """Grade `cases` against `capture` and store them as run `run`; returns the rows."""
    ids = sorted({c.exchange_id for c in cases if c.exchange_id})
    with store.reading(capture) as r:  # one read batch: the run's name, then its inputs
        refuse_taken(r, run)
        inputs = read_inputs(r, ids)
    graded_at = datetime.now(UTC).isoformat()
    rows, lines = grade_cases(Grading(run, graded_at, judge, inputs.server_tools), cases, inputs)
    if rows:
        verdicts = fresh_verdicts(inputs.known, graded_at)
        write_run(capture, [lines], verdicts, written_by(run, rows))
    return rows


@dataclass
class Inputs:
    """What grading reads from the capture: what the model did per exchange, the schema
    verdicts the capture holds, and each MCP server's real tools."""

    observations: dict[str, Observation | Ungradable]
    known: dict[str, str | None]
    server_tools: list[tuple[str, str, Any]]


def read_inputs(r: store.Reader, exchange_ids: list[str]) -> Inputs:
    """The capture's `Inputs` for cases of these exchanges; the verdicts are remembered."""
    known = verdicts_of(grade_reads.schema_verdicts(r, CHECKER))
    remember_verdicts(known)
    return Inputs(read_observations(r, exchange_ids), known, mcp_reads.server_tools(r))


def grade_cases(
    grading: Grading, cases: Sequence[Case], inputs: Inputs
) -> tuple[list[GradeRow], bytes]:
    """Each case's row, and all their `grades` lines, each encoded while its row is in the
    CPU's cache. The lines go into one buffer as they are made: orjson gives every line an
    8 KiB block it never shrinks, so keeping them apart held ~8 KiB per case (700 MB of
    fresh pages for 90,000 cases) where one buffer holds ~0.8 KiB."""
    rows, lines = [], bytearray()
    with cache_room(schema_count(inputs)):
        for case in cases:
            row = grading.grade(case, observe_case(case, inputs.observations))
            rows.append(row)
            lines += encode_plain_row(row.as_row())
    return rows, bytes(lines)


def schema_count(inputs: Inputs) -> int:
    """How many distinct schemas (by object: each is read and decoded once) the inputs
    offer, MCP servers' included."""
    offered = {
        id(t["parameters"])
        for o in inputs.observations.values()
        if isinstance(o, Observation)
        for t in o.offered
    }
    return len(offered) + len(inputs.server_tools)


def fresh_verdicts(known: dict[str, str | None], checked_at: str) -> list[dict[str, Any]]:
    """`schema_checks` rows of the verdicts reached since `known` was read."""
    return [
        SchemaVerdict(
            schema_hash=k, checker=CHECKER, valid=e is None, error=e, checked_at=checked_at
        ).model_dump(mode="json")
        for k, e in new_verdicts().items()
        if k not in known
    ]


def write_run(
    capture: Path | str,
    lines: Sequence[bytes],
    verdicts: Sequence[Any],
    written: Written,
    folder: str | None = None,
    parts: Sequence[Path] = (),
) -> None:
    """A run's encoded grades, their summary (`written`: `store.gradewrites`) and its new
    schema verdicts, in one segment write (the run is in the store whole or not at all), in
    the run's own segment folder (`folder`, a `run_folder` name; a new one when None).
    `parts`: files of grades lines that workers wrote in that folder
    (`segments.part_name`), which come first."""
    writer = SegmentWriter(capture, folder or run_folder())
    encoded = grades_batch(writer, b"".join(lines), written, parts)
    encoded["schema_checks"] = writer.encode("schema_checks", verdicts)
    writer.write_encoded(encoded, {"grades": parts})


def grades_batch(
    writer: SegmentWriter, data: bytes, written: Written, parts: Sequence[Path] = ()
) -> dict[str, bytes]:
    """Encoded grades (`data`, after the files `parts`) with their summary row, as
    `write_encoded` takes them: one write, so the summary sits beside its grades file."""
    summary = summary_row(written, written_size(data, parts))
    return {"grades": data, GRADE_WRITES: writer.encode(GRADE_WRITES, [summary])}


def written_by(run: str, rows: Sequence[GradeRow]) -> Written:
    """The summary of a write of these grade rows of `run`."""
    outcomes = [outcome(r.passed, r.label) for r in rows]
    return written_of(run, [r.case_id for r in rows], outcomes, [r.graded_at for r in rows])


def run_folder() -> str:
    """A new name for one grading run's segment folder (its writer's proxy id)."""
    return f"grade-{_stamp()}-{secrets.token_hex(3)}"


def next_run_name(run: str, taken: Collection[str]) -> str:
    """The name a re-grade of `run` takes: `<run>-2`, then `-3`, … (a trailing `-N` of
    `run` itself counts up), the first one not `taken`."""
    base, _, n = run.rpartition("-")
    if not (base and n.isdigit()):
        base, n = run, "1"
    k = int(n) + 1
    while f"{base}-{k}" in taken:
        k += 1
    return f"{base}-{k}"


def regrade(capture: Path | str, run: str, cases_file: Path) -> tuple[str, list[GradeRow]]:
    """Grade `cases_file` again as a new run named after `run` (`next_run_name`), without a
    judge: (the new run's name, its rows)."""
    cases = load_cases([cases_file])
    with store.reading(capture) as r:
        name = next_run_name(run, held.held_runs(r))
    return name, grade_run(capture, cases, name, None)


def load_verdicts(capture: Path | str) -> dict[str, str | None]:
    """The metaschema verdicts the capture holds for this jsonschema version
    (schema_hash -> None when valid, else why the schema is unusable)."""
    with store.reading(capture) as r:
        return verdicts_of(grade_reads.schema_verdicts(r, CHECKER))


def verdicts_of(rows: Sequence[tuple[str, bool | None, str | None]]) -> dict[str, str | None]:
    """schema_hash -> None when valid, else why the schema is unusable."""
    return {key: None if valid else (error or "invalid schema") for key, valid, error in rows}


def _stamp() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}"
