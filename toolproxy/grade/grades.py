"""The grading contract's output: a case's grade, per call and per argument. Pure, no I/O.

The checker builds one `CaseGrade` per case (`CallGrade`s, `ArgGrade`s inside); a run stores
each as a `grade.rows.GradeRow` and the metrics read them back. Records like `grade.model`'s
(written `__init__`s, so mypyc compiles them into native classes).

Compiled, the three are `acyclic` (their fields, strs, numbers and lists of records and
strs, hold no way back to them: no GC header, no tracking) and each keeps its last dropped
instance to make the next one from (`free_list_len=1`), as a run drops each case's grade
once its row is built. With `parsestage.Call` and `pairing.ToolNames` made alike, a
BFCL-shaped call costs ~6 % fewer instructions (docs/benchmarks.md, "thirty-first session").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from mypy_extensions import mypyc_attr

from toolproxy.grade.labels import Bucket, Label, Stage
from toolproxy.grade.model import Record, record_from

# the keys `model_dump` writes, which `model_validate` reads by position (a keyword call
# into a native class parses its keywords: reading a case's calls back 48,000 -> 18,500
# instructions)
_ARG_KEYS: Final = frozenset({"name", "bucket", "detail", "judged", "judge_reason", "judge_score"})
_CALL_KEYS: Final = frozenset(
    {"expected_tool", "actual_tool", "call_id", "stage_failed", "label", "schema_source",
     "errors", "args"}
)  # fmt: skip


@mypyc_attr(acyclic=True, free_list_len=1)
@dataclass(slots=True, init=False)
class ArgGrade(Record):
    """One argument of one call: which bucket it fell in, and why."""

    name: str  # the argument's path (`filters.since`; `(arguments)` for the whole object)
    bucket: Bucket  # labels.BUCKETS
    detail: str | None = None  # why, for anything but ok
    judged: bool = False  # an LLM judge decided it
    judge_reason: str | None = None  # the judge's reason (or why it could not judge)
    judge_score: float | None = None  # the judge's score: 1, 0.5 or 0

    def __init__(
        self,
        name: str,
        bucket: Bucket,
        detail: str | None = None,
        judged: bool = False,
        judge_reason: str | None = None,
        judge_score: float | None = None,
    ) -> None:
        self.name, self.bucket, self.detail = name, bucket, detail
        self.judged, self.judge_reason, self.judge_score = judged, judge_reason, judge_score

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict (JSON-ready in any mode)."""
        return {
            "name": self.name,
            "bucket": self.bucket,
            "detail": self.detail,
            "judged": self.judged,
            "judge_reason": self.judge_reason,
            "judge_score": self.judge_score,
        }

    @classmethod
    def model_validate(cls, data: Any) -> ArgGrade:
        """An argument's grade from a dict as `model_dump` wrote it (unknown keys ignored)."""
        if type(data) is dict and "name" in data and "bucket" in data and data.keys() <= _ARG_KEYS:
            get = data.get
            return ArgGrade(
                data["name"], data["bucket"], get("detail"), get("judged", False),
                get("judge_reason"), get("judge_score"),
            )  # fmt: skip
        return record_from(cls, data, cls._field)  # anything else, as every record reads


@mypyc_attr(acyclic=True, free_list_len=1)
@dataclass(slots=True, init=False)
class CallGrade(Record):
    """One expected call paired with what the model emitted (either may be absent)."""

    expected_tool: str | None  # the expectation's tool (None: an extra call)
    actual_tool: str | None  # the name the model called (None: the call was not made)
    call_id: str | None = None  # the emitted call's id
    stage_failed: Stage | None = None  # selection | parse | schema | semantic
    label: Label | None = None  # the call's label (labels.PRECEDENCE), None when it passed
    # mcp_server | offered | none (see toolproxy.schema.resolving.ResolvedSchema)
    schema_source: str | None = None
    errors: list[str] = field(default_factory=list)  # what went wrong, in words
    args: list[ArgGrade] = field(default_factory=list)  # per-argument buckets

    def __init__(
        self,
        expected_tool: str | None,
        actual_tool: str | None,
        call_id: str | None = None,
        stage_failed: Stage | None = None,
        label: Label | None = None,
        schema_source: str | None = None,
        errors: list[str] | None = None,
        args: list[ArgGrade] | None = None,
    ) -> None:
        self.expected_tool, self.actual_tool, self.call_id = expected_tool, actual_tool, call_id
        self.stage_failed, self.label, self.schema_source = stage_failed, label, schema_source
        self.errors = [] if errors is None else errors
        self.args = [] if args is None else args

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict, arguments as dicts (JSON-ready in any mode)."""
        return {
            "expected_tool": self.expected_tool,
            "actual_tool": self.actual_tool,
            "call_id": self.call_id,
            "stage_failed": self.stage_failed,
            "label": self.label,
            "schema_source": self.schema_source,
            "errors": list(self.errors),
            "args": [a.model_dump() for a in self.args],
        }

    @classmethod
    def model_validate(cls, data: Any) -> CallGrade:
        """A call's grade from a dict as `model_dump` wrote it (unknown keys ignored)."""
        if (
            type(data) is dict
            and "expected_tool" in data
            and "actual_tool" in data
            and data.keys() <= _CALL_KEYS
        ):
            get = data.get
            errors, args = get("errors"), get("args")
            return CallGrade(
                data["expected_tool"], data["actual_tool"], get("call_id"), get("stage_failed"),
                get("label"), get("schema_source"),
                None if errors is None else cls._field("errors", errors),
                None if args is None else cls._field("args", args),
            )  # fmt: skip
        return record_from(cls, data, cls._field)

    @classmethod
    def _field(cls, name: str, value: Any) -> Any:
        if name == "args" and isinstance(value, list):
            return [ArgGrade.model_validate(a) for a in value]
        return list(value) if name == "errors" and isinstance(value, list) else value


