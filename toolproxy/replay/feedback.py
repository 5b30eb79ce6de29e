"""Closed loop: whether a candidate's call is valid, and what it is told when it is not. Pure.

`make_check(server_tools)` returns the check replay runs on every call: strict JSON parsing,
then JSON Schema against the MCP server's real schema when known, else the schema offered
in the step's tools (`schema.resolving.resolve_schema`, validators compiled once). A call to a
tool that was not offered is not a validation failure here: it is a divergence.

`describe(check, tool)` is the tool message fed back for an invalid call, short and stable:

    Invalid arguments for get_weather. Missing required fields: city. Badly formatted
    fields: limit (expected integer). Wrong values: unit ('kelvin' is not one of
    ['celsius', 'fahrenheit']). Unknown fields: country. Fix the call and send it again.

Groups (jsonschema keyword -> group, as `grade/schemastage.py` buckets them):
    required                                           missing
    enum, const, minimum/maximum, multipleOf           wrong values
    additionalProperties, unevaluatedProperties        unknown fields
    type, format, pattern, lengths, anything else      badly formatted
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from toolproxy.grade.schemastage import WRONG_VALUE_KEYWORDS
from toolproxy.records import ToolCall
from toolproxy.schema.resolving import resolve_schema
from toolproxy.schema.validator import SchemaCheck, SchemaViolation, check_call

CallCheck = Callable[[ToolCall, Sequence[dict[str, Any]]], SchemaCheck]
ServerTool = tuple[str, str, Any]

UNKNOWN_KEYWORDS = frozenset({"additionalProperties", "unevaluatedProperties"})
# Said in place of running a valid call whose sibling in the same reply was invalid:
# every call id must be answered, and only a whole corrected reply is replayed.
NOT_RUN = "Not run: another call in this reply was invalid. Send all the calls again."
MAX_ITEMS = 5
MAX_DETAIL = 120
_QUOTED = re.compile(r"'([^']+)'")


class _Offered:
    """An offered tool as `resolve_schema` wants it: name and parameters."""

    def __init__(self, name: str, parameters: Any) -> None:
        self.name = name
        self.parameters = parameters


def offered_tools(tools: Sequence[dict[str, Any]]) -> list[_Offered]:
    """The (name, parameters) of a Chat Completions tools block; other entries are skipped."""
    found = []
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            found.append(_Offered(fn["name"], fn.get("parameters")))
    return found


def make_check(server_tools: Sequence[ServerTool] = ()) -> CallCheck:
    """The call check for a run; `server_tools` = (server, tool, input_schema) real schemas."""
    real = tuple(server_tools)

    def check(call: ToolCall, tools: Sequence[dict[str, Any]]) -> SchemaCheck:
        resolved = resolve_schema(call.name, offered_tools(tools), real)
        return check_call(call.arguments_raw, resolved.schema)

    return check


def describe(check: SchemaCheck, tool: str | None = None) -> str:
    """The tool message that tells the model what was wrong with its call."""
    head = f"Invalid arguments for {tool}." if tool else "Invalid arguments."
    if check.parse_error is not None:
        return f"{head} They are not valid JSON ({check.parse_error}). Send a JSON object."
    if check.schema_error is not None:
        return f"{head} The tool's schema cannot be used ({check.schema_error})."
    missing: list[str] = []
    wrong: list[str] = []
    unknown: list[str] = []
    formatted: list[str] = []
    for error in check.errors:
        if error.validator == "required":
            missing.append(_required_name(error))
        elif error.validator in WRONG_VALUE_KEYWORDS:
            wrong.append(_field(error))
        elif error.validator in UNKNOWN_KEYWORDS:
            unknown.extend(_QUOTED.findall(error.message) or [_name(error.path)])
        else:
            formatted.append(_field(error))
    parts = [head]
    for title, items in (
        ("Missing required fields", missing),
        ("Badly formatted fields", formatted),
        ("Wrong values", wrong),
        ("Unknown fields", unknown),
    ):
        if items:
            parts.append(f"{title}: {_join(items)}.")
    parts.append("Fix the call and send it again.")
    return " ".join(parts)


def _name(path: str) -> str:
    """`$.filters.since` -> `filters.since`; the whole object is `(arguments)`."""
    name = path.removeprefix("$").removeprefix(".")
    return name or "(arguments)"


def _required_name(error: SchemaViolation) -> str:
    # jsonschema says "'city' is a required property"; name it by its full path.
    quoted = _QUOTED.search(error.message)
    field = quoted.group(1) if quoted else "?"
    parent = _name(error.path)
    return field if parent == "(arguments)" else f"{parent}.{field}"


def _field(error: SchemaViolation) -> str:
    detail = error.message
    if error.validator == "type":
        detail = "expected " + detail.split(" is not of type ", 1)[-1].replace("'", "")
    if len(detail) > MAX_DETAIL:
        detail = detail[: MAX_DETAIL - 1] + "…"
    return f"{_name(error.path)} ({detail})"


def _join(items: list[str]) -> str:
    unique = list(dict.fromkeys(items))
    shown = ", ".join(unique[:MAX_ITEMS])
    more = len(unique) - MAX_ITEMS
    return f"{shown} and {more} more" if more > 0 else shown
