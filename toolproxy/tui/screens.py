"""The TUI's screens: sessions (filtered, paged, live), a session's transcript, one exchange.

Every read runs in a worker thread on a short read batch (`store.reading`), so the screen
never freezes and a proxy or `compact` is never kept waiting; results come back through
`call_from_thread`. A store error becomes a line in the status bar, never a traceback.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from toolproxy import store
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.queries import exchanges
from toolproxy.store.reader import Reader
from toolproxy.store.rows import ExchangeDetail, SessionRow
from toolproxy.tui.base import StoreScreen
from toolproxy.tui.filterbar import FilterError, describe, parse_filter
from toolproxy.tui.views import (
    SESSION_COLUMNS,
    TURN_COLUMNS,
    calls_json,
    curl_command,
    exchange_text,
    session_cells,
    table_csv,
    transcript,
    turn_cells,
)

PAGE = 100
LIVE_POLL_S = 1.0
TURNS_LIMIT = 2_000


class SessionsScreen(StoreScreen):
    """Sessions, most recently active first, counted over the filtered exchanges."""

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("enter", "open", "Open", show=True),
        Binding("right_square_bracket", "next_page", "Next page"),
        Binding("left_square_bracket", "previous_page", "Prev page"),
        Binding("r", "reload", "Reload"),
        Binding("e", "export", "Export CSV"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, capture: Path) -> None:
        super().__init__(capture)
        self.where = ExchangeFilter()
        self.cursors: list[str | None] = [None]  # the cursor of each page shown so far
        self.page: list[SessionRow] = []
        self.next_cursor: str | None = None
        self.total: int | None = None
        self.version = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(
            placeholder="filter: model:… tool:… since:… status:failed run:… label:… text",
            id="filter",
        )
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"toolproxy · {self.capture}"
        self.query_one("#filter", Input).display = False
        table = self.query_one("#sessions", DataTable)
        table.add_columns(*SESSION_COLUMNS)
        table.focus()
        self.load()
        self.set_interval(LIVE_POLL_S, self.poll)

    # --- reading ------------------------------------------------------------------------

    def load(self) -> None:
        cursor, where = self.cursors[-1], self.where
        version = store.version(self.capture)  # before reading: a later write reloads again

        def read(r: Reader) -> tuple[Any, ...]:
            page = exchanges.sessions(r, where, limit=PAGE, cursor=cursor)
            return page.items, page.next_cursor, exchanges.count_sessions(r, where), version

        self.read(str(self.capture), read, lambda found: self.show_page(*found), "sessions")

    def show_page(
        self, rows: list[SessionRow], next_cursor: str | None, total: int, version: str
    ) -> None:
        self.page, self.next_cursor, self.total, self.version = rows, next_cursor, total, version
        table = self.query_one("#sessions", DataTable)
        keep = table.cursor_row
        table.clear()
        for s in rows:
            table.add_row(*session_cells(s), key=s.session_id)
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))
        first = (len(self.cursors) - 1) * PAGE
        shown = f"{first + 1}-{first + len(rows)}" if rows else "0"
        where = describe(self.where)
        self.set_status(
            f"sessions {shown} of {total:,}"
            + (f"  ·  filter: {where}" if where else "")
            + ("  ·  ] next page" if next_cursor else "")
        )

    def poll(self) -> None:
        """Live tail: reload the first page when the capture changed (no DuckDB opened)."""
        busy = any(w.group == "sessions" and w.is_running for w in self.workers)
        if not busy and len(self.cursors) == 1 and store.version(self.capture) != self.version:
            self.load()

    # --- actions ------------------------------------------------------------------------

    def action_filter(self) -> None:
        bar = self.query_one("#filter", Input)
        bar.display = True
        bar.value = describe(self.where)
        bar.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            self.where = parse_filter(event.value)
        except FilterError as exc:
            self.set_status(f"filter: {exc}")
            return
        event.input.display = False
        self.cursors = [None]
        self.query_one("#sessions", DataTable).focus()
        self.load()

    def action_clear_filter(self) -> None:
        bar = self.query_one("#filter", Input)
        if bar.display:
            bar.display = False
            self.query_one("#sessions", DataTable).focus()
        elif self.where != ExchangeFilter():
            self.where = ExchangeFilter()
            self.cursors = [None]
            self.load()

    def action_next_page(self) -> None:
        if self.next_cursor:
            self.cursors.append(self.next_cursor)
            self.load()

    def action_previous_page(self) -> None:
        if len(self.cursors) > 1:
            self.cursors.pop()
            self.load()

    def action_reload(self) -> None:
        self.load()

    def action_export(self) -> None:
        export(self, "sessions", SESSION_COLUMNS, [session_cells(s) for s in self.page])

    def action_open(self) -> None:
        table = self.query_one("#sessions", DataTable)
        if self.page and 0 <= table.cursor_row < len(self.page):
            session = self.page[table.cursor_row].session_id
            self.app.push_screen(TranscriptScreen(self.capture, session))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()


class TranscriptScreen(StoreScreen):
    """One session turn by turn: the turns as a table, the transcript below."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "open", "Exchange"),
        Binding("y", "copy_calls", "Copy calls"),
        Binding("x", "copy_curl", "Copy curl"),
        Binding("e", "export", "Export CSV"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, capture: Path, session_id: str) -> None:
        super().__init__(capture)
        self.session_id = session_id
        self.turns: list[ExchangeDetail] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="turns", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="transcript-box"):
            yield Static("", id="transcript")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"session {self.session_id}"
        table = self.query_one("#turns", DataTable)
        table.add_columns(*TURN_COLUMNS)
        table.focus()
        self.load()

    def load(self) -> None:
        def read(r: Reader) -> tuple[list[ExchangeDetail], bool]:
            where = ExchangeFilter(sessions=[self.session_id])
            page = exchanges.exchanges(r, where, limit=TURNS_LIMIT)
            turns = exchanges.details(r, [x.exchange_id for x in page.items])
            return turns, page.next_cursor is not None

        self.read("the session", read, lambda found: self.show(*found), "transcript")

    def show(self, turns: list[ExchangeDetail], more: bool) -> None:
        self.turns = turns
        table = self.query_one("#turns", DataTable)
        table.clear()
        for d in turns:
            table.add_row(*turn_cells(d), key=d.exchange.exchange_id)
        self.query_one("#transcript", Static).update("\n".join(transcript(turns)))
        cut = f" (the first {TURNS_LIMIT:,})" if more else ""
        self.set_status(f"{len(turns)} turn(s){cut} · enter: the exchange · escape: back")

    def action_reload(self) -> None:
        self.load()

    def selected(self) -> ExchangeDetail | None:
        table = self.query_one("#turns", DataTable)
        if self.turns and 0 <= table.cursor_row < len(self.turns):
            return self.turns[table.cursor_row]
        return None

    def action_open(self) -> None:
        turn = self.selected()
        if turn is not None:
            self.app.push_screen(ExchangeScreen(turn))

    def action_copy_calls(self) -> None:
        turn = self.selected()
        if turn is not None:
            copy(self, calls_json(turn), f"{len(turn.calls)} call(s) as JSON")

    def action_copy_curl(self) -> None:
        turn = self.selected()
        if turn is not None:
            copy(self, curl_command(turn), "the request as curl (secrets stay redacted)")

    def action_export(self) -> None:
        export(
            self, f"session-{self.session_id}", TURN_COLUMNS, [turn_cells(t) for t in self.turns]
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()


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


def copy(screen: Screen[None], text: str, what: str) -> None:
    """Put `text` on the terminal's clipboard (OSC 52) and say so."""
    screen.app.copy_to_clipboard(text)
    screen.notify(f"copied {what}")


def export(
    screen: Screen[None], name: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]
) -> None:
    """Write the table shown as CSV in the working directory and say where."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    path = Path(f"toolproxy-{name}-{stamp}.csv")
    try:
        path.write_text(table_csv(columns, rows), encoding="utf-8")
    except OSError as exc:
        screen.notify(f"could not write {path}: {exc}", severity="error")
        return
    screen.notify(f"wrote {len(rows)} row(s) to {path.resolve()}")
