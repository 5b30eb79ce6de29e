"""`toolproxy mcp drift`: the tools agents sent to models vs what MCP servers really expose.

`compute_drift` is pure: it takes each distinct offered definition (name, schema hash and
description, with how many exchanges offered it and when), each server tool of the latest
pull, and the names models called, and reports per tool how the copy differs from the
real definition (`schemadiff.diff_tool`), which server tools no agent offered, which
offered tools no server has, and which called names no server exposes. Names are mapped
to server tools with `toolnames.match_tool`. Only callable tools (`kind = 'function'`)
are compared: provider built-ins such as web search have no MCP counterpart.

A version is a distinct (name, schema_hash, description): a copy whose description alone
changed is a version of its own. With `--server`, only those servers' tools count as real,
so offered tools and calls of the other servers show up as extra / unknown.

JSON shape (`--json`; keys stable and in this order)::

    {
      "servers": [str],             # servers compared, from their latest pull
      "tools": [{                   # per offered version of a server tool, sorted by
        "server": str,              #   server, tool, first_seen
        "tool": str,
        "offered_name": str,        # the model-facing name, e.g. mcp__time__convert_time
        "offered_schema_hash": str,
        "server_schema_hash": str | null,
        "exchanges": int,           # exchanges that offered this version
        "first_seen": iso8601, "last_seen": iso8601,
        "changes": [{"kind": str, "path": str, "keyword": str | null,
                     "server": any, "offered": any}],   # see schemadiff for kinds
        "in_sync": bool             # no changes
      }],
      "missing": [{"server": str, "tool": str}],         # server tools never offered
      "extra": [{"name": str, "schema_hash": str,        # offered, no server has them
                 "exchanges": int, "first_seen": iso8601, "last_seen": iso8601}],
      "unknown_calls": [{"name": str, "calls": int,      # called names no server has,
                         "offered": bool,                # most called first; offered:
                         "first_seen": iso8601,          # the agent offered the name
                         "last_seen": iso8601}],
      "summary": {"servers": int, "tools": int, "in_sync": int, "drifted": int,
                  "changes": int, "missing": int, "extra": int, "unknown_calls": int}
    }

Exit code 0 whether or not there is drift (it is a report); 2 when the capture holds no
pulled schemas (`toolproxy mcp pull` first).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, computed_field

from toolproxy.errors import UserError
from toolproxy.mcp.schemadiff import Change, diff_tool
from toolproxy.wire.toolnames import match_tool

if TYPE_CHECKING:
    from toolproxy.store.filters import Origin


class NoSchemas(UserError):
    """The capture has no pulled MCP schemas to compare with."""


class OfferedVersion(BaseModel):
    """One distinct definition of a tool as agents offered it to models."""

    name: str
    description: str | None = None
    parameters: Any = None
    schema_hash: str
    exchanges: int = Field(default=0, description="exchanges that offered this definition")
    first_seen: datetime | None = None
    last_seen: datetime | None = None


class ServerTool(BaseModel):
    """One tool as its MCP server exposed it at the latest pull."""

    server: str
    name: str
    description: str | None = None
    input_schema: Any = None
    schema_hash: str | None = None


class CalledName(BaseModel):
    """A tool name models called, with how often and when."""

    name: str
    calls: int
    first_seen: datetime | None = None
    last_seen: datetime | None = None


class ToolDrift(BaseModel):
    """How one offered version of a server tool differs from the real one."""

    server: str
    tool: str
    offered_name: str
    offered_schema_hash: str
    server_schema_hash: str | None
    exchanges: int
    first_seen: datetime | None
    last_seen: datetime | None
    changes: list[Change]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def in_sync(self) -> bool:
        """The copy matches the server's definition."""
        return not self.changes


class MissingTool(BaseModel):
    """A server tool no agent offered."""

    server: str
    tool: str


class ExtraTool(BaseModel):
    """An offered tool no server has."""

    name: str
    schema_hash: str
    exchanges: int
    first_seen: datetime | None
    last_seen: datetime | None


class UnknownCall(BaseModel):
    """Calls to a tool name no server exposes."""

    name: str
    calls: int
    offered: bool = Field(description="the name was offered (an agent-local tool), else invented")
    first_seen: datetime | None
    last_seen: datetime | None


class DriftReport(BaseModel):
    """Everything `toolproxy mcp drift` reports; see the module docstring for the shape."""

    servers: list[str]
    tools: list[ToolDrift]
    missing: list[MissingTool]
    extra: list[ExtraTool]
    unknown_calls: list[UnknownCall]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def summary(self) -> dict[str, int]:
        """Counts of each section."""
        return {
            "servers": len(self.servers),
            "tools": len(self.tools),
            "in_sync": sum(t.in_sync for t in self.tools),
            "drifted": sum(not t.in_sync for t in self.tools),
            "changes": sum(len(t.changes) for t in self.tools),
            "missing": len(self.missing),
            "extra": len(self.extra),
            "unknown_calls": len(self.unknown_calls),
        }


