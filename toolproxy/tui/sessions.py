"""The sessions list: filtered, sorted by any column, keyset-paged and following a live
capture.

Every read runs in a worker thread on a short read batch (`store.reading`), so the screen
never freezes and a proxy or `compact` is never kept waiting; results come back through
`call_from_thread`. A store error becomes a line in the status bar, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Input, Static

from toolproxy import store
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.queries import exchanges
from toolproxy.store.reader import Reader
from toolproxy.store.rows import SessionRow
from toolproxy.tui.base import StoreScreen, export
from toolproxy.tui.filterbar import FilterError, describe, parse_filter
from toolproxy.tui.rowtable import RowTable
from toolproxy.tui.views import SESSION_COLUMNS, SESSION_SORTS, session_cells

PAGE = 100


class SessionsScreen(StoreScreen):
    """Sessions, most recently active first, counted over the filtered exchanges."""

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("enter", "open", "Open", show=True),
        Binding("right_square_bracket", "next_page", "Next page"),
        Binding("left_square_bracket", "previous_page", "Prev page"),
        Binding("o", "order", "Sort"),
        Binding("O", "reverse", "Reverse"),
        Binding("r", "reload", "Reload"),
        Binding("e", "export('csv')", "Export CSV"),
        Binding("j", "export('jsonl')", "Export JSONL"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, capture: Path, cases: Path) -> None:
        super().__init__(capture)
        self.cases = cases
        self.order, self.descending = "last_seen", True
        self.where = ExchangeFilter()
        self.cursors: list[str | None] = [None]  # the cursor of each page shown so far
        self.page: list[SessionRow] = []
        self.next_cursor: str | None = None
        self.total: int | None = None
        self.applying = False  # a filter was submitted and its first page is being read
        # pages read for `view` (filter, order, capture version): cursor -> what was read
        self.view: tuple[Any, ...] = ()
        self.pages: dict[str | None, tuple[Any, ...]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(
            placeholder="filter: model:… tool:… since:… status:failed run:… label:… text",
            id="filter",
        )
        yield RowTable(id="sessions")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"toolproxy · {self.capture}"
        self.query_one("#filter", Input).display = False
        table = self.query_one("#sessions", RowTable)
        table.add_columns(*SESSION_COLUMNS)
        table.focus()
        self.load()
        self.follow("sessions", self.load, lambda: len(self.cursors) == 1)  # the first page

    # --- reading ------------------------------------------------------------------------

    def load(self) -> None:
        """Show the page at the current cursor: from the pages already read for this view
        (filter, order, capture version) when it is there, else read it; then read the
        next page ahead, so `]` shows it at once."""
        cursor, where = self.cursors[-1], self.where
        order, descending = self.order, self.descending
        version = store.version(self.capture)  # before reading: a later write reloads again
        view = (where.model_dump_json(), order, descending, version)
        if view != self.view:
            self.view, self.pages = view, {}
        if cursor in self.pages:
            self.show_page(*self.pages[cursor])
            return

        def read(r: Reader) -> tuple[Any, ...]:
            page, total = exchanges.sessions_counted(r, where, PAGE, cursor, order, descending)
            return page.items, page.next_cursor, total, version

        def done(found: tuple[Any, ...]) -> None:
            if self.view == view:
                self.pages[cursor] = found
            self.show_page(*found)

        self.read(str(self.capture), read, done, "sessions")

    def read_ahead(self) -> None:
        """Read the page after the one shown into `pages`, in the background."""
        cursor, view = self.next_cursor, self.view
        if cursor is None or cursor in self.pages:
            return
        where, order, descending = self.where, self.order, self.descending

        def read(r: Reader) -> tuple[Any, ...]:
            page, total = exchanges.sessions_counted(r, where, PAGE, cursor, order, descending)
            return page.items, page.next_cursor, total, view[-1]

        def done(found: tuple[Any, ...]) -> None:
            if self.view == view:
                self.pages[cursor] = found

        self.read("the next page", read, done, "read-ahead")

    def show_page(
        self, rows: list[SessionRow], next_cursor: str | None, total: int, version: str
    ) -> None:
        self.page, self.next_cursor, self.total, self.version = rows, next_cursor, total, version
        table = self.query_one("#sessions", RowTable)
        if self.applying:  # the filter's first page: the bar closes
            self.applying = False
            self.query_one("#filter", Input).display = False
            table.focus()
        keep = table.cursor_row
        table.clear()
        table.add_rows([session_cells(s) for s in rows], [s.session_id for s in rows])
        if rows:
            table.move_cursor(row=min(keep, len(rows) - 1))
        first = (len(self.cursors) - 1) * PAGE
        shown = f"{first + 1}-{first + len(rows)}" if rows else "0"
        where = describe(self.where)
        by = SESSION_COLUMNS[SESSION_SORTS.index(self.order)]
        if not total and not where:
            self.set_status("no sessions yet: `toolproxy record` records some (shown as they come)")
            return
        self.set_status(
            f"sessions {shown} of {total:,}"
            + (f"  ·  filter: {where}" if where else "")
            + (
                ""
                if self.order == "last_seen" and self.descending
                else f"  ·  by {by} {'▼' if self.descending else '▲'}"
            )
            + ("  ·  ] next page" if next_cursor else "")
        )
        self.call_after_refresh(self.read_ahead)  # once this page is drawn

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
        # The bar closes with the filtered page (show_page): redrawing the screen meanwhile
        # would take the CPU the read needs.
        self.cursors, self.applying = [None], True
        self.set_status(f"filtering: {event.value}")
        self.load()

    def action_clear_filter(self) -> None:
        bar = self.query_one("#filter", Input)
        if bar.display:
            bar.display = False
            self.query_one("#sessions", RowTable).focus()
        elif self.where != ExchangeFilter():
            self.where = ExchangeFilter()
            self.cursors = [None]
            self.load()

    def sort(self, order: str, descending: bool) -> None:
        self.order, self.descending = order, descending
        self.cursors = [None]
        self.load()

    def action_order(self) -> None:
        """Sort by the next column (largest first; names and times in their own order)."""
        order = SESSION_SORTS[(SESSION_SORTS.index(self.order) + 1) % len(SESSION_SORTS)]
        self.sort(order, True)

    def action_reverse(self) -> None:
        self.sort(self.order, not self.descending)

    def on_row_table_header_selected(self, event: RowTable.HeaderSelected) -> None:
        order = SESSION_SORTS[event.column_index]
        self.sort(order, not self.descending if order == self.order else True)

    def action_next_page(self) -> None:
        if self.next_cursor:
            self.cursors.append(self.next_cursor)
            self.load()

    def action_previous_page(self) -> None:
        if len(self.cursors) > 1:
            self.cursors.pop()
            self.load()

    def action_reload(self) -> None:
        self.pages = {}
        self.load()

    def action_export(self, fmt: str = "csv") -> None:
        export(self, "sessions", SESSION_COLUMNS, [session_cells(s) for s in self.page], fmt)

    def action_open(self) -> None:
        table = self.query_one("#sessions", RowTable)
        if self.page and 0 <= table.cursor_row < len(self.page):
            from toolproxy.tui.transcript import TranscriptScreen  # loads labeling: on demand

            session = self.page[table.cursor_row].session_id
            self.app.push_screen(TranscriptScreen(self.capture, session, self.cases))

    def on_row_table_row_selected(self, event: RowTable.RowSelected) -> None:
        self.action_open()
