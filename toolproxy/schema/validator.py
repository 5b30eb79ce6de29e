"""Whether a tool call's arguments satisfy its schema, in words: `check_call`,
`check_value`, `check_tool_call` -> `SchemaCheck`.

The issue's rule: a call is validated against the MCP server's real schema when one is
known for that tool, otherwise against the schema the agent sent; each result says which
(`source`). `schema.resolving.resolve_schema` picks the schema and `compile_schema` compiles
it once; the checks here are pure and never raise on bad input (unparseable arguments and
invalid schemas are results).

Stable strings (`schema.resolving.ResolvedSchema.source`):
    mcp_server  the real inputSchema of the MCP server tool `match_tool` mapped the name to
    offered     the parameters schema the agent sent with the request that got the call
    none        neither is known: only JSON parsing is checked
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

import jsonschema
from jsonschema.exceptions import relevance
from pydantic import BaseModel, Field

from toolproxy.records import ToolCall
from toolproxy.schema.compiling import CompiledSchema, compile_schema, cut_message
from toolproxy.schema.quickerrors import QuickError
from toolproxy.wire.common import parse_arguments

MAX_ERRORS = 50


class SchemaViolation(BaseModel):
    """One way the arguments fail the schema."""

    path: str = Field(description="JSON path into the arguments, e.g. $.filters.since")
    message: str = Field(description="jsonschema's message (cut at 500 characters)")
    validator: str = Field(description="the failing keyword: required, type, enum, ...")


class SchemaCheck(BaseModel):
    """The outcome of checking one call's arguments against one schema."""

    valid: bool = Field(description="arguments parsed and satisfied the schema")
    parse_error: str | None = Field(default=None, description="why arguments are not JSON")
    schema_error: str | None = Field(
        default=None, description="why the schema itself could not be used"
    )
    errors: list[SchemaViolation] = Field(
        default_factory=list, description="violations, most relevant first (at most 50)"
    )


CHECKER = f"jsonschema {metadata.version('jsonschema')}"


def _as_jsonschema(error: Any) -> jsonschema.ValidationError:
    """jsonschema's own object (`relevance` reads its type checker)."""
    return error.to_validation_error() if isinstance(error, QuickError) else error


def _keyword(error: jsonschema.ValidationError) -> str:
    # a `false` schema fails with no keyword
    return "false" if error.validator is None else str(error.validator)


def check_value(arguments: Any, schema: Any, key: str | None = None) -> SchemaCheck:
    """Validate already-parsed arguments against `schema` (None: nothing to check)."""
    if schema is None:
        return SchemaCheck(valid=True)
    compiled = schema if isinstance(schema, CompiledSchema) else compile_schema(schema, key)
    if compiled.accepts(arguments):
        return SchemaCheck(valid=True)
    if not compiled.usable:
        return SchemaCheck(valid=False, schema_error=compiled.error)
    try:
        found = sorted(
            (_as_jsonschema(e) for e in compiled.iter_errors(arguments)),
            key=lambda e: (e.json_path, _keyword(e)),
        )
        if len(found) > 1:  # jsonschema's best match first, the rest in path order
            best = max(found, key=relevance)
            found.remove(best)
            found.insert(0, best)
        errors = [
            SchemaViolation(path=e.json_path, message=cut_message(e.message), validator=_keyword(e))
            for e in found[:MAX_ERRORS]
        ]
    except Exception as exc:  # noqa: BLE001 - e.g. an unresolvable $ref surfaces only here
        return SchemaCheck(
            valid=False, schema_error=cut_message(f"unusable schema: {type(exc).__name__}: {exc}")
        )
    return SchemaCheck(valid=not errors, errors=errors)


def check_call(arguments_raw: str, schema: Any, key: str | None = None) -> SchemaCheck:
    """Parse a call's argument text (strict JSON) and validate it against `schema`.

    `schema` may be a JSON Schema, a `CompiledSchema`, or None (only parsing is checked);
    `key` is its schema_hash if known, which saves hashing it on a cache miss.
    """
    arguments, error = parse_arguments(arguments_raw)
    if error is not None:
        return SchemaCheck(valid=False, parse_error=error)
    return check_value(arguments, schema, key)


def check_tool_call(call: ToolCall, schema: Any, key: str | None = None) -> SchemaCheck:
    """Validate a recorded call, trusting the wire parser's reading of its arguments.

    Prefer this over `check_call` for recorded calls: an Anthropic stream's argument-less
    call has arguments_raw "" but arguments {} (the API's own reading), not a parse error.
    """
    if call.parse_error is not None:
        return SchemaCheck(valid=False, parse_error=call.parse_error)
    if call.arguments is None:
        return check_call(call.arguments_raw, schema, key)
    return check_value(call.arguments, schema, key)
