"""toolproxy.tui.base: reads in a worker on one batch; a failure is a status line."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from toolproxy.tui.base import StoreScreen, why


class Probe(StoreScreen):
    def compose(self) -> ComposeResult:
        yield Static("", id="status")

    def on_mount(self) -> None:
        self.got: list[object] = []
        self.read(
            "the exchanges",
            lambda r: r.scalar("SELECT count(*) FROM exchanges"),
            self.got.append,
            "probe",
        )


class ProbeApp(App[None]):
    def __init__(self, capture) -> None:
        super().__init__()
        self.capture = capture

    def on_mount(self) -> None:
        self.push_screen(Probe(self.capture))


async def test_a_read_lands_on_the_screen(seeded_capture):
    app = ProbeApp(seeded_capture)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.got == [8]


async def test_a_failed_read_is_a_status_line(tmp_path):
    app = ProbeApp(tmp_path / "nowhere")
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.screen.query_one("#status").content)
        assert status.startswith("cannot read the exchanges: NotACapture")
        assert app.screen.got == []


def test_why_is_one_line():
    assert why(ValueError("first\nsecond")) == "ValueError: first"
