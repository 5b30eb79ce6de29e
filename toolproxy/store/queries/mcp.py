"""What the MCP reports read: the servers' pulled tools, tools offered over time, calls,
and the model requests a tools budget is measured on."""

from __future__ import annotations

from typing import Any

from toolproxy.store.filters import MODEL_FORMATS, Origin, origin_sql
from toolproxy.store.reader import Reader
from toolproxy.store.rows import CallRow, OfferedRow
from toolproxy.wire.common import decoded


def server_tools(r: Reader) -> list[tuple[str, str, Any]]:
    """(server, tool, input_schema) of each server's latest pull (schemas decoded)."""
    return [
        (s, n, decoded(x))
        for s, n, x in r.rows(
            "SELECT DISTINCT server, name, input_schema FROM mcp_tools_latest ORDER BY 1, 2"
        )
    ]


def definition_hashes(r: Reader) -> list[tuple[str, str, str]]:
    """(server, tool, definition_hash) at each server's latest pull."""
    return r.rows("SELECT server, name, definition_hash FROM mcp_tools_latest")


def tool_annotations(r: Reader) -> list[tuple[str, str, Any]]:
    """(server, tool, annotations as stored) at each server's latest pull."""
    return r.rows("SELECT server, name, annotations FROM mcp_tools_latest")


def latest_tools(r: Reader, servers: list[str]) -> list[tuple[str, str, str | None, Any, str]]:
    """(server, name, description, input_schema, schema_hash) of the latest pull, one row per
    tool (only `servers`, when given)."""
    only = "WHERE list_contains($servers, server)" if servers else ""
    return r.rows(
        "SELECT DISTINCT ON (server, name) server, name, description, input_schema, "
        f"schema_hash FROM mcp_tools_latest {only} ORDER BY server, name",
        {"servers": servers} if servers else None,
    )


def _of_origin(origin: Origin) -> str:
    """The condition that keeps a child row (a tool offered, a call) of an exchange of
    `origin` (`store.filters.origin_sql`)."""
    if origin == "any":
        return "TRUE"
    return f"exchange_id IN (SELECT e.exchange_id FROM exchanges e WHERE {origin_sql(origin)})"


def offered_versions(r: Reader, origin: Origin = "any") -> list[tuple[Any, ...]]:
    """Each (name, description, schema) version of an offered function tool: (name,
    description, parameters, schema_hash, exchanges, first seen, last seen), by name then
    first seen; in exchanges of `origin`."""
    return r.rows(
        "SELECT name, description, any_value(parameters), schema_hash, "
        "count(DISTINCT exchange_id), min(started_at), max(started_at) FROM tools_offered "
        f"WHERE kind = 'function' AND {_of_origin(origin)} "
        "GROUP BY name, schema_hash, description ORDER BY 1, 6"
    )


def call_counts(r: Reader, origin: Origin = "any") -> list[tuple[str, int, Any, Any]]:
    """(tool name, calls, first, last) over every recorded call of `origin`, by name."""
    return r.rows(
        "SELECT name, count(*), min(started_at), max(started_at) FROM tool_calls "
        f"WHERE name IS NOT NULL AND {_of_origin(origin)} GROUP BY name ORDER BY name"
    )


def calls_with_model(
    r: Reader, session: str | None, origin: Origin = "any"
) -> tuple[list[tuple[CallRow, str | None]], list[OfferedRow]]:
    """Every recorded call of `origin` (or one session's) in time order with its
    exchange's model, and the tools offered in the exchanges that made them."""
    where = f"WHERE {origin_sql(origin)}" + (" AND c.session_id = ?" if session else "")
    params = [session] if session else []
    joined = f"tool_calls c LEFT JOIN exchanges e USING (exchange_id) {where}"
    rows = r.rows(
        "SELECT c.exchange_id, c.session_id, c.index, c.call_id, c.name, c.arguments_raw, "
        "c.arguments, c.parse_error, coalesce(e.model_returned, e.model_requested) "
        f"FROM {joined} ORDER BY c.started_at, c.exchange_id, c.index",
        params,
    )
    offered = r.typed(
        OfferedRow,
        "SELECT exchange_id, position, name, kind, description, parameters, schema_hash "
        f"FROM tools_offered WHERE exchange_id IN (SELECT c.exchange_id FROM {joined}) "
        "ORDER BY exchange_id, position",
        params,
    )
    return [(CallRow(*row[:8]), row[8]) for row in rows], offered


# what a reply whose tool call a server lost in the text starts with or holds
# (toolproxy.wire.leaked); the rest is left to the parser
_LOST_TEXT = (
    "(contains(assistant_text, '<tool_call>') OR contains(assistant_text, '<|python_tag|>') "
    "OR contains(assistant_text, '[TOOL_CALLS]') OR contains(assistant_text, '<function=') "
    "OR regexp_matches(assistant_text, '^\\s*(\\[|\\{|```)'))"
)


def texts_without_calls(
    r: Reader, session: str | None, origin: Origin = "any"
) -> tuple[list[tuple[str, str | None, str | None, str]], list[OfferedRow]]:
    """Replies of `origin` (or one session's) that were offered tools, made no tool call,
    and whose text may hold one: (exchange_id, session_id, model, assistant_text) in time
    order; and the tools offered in those exchanges."""
    params = [session] if session else []
    where = (
        f"WHERE {origin_sql(origin)} AND e.assistant_text IS NOT NULL AND "
        + _LOST_TEXT.replace("assistant_text", "e.assistant_text")
        + " AND NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.exchange_id = e.exchange_id)"
        + " AND EXISTS (SELECT 1 FROM tools_offered t WHERE t.exchange_id = e.exchange_id)"
        + (" AND e.session_id = ?" if session else "")
    )
    rows = r.rows(
        "SELECT e.exchange_id, e.session_id, coalesce(e.model_returned, e.model_requested), "
        f"e.assistant_text FROM exchanges e {where} ORDER BY e.started_at, e.exchange_id",
        params,
    )
    offered = r.typed(
        OfferedRow,
        "SELECT exchange_id, position, name, kind, description, parameters, schema_hash "
        f"FROM tools_offered WHERE exchange_id IN (SELECT e.exchange_id FROM exchanges e {where}) "
        "ORDER BY exchange_id, position",
        params,
    )
    return rows, offered


def model_requests(
    r: Reader, session: str | None, origin: Origin = "any"
) -> tuple[list[tuple[Any, ...]], list[OfferedRow]]:
    """The model requests of `origin` (or one session's) in time order: (exchange_id,
    session_id, started_at, model, model_requested, wire_format, input_tokens, system,
    messages, request_params); and the tools they offered."""
    params = [session] if session else []
    formats = ", ".join(f"'{f}'" for f in MODEL_FORMATS)
    where = f"WHERE wire_format IN ({formats}) AND {origin_sql(origin)}"
    where += " AND session_id = ?" if session else ""
    exchanges = r.rows(
        "SELECT exchange_id, session_id, started_at, coalesce(model_returned, model_requested), "
        "model_requested, wire_format, input_tokens, system, messages, "
        f"request_params FROM exchanges e {where} ORDER BY started_at, exchange_id",
        params,
    )
    offered = r.typed(
        OfferedRow,
        "SELECT exchange_id, position, name, kind, description, parameters, schema_hash "
        f"FROM tools_offered WHERE {_of_origin(origin)}"
        f"{' AND session_id = ?' if session else ''} ORDER BY exchange_id, position",
        params,
    )
    return exchanges, offered
