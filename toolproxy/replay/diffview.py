"""`toolproxy replay-diff`: per call, recorded vs replayed (tool, arguments, label), from
the run's `replay_diffs`, as a table or JSON lines."""

from __future__ import annotations

import argparse
import json
from typing import Any

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.util.table import format_table
from toolproxy.wire.common import decoded


def cmd_replay_diff(args: argparse.Namespace) -> int:
    """Per call, recorded vs replayed: tool, arguments, label."""
    from toolproxy.store.queries import replays

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
            _call(d["recorded_tool"], d["recorded_arguments"]),
            _call(d["replayed_tool"], d["replayed_arguments"]),
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


def _call(tool: str | None, arguments: Any) -> str:
    if tool is None:
        return "(none)"
    value = decoded(arguments)
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )
    return f"{tool}({text})"
