"""One exchange: status, parse result, headers (already redacted), an event stream's events
with their arrival times, and the bodies; `/` searches it, `n` / `N` step through matches."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from toolproxy.store.rows import ExchangeDetail
from toolproxy.tui.base import copy
from toolproxy.tui.views import calls_json, curl_command, exchange_text


def matching_lines(lines: list[str], term: str) -> list[int]:
    """The indexes of the lines holding `term`, ignoring case."""
    wanted = term.casefold()
    return [i for i, line in enumerate(lines) if wanted and wanted in line.casefold()]


class ExchangeScreen(Screen[None]):
    """One exchange in full, searchable."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("slash", "search", "Search"),
        Binding("n", "step(1)", "Next match"),
        Binding("N", "step(-1)", "Previous match"),
        Binding("x", "copy_curl", "Copy curl"),
        Binding("y", "copy_calls", "Copy calls"),
    ]
    DEFAULT_CSS = """
    ExchangeScreen #exchange { width: auto; }
    ExchangeScreen #search { display: none; dock: bottom; }
    """

    def __init__(self, detail: ExchangeDetail) -> None:
        super().__init__()
        self.detail = detail
        self.lines = exchange_text(detail)
        self.term = ""
        self.matches: list[int] = []
        self.at = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with ScrollableContainer(id="body"):
            yield Static(Text("\n".join(self.lines)), id="exchange")
        yield Input(placeholder="search the exchange (enter; n / N: next / previous)", id="search")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"exchange {self.detail.exchange.exchange_id}"
        self.query_one("#body").focus()

    def action_search(self) -> None:
        bar = self.query_one("#search", Input)
        bar.display = True
        bar.value = self.term
        bar.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.display = False
        self.term = event.value.strip()
        self.matches, self.at = matching_lines(self.lines, self.term), 0
        self.query_one("#body").focus()
        self.highlight()

    def action_step(self, by: int) -> None:
        if self.matches:
            self.at = (self.at + by) % len(self.matches)
            self.highlight()

    def highlight(self) -> None:
        text = Text("\n".join(self.lines))
        if self.term:
            text.highlight_words([self.term], style="black on yellow", case_sensitive=False)
        self.query_one("#exchange", Static).update(text)
        status = self.query_one("#status", Static)
        if not self.term:
            status.update("")
        elif not self.matches:
            status.update(f"no line holds {self.term!r}")
        else:
            line = self.matches[self.at]
            self.query_one("#body", ScrollableContainer).scroll_to(y=line, animate=False)
            status.update(
                f"{self.term!r}: match {self.at + 1} of {len(self.matches)} (line {line + 1})"
                " · n / N"
            )

    def action_back(self) -> None:
        bar = self.query_one("#search", Input)
        if bar.display:
            bar.display = False
            self.query_one("#body").focus()
        else:
            self.app.pop_screen()

    def action_copy_curl(self) -> None:
        copy(self, curl_command(self.detail), "the request as curl (secrets stay redacted)")

    def action_copy_calls(self) -> None:
        copy(self, calls_json(self.detail), f"{len(self.detail.calls)} call(s) as JSON")
