"""Live tools for `toolproxy replay --tools live`: run candidates' calls on MCP servers.

`McpLiveTools(specs, server_tools, allow_side_effects)` maps a model-facing tool name to
the server tool it means (`toolnames.match_tool`, so `mcp__weather__get_weather` finds
`get_weather` on server `weather`) and runs it there. A tool runs only when its
annotations say `readOnlyHint` or `idempotentHint` is true, unless `allow_side_effects`;
anything else (unknown names, servers that cannot start, calls that fail at the protocol
level) gives None, and the replay stops there. A tool that runs and reports an error is a
result (`is_error=True`): the candidate sees it, as it would in production.

One MCP session per server, opened on its first call and kept for the run; use the object
as an async context manager so every server is shut down at the end. `refused` keeps why
each name was not run, for the run's notes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from typing import Any

from toolproxy.mcp import client as mcpclient
from toolproxy.mcp.config import ServerSpec
from toolproxy.mcp.outcomes import Failure
from toolproxy.replay.engine import LiveResult
from toolproxy.wire.toolnames import match_tool

DEFAULT_TIMEOUT_S = 30.0


def allowed(tool: Mapping[str, Any], allow_side_effects: bool) -> bool:
    """Whether a listed MCP tool may run: read-only or idempotent, or side effects allowed."""
    if allow_side_effects:
        return True
    notes = tool.get("annotations") or {}
    return notes.get("readOnlyHint") is True or notes.get("idempotentHint") is True


class McpLiveTools:
    """Runs calls on the MCP servers in `specs` (see the module doc).

    `server_tools` maps server name -> its tools as listed (MCP JSON: `name`,
    `annotations`, ...), e.g. from the capture's latest pull; None lists every server's
    tools on the first call instead.
    """

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        server_tools: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        allow_side_effects: bool = False,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.specs = {s.name: s for s in specs}
        self.allow_side_effects = allow_side_effects
        self.timeout = timeout
        self.refused: dict[str, str] = {}
        self._tools: dict[tuple[str, str], Mapping[str, Any]] | None = None
        if server_tools is not None:
            self._tools = _index(server_tools)
        self._sessions: dict[str, mcpclient.Session] = {}
        self._listing = asyncio.Lock()
        self._logs = ExitStack()

    async def __aenter__(self) -> McpLiveTools:
        self._logs.enter_context(mcpclient.quiet_sdk_logs())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Shut every server down."""
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions))
        self._logs.close()

    async def call(self, name: str, arguments: dict[str, Any]) -> LiveResult | None:
        """Run model-facing tool `name` with `arguments`; None when it may not or cannot."""
        tools = await self._known()
        hit = match_tool(name, tools)
        if hit is None:
            return self._refuse(name, "no MCP server has this tool (or several do)")
        if not allowed(tools[hit], self.allow_side_effects):
            return self._refuse(name, "not annotated read-only or idempotent")
        if hit[0] not in self.specs:
            return self._refuse(name, f"no MCP config names server {hit[0]}")
        outcome = await self._session(hit[0]).call(hit[1], arguments)
        if isinstance(outcome, Failure):
            return self._refuse(name, f"{hit[0]}: {outcome.kind}: {outcome.message}")
        content, is_error = outcome
        return LiveResult(content=content, is_error=is_error)

    def _refuse(self, name: str, why: str) -> LiveResult | None:
        self.refused.setdefault(name, why)
        return None

    def _session(self, server: str) -> mcpclient.Session:
        session = self._sessions.get(server)
        if session is None:
            session = mcpclient.Session(self.specs[server], self.timeout)
            self._sessions[server] = session
        return session

    async def _known(self) -> dict[tuple[str, str], Mapping[str, Any]]:
        """(server, tool) -> tool, listing the servers on first use when not given."""
        if self._tools is not None:
            return self._tools
        async with self._listing:
            if self._tools is None:
                names = list(self.specs)
                await asyncio.gather(*(self._session(n).start() for n in names))
                listed: dict[str, Sequence[Mapping[str, Any]]] = {}
                for n in names:
                    listing = self._sessions[n].listing
                    listed[n] = listing.tools if listing is not None else []
                self._tools = _index(listed)
        return self._tools


def _index(
    server_tools: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[tuple[str, str], Mapping[str, Any]]:
    return dict(_pairs(server_tools))


def _pairs(
    server_tools: Mapping[str, Sequence[Mapping[str, Any]]],
) -> Iterator[tuple[tuple[str, str], Mapping[str, Any]]]:
    for server, tools in server_tools.items():
        for tool in tools:
            if isinstance(tool.get("name"), str):
                yield (server, tool["name"]), tool
