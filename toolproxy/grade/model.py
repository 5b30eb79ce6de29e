"""The grading contract: expectation cases in, grades out. Pure pydantic, no I/O.

Expectation files (YAML or JSONL, validated by `schemas/expectations.schema.json`) hold
`Case`s. The checker turns (case, observed calls) into a `CaseGrade`; runs of grades are
stored and the metrics read them back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproxy.grade.labels import Bucket, Label, Stage

MatcherKind = Literal[
    "exact",  # default: equal by value (nested objects/lists compared by value)
    "any_of",  # equal to one of `values`
    "enum",  # alias of any_of for string enums (kept apart for reports)
    "range",  # number within [min, max] (either bound optional)
    "tolerance",  # number within `tolerance` of `value` (absolute)
    "regex",  # string fully matching `pattern`
    "datetime",  # ISO-8601 timestamps equal as instants (+02:00 vs Z agree)
    "unordered",  # list equal to `value` ignoring order (elements compared by value)
    "text",  # strings equal ignoring case and runs of whitespace
    "judge",  # an LLM judge decides whether the value means `criterion`
    "any",  # any value is accepted (in files `{optional: true}` alone, or `{match: any}`)
]


class Matcher(BaseModel):
    """How one argument is compared. Any matcher may also be `optional` (may be omitted)."""

    model_config = ConfigDict(extra="forbid")

    kind: MatcherKind = "exact"
    value: Any = None
    values: list[Any] | None = None
    min: float | None = None
    max: float | None = None
    tolerance: float | None = None
    pattern: str | None = None
    criterion: str | None = Field(default=None, description="judge: what the value must mean")
    optional: bool = False


class ExpectedCall(BaseModel):
    """One call the model should make. `args` values are Matchers; in files a plain value
    is shorthand for an exact matcher, and `{"optional": true}` alone means may-be-anything."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Matcher] = Field(default_factory=dict)
    allow_extra_args: bool = Field(
        default=True, description="arguments the expectation does not name are not graded"
    )


class Case(BaseModel):
    """A labeled expectation: what should have happened for one model turn."""

    model_config = ConfigDict(extra="forbid")

    id: str
    exchange_id: str | None = Field(default=None, description="a recorded exchange to grade")
    wire_format: str | None = None
    messages: Any = Field(default=None, description="own messages when no exchange_id")
    tools: Any = Field(default=None, description="own tools block when no exchange_id")
    expect: Literal["call", "no_call"] = "call"
    calls: list[ExpectedCall] = Field(default_factory=list)
    order: Literal["ordered", "unordered"] = "ordered"
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None


class ObservedCall(BaseModel):
    """A call as the model emitted it (from `tool_calls` rows or a replay)."""

    index: int = 0
    call_id: str | None = None
    name: str | None = None
    arguments_raw: str = ""
    arguments: Any = None
    parse_error: str | None = None


class Observation(BaseModel):
    """What the model did for one case's turn."""

    exchange_id: str | None = None
    session_id: str | None = None
    model: str | None = None
    finish_reason: str | None = None
    complete: bool = True
    calls: list[ObservedCall] = Field(default_factory=list)
    offered: list[dict[str, Any]] = Field(
        default_factory=list, description="tools offered: name + parameters schema"
    )


class ArgGrade(BaseModel):
    """One argument of one call: which bucket it fell in, and why."""

    name: str
    bucket: Bucket
    detail: str | None = None
    judged: bool = False
    judge_reason: str | None = None


class CallGrade(BaseModel):
    """One expected call paired with what the model emitted (either may be absent)."""

    expected_tool: str | None
    actual_tool: str | None
    call_id: str | None = None
    stage_failed: Stage | None = None
    label: Label | None = None
    schema_source: str | None = Field(
        default=None, description="mcp_server | offered | none (see toolproxy.schemacheck)"
    )
    errors: list[str] = Field(default_factory=list)
    args: list[ArgGrade] = Field(default_factory=list)


class CaseGrade(BaseModel):
    """The grade of one case: passed, or exactly one label."""

    case_id: str
    exchange_id: str | None = None
    session_id: str | None = None
    model: str | None = None
    passed: bool
    label: Label | None = Field(default=None, description="None exactly when passed")
    not_graded: bool = Field(
        default=False, description="some judge field could not be graded (no judge)"
    )
    calls: list[CallGrade] = Field(default_factory=list)
    called_tools: list[str] = Field(default_factory=list)
    expected_tools: list[str] = Field(default_factory=list)


class GradeRow(BaseModel):
    """One case's grade in one named run: a row of the `grades` table."""

    run: str = Field(description="the run's name (toolproxy grade --run NAME)")
    graded_at: str = Field(description="ISO-8601 UTC time the run was graded")
    source: str = Field(default="capture", description="capture | replay:<candidate>")
    case_id: str
    exchange_id: str | None = None
    session_id: str | None = None
    model: str | None = None
    passed: bool
    label: str | None = None
    not_graded: bool = False
    reason: str | None = Field(
        default=None,
        description="why the case is not graded: needs replay, exchange missing or failed, "
        "judge unavailable (see toolproxy.grade.observe and toolproxy.grade.runner)",
    )
    calls: Any = Field(default=None, description="the CallGrade list as JSON")
    expected_tools: Any = None
    called_tools: Any = None


class JudgeVerdict(BaseModel):
    """A cached LLM-judge verdict: a row of the `judge_cache` table."""

    key: str = Field(description="sha256 of (model, prompt): the cache key")
    model: str
    prompt: str
    verdict: bool
    reason: str
    judged_at: str