def compute_drift(
    offered: Sequence[OfferedVersion],
    server_tools: Sequence[ServerTool],
    called: Sequence[CalledName],
) -> DriftReport:
    """Compare offered definitions and called names with the servers' real tools."""
    by_pair = {(t.server, t.name): t for t in server_tools}
    pairs = sorted(by_pair)
    tools: list[ToolDrift] = []
    extra: list[ExtraTool] = []
    seen: set[tuple[str, str]] = set()
    for version in offered:
        hit = match_tool(version.name, pairs)
        if hit is None:
            extra.append(
                ExtraTool(
                    name=version.name,
                    schema_hash=version.schema_hash,
                    exchanges=version.exchanges,
                    first_seen=version.first_seen,
                    last_seen=version.last_seen,
                )
            )
            continue
        seen.add(hit)
        real = by_pair[hit]
        tools.append(
            ToolDrift(
                server=real.server,
                tool=real.name,
                offered_name=version.name,
                offered_schema_hash=version.schema_hash,
                server_schema_hash=real.schema_hash,
                exchanges=version.exchanges,
                first_seen=version.first_seen,
                last_seen=version.last_seen,
                changes=diff_tool(
                    real.description, real.input_schema, version.description, version.parameters
                ),
            )
        )
    offered_names = {v.name for v in offered}
    unknown = [
        UnknownCall(
            name=c.name,
            calls=c.calls,
            offered=c.name in offered_names,
            first_seen=c.first_seen,
            last_seen=c.last_seen,
        )
        for c in called
        if match_tool(c.name, pairs) is None
    ]
    first = datetime.max.isoformat()
    tools.sort(key=lambda t: (t.server, t.tool, str(t.first_seen or first), t.offered_name))
    extra.sort(key=lambda t: (t.name, str(t.first_seen or first)))
    unknown.sort(key=lambda c: (-c.calls, c.name))
    return DriftReport(
        servers=sorted({t.server for t in server_tools}),
        tools=tools,
        missing=[MissingTool(server=s, tool=n) for s, n in pairs if (s, n) not in seen],
        extra=extra,
        unknown_calls=unknown,
    )


def _loads(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else text


def load_drift(capture: Path, servers: Sequence[str] = (), origin: Origin = "any") -> DriftReport:
    """Read a capture and compute its drift report (only `servers`, when given) over the
    exchanges of `origin`."""
    from toolproxy import store
    from toolproxy.store.queries import mcp as reads

    with store.reading(capture) as r:
        real = reads.latest_tools(r, list(servers))
        if not real:
            which = f" for server(s) {', '.join(servers)}" if servers else ""
            raise NoSchemas(
                f"{capture} has no pulled MCP schemas{which}; run `toolproxy mcp pull` first"
            )
        versions = reads.offered_versions(r, origin)
        calls = reads.call_counts(r, origin)
    return compute_drift(
        [
            OfferedVersion(
                name=n,
                description=d,
                parameters=_loads(p),
                schema_hash=h,
                exchanges=x,
                first_seen=f,
                last_seen=la,
            )
            for n, d, p, h, x, f, la in versions
        ],
        [
            ServerTool(server=s, name=n, description=d, input_schema=_loads(i), schema_hash=h)
            for s, n, d, i, h in real
        ],
        [CalledName(name=n, calls=c, first_seen=f, last_seen=la) for n, c, f, la in calls],
    )


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else ""


def _shown(change: Change, value: Any) -> Any:
    if change.kind == "required_changed":
        return "required" if value else "optional"
    return "(absent)" if value is None else value


def render_drift(report: DriftReport) -> str:
    """The report as terminal tables."""
    from toolproxy.util.table import format_table

    s = report.summary
    parts = [
        f"{s['tools']} offered version(s) of tools on {s['servers']} server(s) "
        f"({', '.join(report.servers)}): {s['in_sync']} in sync, {s['drifted']} drifted "
        f"({s['changes']} changes); {s['missing']} missing, {s['extra']} extra, "
        f"{s['unknown_calls']} called name(s) no server exposes"
    ]
    if report.tools:
        rows = [
            [t.server, t.tool, t.offered_name, t.offered_schema_hash, t.exchanges,
             _when(t.last_seen), "in sync" if t.in_sync else f"{len(t.changes)} changes"]
            for t in report.tools
        ]  # fmt: skip
        cols = ["server", "tool", "offered_as", "schema", "exchanges", "last_seen", "drift"]
        parts += ["", "Tools offered vs the servers' real definitions", format_table(cols, rows)]
    changes = [
        [f"{t.server}:{t.tool}", c.kind, c.path or "(tool)", c.keyword]
        + [_shown(c, c.server), _shown(c, c.offered)]
        for t in report.tools
        for c in t.changes
    ]
    if changes:
        cols = ["tool", "change", "path", "keyword", "server", "offered"]
        parts += ["", "Changes (server = real, offered = what the agent sent)"]
        parts.append(format_table(cols, changes, width=50))
    if report.missing:
        rows = [[m.server, m.tool] for m in report.missing]
        parts += [
            "",
            "Missing: server tools no agent offered",
            format_table(["server", "tool"], rows),
        ]
    if report.extra:
        rows = [[e.name, e.schema_hash, e.exchanges, _when(e.last_seen)] for e in report.extra]
        cols = ["name", "schema", "exchanges", "last_seen"]
        parts += ["", "Extra: offered tools no server has", format_table(cols, rows)]
    if report.unknown_calls:
        rows = [
            [u.name, u.calls, "yes" if u.offered else "no", _when(u.last_seen)]
            for u in report.unknown_calls
        ]
        cols = ["name", "calls", "offered", "last_seen"]
        parts += ["", "Calls to tool names no server exposes", format_table(cols, rows)]
    return "\n".join(parts)
