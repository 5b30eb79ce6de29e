"""One filter for every reader of the capture: `ExchangeFilter`, and its SQL (pure).

`label`, `replay`, `report`, `show`, `sessions` and the TUI select exchanges with the same
model. Empty lists mean "no filter"; several filters AND. `where_sql(filter, params)` is
the one place the predicates are written: it returns a condition over the exchanges table
aliased `e` and adds its parameters to `params` (named, DuckDB's `$name`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolproxy.records import WireFormat

# the model APIs' wire formats: every records.WireFormat but MCP's and the unknown
MODEL_FORMATS = tuple(f for f in get_args(WireFormat) if f not in ("mcp", "unknown"))
REPLAY_PROXY_PREFIX = "replay:"  # the proxy_id of exchanges a replay wrote
Origin = Literal["captured", "replayed", "any"]


def origin_sql(origin: Origin, alias: str = "e") -> str:
    """The condition on exchanges (as `alias`) that keeps those of `origin`: captured by a
    proxy, or written by a replay (its `proxy_id` is `replay:<run>`)."""
    if origin == "any":
        return "TRUE"
    replayed = f"coalesce({alias}.proxy_id, '') LIKE '{REPLAY_PROXY_PREFIX}%'"
    return replayed if origin == "replayed" else f"NOT {replayed}"


# A turn a grader or a replayer can use: a model API, parsed, answered without an error.
USABLE_TURN = (
    f"e.wire_format IN ({', '.join(repr(f) for f in MODEL_FORMATS)}) "
    "AND e.parse_status IN ('ok', 'partial') AND e.error_kind IS NULL "
    "AND coalesce(e.status_code, 200) < 400"
)
FAILED = "(e.error_kind IS NOT NULL OR coalesce(e.status_code, 200) >= 400)"
# Id lists go in as one list parameter: one query whatever the number of ids.
IN_IDS = "IN (SELECT unnest(${name}::VARCHAR[]))"


def latest_grades_sql(run_param: str, source: str = "grades") -> str:
    """The latest grade of each case in the run named by parameter `$run_param` (a run
    graded twice keeps its newest verdict), from the `grades` view or a `source` with its
    rows (`store.queries.runs.grades_of`)."""
    return (
        f"SELECT * FROM {source} WHERE run = ${run_param} "
        "QUALIFY row_number() OVER (PARTITION BY case_id ORDER BY graded_at DESC) = 1"
    )


def as_utc(text: str) -> datetime:
    """An ISO-8601 time; a naive one is taken as UTC (ValueError for anything else)."""
    t = datetime.fromisoformat(text)
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


class ExchangeFilter(BaseModel):
    """Which exchanges a reader sees (empty lists mean no filter; filters AND)."""

    model_config = ConfigDict(frozen=True)

    sessions: list[str] = Field(default_factory=list, description="only these session ids")
    exchanges: list[str] = Field(default_factory=list, description="only these exchange ids")
    models: list[str] = Field(default_factory=list, description="requested or returned model")
    tools: list[str] = Field(default_factory=list, description="turns calling one of these")
    wire_formats: list[str] = Field(default_factory=list, description="only these formats")
    since: datetime | None = Field(default=None, description="started at or after")
    until: datetime | None = Field(default=None, description="started before")
    status: Literal["ok", "failed"] | None = Field(
        default=None, description="failed: an upstream error or a status >= 400"
    )
    parse_statuses: list[str] = Field(default_factory=list, description="ok, partial, error…")
    label_run: str | None = Field(default=None, description="the grading run labels are read from")
    labels: list[str] = Field(default_factory=list, description="labels earned in label_run")
    text: str | None = Field(
        default=None, description="case-insensitive text in messages, replies or calls"
    )
    origin: Origin = Field(default="any", description="captured by a proxy, or written by a replay")
    model_turns: bool = Field(
        default=False, description="only usable model turns (parsed, answered, no error)"
    )

    @model_validator(mode="after")
    def _labels_need_a_run(self) -> ExchangeFilter:
        if self.labels and not self.label_run:
            raise ValueError("labels need label_run: the grading run whose labels are read")
        return self


def in_ids(column: str, name: str) -> str:
    """`column IN (the list parameter $name)`."""
    return f"{column} {IN_IDS.format(name=name)}"


def where_sql(f: ExchangeFilter, params: dict[str, Any]) -> str:
    """The filter as a SQL condition over exchanges `e` ("TRUE" when it filters nothing)."""
    where: list[str] = []

    def add(name: str, value: Any, sql: str) -> None:
        where.append(sql)
        params[name] = value

    if f.sessions:
        add("f_sessions", f.sessions, in_ids("e.session_id", "f_sessions"))
    if f.exchanges:
        add("f_exchanges", f.exchanges, in_ids("e.exchange_id", "f_exchanges"))
    if f.models:
        add(
            "f_models",
            f.models,
            "(list_contains($f_models, e.model_requested) "
            "OR list_contains($f_models, e.model_returned))",
        )
    if f.tools:
        add(
            "f_tools",
            f.tools,
            "EXISTS (SELECT 1 FROM tool_calls c WHERE c.exchange_id = e.exchange_id "
            "AND list_contains($f_tools, c.name))",
        )
    if f.wire_formats:
        add("f_formats", f.wire_formats, "list_contains($f_formats, e.wire_format)")
    if f.since is not None:
        add("f_since", f.since, "e.started_at >= $f_since")
    if f.until is not None:
        add("f_until", f.until, "e.started_at < $f_until")
    if f.status is not None:
        where.append(FAILED if f.status == "failed" else f"NOT {FAILED}")
    if f.parse_statuses:
        add("f_parse", f.parse_statuses, "list_contains($f_parse, e.parse_status)")
    if f.label_run:
        label = "list_contains($f_labels, g.label)" if f.labels else "TRUE"
        if f.labels:
            params["f_labels"] = f.labels
        add(
            "label_run",
            f.label_run,
            f"e.exchange_id IN (SELECT g.exchange_id FROM ({latest_grades_sql('label_run')}) g "
            f"WHERE {label})",
        )
    if f.text:
        add(
            "f_text",
            f.text.lower(),
            "(contains(lower(coalesce(e.assistant_text, '')), $f_text) "
            "OR contains(lower(coalesce(e.refusal, '')), $f_text) "
            "OR contains(lower(coalesce(CAST(e.messages AS VARCHAR), '')), $f_text) "
            "OR EXISTS (SELECT 1 FROM tool_calls c WHERE c.exchange_id = e.exchange_id "
            "AND contains(lower(coalesce(c.name, '') || ' ' || coalesce(c.arguments_raw, '')), "
            "$f_text)))",
        )
    if f.origin != "any":
        where.append(origin_sql(f.origin))
    if f.model_turns:
        where.append(f"({USABLE_TURN})")
    return " AND ".join(where) or "TRUE"
