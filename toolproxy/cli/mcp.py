"""`toolproxy mcp ...`: the MCP sub-commands. Thin: arguments here, work in the modules."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

DEFAULT_SCHEMAS = Path("schemas/mcp")


def cmd_pull(args: argparse.Namespace) -> int:
    """Pull the real tool schemas from MCP servers (configs as you have them, or ad hoc)."""
    from toolproxy.mcp.pull import cmd_mcp_pull

    return cmd_mcp_pull(args)


def cmd_drift(args: argparse.Namespace) -> int:
    """Compare the tools agents sent to models with what the MCP servers really expose."""
    from toolproxy.mcp.drift import cmd_mcp_drift

    return cmd_mcp_drift(args)


def cmd_budget(args: argparse.Namespace) -> int:
    """What the tools block costs per request, per tool, and over the capture."""
    from toolproxy.mcp.budget import cmd_mcp_budget

    return cmd_mcp_budget(args)


def cmd_check(args: argparse.Namespace) -> int:
    """Validate recorded tool calls against the real schema (else the one sent)."""
    from toolproxy.mcp.check import cmd_mcp_check

    return cmd_mcp_check(args)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `mcp` and its sub-commands to the top-level parser."""
    mcp = sub.add_parser(
        "mcp",
        help="MCP awareness: pull, drift, budget, check",
        description="MCP awareness: pull, drift, budget, check",
    )
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True, metavar="MCP_COMMAND")

    from toolproxy.cli.main import add_capture_arg, add_command

    def add(name: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        p = add_command(mcp_sub, name, func)
        add_capture_arg(p)
        p.add_argument("--json", action="store_true", help="print JSON instead of tables")
        return p

    p = add("pull", cmd_pull)
    p.add_argument(
        "--config",
        action="append",
        default=[],
        type=Path,
        help="MCP config file: Claude Desktop / Cursor (mcpServers) or VS Code "
        "(servers); repeatable. Default: the usual locations that exist",
    )
    p.add_argument(
        "--stdio",
        action="append",
        default=[],
        help='ad hoc stdio server, e.g. --stdio "uvx mcp-server-time"; repeatable',
    )
    p.add_argument(
        "--url",
        action="append",
        default=[],
        help="ad hoc remote server (streamable HTTP; /sse URLs use SSE); repeatable",
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        help="K:V header for --url servers; repeatable (values are never stored)",
    )
    p.add_argument(
        "--name",
        action="append",
        default=[],
        help="name for each ad hoc server, in order (default: derived)",
    )
    p.add_argument(
        "--server", action="append", default=[], help="only pull these servers from the config(s)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds per server to start, initialize and list (default 30)",
    )
    p.add_argument(
        "--schemas",
        type=Path,
        default=DEFAULT_SCHEMAS,
        help=f"snapshot folder, one JSON file per tool (default: {DEFAULT_SCHEMAS})",
    )

    p = add("drift", cmd_drift)
    p.add_argument("--server", action="append", default=[], help="only these servers")

    p = add("budget", cmd_budget)
    p.add_argument("--session", help="only this session")
    p.add_argument("--top", type=int, default=20, help="rows of the per-request table")

    p = add("check", cmd_check)
    p.add_argument("--session", help="only this session")
    p.add_argument("--failed", action="store_true", help="only calls that fail validation")
