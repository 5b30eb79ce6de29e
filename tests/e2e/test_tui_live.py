"""The TUI open on a capture that a real mitmdump is recording: sessions and turns sent by
the real `openai` SDK through the proxy appear in the open app, and the proxy is never kept
waiting by it."""

from __future__ import annotations

import asyncio
import time

import openai

from tests.tui.drive import settle
from toolproxy.tui import base
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.sessions import SessionsScreen
from toolproxy.tui.transcript import TranscriptScreen

from .conftest import wait_rows


def ask(url: str, session: str, text: str) -> None:
    """One chat turn through the proxy under `session`."""
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-live-test", max_retries=0)
    client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": text}],
        extra_headers={"x-toolproxy-session": session},
    )


async def until(pilot, seen, timeout: float = 30.0) -> bool:
    """Let the app run until `seen()` holds (False after `timeout` s: the assert says what)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.05)
        if seen():
            return True
    return seen()


def first_column(app, table: str) -> list[str]:
    t = app.screen.query_one(table)
    return [str(t.get_row_at(i)[0]) for i in range(t.row_count)]


async def test_sessions_and_turns_appear_while_mitmdump_records(proxy, capture, monkeypatch):
    monkeypatch.setattr(base, "LIVE_POLL_S", 0.2)
    await asyncio.to_thread(ask, proxy.url, "live-1", "first")  # the capture now exists
    wait_rows(capture, "SELECT 1 FROM exchanges", 1)
    app = ToolproxyApp(capture)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        assert first_column(app, "#sessions") == ["live-1"]

        await asyncio.to_thread(ask, proxy.url, "live-2", "second")
        assert await until(pilot, lambda: first_column(app, "#sessions")[:1] == ["live-2"])
        assert sorted(first_column(app, "#sessions")) == ["live-1", "live-2"]

        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.query_one("#turns").row_count == 1
        await asyncio.to_thread(ask, proxy.url, "live-2", "and again")
        assert await until(pilot, lambda: app.screen.query_one("#turns").row_count == 2)
