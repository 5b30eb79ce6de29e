"""A FastMCP server with the kinds of tools agents meet: enums, integers, a destructive
tool, structured output, a tool that reports isError.

    python tests/mcp_servers/weather.py                      # stdio
    python tests/mcp_servers/weather.py --http PORT          # streamable HTTP on 127.0.0.1
    python tests/mcp_servers/weather.py --http PORT --json   # JSON responses instead of SSE
    python tests/mcp_servers/weather.py --sse PORT           # the older SSE transport
"""

from __future__ import annotations

import argparse
from typing import Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations
from pydantic import BaseModel


class Forecast(BaseModel):
    city: str
    temperature: float
    unit: str


def build(port: int = 8000, json_response: bool = False) -> FastMCP:
    """The server, with its tools registered."""
    server = FastMCP("weather", host="127.0.0.1", port=port, json_response=json_response)

    @server.tool(
        title="Current weather",
        annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True),
    )
    def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> Forecast:
        """Current weather for a city."""
        return Forecast(city=city, temperature=18.0 if unit == "celsius" else 64.4, unit=unit)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def search_notes(query: str, limit: int = 5) -> list[str]:
        """Search the user's notes."""
        return [f"{query} #{i}" for i in range(min(limit, 3))]

    @server.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False))
    def delete_note(note_id: str) -> str:
        """Delete a note by id."""
        if not note_id.startswith("n"):
            raise ValueError(f"no such note: {note_id}")
        return f"deleted {note_id}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, help="serve streamable HTTP on this port")
    parser.add_argument("--sse", type=int, help="serve the SSE transport on this port")
    parser.add_argument("--json", action="store_true", help="JSON responses, not SSE streams")
    args = parser.parse_args()
    if args.http:
        build(args.http, args.json).run(transport="streamable-http")
    elif args.sse:
        build(args.sse).run(transport="sse")
    else:
        build().run(transport="stdio")


if __name__ == "__main__":
    main()
