"""One cell of a run's confusion matrix: the cases whose calls fell in it, each opened on
its exchange."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from toolproxy.grade.metrics import CaseRecord, cells_of
from toolproxy.store.queries import exchanges
from toolproxy.store.rows import ExchangeDetail
from toolproxy.tui.base import StoreScreen
from toolproxy.tui.exchange import ExchangeScreen
from toolproxy.tui.rowtable import RowTable

CELL_COLUMNS = ("case", "label", "expected", "called", "exchange", "session")


def cell_cases(records: list[CaseRecord], expected: str, called: str) -> list[CaseRecord]:
    """The observed cases that put a call in cell (expected, called), as the matrix counts."""
    return [r for r in records if r.observed and (expected, called) in cells_of(r.grade)]


def cell_row(record: CaseRecord) -> tuple[str, ...]:
    g = record.grade
    return (
        g.case_id,
        g.label or ("passed" if g.passed else "not graded"),
        "+".join(g.expected_tools) or "(none)",
        "+".join(g.called_tools) or "(none)",
        g.exchange_id or "",
        g.session_id or "",
    )


class CellScreen(StoreScreen):
    """The cases of one confusion cell; enter opens a case's exchange."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "open", "Exchange"),
    ]

    def __init__(
        self, capture: Path, run: str, expected: str, called: str, records: list[CaseRecord]
    ) -> None:
        super().__init__(capture)
        self.run_name = run
        self.expected, self.called = expected, called
        self.records = cell_cases(records, expected, called)

    def compose(self) -> ComposeResult:
        yield Header()
        yield RowTable(id="cell")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"{self.run_name}: expected {self.expected}, called {self.called}"
        table = self.query_one("#cell", RowTable)
        table.add_columns(*CELL_COLUMNS)
        for record in self.records:
            table.add_row(*cell_row(record))
        table.focus()
        self.set_status(f"{len(self.records)} case(s) in this cell · enter: the exchange")

    def action_open(self) -> None:
        table = self.query_one("#cell", RowTable)
        if not (self.records and 0 <= table.cursor_row < len(self.records)):
            return
        exchange_id = self.records[table.cursor_row].grade.exchange_id
        if exchange_id is None:
            self.set_status("this case has its own messages: no recorded exchange to open")
            return
        self.read(
            "the exchange", lambda r: exchanges.details(r, [exchange_id]), self.opened, "open"
        )

    def opened(self, found: list[ExchangeDetail]) -> None:
        if not found:
            self.set_status("the exchange is not in the capture")
            return
        self.app.push_screen(ExchangeScreen(found[0]))

    def on_row_table_row_selected(self, event: RowTable.RowSelected) -> None:
        self.action_open()
