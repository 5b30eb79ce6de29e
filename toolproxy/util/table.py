"""Plain-text tables for the terminal (no colour, so output is stable and greppable)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def call_text(tool: str | None, arguments: Any) -> str:
    """`tool(arguments)` on one line, arguments as compact JSON (JSON text decoded first)."""
    if tool is None:
        return "(none)"
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    text = (
        arguments
        if isinstance(arguments, str)
        else json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    )
    return f"{tool}({text})"


def cell(value: Any, width: int = 60) -> str:
    """One value as a single-line string, cut to `width` characters."""
    if value is None:
        text = ""
    elif isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    elif isinstance(value, float):
        text = f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "nan"
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], width: int = 60) -> str:
    """Left-aligned columns separated by two spaces, with a header rule."""
    cells = [[cell(v, width) for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)
