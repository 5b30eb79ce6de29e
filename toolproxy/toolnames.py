"""Which server tool does a model-facing tool name mean?

Agents often rename MCP tools before offering them to a model: Claude Code offers
`mcp__git__git_status`, others `git_git_status`, `git.git_status` or `git-git_status`.
`match_tool` maps such a name back to a server's tool; drift, linking and schema checks
all use this one rule.
"""

from __future__ import annotations

from collections.abc import Iterable

SEPARATORS = ("__", ".", "_", "-", "/", ":")


def name_matches(model_name: str, tool: str, server: str | None = None) -> bool:
    """True when `model_name` is `tool`, or `tool` behind a server prefix and a separator.

    With `server` given, the prefix must end in the server's name (`mcp__git__git_status`
    for server `git`); without it, any prefix ending in a separator is accepted.
    """
    if model_name == tool:
        return True
    for sep in SEPARATORS:
        suffix = sep + tool
        if model_name.endswith(suffix) and len(model_name) > len(suffix):
            prefix = model_name[: -len(suffix)]
            if (
                server is None
                or prefix == server
                or prefix.endswith(tuple(s + server for s in SEPARATORS))
            ):
                return True
    return False


def match_tool(model_name: str, tools: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The (server, tool) that `model_name` refers to, among `tools` = (server, tool) pairs.

    An exact name wins; then a prefixed name naming its server; then a prefixed name whose
    tool part is unique across servers. Ambiguous or unknown names give None.
    """
    pairs = list(tools)
    exact = [p for p in pairs if p[1] == model_name]
    if len(exact) == 1:
        return exact[0]
    if exact:
        return None
    with_server = [p for p in pairs if name_matches(model_name, p[1], p[0])]
    if len(with_server) == 1:
        return with_server[0]
    loose = [p for p in pairs if name_matches(model_name, p[1])]
    # longest tool name first: "get_weather" beats "weather" for "srv_get_weather"
    loose.sort(key=lambda p: len(p[1]), reverse=True)
    if loose and (len(loose) == 1 or len(loose[0][1]) > len(loose[1][1])):
        return loose[0]
    return None
