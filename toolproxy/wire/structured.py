"""Structured output: a request that asks for JSON text instead of a tool call (pure).

Chat Completions asks with `response_format` (`{type: json_schema, json_schema: {name,
schema, strict}}` or `{type: json_object}`), Responses with `text.format` (`{type:
json_schema, name, schema, strict}` or `{type: json_object}`); both are kept in the
exchange's `request_params`. The reply is assistant text. Grading treats that text as one
call to a pseudo tool named `OUTPUT` whose parameters are the requested schema (any JSON
object for `json_object`), so the same stages grade it: parse (malformed_json,
truncation), JSON Schema (schema_violation, missing_required, ...) and the case's matchers.
`OUTPUT` cannot be a real tool's name (tool names are letters, digits, `_` and `-`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolproxy.records import ToolCall
from toolproxy.wire.common import parse_arguments

OUTPUT = "(output)"
ANY_OBJECT: dict[str, Any] = {"type": "object"}


@dataclass(frozen=True)
class OutputSpec:
    """What a request asked the reply to be."""

    kind: str  # json_schema | json_object
    schema: dict[str, Any]  # the requested schema; ANY_OBJECT for json_object
    name: str | None = None
    strict: bool | None = None


def output_spec(response_format: Any = None, text: Any = None) -> OutputSpec | None:
    """The structured output a request asked for: Chat's `response_format`, or Responses'
    `text` (its `format`); None for plain text or anything unreadable."""
    fmt = response_format
    if fmt is None and isinstance(text, dict):
        fmt = text.get("format")
    if not isinstance(fmt, dict):
        return None
    kind = fmt.get("type")
    if kind == "json_object":
        return OutputSpec("json_object", ANY_OBJECT)
    if kind != "json_schema":
        return None
    inner = fmt.get("json_schema")
    spec: dict[str, Any] = inner if isinstance(inner, dict) else fmt
    schema = spec.get("schema")
    name, strict = spec.get("name"), spec.get("strict")
    return OutputSpec(
        "json_schema",
        schema if isinstance(schema, dict) else ANY_OBJECT,
        name if isinstance(name, str) else None,
        strict if isinstance(strict, bool) else None,
    )


def output_call(text: str) -> ToolCall:
    """The reply's text as the one call to `OUTPUT` (its parse error, if any, recorded)."""
    parsed, error = parse_arguments(text)
    return ToolCall(
        index=0, call_id=None, name=OUTPUT, arguments_raw=text, arguments=parsed, parse_error=error
    )


def output_offer(spec: OutputSpec) -> dict[str, Any]:
    """`OUTPUT` as an offered tool (name and parameters), for the checker."""
    return {"name": OUTPUT, "parameters": spec.schema}


def with_output(
    calls: list[ToolCall],
    offered: list[dict[str, Any]],
    text: str | None,
    response_format: Any = None,
    text_param: Any = None,
) -> tuple[list[ToolCall], list[dict[str, Any]]]:
    """A reply's calls and offered tools as the grader sees them: a text reply to a request
    for structured output becomes its one call to `OUTPUT` (offered with the requested
    schema); any other reply is left as it is. The rule captured, replayed and corpus
    replies share."""
    if calls or not text:
        return calls, offered
    spec = output_spec(response_format, text_param)
    if spec is None:
        return calls, offered
    return [output_call(text)], [*offered, output_offer(spec)]
