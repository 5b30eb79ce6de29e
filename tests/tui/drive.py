"""Driving the TUI in tests: let the screen's reads finish and their results land."""

from __future__ import annotations

import contextlib

from textual.worker import WorkerCancelled


async def settle(pilot) -> None:
    for _ in range(3):
        with contextlib.suppress(WorkerCancelled):  # a newer read replaced it (exclusive)
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()
