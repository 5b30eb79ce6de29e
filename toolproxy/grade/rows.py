"""Rows of the grading tables: a case's grade in a named run (`grades`) and a cached judge
verdict (`judge_cache`). Pure, no I/O.

Kept apart from `grade.model` (the records the grader builds, compiled by mypyc) because
`store.tables` reads these classes' field types to hold the tables to them, and a compiled
class keeps no `X | None` annotations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from toolproxy.grade.model import record_copy, record_from


class Row:
    """pydantic's verbs on a row of plain JSON values (`model_dump`, `model_copy`,
    `model_validate`): `grade.model.Record`'s, without its walk of nested records. Not that
    class itself: compiled by mypyc, it cannot be subclassed by a pure class."""

    __slots__ = ()

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The row's fields as a dict (its values are already JSON in any mode)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}  # type: ignore[attr-defined]

    def model_copy(self, update: dict[str, Any] | None = None) -> Self:
        """A shallow copy with `update` applied, as pydantic's."""
        return record_copy(self, update)

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """A row from a dict as `model_dump` wrote it (unknown keys ignored)."""
        return record_from(cls, data)


@dataclass(slots=True, kw_only=True)
class GradeRow(Row):
    """One case's grade in one named run: a row of the `grades` table."""

    run: str  # the run's name (toolproxy grade --run NAME)
    graded_at: str  # ISO-8601 UTC time the run was graded
    source: str = "capture"  # capture | replay:<candidate>
    case_id: str
    exchange_id: str | None = None
    session_id: str | None = None
    model: str | None = None
    passed: bool
    label: str | None = None
    not_graded: bool = False
    # why the case is not graded: needs replay, exchange missing or failed, judge unavailable
    # (see toolproxy.grade.observe and toolproxy.grade.runner)
    reason: str | None = None
    calls: Any = None  # the CallGrade list as JSON
    expected_tools: Any = None
    called_tools: Any = None
    leaked_format: str | None = None  # no_call, but the text held calls in this format
    leaked_label: str | None = None  # what those calls would have earned: passed or a label
    tags: Any = None  # the case's tags (a suite's task family)

    def as_row(self) -> dict[str, Any]:
        """The row as stored: every field already holds JSON values (the grader puts
        dumped dicts in `calls`)."""
        return self.model_dump()


@dataclass(slots=True, kw_only=True)
class JudgeVerdict(Row):
    """A cached LLM-judge verdict: a row of the `judge_cache` table."""

    key: str  # sha256 of (model, prompt): the cache key
    model: str
    prompt: str
    verdict: bool  # score == 1
    reason: str
    judged_at: str
    score: float | None = None  # 1, 0.5 or 0 (None: before scores)
