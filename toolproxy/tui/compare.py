"""Runs side by side: the report's own tables (per-run metrics, failing cases per label,
vendor metrics with each IRF rank and the IRF score), runs as columns, the baseline marked
`*`, computed by `toolproxy report`'s code so the TUI and the report never disagree."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from toolproxy.grade.report import (
    Table,
    build_report,
    build_tables,
    case_records,
    session_records,
)
from toolproxy.store.queries import grades
from toolproxy.store.reader import Reader
from toolproxy.tui.base import StoreScreen
from toolproxy.tui.rowtable import RowTable
from toolproxy.util.table import cell

SECTIONS = ("Per-run metrics", "Failing cases per label", "Vendor metrics")


def side_by_side(tables: list[Table]) -> list[Table]:
    """The sections a comparison shows, in the report's order (confusion matrices, per-run
    lists and gates stay in the run's own screen and in `report`)."""
    return [t for t in tables if t.title.startswith(SECTIONS)]


class CompareScreen(StoreScreen):
    """The chosen runs (or every run) side by side, `baseline` marked."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, capture: Path, runs: list[str], baseline: str | None) -> None:
        super().__init__(capture)
        self.runs = runs
        self.baseline = baseline

    def compose(self) -> ComposeResult:
        yield Header()
        yield VerticalScroll(id="sections")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        against = f", baseline {self.baseline}" if self.baseline else ""
        self.title = f"{len(self.runs)} runs side by side{against}"
        runs, baseline = self.runs, self.baseline

        def read(r: Reader) -> list[Table]:  # what `toolproxy report` reads, in one batch
            cases = case_records(grades.latest_grades(r, runs), runs)
            ids = sorted(
                {c.grade.session_id for rs in cases.values() for c in rs if c.grade.session_id}
            )
            sessions = session_records(grades.session_calls(r, ids)) if ids else {}
            return side_by_side(build_tables(build_report(cases, sessions, baseline)))

        self.read("the runs", read, self.show, "compare")
        self.set_status("computing the report's tables…")

    async def show(self, tables: list[Table]) -> None:
        """Mount every section, then focus the first table without scrolling: the
        sections start at the top, and focusing a table taller than the screen would
        centre it (an animated scroll whose end depends on when layout ran)."""
        widgets: list[Static | RowTable] = []
        for table in tables:
            grid = RowTable()
            grid.add_columns(*table.columns)
            grid.add_rows([[cell(v) for v in row] for row in table.rows], [None] * len(table.rows))
            grid.styles.height = len(table.rows) + 1
            widgets += [Static(f"[b]{table.title}[/b]"), grid]
        box = self.query_one("#sections", VerticalScroll)
        await box.mount_all(widgets)
        if tables:
            box.query(RowTable).first().focus(scroll_visible=False)
        mark = f" · * baseline {self.baseline}" if self.baseline else ""
        self.set_status(f"{', '.join(self.runs)}{mark} · the tables of `toolproxy report`")
