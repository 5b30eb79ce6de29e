"""Driving the TUI in tests: let the screen's reads finish and their results land."""

from __future__ import annotations

import contextlib
import difflib
import html
import re

from textual.worker import WorkerCancelled


async def settle(pilot) -> None:
    for _ in range(3):
        with contextlib.suppress(WorkerCancelled):  # a newer read replaced it (exclusive)
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def pinned_app(tmp_path, monkeypatch, **options):
    """The app on a fresh seeded capture named `cap` in the working directory, so every
    path it shows is the same on every machine (for SVG snapshots; its times are the
    seed's own, and no widget shown blinks)."""
    from pathlib import Path

    from tests.seeded import seed_capture
    from toolproxy.tui.app import ToolproxyApp

    seed_capture(tmp_path / "cap")
    monkeypatch.chdir(tmp_path)
    return ToolproxyApp(Path("cap"), **options)


def keys(*pressed: str):
    """A `run_before` for `snap_compare`: settle, then each key followed by a settle."""

    async def run(pilot) -> None:
        await settle(pilot)
        for key in pressed:
            await pilot.press(key)
            await settle(pilot)

    return run


def status(app) -> str:
    return str(app.screen.query_one("#status").content)


def rows(app, table="#sessions") -> list[str]:
    t = app.screen.query_one(table)
    return [t.get_row_at(i)[0] for i in range(t.row_count)]


_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>')
_IDS = re.compile(r"terminal-\d+")


def screen_lines(svg: str) -> list[str]:
    """The text of a Textual SVG screenshot, one string per terminal line."""
    lines: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in _TEXT.findall(svg):
        lines.setdefault(float(y), []).append((float(x), html.unescape(text)))
    return [
        "".join(t for _, t in sorted(parts)).replace("\xa0", " ")
        for _, parts in sorted(lines.items())
    ]


def screen_diff(expected: str, actual: str, limit: int = 80) -> str:
    """What differs between two SVG screenshots: their text lines, or, when the text is the
    same (colours, the cursor, a scrollbar), their SVG lines with the content-hashed ids
    masked; at most `limit` lines."""
    want, got = screen_lines(expected), screen_lines(actual)
    what = "screen text"
    if want == got:
        want, got = (
            _IDS.sub("terminal", expected).splitlines(),
            _IDS.sub("terminal", actual).splitlines(),
        )
        what = "SVG (the text is the same)"
    diff = list(difflib.unified_diff(want, got, "snapshot", "this run", lineterm="", n=1))
    shown = diff[:limit] + ([f"... {len(diff) - limit} more lines"] if len(diff) > limit else [])
    return "\n".join([f"snapshot mismatch, {what}:", *shown])
