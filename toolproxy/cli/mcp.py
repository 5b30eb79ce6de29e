"""`toolproxy mcp ...`: the MCP sub-commands. Thin: arguments here, work in the modules."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolproxy.cli import options
from toolproxy.cli.filters import add_origin_arg
from toolproxy.util.words import counted

DEFAULT_SCHEMAS = Path("schemas/mcp")


def cmd_pull(args: argparse.Namespace) -> int:
    """Pull the real tool schemas from MCP servers (stdio, streamable HTTP) into the capture."""
    import json
    import os
    import sys
    from dataclasses import asdict
    from pathlib import Path

    from toolproxy.errors import UserError
    from toolproxy.mcp.pull import ServerSelection, find_specs, render_table, run_pull

    if not args.timeout > 0:
        raise UserError(f"--timeout must be positive, got {args.timeout}")
    selection = ServerSelection(
        config=args.config,
        stdio=args.stdio,
        url=args.url,
        header=args.header,
        name=args.name,
        server=args.server,
    )
    specs, configs, notes = find_specs(
        selection, Path.cwd(), Path.home(), dict(os.environ), sys.platform
    )
    if configs and not args.config:
        notes.insert(0, f"reading {', '.join(map(str, configs))}")
    for note in notes:
        print(f"toolproxy: {note}", file=sys.stderr)
    pull_id, pulled_at, results = run_pull(specs, args.capture, args.schemas, args.timeout)
    ok = sum(1 for r in results if r.status == "ok")
    if args.json:
        out = {
            "pull_id": pull_id,
            "pulled_at": pulled_at.isoformat(),
            "capture": str(args.capture),
            "schemas": str(args.schemas),
            "configs": [str(p) for p in configs],
            "servers": [asdict(r) for r in results],
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(render_table(results))
        print(
            f"\npulled {ok} of {len(results)} servers into {args.capture} (pull {pull_id}); "
            f"snapshots under {args.schemas}"
        )
    return 0 if ok == len(results) else 1


def cmd_drift(args: argparse.Namespace) -> int:
    """Where the tools the agent offered differ from what the MCP servers really accept."""
    import json

    from toolproxy.mcp.drift import load_drift, render_drift

    report = load_drift(args.capture, args.server, args.origin)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print(render_drift(report))
    return 0


def one_session(args: argparse.Namespace) -> str | None:
    """--session as the recorded id it is, or a unique prefix of (like git's); None: all."""
    if args.session is None:
        return None
    from toolproxy.cli.filters import resolve_prefixes

    return str(resolve_prefixes(args.capture, {"sessions": [args.session]})["sessions"][0])


def cmd_budget(args: argparse.Namespace) -> int:
    """Tokens spent on tool definitions: per request (top N), per tool, and in total."""
    import json

    from toolproxy.mcp.budget import compute_budget, load_requests, render_budget

    report = compute_budget(load_requests(args.capture, one_session(args), args.origin))
    if args.json:
        data = report.model_dump(mode="json")
        data["requests"] = data["requests"][: args.top]
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(render_budget(report, args.top))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Every recorded call checked against its MCP server's real schema: a row per call."""
    import json

    from toolproxy.mcp.check import load_checks, summarize
    from toolproxy.util.table import format_table

    checks = load_checks(args.capture, one_session(args), args.origin)
    summary = summarize(checks)
    shown = [c for c in checks if not c.check.valid] if args.failed else checks
    if args.json:
        out = {"summary": summary, "calls": [c.model_dump(mode="json") for c in shown]}
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    columns = ["session", "model", "tool", "schema", "valid", "first_error"]

    def row(c: Any) -> list[Any]:
        schema = f"{c.source} {c.server}:{c.tool}" if c.source == "mcp_server" else c.source
        valid = "yes" if c.check.valid else "NO"
        return [c.session_id, c.model, c.name, schema, valid, c.first_error]

    print(format_table(columns, [row(c) for c in shown if not c.leaked], width=80))
    lost = [c for c in shown if c.leaked]
    if lost:
        print("\nTool calls lost in text (the reply had no tool call; its text held this one):")
        lost_rows = [[*row(c)[:3], c.leaked, *row(c)[3:]] for c in lost]
        print(format_table([*columns[:3], "format", *columns[3:]], lost_rows, width=80))
    by = ", ".join(f"{k} {v}" for k, v in summary["by_source"].items())
    print(
        f"\n{counted(summary['calls'], 'call')}: "
        f"{summary['valid']} valid, {summary['invalid']} invalid"
        f" (schema: {by})"
    )
    if summary["lost_in_text"]:
        formats = ", ".join(f"{k} {v}" for k, v in summary["lost_by_format"].items())
        lost_n = summary["lost_in_text"]
        print(f"{counted(lost_n, 'call')} lost in text ({formats})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `mcp` and its sub-commands to the top-level parser."""
    from toolproxy.cli.main import add_capture_arg, add_command, add_group

    mcp_sub = add_group(
        sub, "mcp", "The MCP servers' real tools: pull their schemas, then drift, budget, check."
    )

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
        help='ad hoc stdio server, e.g. --stdio "mcp-server-git --repository ."; repeatable',
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

    # the agent's own traffic by default: a replay re-offers the recorded tools, once per
    # candidate and repeat, and its candidates' calls are not the agent's
    p = add("drift", cmd_drift)
    p.add_argument("--server", action="append", default=[], help="only these servers")
    add_origin_arg(p, "captured")

    p = add("budget", cmd_budget)
    p.add_argument("--session", help="only this session")
    p.add_argument("--top", type=options.count, default=20, help="rows of the per-request table")
    add_origin_arg(p, "captured")

    p = add("check", cmd_check)
    p.add_argument("--session", help="only this session")
    p.add_argument("--failed", action="store_true", help="only calls that fail validation")
    add_origin_arg(p, "captured")
