"""What the read commands print: rows as a table or JSON lines, `status` for a person, and
the command that browses a graded run."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolproxy.util.table import format_table


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[object]], as_json: bool) -> None:
    """Rows as a text table, or with `as_json` one JSON object per line."""
    if as_json:
        for row in rows:
            print(json.dumps(dict(zip(columns, row, strict=True)), default=str, ensure_ascii=False))
    else:
        print(format_table(columns, rows))


def tui_command(capture: Path | str, run: str) -> str:
    """The `toolproxy tui` line that opens a graded run (each case's details), quoted."""
    return f"toolproxy tui {shlex.quote(str(capture))} --run {shlex.quote(run)}"


def render_status(summary: dict[str, Any]) -> str:
    """`status` for a person: the figures, the tables' rows, the proxies as a table."""

    def when(value: Any) -> str:
        return value.strftime("%Y-%m-%d %H:%M:%S %Z") if hasattr(value, "strftime") else "-"

    lines = [
        f"capture   {summary['capture']}",
        f"sessions  {summary['sessions']:,}",
        f"first     {when(summary['first'])}",
        f"last      {when(summary['last'])}",
        f"pending   {summary['segments_pending']:,} segment file(s) not compacted yet",
        "",
        format_table(["table", "rows"], [[t, f"{n:,}"] for t, n in summary["tables"].items()]),
    ]
    proxies = summary["proxies"]
    if proxies:
        columns = ["proxy_id", "event", "at", "mode", "exchanges", "parse_failures",
                   "internal_errors", "recorder", "toolproxy_version"]  # fmt: skip
        rows = [[when(p[c]) if c == "at" else p.get(c) for c in columns] for p in proxies]
        headers = [*columns[:-1], "version"]  # of the toolproxy that recorded
        lines += ["", "proxies (latest event of each):", format_table(headers, rows)]
    warnings = summary["warnings"]
    lines += ["", "warnings: none" if not warnings else "warnings:"]
    lines += [f"  {w}" for w in warnings]
    return "\n".join(lines)
