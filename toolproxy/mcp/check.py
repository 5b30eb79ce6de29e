"""`toolproxy mcp check`: every recorded tool call checked against its schema.

The adapter over the pure `toolproxy.schema.validator`: reads calls, offered tools and the
latest MCP server schemas from the capture, resolves and checks each call, prints a table
or JSON.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, computed_field

from toolproxy.records import ToolCall
from toolproxy.schema.resolving import SchemaSource, resolve_schema
from toolproxy.schema.validator import SchemaCheck, check_tool_call
from toolproxy.wire.leaked import find_leaked_calls

if TYPE_CHECKING:
    from toolproxy.store.filters import Origin


class CallCheck(BaseModel):
    """One recorded tool call, the schema it was checked against, and the outcome."""

    exchange_id: str
    session_id: str | None = None
    index: int = 0
    model: str | None = None
    name: str | None = Field(default=None, description="tool name the model called")
    source: SchemaSource
    server: str | None = None
    tool: str | None = None
    check: SchemaCheck
    leaked: str | None = Field(
        default=None,
        description="the call was not a tool call but text in this format (wire.leaked): "
        "the server's tool-call parser lost it",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def first_error(self) -> str | None:
        """One line saying why the call failed, or None when it passed."""
        c = self.check
        if c.parse_error or c.schema_error:
            return c.parse_error or c.schema_error
        return f"{c.errors[0].path}: {c.errors[0].message}" if c.errors else None


def summarize(checks: Sequence[CallCheck]) -> dict[str, Any]:
    """Counts over checked calls: calls, valid, invalid, and calls per schema source."""
    lost = [c for c in checks if c.leaked]
    checks = [c for c in checks if not c.leaked]
    valid = sum(c.check.valid for c in checks)
    sources = Counter(c.source for c in checks)
    return {
        "calls": len(checks),
        "valid": valid,
        "invalid": len(checks) - valid,
        "by_source": {s: sources.get(s, 0) for s in ("mcp_server", "offered", "none")},
        "lost_in_text": len(lost),
        "lost_by_format": dict(Counter(str(c.leaked) for c in lost).most_common()),
    }


@dataclass(frozen=True)
class _Offered:
    name: str
    parameters: Any


def _loads(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else text


def _offered_of(tools: Sequence[Any], parsed: dict[str, Any]) -> dict[str, list[_Offered]]:
    """Exchange id -> its offered tools (one object per distinct schema, compiled once)."""
    offered: dict[str, list[_Offered]] = {}
    for t in tools:
        schema = parsed.setdefault(t.schema_hash or "", _loads(t.parameters))
        offered.setdefault(t.exchange_id, []).append(_Offered(t.name, schema))
    return offered


def _checked(
    where: tuple[str, str | None, str | None],
    call: ToolCall,
    offered: Sequence[_Offered],
    servers: Sequence[tuple[str, str, Any]],
    leaked: str | None = None,
) -> CallCheck:
    """One call (`where`: exchange id, session id, model) checked against its schema: the
    MCP server's, else the offered one."""
    exchange_id, session_id, model = where
    resolved = resolve_schema(call.name, offered, servers)
    return CallCheck(
        exchange_id=exchange_id,
        session_id=session_id,
        index=call.index,
        model=model,
        name=call.name,
        source=resolved.source,
        server=resolved.server,
        tool=resolved.tool,
        check=check_tool_call(call, resolved.schema),
        leaked=leaked,
    )


def load_checks(
    capture: Any, session: str | None = None, origin: Origin = "any"
) -> list[CallCheck]:
    """Check every recorded tool call of `origin` in a capture (or of one session), then
    every call a server lost in a reply's text (`leaked` says its format)."""
    from toolproxy import store
    from toolproxy.store.queries.mcp import calls_with_model, server_tools, texts_without_calls

    with store.reading(capture) as r:
        calls, tools = calls_with_model(r, session, origin)
        servers = server_tools(r)
        texts, text_tools = texts_without_calls(r, session, origin)
    parsed: dict[str, Any] = {}
    offered = _offered_of(tools, parsed)
    checks = []
    for c, model in calls:
        call = ToolCall(
            index=c.index or 0,
            name=c.name,
            arguments_raw=c.arguments_raw or "",
            arguments=_loads(c.arguments),
            parse_error=c.parse_error,
        )
        where = (c.exchange_id, c.session_id, model)
        checks.append(_checked(where, call, offered.get(c.exchange_id, []), servers))
    lost_offered = _offered_of(text_tools, parsed)
    for exchange_id, session_id, model, text in texts:
        tools_here = lost_offered.get(exchange_id, [])
        leak = find_leaked_calls(text, {t.name for t in tools_here})
        if leak is None:
            continue
        where = (exchange_id, session_id, model)
        checks += [_checked(where, call, tools_here, servers, leak.format) for call in leak.calls]
    return checks
