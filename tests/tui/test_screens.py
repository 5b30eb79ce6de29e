"""toolproxy.tui.screens, driven by Textual's Pilot on real captures: sessions (filter,
paging, live tail), a session's transcript, one exchange, and the errors shown in the app."""

from __future__ import annotations

from tests.builders import chat_exchange
from tests.seeded import CaptureRows, at, seed_capture
from tests.tui.drive import keys, pinned_app, settle
from toolproxy.tui import base, screens
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.screens import ExchangeScreen, SessionsScreen, TranscriptScreen


def status(app) -> str:
    return str(app.screen.query_one("#status").content)


def rows(app, table="#sessions") -> list[str]:
    t = app.screen.query_one(table)
    return [t.get_row_at(i)[0] for i in range(t.row_count)]


async def test_sessions_newest_first_with_their_counts(seeded_capture):
    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)
        assert rows(app) == ["s-m", "s-r", "s-c", "s-b", "s-a"]
        assert status(app) == "sessions 1-5 of 5"


async def test_the_filter_bar_filters_and_says_what_is_wrong(seeded_capture):
    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.press(*"colour:red", "enter")
        await settle(pilot)
        assert "filter: unknown key 'colour'" in status(app)
        bar = app.screen.query_one("#filter")
        bar.value = "tool:search"
        await pilot.press("enter")
        await settle(pilot)
        assert rows(app) == ["s-b"]
        assert status(app) == "sessions 1-1 of 1  ·  filter: tool:search"
        await pilot.press("escape")  # clears the filter
        await settle(pilot)
        assert len(rows(app)) == 5


async def test_pages_move_by_keyset_cursors(seeded_capture, monkeypatch):
    monkeypatch.setattr(screens, "PAGE", 2)
    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert rows(app) == ["s-c", "s-b"]
        assert status(app).startswith("sessions 3-4 of 5")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert rows(app) == ["s-a"]
        await pilot.press("left_square_bracket", "left_square_bracket")
        await settle(pilot)
        assert rows(app) == ["s-m", "s-r"]


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


async def test_a_missing_capture_is_a_message_not_a_traceback(tmp_path):
    app = ToolproxyApp(tmp_path / "nowhere")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert status(app).startswith(f"cannot read {tmp_path / 'nowhere'}: NotACapture")
        await pilot.press("q")
    assert app.return_code == 0


async def test_new_sessions_appear_while_the_app_is_open(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "LIVE_POLL_S", 0.1)
    capture = seed_capture(tmp_path / "live")
    app = ToolproxyApp(capture)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert len(rows(app)) == 5
        more = CaptureRows()
        more.turn(chat_exchange("n-0", "s-new", at(100), model_requested="m"))
        more.write(capture, "late-proxy")
        for _ in range(50):
            await pilot.pause(0.1)
            await settle(pilot)
            if rows(app)[0] == "s-new":
                break
        assert rows(app)[0] == "s-new"
        assert status(app) == "sessions 1-6 of 6"
        await pilot.press("enter")  # its transcript follows the session too
        await settle(pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.query_one("#turns").row_count == 1
        more = CaptureRows()
        more.turn(chat_exchange("n-1", "s-new", at(101), model_requested="m"))
        more.write(capture, "late-proxy-2")
        for _ in range(50):
            await pilot.pause(0.1)
            await settle(pilot)
            if app.screen.query_one("#turns").row_count == 2:
                break
        assert app.screen.query_one("#turns").row_count == 2


async def test_copy_a_turns_calls_and_export_the_sessions(seeded_capture, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ToolproxyApp(seeded_capture)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        (written,) = tmp_path.glob("toolproxy-sessions-*.csv")
        assert written.read_text().splitlines()[0].startswith("session,models,first seen")
        assert len(written.read_text().splitlines()) == 6
        await pilot.press("down", "down", "down", "enter")  # s-b
        await settle(pilot)
        await pilot.press("y", "x")
        assert '"name": "search"' in copied[0]
        assert copied[1].startswith("curl -X POST http://h/v1/messages")


def test_snapshot_sessions(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys())


def test_snapshot_transcript(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, session="s-a")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys())


def test_snapshot_exchange(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, session="s-a")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("enter"))
