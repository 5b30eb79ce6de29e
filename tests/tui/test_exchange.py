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
