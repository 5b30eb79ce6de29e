"""One session turn by turn, labeled into the cases file, following a live session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import Footer, Header, Static

from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.grade.caseedit import cases_by_exchange, save_case
from toolproxy.grade.labeling import case_for_turn, reviewer
from toolproxy.grade.model import Case
from toolproxy.store.filters import ExchangeFilter
from toolproxy.store.queries import exchanges, mcp
from toolproxy.store.reader import Reader
from toolproxy.store.rows import ExchangeDetail
from toolproxy.tui.base import StoreScreen, copy, export, why
from toolproxy.tui.caseeditor import CaseEditScreen, CaseSaved
from toolproxy.tui.charts import ChartsScreen, session_charts
from toolproxy.tui.exchange import ExchangeScreen
from toolproxy.tui.rowtable import RowTable
from toolproxy.tui.turns import ServerTools, line_style, turn_lines
from toolproxy.tui.views import TURN_COLUMNS, calls_json, curl_command, expected_cell, turn_cells

TURNS_LIMIT = 2_000


class TranscriptScreen(StoreScreen):
    """One session turn by turn: the turns as a table, the transcript below. A turn is
    labeled into the cases file: `a` accepts its calls, `n` expects no call, `E` edits."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "open", "Exchange"),
        Binding("a", "accept", "Accept calls"),
        Binding("n", "no_call", "Expect no call"),
        Binding("E", "edit", "Edit case"),
        Binding("t", "tools", "Tools"),
        Binding("c", "charts", "Charts"),
        Binding("y", "copy_calls", "Copy calls"),
        Binding("x", "copy_curl", "Copy curl"),
        Binding("e", "export('csv')", "Export CSV"),
        Binding("j", "export('jsonl')", "Export JSONL"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, capture: Path, session_id: str, cases: Path) -> None:
        super().__init__(capture)
        self.session_id = session_id
        self.cases = cases
        self.turns: list[ExchangeDetail] = []
        self.labels: dict[str, Case] = {}  # exchange id -> its case in the cases file
        self.server_tools: ServerTools = []  # the MCP servers' real schemas
        self.tools_open = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield RowTable(id="turns")
        with VerticalScroll(id="transcript-box"):
            yield Static("", id="transcript", markup=False)
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"session {self.session_id}"
        table = self.query_one("#turns", RowTable)
        table.add_columns(*TURN_COLUMNS)
        table.focus()
        self.load()
        self.follow("transcript", self.load, lambda: True)  # new turns of a live session

    def load(self) -> None:
        version = store.version(self.capture)  # before reading: a later write reloads again

        def read(r: Reader) -> tuple[Any, ...]:
            where = ExchangeFilter(sessions=[self.session_id])
            page = exchanges.exchanges(r, where, limit=TURNS_LIMIT)
            turns = exchanges.details(r, [x.exchange_id for x in page.items])
            servers = mcp.server_tools(r)
            try:
                labels, problem = cases_by_exchange(self.cases), ""
            except UserError as exc:  # a broken cases file: the turns still show
                labels, problem = {}, f" · cases file unreadable: {why(exc)}"
            return turns, servers, page.next_cursor is not None, labels, problem, version

        self.read("the session", read, lambda found: self.show(*found), "transcript")

    def show(
        self,
        turns: list[ExchangeDetail],
        servers: ServerTools,
        more: bool,
        labels: dict[str, Case],
        problem: str,
        version: str,
    ) -> None:
        self.turns, self.labels, self.version = turns, labels, version
        self.server_tools = servers
        table = self.query_one("#turns", RowTable)
        keep = table.cursor_row
        table.clear()
        table.add_rows(
            [turn_cells(d, labels.get(d.exchange.exchange_id)) for d in turns],
            [d.exchange.exchange_id for d in turns],
        )
        if turns:
            table.move_cursor(row=min(max(keep, 0), len(turns) - 1))
        self.render_transcript()
        cut = f" (the first {TURNS_LIMIT:,})" if more else ""
        self.set_status(
            f"{len(turns)} turn(s){cut} · enter: the exchange · a / n / E: label into "
            f"{self.cases}{problem}"
        )

    def render_transcript(self) -> None:
        """The turn under the cursor, in full, below the table (one turn at a time: a long
        session opens as fast as a short one)."""
        at = self.query_one("#turns", RowTable).cursor_row
        lines = turn_lines(self.turns, at, self.server_tools, self.tools_open) if self.turns else []
        text = Text()
        for line in lines:
            text.append(line + "\n", style=line_style(line))
        self.query_one("#transcript", Static).update(text)
        self.query_one("#transcript-box", VerticalScroll).scroll_home(animate=False)

    def on_row_table_row_highlighted(self, event: RowTable.RowHighlighted) -> None:
        self.render_transcript()

    def action_charts(self) -> None:
        charts = session_charts(self.turns)
        self.app.push_screen(ChartsScreen(f"session {self.session_id}", charts))

    def action_tools(self) -> None:
        """Open or fold every turn's offered tools (their schemas and drift)."""
        self.tools_open = not self.tools_open
        self.render_transcript()

    def action_reload(self) -> None:
        self.load()

    def selected(self) -> ExchangeDetail | None:
        table = self.query_one("#turns", RowTable)
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
        case = case_for_turn(turn.exchange, turn.calls, no_call=no_call, by=reviewer())
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
                self.query_one("#turns", RowTable).update_cell_at(cell, expected_cell(case))
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

    def action_export(self, fmt: str = "csv") -> None:
        cells = [turn_cells(t, self.labels.get(t.exchange.exchange_id)) for t in self.turns]
        export(self, f"session-{self.session_id}", TURN_COLUMNS, cells, fmt)

    def on_row_table_row_selected(self, event: RowTable.RowSelected) -> None:
        self.action_open()
