"""Linking MCP traffic to model traffic: which model tool call did a `tools/call` execute?

Pure: no I/O, no SDK imports. The recorder keeps one `Linker` next to its SessionTracker
and feeds it every exchange in completion order (`rows.build_rows`).

The rule (docs/mcp.md "Linking MCP calls"):

- Every tool call a model response emits is remembered, in completion order, with its
  exchange, call id, session, name and canonical arguments (`records.canonical_json`).
  Calls whose arguments do not parse as JSON are not remembered (nothing can equal them).
- A client `tools/call` over MCP links the *oldest* remembered, not yet linked model call
  that completed before it, whose canonical arguments equal the MCP call's (absent MCP
  arguments count as ``{}``) and whose name is the MCP tool's name, possibly behind a real
  server prefix (`toolnames.name_matches`: ``mcp__<any>__get_weather``, and
  ``weather__get_weather`` once a server named ``weather`` is known: its ``serverInfo.name``
  was seen answering ``initialize`` through this proxy, or it was passed in ``servers``).
  When the MCP request carries the explicit session header, only calls of that session
  qualify. Each model call is linked at most once, so the same call made twice pairs up
  first with first, second with second.
- The MCP row gets `linked_exchange_id` / `linked_call_id`.

Sessions for MCP exchanges, first match wins:
1. `header`       the explicit session header;
2. `linked`       a `tools/call` linked to a model call joins that call's session;
3. `mcp_session`  an `Mcp-Session-Id` seen before: all exchanges of one MCP session share
                  one toolproxy session (the `initialize` exchange, which receives the id in
                  its response, starts it);
4. `new`          otherwise a fresh session id.

Limits: state is in memory and bounded (the oldest unlinked calls and MCP sessions are
forgotten first), per recorder, i.e. per proxy process: the model traffic and the MCP
traffic must pass through the same proxy to be linked. A name that several servers'
tools match (``a__get`` and ``b__get`` with equal arguments) links the oldest call.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from toolproxy.records import McpMessage, ToolCall, canonical_json
from toolproxy.wire.toolnames import name_matches

# Unlinked model calls remembered; an agent executes calls within seconds, so this is
# hours of traffic. MCP session ids remembered, likewise.
MAX_CALLS = 10_000
MAX_MCP_SESSIONS = 100_000


@dataclass(frozen=True, slots=True)
class ModelCall:
    """A model tool call waiting for its execution."""

    exchange_id: str
    call_id: str | None
    session_id: str
    name: str
    arguments: str  # canonical JSON


class Linker:
    """Links MCP `tools/call` rows to earlier model tool calls; places MCP exchanges."""

    def __init__(
        self,
        limit: int = MAX_CALLS,
        sessions_limit: int = MAX_MCP_SESSIONS,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex[:16],
        servers: Iterable[str] = (),
    ) -> None:
        self.limit = limit
        self.servers: set[str] = set(servers)  # known MCP server names (prefixes that count)
        self.sessions_limit = sessions_limit
        self._new_id = new_id
        self._seq = 0
        # seq -> call, oldest first; and canonical arguments -> seqs, for the lookup.
        self._calls: OrderedDict[int, ModelCall] = OrderedDict()
        self._by_arguments: dict[str, list[int]] = {}
        self._mcp_sessions: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._calls)

    def remember(self, exchange_id: str, session_id: str, calls: Iterable[ToolCall]) -> None:
        """Remember a model response's tool calls (those with a name and parsed arguments)."""
        for call in calls:
            if call.name is None or call.parse_error is not None:
                continue
            self._seq += 1
            entry = ModelCall(
                exchange_id, call.call_id, session_id, call.name, canonical_json(call.arguments)
            )
            self._calls[self._seq] = entry
            self._by_arguments.setdefault(entry.arguments, []).append(self._seq)
            while len(self._calls) > self.limit:
                self._forget(next(iter(self._calls)))

    def link(
        self, tool_name: str, arguments: Any, session_id: str | None = None
    ) -> ModelCall | None:
        """The oldest unlinked model call this MCP call executes, now linked; or None."""
        key = canonical_json({} if arguments is None else arguments)
        for seq in self._by_arguments.get(key, ()):
            call = self._calls[seq]
            if session_id is not None and call.session_id != session_id:
                continue
            if name_matches(call.name, tool_name, self.servers):
                self._forget(seq)
                return call
        return None

    def place(
        self, messages: Sequence[McpMessage], mcp_session_id: str | None, explicit: str | None
    ) -> tuple[str, str]:
        """Link an MCP exchange's `tools/call` rows; return its (session_id, source)."""
        first: ModelCall | None = None
        for row in messages:
            if row.method == "initialize" and isinstance(row.result, dict):
                info = row.result.get("serverInfo")
                name = info.get("name") if isinstance(info, dict) else None
                if isinstance(name, str) and name and len(self.servers) < self.sessions_limit:
                    self.servers.add(name)
            if row.direction != "client" or row.method != "tools/call" or not row.tool_name:
                continue
            call = self.link(row.tool_name, row.arguments, explicit)
            if call is not None:
                row.linked_exchange_id, row.linked_call_id = call.exchange_id, call.call_id
                first = first or call
        if explicit:
            session, source = explicit, "header"
        elif first is not None:
            # A linked call belongs to the model's session, not to the MCP session (one MCP
            # session may serve many model sessions), so the MCP id is not re-pointed.
            return first.session_id, "linked"
        elif mcp_session_id and mcp_session_id in self._mcp_sessions:
            self._mcp_sessions.move_to_end(mcp_session_id)
            return self._mcp_sessions[mcp_session_id], "mcp_session"
        else:
            session, source = self._new_id(), "new"
        if mcp_session_id and mcp_session_id not in self._mcp_sessions:
            self._mcp_sessions[mcp_session_id] = session
            while len(self._mcp_sessions) > self.sessions_limit:
                self._mcp_sessions.popitem(last=False)
        return session, source

    def _forget(self, seq: int) -> None:
        call = self._calls.pop(seq)
        seqs = self._by_arguments[call.arguments]
        seqs.remove(seq)
        if not seqs:
            del self._by_arguments[call.arguments]
