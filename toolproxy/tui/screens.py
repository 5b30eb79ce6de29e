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
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade.caseedit import cases_by_exchange, save_case
from toolproxy.grade.labeling import case_for_turn
from toolproxy.grade.model import Case
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.queries import exchanges
from toolproxy.store.reader import Reader
from toolproxy.store.rows import ExchangeDetail, SessionRow
from toolproxy.tui.base import StoreScreen, why
from toolproxy.tui.caseeditor import CaseEditScreen, CaseSaved
from toolproxy.tui.filterbar import FilterError, describe, parse_filter
from toolproxy.tui.views import (
    SESSION_COLUMNS,
    TURN_COLUMNS,
    calls_json,
    curl_command,
    exchange_text,
    expected_cell,
    session_cells,
    table_csv,
    transcript,
    turn_cells,
)

PAGE = 100
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

    def __init__(self, capture: Path, cases: Path) -> None:
        super().__init__(capture)
        self.cases = cases
        self.where = ExchangeFilter()
        self.cursors: list[str | None] = [None]  # the cursor of each page shown so far
        self.page: list[SessionRow] = []
        self.next_cursor: str | None = None
        self.total: int | None = None

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
        self.follow("sessions", self.load, lambda: len(self.cursors) == 1)  # the first page

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
            self.app.push_screen(TranscriptScreen(self.capture, session, self.cases))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()


class TranscriptScreen(StoreScreen):
    """One session turn by turn: the turns as a table, the transcript below. A turn is
    labeled into the cases file: `a` accepts its calls, `n` expects no call, `E` edits."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "open", "Exchange"),
        Binding("a", "accept", "Accept calls"),
        Binding("n", "no_call", "Expect no call"),
        Binding("E", "edit", "Edit case"),
        Binding("y", "copy_calls", "Copy calls"),
        Binding("x", "copy_curl", "Copy curl"),
        Binding("e", "export", "Export CSV"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, capture: Path, session_id: str, cases: Path) -> None:
        super().__init__(capture)
        self.session_id = session_id
        self.cases = cases
        self.turns: list[ExchangeDetail] = []
        self.labels: dict[str, Case] = {}  # exchange id -> its case in the cases file

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
        self.follow("transcript", self.load, lambda: True)  # new turns of a live session

    def load(self) -> None:
        version = store.version(self.capture)  # before reading: a later write reloads again

        def read(r: Reader) -> tuple[list[ExchangeDetail], bool, dict[str, Case], str, str]:
            where = ExchangeFilter(sessions=[self.session_id])
            page = exchanges.exchanges(r, where, limit=TURNS_LIMIT)
            turns = exchanges.details(r, [x.exchange_id for x in page.items])
            try:
                labels, problem = cases_by_exchange(self.cases), ""
            except UserError as exc:  # a broken cases file: the turns still show
                labels, problem = {}, f" · cases file unreadable: {why(exc)}"
            return turns, page.next_cursor is not None, labels, problem, version

        self.read("the session", read, lambda found: self.show(*found), "transcript")

    def show(
        self,
        turns: list[ExchangeDetail],
        more: bool,
        labels: dict[str, Case],
        problem: str,
        version: str,
    ) -> None:
        self.turns, self.labels, self.version = turns, labels, version
        table = self.query_one("#turns", DataTable)
        keep = table.cursor_row
        table.clear()
        for d in turns:
            case = labels.get(d.exchange.exchange_id)
            table.add_row(*turn_cells(d, case), key=d.exchange.exchange_id)
        if turns:
            table.move_cursor(row=min(max(keep, 0), len(turns) - 1))
        self.query_one("#transcript", Static).update("\n".join(transcript(turns)))
        cut = f" (the first {TURNS_LIMIT:,})" if more else ""
        self.set_status(
            f"{len(turns)} turn(s){cut} · enter: the exchange · a / n / E: label into "
            f"{self.cases}{problem}"
        )

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

    # --- labeling -----------------------------------------------------------------------

    def draft(self, turn: ExchangeDetail, no_call: bool) -> tuple[Case, str | None]:
        """The case for `turn` (keeping the id of the case it already has) and that id."""
        case = case_for_turn(turn.exchange, turn.calls, no_call=no_call)
        existing = self.labels.get(turn.exchange.exchange_id)
        if existing is None:
            return case, None
        return case.model_copy(update={"id": existing.id}), existing.id

    def label(self, no_call: bool) -> None:
        turn = self.selected()
        if turn is None:
            return
        case, replacing = self.draft(turn, no_call)
        self.work(
            f"write {self.cases}",
            lambda: save_case(self.cases, case, replacing),
            lambda how: self.on_case_saved(CaseSaved(case, how)),
            "label",
        )

    def action_accept(self) -> None:
        self.label(no_call=False)

    def action_no_call(self) -> None:
        self.label(no_call=True)

    def action_edit(self) -> None:
        turn = self.selected()
        if turn is None:
            return
        existing = self.labels.get(turn.exchange.exchange_id)
        case, replacing = (existing, existing.id) if existing else self.draft(turn, False)
        self.app.push_screen(CaseEditScreen(self.cases, case, replacing))

    def on_case_saved(self, message: CaseSaved) -> None:
        case = message.case
        if case.exchange_id is not None:
            self.labels[case.exchange_id] = case
        for row, turn in enumerate(self.turns):
            if turn.exchange.exchange_id == case.exchange_id:
                cell = Coordinate(row, len(TURN_COLUMNS) - 1)
                self.query_one("#turns", DataTable).update_cell_at(cell, expected_cell(case))
        self.set_status(f"{message.how} case {case.id} in {self.cases}")

    # --- copy and export ----------------------------------------------------------------

    def action_copy_calls(self) -> None:
        turn = self.selected()
        if turn is not None:
            copy(self, calls_json(turn), f"{len(turn.calls)} call(s) as JSON")

    def action_copy_curl(self) -> None:
        turn = self.selected()
        if turn is not None:
            copy(self, curl_command(turn), "the request as curl (secrets stay redacted)")

    def action_export(self) -> None:
        cells = [turn_cells(t, self.labels.get(t.exchange.exchange_id)) for t in self.turns]
        export(self, f"session-{self.session_id}", TURN_COLUMNS, cells)

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
