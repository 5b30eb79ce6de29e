"""Typed rows the store's readers return (pure). Each is a NamedTuple in its query's column
order (cheap to build from a DuckDB row, read by attribute, unpacked like a tuple), or a
slotted dataclass where a column is named like a tuple method (`index`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, NamedTuple


class GradedExchange(NamedTuple):
    """The exchange columns a grader reads."""

    exchange_id: str
    session_id: str | None
    model: str | None
    finish_reason: str | None
    assistant_text: str | None
    parse_status: str | None
    parse_error: str | None
    wire_format: str | None
    status_code: int | None
    error_kind: str | None
    error_message: str | None
    response_format: Any  # Chat's request_params.response_format (JSON), else None
    text_format: Any  # Responses' request_params.text (JSON), else None


class SessionRow(NamedTuple):
    """A session with its counts over the exchanges the filter selects."""

    session_id: str
    first_seen: datetime
    last_seen: datetime
    exchanges: int
    models: list[str]
    tool_calls: int
    errors: int
    parse_failures: int
    input_tokens: int | None
    output_tokens: int | None
    mean_latency_ms: float | None


class ExchangeRow(NamedTuple):
    """One exchange as a list shows it."""

    exchange_id: str
    session_id: str | None
    started_at: datetime
    wire_format: str | None
    model: str | None
    streamed: bool | None
    status_code: int | None
    error_kind: str | None
    parse_status: str | None
    finish_reason: str | None
    ttfb_ms: float | None
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    tool_calls: int
    proxy_id: str | None


@dataclass(frozen=True, slots=True)
class CallRow:
    """One recorded tool call (`records.ToolCall`'s columns) with its exchange."""

    exchange_id: str
    session_id: str | None
    index: int
    call_id: str | None
    name: str | None
    arguments_raw: str | None
    arguments: Any
    parse_error: str | None
    mcp_server: str | None = None  # the hosted MCP server the provider ran it on

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class OfferedRow(NamedTuple):
    """A tool offered in an exchange's request."""

    exchange_id: str
    position: int
    name: str
    kind: str | None
    description: str | None
    parameters: Any
    schema_hash: str


@dataclass(frozen=True, slots=True)
class ResultRow:
    """The result that answered a recorded call (the `call_results` view)."""

    exchange_id: str
    index: int
    call_id: str | None
    result: str | None
    result_is_error: bool | None
    result_exchange_id: str | None


class McpExecution(NamedTuple):
    """An MCP `tools/call` that executed one of a model exchange's calls."""

    mcp_exchange_id: str
    exchange_id: str  # the model exchange whose call it executed
    tool_name: str | None
    arguments: Any
    result: Any
    is_error: bool | None
    linked_call_id: str | None


class ExchangeDetail(NamedTuple):
    """One exchange in full."""

    exchange: ExchangeRow
    request: dict[str, Any]  # every exchange column (bodies, headers already redacted)
    offered: list[OfferedRow]
    calls: list[CallRow]
    results: list[ResultRow]
    mcp: list[McpExecution]


class ModelTurn(NamedTuple):
    """A recorded model turn, as labeling and replay planning read it."""

    exchange_id: str
    session_id: str
    started_at: datetime
    wire_format: str
    parse_status: str | None
    error_kind: str | None
    status_code: int | None
    streamed: bool | None
    messages: Any
    system: Any
    request_params: Any
    assistant_text: str | None
    response_id: str | None
    model: str | None
    usable: bool
    matched: bool


class RunRow(NamedTuple):
    """A grading run: its cases, how many passed, when it ran."""

    run: str
    cases: int
    passed: int
    first_graded: str
    last_graded: str


class ExchangeGradeRow(NamedTuple):
    """A case's latest grade in a run, for the exchange it graded (what a trace carries)."""

    exchange_id: str
    run: str
    case_id: str
    passed: bool | None
    label: str | None
    not_graded: bool | None
    reason: str | None
    expected_tools: Any  # JSON text
    called_tools: Any  # JSON text
    graded_at: str | None


class FailureRow(NamedTuple):
    """A case's latest grade in a run, with what was expected and what was called."""

    case_id: str
    exchange_id: str | None
    session_id: str | None
    model: str | None
    label: str | None
    reason: str | None
    calls: Any  # the CallGrade list (JSON text, or decoded: `queries.grades.cases_with_label`)
    expected_tools: Any
    called_tools: Any