@mypyc_attr(acyclic=True, free_list_len=1)
@dataclass(slots=True, init=False)
class CaseGrade(Record):
    """The grade of one case: passed, or exactly one label."""

    case_id: str  # the case's id
    passed: bool  # no label and nothing left ungraded
    exchange_id: str | None = None  # the exchange graded
    session_id: str | None = None  # its session
    model: str | None = None  # the model that answered
    label: Label | None = None  # None exactly when passed (or not graded)
    not_graded: bool = False  # some judge field could not be graded (no judge)
    calls: list[CallGrade] = field(default_factory=list)  # per-call grades
    called_tools: list[str] = field(default_factory=list)  # names the model called, in order
    expected_tools: list[str] = field(default_factory=list)  # the expectation's tools
    # no_call, but the reply's text holds calls (toolproxy.wire.leaked): their format, and
    # what they would have earned had the server emitted them ("passed" or a label)
    leaked_format: str | None = None
    leaked_label: str | None = None

    def __init__(
        self,
        case_id: str,
        passed: bool,
        exchange_id: str | None = None,
        session_id: str | None = None,
        model: str | None = None,
        label: Label | None = None,
        not_graded: bool = False,
        calls: list[CallGrade] | None = None,
        called_tools: list[str] | None = None,
        expected_tools: list[str] | None = None,
        leaked_format: str | None = None,
        leaked_label: str | None = None,
    ) -> None:
        self.case_id, self.passed, self.exchange_id = case_id, passed, exchange_id
        self.session_id, self.model, self.label = session_id, model, label
        self.not_graded = not_graded
        self.calls = [] if calls is None else calls
        self.called_tools = [] if called_tools is None else called_tools
        self.expected_tools = [] if expected_tools is None else expected_tools
        self.leaked_format, self.leaked_label = leaked_format, leaked_label

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict, calls as dicts (JSON-ready in any mode)."""
        return {
            "case_id": self.case_id,
            "exchange_id": self.exchange_id,
            "session_id": self.session_id,
            "model": self.model,
            "passed": self.passed,
            "label": self.label,
            "not_graded": self.not_graded,
            "calls": [c.model_dump() for c in self.calls],
            "called_tools": list(self.called_tools),
            "expected_tools": list(self.expected_tools),
            "leaked_format": self.leaked_format,
            "leaked_label": self.leaked_label,
        }

    @classmethod
    def _field(cls, name: str, value: Any) -> Any:
        if name == "calls" and isinstance(value, list):
            return [CallGrade.model_validate(c) for c in value]
        return value


def call_grade_of(
    expected_tool: str | None,
    actual_tool: str | None,
    call_id: str | None,
    stage_failed: Stage | None,
    label: Label | None,
    schema_source: str | None,
    errors: list[str],
    args: list[Any],
) -> CallGrade:
    """A CallGrade whose arguments' grades come flat: each an ArgGrade, or its name, bucket
    and detail in a row (`nativegrade.c` builds them so: a call of a class from C parses
    its arguments against a format string, twice the cost of this function's own)."""
    found: list[ArgGrade] = []
    i, n = 0, len(args)
    while i < n:
        item = args[i]
        if isinstance(item, ArgGrade):
            found.append(item)
            i += 1
        else:
            found.append(ArgGrade(item, args[i + 1], args[i + 2]))
            i += 3
    return CallGrade(
        expected_tool, actual_tool, call_id, stage_failed, label, schema_source, errors, found
    )


def case_grade_of(
    case_id: str,
    passed: bool,
    exchange_id: str | None,
    session_id: str | None,
    model: str | None,
    label: Label | None,
    not_graded: bool,
    calls: list[CallGrade],
    called_tools: list[str],
    expected_tools: list[str],
) -> CaseGrade:
    """A CaseGrade from its fields in order (for `nativegrade.c`, as `call_grade_of`)."""
    return CaseGrade(
        case_id, passed, exchange_id, session_id, model, label, not_graded, calls,
        called_tools, expected_tools,
    )  # fmt: skip
