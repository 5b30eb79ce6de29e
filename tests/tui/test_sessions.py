"""toolproxy.tui.sessions, driven by Textual's Pilot on real captures: the sessions list
(filter, sort, paging, live tail, export) and the errors shown in the app."""

from __future__ import annotations

import json

from tests.builders import chat_exchange
from tests.seeded import CaptureRows, at, seed_capture
from tests.tui.drive import keys, pinned_app, rows, settle, status
from toolproxy.tui import base, sessions
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.sessions import SessionsScreen
from toolproxy.tui.transcript import TranscriptScreen


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
    monkeypatch.setattr(sessions, "PAGE", 2)
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
        await pilot.press("j")
        (lines,) = tmp_path.glob("toolproxy-sessions-*.jsonl")
        rows = [json.loads(line) for line in lines.read_text().splitlines()]
        assert [r["session"] for r in rows] == ["s-m", "s-r", "s-c", "s-b", "s-a"]
        assert rows[-1]["turns"] == "3"
        await pilot.press("down", "down", "down", "enter")  # s-b
        await settle(pilot)
        await pilot.press("j")
        (turns,) = tmp_path.glob("toolproxy-session-s-b-*.jsonl")
        assert len(turns.read_text().splitlines()) == 2
        await pilot.press("y", "x")
        assert '"name": "search"' in copied[0]
        assert copied[1].startswith("curl -X POST http://h/v1/messages")


def test_snapshot_sessions(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys())


async def test_sessions_sort_by_any_column(seeded_capture):
    app = ToolproxyApp(seeded_capture)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        await pilot.press("o")  # after last seen (the default) comes turns
        await settle(pilot)
        assert status(app).endswith("by turns ▼")
        table = app.screen.query_one("#sessions")
        turns = [int(table.get_row_at(i)[4]) for i in range(table.row_count)]
        assert turns == sorted(turns, reverse=True) and turns[0] == 3
        await pilot.press("O")
        await settle(pilot)
        assert status(app).endswith("by turns ▲")
        assert rows(app)[-1] == "s-a"
        await pilot.click("#sessions", offset=(2, 0))  # the header of the session column
        await settle(pilot)
        assert status(app).endswith("by session ▼")
        assert rows(app) == ["s-r", "s-m", "s-c", "s-b", "s-a"]


async def test_captures_from_other_versions_open_or_say_why(tmp_path):
    import duckdb

    older = seed_capture(tmp_path / "older")
    with duckdb.connect(str(older / "capture.duckdb")) as con:  # as an older toolproxy left it
        con.execute("UPDATE meta SET value = 'from-an-older-version' WHERE key = 'columns_hash'")
    app = ToolproxyApp(older)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert status(app) == "sessions 1-5 of 5"  # upgraded in place, then shown
    newer = seed_capture(tmp_path / "newer")
    with duckdb.connect(str(newer / "capture.duckdb")) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    app = ToolproxyApp(newer)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert status(app) == (
            f"cannot read {newer}: CaptureError: {newer} has store schema 99; upgrade toolproxy"
        )


async def test_an_empty_capture_says_so(tmp_path):
    capture = CaptureRows().write(tmp_path / "empty")
    app = ToolproxyApp(capture)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert status(app).startswith("no sessions yet: `toolproxy record` records some")
