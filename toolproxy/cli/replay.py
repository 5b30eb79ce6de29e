"""`toolproxy replay` and `toolproxy replay-diff`: candidates vs production, same grades."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from toolproxy.cli import options


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-send captured sessions or cases to candidate models, resumably, then grade them."""
    from toolproxy.cli.replaying import cmd_replay as run

    return run(args)


def cmd_replay_diff(args: argparse.Namespace) -> int:
    """Per call, recorded vs replayed: tool, arguments, label."""

    from toolproxy import store
    from toolproxy.errors import UserError
    from toolproxy.store.queries import replays
    from toolproxy.util.table import call_text, format_table
    from toolproxy.wire.common import decoded

    with store.reading(args.capture) as r:
        diffs = replays.diffs(r, args.run, list(args.candidate or []), args.changed)
        if not diffs and not replays.cell_count(r, args.run):
            raise UserError(f"no replay run named {args.run!r} in {args.capture}")
    if args.json:
        for d in diffs:
            d["recorded_arguments"] = decoded(d["recorded_arguments"])
            d["replayed_arguments"] = decoded(d["replayed_arguments"])
            print(json.dumps(d, ensure_ascii=False, default=str))
        return 0
    table = [
        [
            d["candidate"],
            d["item_id"],
            d["repeat"],
            d["step"],
            d["index"],
            call_text(d["recorded_tool"], d["recorded_arguments"]),
            call_text(d["replayed_tool"], d["replayed_arguments"]),
            "same"
            if d["same_tool"] and d["same_arguments"]
            else "tool"
            if not d["same_tool"]
            else "args",
            d["label"] or "",
        ]
        for d in diffs
    ]
    columns = ["candidate", "item", "k", "step", "#", "recorded", "replayed", "diff", "label"]
    print(format_table(columns, table, width=50))
    print(f"\n{len(diffs)} call(s)")
    return 0


def _workers(text: str) -> str | int:
    """`--workers`: `auto` or a positive number."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError("must be `auto` or a number from 1 to 64")
    return value


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `replay` and `replay-diff` to the top-level parser."""
    from toolproxy.cli.filters import add_filter_args
    from toolproxy.cli.main import add_capture_arg, add_command

    p = add_command(sub, "replay", cmd_replay)
    p.add_argument("config", type=Path, help="candidates file (YAML), e.g. replays/smollm2.yaml")
    add_capture_arg(p)
    p.add_argument(
        "--run",
        "-r",
        help="run name (default: the config's file stem + time); "
        "the same name resumes an interrupted run",
    )
    p.add_argument(
        "--cases",
        type=Path,
        action="append",
        default=[],
        help="replay these expectation cases instead of captured traffic",
    )
    p.add_argument(
        "--suite",
        metavar="NAME|PATH",
        help="replay a suite of tasks (conformance: 50 edge cases in 14 families; or a "
        "suite file), k=3 unless --repeats or the config says otherwise",
    )
    # captured model turns only: replayed traffic is never planned again
    add_filter_args(p, skip=("status", "parse_status", "origin"))
    p.add_argument(
        "--per",
        choices=["session", "exchange"],
        default="session",
        help="replay whole sessions turn by turn (default) or single exchanges",
    )
    p.add_argument(
        "--repeats", "-k", type=options.count, help="repeats per item (overrides the config)"
    )
    p.add_argument(
        "--candidate", action="append", default=[], help="only these candidates of the config"
    )
    p.add_argument(
        "--tools",
        choices=["recorded", "live"],
        default="recorded",
        help="when a call differs from the recorded one: stop there (recorded) or "
        "execute it on the MCP server that owns the tool (live)",
    )
    p.add_argument(
        "--allow-side-effects",
        action="store_true",
        help="with --tools live, also run tools not annotated read-only/idempotent",
    )
    p.add_argument(
        "--mcp-config",
        type=Path,
        action="append",
        default=[],
        help="MCP config(s) naming the servers for --tools live (default: the "
        "usual locations, as `toolproxy mcp pull`)",
    )
    p.add_argument(
        "--workers",
        type=_workers,
        default="auto",
        metavar="N",
        help="worker processes playing the cells (default auto: 1 under 200 cells to play, "
        "else min(CPUs, 4)); each candidate's concurrency and rate_limit are totals split "
        "across workers; --tools live always uses 1",
    )
    p.add_argument("--no-grade", action="store_true", help="do not grade the run afterwards")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress at all (without a terminal: a line per candidate every few seconds)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")

    p = add_command(sub, "replay-diff", cmd_replay_diff)
    p.add_argument("run", help="replay run name")
    add_capture_arg(p)
    p.add_argument("--candidate", action="append", default=[], help="only these candidates")
    p.add_argument("--changed", action="store_true", help="only calls that differ")
    p.add_argument("--json", action="store_true", help="print JSON lines")
