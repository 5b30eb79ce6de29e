"""toolproxy.tui.exchange: one exchange in full, copied as calls or as curl."""

from __future__ import annotations

from tests.tui.drive import keys, pinned_app, settle
from toolproxy.tui.app import ToolproxyApp
from toolproxy.tui.exchange import ExchangeScreen


async def test_an_exchange_copies_its_calls_and_its_request(seeded_capture, monkeypatch):
    app = ToolproxyApp(seeded_capture, session="s-b")
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ExchangeScreen)
        body = str(app.screen.query_one("#exchange").content)
        assert body.startswith("POST http://h:80/v1/messages\nstatus 200  parse ok")
        await pilot.press("y", "x")
        assert '"name": "search"' in copied[0]
        assert copied[1].startswith("curl -X POST http://h/v1/messages")


def test_snapshot_exchange(snap_compare, tmp_path, monkeypatch):
    app = pinned_app(tmp_path, monkeypatch, session="s-a")
    assert snap_compare(app, terminal_size=(80, 24), run_before=keys("enter"))


SSE = 'data: {"a":1}\n\n: ping\n\ndata: {"a":2}\n\ndata: [DONE]\n\n'


def streamed_capture(tmp_path):
    from tests.builders import chat_exchange
    from tests.seeded import CaptureRows, at

    rows = CaptureRows()
    rows.turn(
        chat_exchange(
            "st-0", "s-stream", at(0), streamed=True, response_body=SSE,
            response_headers={"content-type": "text/event-stream"},
            sse_times=[520.0, 700.25, 700.5],
        )
    )  # fmt: skip
    return rows.write(tmp_path / "cap")


async def test_an_event_stream_lists_its_events_with_their_times_and_is_searchable(tmp_path):
    app = ToolproxyApp(streamed_capture(tmp_path), session="s-stream")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ExchangeScreen)
        lines = app.screen.lines
        start = lines.index("SSE events (3):")
        assert lines[start + 1 : start + 4] == [
            '  +    520.0 ms  message                {"a":1}',
            '  +    700.2 ms  message                {"a":2}',
            "  +    700.5 ms  message                [DONE]",
        ]
        await pilot.press("slash", *'a":', "enter")
        status = str(app.screen.query_one("#status").content)
        first = lines.index('  +    520.0 ms  message                {"a":1}')
        assert status == f"'a\":': match 1 of 4 (line {first + 1}) · n / N"
        await pilot.press("N")  # back from the first is the last
        assert "match 4 of 4" in str(app.screen.query_one("#status").content)
        await pilot.press("slash", *"nowhere", "enter")  # the last term is selected: replaced
        assert str(app.screen.query_one("#status").content) == "no line holds 'nowhere'"
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ExchangeScreen)


def test_matching_lines_ignore_case():
    from toolproxy.tui.exchange import matching_lines

    assert matching_lines(["Paris", "rome", "PARIS!"], "paris") == [0, 2]
    assert matching_lines(["a"], "") == []
