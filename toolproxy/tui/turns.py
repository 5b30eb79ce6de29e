"""A session's transcript as text (pure): turn by turn, with its calls and offered tools.

A call's arguments are pretty JSON, one field per line, and every schema violation is
written right under the field it is about (`✗ $.city: 3 is not of type 'string'`), checked
against the schema the server really accepts when an MCP server's pull has the tool, else
the offered one (`schema.resolving.resolve_schema`, as `mcp check` does). Offered tools
whose copy differs from the server's definition are marked `≠ server`, and with the tools
opened each one shows its schema and its drift (`mcp.schemadiff`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolproxy.mcp.schemadiff import diff_schemas, inline_refs
from toolproxy.schema.resolving import resolve_schema
from toolproxy.schema.validator import check_value
from toolproxy.store.rows import CallRow, ExchangeDetail, OfferedRow
from toolproxy.tui.views import number, pretty, when
from toolproxy.wire.toolnames import match_tool

ServerTools = Sequence[tuple[str, str, Any]]  # (server, tool, input_schema)
INDENT = "    "
VIOLATION = "✗"
DRIFT = "≠"
SYSTEM_FOLD = 80  # characters of a system prompt shown before it is folded


def json_lines(value: Any, path: str = "$", key: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """`value` pretty-printed as (JSON path, line) pairs; paths spelled as jsonschema's
    `json_path` spells them (`$.a.b[0]`), so a violation finds its line."""
    pad = "  " * depth
    label = f"{json.dumps(key, ensure_ascii=False)}: " if key else ""
    if isinstance(value, dict) and value:
        lines = [(path, f"{pad}{label}{{")]
        for i, (k, v) in enumerate(value.items()):
            inner = json_lines(v, f"{path}.{k}", str(k), depth + 1)
            if i < len(value) - 1:
                inner[-1] = (inner[-1][0], inner[-1][1] + ",")
            lines += inner
        return [*lines, (path, f"{pad}}}")]
    if isinstance(value, list) and value:
        lines = [(path, f"{pad}{label}[")]
        for i, v in enumerate(value):
            inner = json_lines(v, f"{path}[{i}]", "", depth + 1)
            if i < len(value) - 1:
                inner[-1] = (inner[-1][0], inner[-1][1] + ",")
            lines += inner
        return [*lines, (path, f"{pad}]")]
    return [(path, f"{pad}{label}{json.dumps(value, ensure_ascii=False, default=str)}")]


def call_lines(
    call: CallRow, offered: Sequence[OfferedRow], server_tools: ServerTools
) -> list[str]:
    """A call, its arguments and each violation under its field."""
    resolved = resolve_schema(call.name, offered, server_tools)
    where = {"mcp_server": f" · schema of MCP server {resolved.server}", "offered": ""}
    hosted = f" · run by the provider on MCP server {call.mcp_server}" if call.mcp_server else ""
    lines = [f"→ call {call.name}{hosted}{where.get(resolved.source, ' · no schema to check')}"]
    if call.parse_error is not None or not isinstance(call.arguments, dict | list):
        lines.append(f"{INDENT}{call.arguments_raw or ''}")
        if call.parse_error:
            lines.append(f"{INDENT}! arguments did not parse: {call.parse_error}")
        return lines
    check = check_value(call.arguments, resolved.schema)
    by_path: dict[str, list[str]] = {}
    for v in check.errors:
        by_path.setdefault(v.path, []).append(f"{VIOLATION} {v.path}: {v.message}")
    placed: set[str] = set()
    body = json_lines(call.arguments)
    for n, (path, text) in enumerate(body):
        lines.append(INDENT + text)
        last_of_path = all(p != path for p, _ in body[n + 1 :])
        if last_of_path and path in by_path:  # under the field (a container: its end)
            lines += [INDENT + "  " + m for m in by_path[path]]
            placed.add(path)
    lines += [INDENT + "  " + m for p, ms in by_path.items() if p not in placed for m in ms]
    if check.schema_error:
        lines.append(f"{INDENT}! the schema cannot be used: {check.schema_error}")
    return lines


def drift_of(tool: OfferedRow, server_tools: ServerTools) -> list[str]:
    """How the offered copy's schema differs from the server's (empty when it does not, or
    no pulled server has the tool)."""
    schemas = {(server, name): schema for server, name, schema in server_tools}
    hit = match_tool(tool.name, schemas)
    if hit is None:
        return []
    changes = diff_schemas(inline_refs(schemas[hit]), inline_refs(tool.parameters))
    return [
        f"{DRIFT} {c.kind} {c.path or '(tool)'}{f' {c.keyword}' if c.keyword else ''}: "
        f"server {json.dumps(c.server, default=str)}, offered {json.dumps(c.offered, default=str)}"
        for c in changes
    ]


def offered_lines(
    offered: Sequence[OfferedRow], server_tools: ServerTools, open_: bool
) -> list[str]:
    """The tools offered: one line of names (drifted ones marked), or, opened, each tool
    with its schema and its drift against the server."""
    if not offered:
        return []
    drifts = {t.name: drift_of(t, server_tools) for t in offered}
    if not open_:
        names = [f"{t.name} {DRIFT} server" if drifts[t.name] else t.name for t in offered]
        return [f"tools offered: {', '.join(names)}  (t: open)"]
    lines = [f"tools offered ({len(offered)}, t: fold):"]
    for t in offered:
        schema = json.dumps(t.parameters, ensure_ascii=False, separators=(",", ":"), default=str)
        lines.append(f"  {t.name}: {schema}")
        lines += [f"    {d}" for d in drifts[t.name]]
    return lines


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if p)
    return "" if content is None else pretty(content)


def _messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    raw = request.get("messages")
    value = json.loads(raw) if isinstance(raw, str) else raw
    return [m for m in value or [] if isinstance(m, dict)]


def own_line(message: dict[str, Any]) -> bool:
    """Whether a request message is a transcript line of its own: a reply with calls
    (`tool_calls`, the legacy `function_call`, Gemini's `functionCall` parts, Converse's
    `toolUse` blocks) is shown in the turn that made it, and a result (`tool`, legacy
    `function`, a content of Gemini's `functionResponse` parts or of Converse's
    `toolResult` blocks) under the call it answered."""
    role = message.get("role", "?")
    if role == "assistant" and (message.get("tool_calls") or message.get("function_call")):
        return False
    parts = [p for p in message.get("parts") or [] if isinstance(p, dict)]  # Gemini's
    if any("functionCall" in p or "function_call" in p for p in parts) or (
        parts and all("functionResponse" in p or "function_response" in p for p in parts)
    ):
        return False
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if any("toolUse" in b for b in blocks) or (  # Bedrock Converse's
        blocks and all("toolResult" in b for b in blocks)
    ):
        return False
    return role not in ("tool", "function")


def turn_header(n: int, d: ExchangeDetail) -> str:
    """`── turn 2 · time · model · format · TTFB · latency · tokens · decode tokens/s ──`
    (a figure the exchange lacks is left out)."""
    x = d.exchange
    tps = d.request.get("decode_tps")
    parts = [f"turn {n}", when(x.started_at), x.model or "?", x.wire_format or "?"]
    if x.ttfb_ms is not None:
        parts.append(f"TTFB {number(x.ttfb_ms)} ms")
    if x.latency_ms is not None:
        parts.append(f"latency {number(x.latency_ms)} ms")
    if x.input_tokens is not None or x.output_tokens is not None:
        parts.append(f"{number(x.input_tokens)}→{number(x.output_tokens)} tokens")
    if isinstance(tps, int | float):
        parts.append(f"{tps:,.1f} tok/s")
    return f"── {' · '.join(parts)} ──"


def transcript(
    turns: list[ExchangeDetail], server_tools: ServerTools = (), tools_open: bool = False
) -> list[str]:
    """A session turn by turn (`turn_lines` of each)."""
    return [
        line for n in range(len(turns)) for line in turn_lines(turns, n, server_tools, tools_open)
    ]


def turn_lines(
    turns: list[ExchangeDetail], n: int, server_tools: ServerTools = (), tools_open: bool = False
) -> list[str]:
    """Turn `n` (0-based) of a session: the messages its request added to the one before
    (the system prompt, folded, on the first turn), the tools offered (drift against the
    MCP servers marked), each call with its arguments and their schema violations, its MCP
    execution and the result that answered it, the reply and the error. Only this turn's
    and the previous turn's requests are read, so a long session costs what one turn does."""
    d = turns[n]
    x = d.exchange
    lines = [turn_header(n + 1, d)]
    system = d.request.get("system")
    if system and n == 0:
        text = _text(
            json.loads(system) if isinstance(system, str) and system[:1] in '[{"' else system
        )
        folded = text if len(text) <= SYSTEM_FOLD else text[:SYSTEM_FOLD] + f"… ({len(text)} chars)"
        lines.append(f"system: {folded}")
    messages = _messages(d.request)
    seen = len(_messages(turns[n - 1].request)) if n else 0
    new = messages[seen:] if len(messages) >= seen else messages
    for m in new:
        if own_line(m):
            said = m.get("content", m.get("parts"))  # Gemini's contents have parts
            lines.append(f"{m.get('role', '?')}: {_text(said)}")
    lines += offered_lines(d.offered, server_tools, tools_open)
    results = {r.index: r for r in d.results}
    executions = {m.linked_call_id: m for m in d.mcp}
    for c in d.calls:
        lines += call_lines(c, d.offered, server_tools)
        if c.call_id in executions:
            e = executions[c.call_id]
            lines.append(f"  MCP tools/call {e.tool_name} (exchange {e.mcp_exchange_id})")
        if c.index in results:
            r = results[c.index]
            mark = " (error)" if r.result_is_error else ""
            lines.append(f"  ← result{mark}: {r.result}")
    reply = d.request.get("assistant_text")
    if reply:
        lines.append(f"assistant: {reply}")
    if refusal := d.request.get("refusal"):
        lines.append(f"assistant refused: {refusal}")
    if x.error_kind:
        lines.append(f"! {x.error_kind}: {d.request.get('error_message') or ''}".rstrip(": "))
    lines.append("")
    return lines


def line_style(line: str) -> str:
    """How the transcript colours a line: turns bold, violations and errors red, drift
    and refusals yellow, calls cyan, results green."""
    text = line.lstrip()
    if text.startswith("── turn"):
        return "bold"
    if text.startswith((VIOLATION, "! ")):
        return "bold red"
    if text.startswith(DRIFT) or f" {DRIFT} server" in text or text.startswith("assistant refused"):
        return "yellow"
    if text.startswith("→ call"):
        return "cyan"
    if text.startswith("← result (error)"):
        return "red"
    if text.startswith("← result"):
        return "green"
    return ""
