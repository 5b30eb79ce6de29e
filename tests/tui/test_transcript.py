"""toolproxy.tui.transcript: a session turn by turn, and a turn opening its exchange."""

from __future__ import annotations

from tests.tui.drive import keys, pinned_app, rows, settle, status
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.exchange import ExchangeScreen
from toolproxy.tui.sessions import SessionsScreen
from toolproxy.tui.transcript import TranscriptScreen


async def test_a_session_opens_its_transcript_and_a_turn_its_exchange(seeded_capture):
    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "down", "down", "enter")  # s-a
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert rows(app, "#turns")[0] == "2026-03-01 12:00:00"
        assert len(rows(app, "#turns")) == 3
        text = str(app.screen.query_one("#transcript").content)
        assert "user: weather in Paris?" in text and "← result: 18C" in text
        assert status(app).startswith("3 turn(s)")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ExchangeScreen)
        assert app.screen.detail.exchange.exchange_id == "a-0"
        body = str(app.screen.query_one("#exchange").content)
        assert "request body:" in body and "parse ok" in body
        await pilot.press("escape", "escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)


async def test_opening_straight_at_a_session(seeded_capture):
    app = ToolproxyApp(seeded_capture, session="s-b")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert "→ call search" in str(app.screen.query_one("#transcript").content)


def test_snapshot_transcript(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, session="s-a")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys())


async def test_t_opens_the_offered_tools_with_their_schemas(seeded_capture):
    app = ToolproxyApp(seeded_capture, session="s-a")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = str(app.screen.query_one("#transcript").content)
        assert "tools offered: get_weather, search  (t: open)" in text
        await pilot.press("t")
        text = str(app.screen.query_one("#transcript").content)
        assert "tools offered (2, t: fold):" in text
        assert '  get_weather: {"type":"object"' in text
        await pilot.press("t")
        assert "(t: open)" in str(app.screen.query_one("#transcript").content)
