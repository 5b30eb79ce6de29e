"""One exchange: status, parse result, headers (already redacted) and bodies."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from toolproxy.store.rows import ExchangeDetail
from toolproxy.tui.base import copy
from toolproxy.tui.views import calls_json, curl_command, exchange_text


class ExchangeScreen(Screen[None]):
    """One exchange: status, parse result, headers (already redacted) and bodies."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("x", "copy_curl", "Copy curl"),
        Binding("y", "copy_calls", "Copy calls"),
    ]

    def __init__(self, detail: ExchangeDetail) -> None:
        super().__init__()
        self.detail = detail

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static("\n".join(exchange_text(self.detail)), id="exchange", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"exchange {self.detail.exchange.exchange_id}"

    def action_copy_curl(self) -> None:
        copy(self, curl_command(self.detail), "the request as curl (secrets stay redacted)")

    def action_copy_calls(self) -> None:
        copy(self, calls_json(self.detail), f"{len(self.detail.calls)} call(s) as JSON")
