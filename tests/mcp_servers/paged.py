"""A low-level MCP server (stdio) whose tools come in pages and change with the environment.

    python tests/mcp_servers/paged.py

PAGED_VARIANT=2   get_item gains a parameter and .hidden is gone (a schema change)
PAGED_INVALID=1   get_item's inputSchema is not a valid JSON Schema
PAGED_NOTE=text   appended to get_item's description (a server echoing its config)
PAGED_LOOP=1      nextCursor never moves on (a paging bug)

Tool names include "/", a leading "." and non-ASCII, for the snapshot file-name rule.
tools/list answers two tools per page, following nextCursor.
"""

from __future__ import annotations

import os

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAGE = 2


def tools() -> list[types.Tool]:
    """The tool list for the current environment."""
    variant = os.environ.get("PAGED_VARIANT", "1")
    item_props: dict = {"id": {"type": "string", "description": "item id"}}
    if variant == "2":
        item_props["verbose"] = {"type": "boolean", "default": False}
    if os.environ.get("PAGED_INVALID") == "1":
        item_props["id"] = {"type": "bogus-type"}
    description = "Fetch one item." + os.environ.get("PAGED_NOTE", "")
    found = [
        types.Tool(
            name="get_item",
            title="Get item",
            description=description,
            inputSchema={"type": "object", "properties": item_props, "required": ["id"]},
            outputSchema={"type": "object", "properties": {"value": {"type": "string"}}},
            annotations=types.ToolAnnotations(readOnlyHint=True),
        ),
        types.Tool(
            name="files/read",
            description="Read a file.",
            inputSchema={"type": "object", "properties": {"path": {"type": "string"}}},
        ),
        types.Tool(
            name="Ünïcode tool",
            inputSchema={"type": "object", "properties": {}},
        ),
        types.Tool(
            name="list",
            description="List items.",
            inputSchema={
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"limit": {"type": "integer", "minimum": 1}},
            },
        ),
    ]
    if variant != "2":
        found.insert(2, types.Tool(name=".hidden", inputSchema={"type": "object"}))
    return found


def build() -> Server:
    """The server, answering tools/list a page at a time."""
    server: Server = Server("paged", version="0.3.0")

    @server.list_tools()
    async def list_tools(request: types.ListToolsRequest) -> types.ListToolsResult:
        cursor = request.params.cursor if request.params else None
        start = int(cursor) if cursor else 0
        page = tools()[start : start + PAGE]
        more = start + PAGE < len(tools())
        if os.environ.get("PAGED_LOOP") == "1":
            return types.ListToolsResult(tools=page, nextCursor=str(PAGE))
        return types.ListToolsResult(tools=page, nextCursor=str(start + PAGE) if more else None)

    return server


async def main() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
