"""Which server tool does a model-facing tool name mean?

Agents often rename MCP tools before offering them to a model: Claude Code offers
`mcp__git__git_status`, others `git__git_status`, `git_git_status`, `git.git_status` or
`mcp_git_git_status`. A prefix is only ever taken off when it is a real MCP server prefix:

- `mcp__<server>__<tool>`: Claude Code's form; the `mcp__` marker says what follows is a
  server name, so the tool part counts whatever the server is called in the agent's config;
- `<server><sep><tool>` or `mcp<sep><server><sep><tool>` for a server that is known (pulled
  with `toolproxy mcp pull`, or seen answering `initialize` through the proxy), with a
  separator from `SEPARATORS`.

An arbitrary `_` split never counts: `spotify_play` is not `play` unless `spotify` is a known
server. Drift, linking, schema checks, grading and replay all use this one rule.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Final

SEPARATORS: Final = ("__", ".", "_", "-", "/", ":")
MARKER: Final = "mcp__"


def _prefixes(server: str) -> list[str]:
    return [server] + [f"mcp{sep}{server}" for sep in SEPARATORS]


def behind_server(name: str, server: str) -> list[str]:
    """The tool names `name` stands for behind `server`'s own prefix (often none)."""
    out = []
    for prefix in _prefixes(server) if server else ():
        for sep in SEPARATORS:
            head = prefix + sep
            if name.startswith(head) and len(name) > len(head):
                out.append(name[len(head) :])
    return out


def bare_names(name: str, servers: Iterable[str] = ()) -> list[str]:
    """`name` itself, then every tool name it stands for behind a real server prefix."""
    out = [name]
    if name.startswith(MARKER):
        server, sep, tool = name[len(MARKER) :].partition("__")
        if server and sep and tool:
            out.append(tool)
    for server in servers:
        out += behind_server(name, server)
    return out


def name_matches(model_name: str, tool: str, servers: Iterable[str] = ()) -> bool:
    """True when `model_name` is `tool`, or `tool` behind a real server prefix (see above)."""
    return model_name == tool or tool in bare_names(model_name, servers)


def same_tool(a: str | None, b: str | None, servers: Collection[str] = ()) -> bool:
    """Do two names mean the same tool (either may carry a real server prefix)?"""
    if not a or not b:
        return False
    if a == b:
        return True
    if not (a.endswith(b) or b.endswith(a)):  # a prefixed name ends with the bare one
        return False
    return name_matches(a, b, servers) or name_matches(b, a, servers)


def match_tool(model_name: str, tools: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The (server, tool) that `model_name` refers to, among `tools` = (server, tool) pairs.

    An exact name wins; then a name behind its own server's prefix; then a name behind
    Claude Code's `mcp__<anything>__` whose tool part is unique across servers. Ambiguous or
    unknown names give None.
    """
    pairs = list(tools)
    exact = [p for p in pairs if p[1] == model_name]
    if len(exact) == 1:
        return exact[0]
    if exact:
        return None
    with_server = [p for p in pairs if p[1] in behind_server(model_name, p[0])]
    if len(with_server) == 1:
        return with_server[0]
    if with_server:
        return None
    marked = [p for p in pairs if name_matches(model_name, p[1])]
    return marked[0] if len(marked) == 1 else None
