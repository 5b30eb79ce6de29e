"""Driving the TUI in tests: let the screen's reads finish and their results land."""

from __future__ import annotations

import contextlib

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
