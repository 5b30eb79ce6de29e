"""The schema a tool call is checked against: `resolve_schema` picks the MCP server's real
schema when one is known for the tool, else the one the agent sent, else none (the grader
calls it for every call; compiled by mypyc with the grading core). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from toolproxy.util.absent import ABSENT
from toolproxy.wire.toolnames import match_tool

SchemaSource = Literal["mcp_server", "offered", "none"]


class OfferedLike(Protocol):
    """What resolution needs of an offered tool (`records.ToolOffered` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> Any: ...


@dataclass(init=False)
class ResolvedSchema:
    """The schema a call is checked against, and where it came from."""

    schema: Any  # the JSON Schema (None when source is "none")
    source: SchemaSource
    server: str | None = None  # MCP server name, for source "mcp_server"
    tool: str | None = None  # server tool name, or the offered tool's name

    def __init__(
        self, schema: Any, source: SchemaSource, server: str | None = None, tool: str | None = None
    ) -> None:  # written, so mypyc compiles it (a dataclass's runs as Python)
        self.schema, self.source, self.server, self.tool = schema, source, server, tool


def resolve_schema(
    call_name: str | None,
    offered: Sequence[OfferedLike] | dict[str, Any],
    server_tools: Sequence[tuple[str, str, Any]],
) -> ResolvedSchema:
    """The schema for a call named `call_name`: the real one, else the offered one, else none.

    `server_tools` are (server, tool, input_schema); the model-facing name is mapped to a
    server tool with `toolnames.match_tool`, so prefixed names (`mcp__git__git_status`)
    find their server. `offered` is the tools block of the request that got the call, or
    its name -> parameters (`grade.checker.offered_tools`).
    """
    if call_name is None:
        return ResolvedSchema(None, "none")
    if server_tools:
        schemas = {(server, tool): schema for server, tool, schema in server_tools}
        hit = match_tool(call_name, schemas)
        if hit is not None:
            return ResolvedSchema(schemas[hit], "mcp_server", hit[0], hit[1])
    if isinstance(offered, dict):
        schema, source = offered_schema(call_name, offered)
        return ResolvedSchema(schema, source, None, None if source == "none" else call_name)
    for tool in offered:
        if tool.name == call_name:
            return ResolvedSchema(tool.parameters, "offered", None, tool.name)
    return ResolvedSchema(None, "none", None, None)


def offered_schema(call_name: str | None, offered: dict[str, Any]) -> tuple[Any, SchemaSource]:
    """`resolve_schema`'s schema and source when no MCP server's schema is known: the
    offered one (None when the tool was offered without parameters), else none. A pair,
    not a record: compiled, it is returned without building an object (the grader asks
    once a call)."""
    if call_name is None:
        return None, "none"
    found = offered.get(call_name, ABSENT)  # one lookup (`in`, then the item: two)
    if found is ABSENT:
        return None, "none"
    return found, "offered"  # (returned apiece: a conditional of two pairs boxes a tuple)
