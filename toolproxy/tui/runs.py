"""The runs screens: every grading run, a run's label counts, and the failure gallery
(step through the cases that earned a label with `n` / `p`)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Footer, Header, Static

from toolproxy.grade.confusionfold import is_others
from toolproxy.grade.metrics import CaseRecord, RunMetrics, compute_run
from toolproxy.grade.report import case_records
from toolproxy.grade.rows import GradeRow
from toolproxy.grade.runner import regrade, summarize
from toolproxy.store.queries import grades, replays
from toolproxy.store.queries import runs as graded
from toolproxy.store.reader import Reader
from toolproxy.store.rows import FailureRow, RunRow
from toolproxy.tui.base import StoreScreen
from toolproxy.tui.charts import ChartsScreen, run_charts
from toolproxy.tui.compare import CompareScreen
from toolproxy.tui.confusion import CellScreen
from toolproxy.tui.rowtable import RowTable
from toolproxy.tui.views import (
    DIFF_COLUMNS,
    REPLAY_COLUMNS,
    RUN_COLUMNS,
    confusion_grid,
    diff_cells,
    failure_text,
    metrics_line,
    number,
    replay_cells,
    run_cells,
)


class RunsScreen(StoreScreen):
    """Every grading run and every replay run, oldest first (tab: the other table); runs
    marked with space (or all) side by side with `m`, `b` marking the baseline."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "open", "Open"),
        Binding("space", "mark", "Mark"),
        Binding("b", "baseline", "Baseline"),
        Binding("m", "compare", "Side by side"),
    ]

    def __init__(self, capture: Path, cases: Path) -> None:
        super().__init__(capture)
        self.cases = cases
        self.marked: set[str] = set()
        self.baseline: str | None = None
        self.runs: list[RunRow] = []
        self.replays: list[tuple[object, ...]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield RowTable(id="runs")
        yield RowTable(id="replays")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "runs"
        table = self.query_one("#runs", RowTable)
        table.add_columns(*RUN_COLUMNS, "compare")
        self.query_one("#replays", RowTable).add_columns(*REPLAY_COLUMNS)
        table.focus()
        self.load()

    def load(self) -> None:
        self.read(
            "the runs",
            lambda r: (graded.runs(r), replays.runs(r)),
            lambda found: self.show(*found),
            "runs",
        )

    def show(self, runs: list[RunRow], replay_runs: list[tuple[object, ...]]) -> None:
        self.runs, self.replays = runs, replay_runs
        table = self.query_one("#runs", RowTable)
        table.clear()
        for run in runs:
            table.add_row(*run_cells(run), self.mark_of(run.run), key=run.run)
        other = self.query_one("#replays", RowTable)
        other.clear()
        for replay in replay_runs:
            other.add_row(*replay_cells(replay), key=str(replay[0]))
        if not runs and not replay_runs:
            self.set_status("no runs yet: `toolproxy grade CASES --run NAME` makes one")
            return
        self.set_status(
            f"{len(runs)} grading run(s), {len(replay_runs)} replay run(s) · "
            "enter: labels / diffs · space, b, m: side by side · tab: the other table"
        )

    def mark_of(self, run: str) -> str:
        return " ".join(
            m for m, on in (("✓", run in self.marked), ("* baseline", run == self.baseline)) if on
        )

    def cursor_run(self) -> str | None:
        table = self.query_one("#runs", RowTable)
        if self.focused is table and self.runs and 0 <= table.cursor_row < len(self.runs):
            return self.runs[table.cursor_row].run
        return None

    def remark(self) -> None:
        table = self.query_one("#runs", RowTable)
        for row, run in enumerate(self.runs):
            table.update_cell_at(Coordinate(row, len(RUN_COLUMNS)), self.mark_of(run.run))

    def action_mark(self) -> None:
        run = self.cursor_run()
        if run is not None:
            self.marked ^= {run}
            self.remark()

    def action_baseline(self) -> None:
        run = self.cursor_run()
        if run is not None:
            self.baseline = None if self.baseline == run else run
            self.remark()

    def action_compare(self) -> None:
        chosen = [r.run for r in self.runs if r.run in self.marked or r.run == self.baseline]
        if len(chosen) < 2:  # nothing (or one) marked: every run
            chosen = [r.run for r in self.runs]
        if chosen:
            self.app.push_screen(CompareScreen(self.capture, chosen, self.baseline))

    def action_open(self) -> None:
        focused = self.focused
        if isinstance(focused, RowTable) and focused.id == "replays":
            if self.replays and 0 <= focused.cursor_row < len(self.replays):
                run = str(self.replays[focused.cursor_row][0])
                self.app.push_screen(DiffScreen(self.capture, run))
            return
        table = self.query_one("#runs", RowTable)
        if self.runs and 0 <= table.cursor_row < len(self.runs):
            run = self.runs[table.cursor_row].run
            self.app.push_screen(LabelsScreen(self.capture, run, self.cases))

    def on_row_table_row_selected(self, event: RowTable.RowSelected) -> None:
        self.action_open()


class LabelsScreen(StoreScreen):
    """A run: its headline metrics, its confusion matrix and its label counts; enter on a
    label opens the gallery of its cases, enter on a matrix cell lists its cases, `G`
    grades the cases file again as a new run."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "gallery", "Gallery"),
        Binding("G", "regrade", "Re-grade"),
        Binding("c", "charts", "Charts"),
    ]
    DEFAULT_CSS = """
    LabelsScreen #labels { height: auto; max-height: 40%; }
    """

    def __init__(self, capture: Path, run: str, cases: Path) -> None:
        super().__init__(capture)
        self.run_name = run
        self.cases = cases
        self.counts: list[tuple[str, int]] = []
        self.metrics: RunMetrics | None = None
        self.records: list[CaseRecord] = []
        self.grid: tuple[list[str], list[str]] = ([], [])  # (called across, expected down)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="metrics")
        yield RowTable(id="labels", zebra_stripes=False)
        yield DataTable(id="confusion", cursor_type="cell")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"run {self.run_name}"
        table = self.query_one("#labels", RowTable)
        table.add_columns("label", "cases")
        table.focus()
        self.load()

    def load(self) -> None:
        run = self.run_name

        def read(r: Reader) -> tuple[list[tuple[str, int]], list[CaseRecord]]:
            counts = graded.label_counts(r, run)
            return counts, case_records(grades.latest_grades(r, [run]), [run])[run]

        self.read("the run", read, lambda found: self.show(*found), "labels")

    def show(self, counts: list[tuple[str, int]], records: list[CaseRecord]) -> None:
        metrics = compute_run(self.run_name, records)
        self.counts, self.metrics, self.records = counts, metrics, records
        self.query_one("#metrics", Static).update(metrics_line(metrics))
        table = self.query_one("#labels", RowTable)
        table.clear()
        for label, n in counts:
            table.add_row(label, number(n), key=label)
        grid = self.query_one("#confusion", DataTable)
        grid.clear(columns=True)
        columns, rows = confusion_grid(metrics.confusion)
        grid.add_columns(*columns)
        for cells in rows:
            grid.add_row(*(Text(text, style=style) for text, style in cells))
        self.grid = (columns[1:], [cells[0][0] for cells in rows])
        self.set_status(
            "enter: a label's cases · tab, then enter on a cell: its cases · "
            f"G: grade {self.cases} again as a new run"
        )

    def action_gallery(self) -> None:
        table = self.query_one("#labels", RowTable)
        if self.counts and 0 <= table.cursor_row < len(self.counts):
            label = self.counts[table.cursor_row][0]
            if label not in ("passed", "not_graded"):
                self.app.push_screen(GalleryScreen(self.capture, self.run_name, label))

    def on_row_table_row_selected(self, event: RowTable.RowSelected) -> None:
        self.action_gallery()

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        called, expected = self.grid
        row, column = event.coordinate.row, event.coordinate.column
        if column == 0 or row >= len(expected) or column > len(called):
            return
        if is_others(expected[row]) or is_others(called[column - 1]):
            self.set_status("that cell adds up many tools: no one tool's cases to open")
            return
        cell = CellScreen(
            self.capture, self.run_name, expected[row], called[column - 1], self.records
        )
        self.app.push_screen(cell)

    def action_charts(self) -> None:
        self.app.push_screen(ChartsScreen(f"run {self.run_name}", run_charts(self.records)))

    def action_regrade(self) -> None:
        self.set_status(f"grading {self.cases} as a new run…")
        self.work(
            f"re-grade {self.run_name}",
            lambda: regrade(self.capture, self.run_name, self.cases),
            self.regraded,
            "regrade",
        )

    def regraded(self, done: tuple[str, list[GradeRow]]) -> None:
        name, rows = done
        s = summarize(rows)
        self.notify(
            f"{s['cases']} case(s) graded into run {name}: {s['passed']} passed, "
            f"{s['failed']} failed, {s['not_graded']} not graded"
        )
        self.app.push_screen(LabelsScreen(self.capture, name, self.cases))


class GalleryScreen(StoreScreen):
    """Every case of a run that earned a label, one at a time (`n` next, `p` previous)."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("n", "step(1)", "Next case"),
        Binding("p", "step(-1)", "Previous case"),
    ]

    def __init__(self, capture: Path, run: str, label: str) -> None:
        super().__init__(capture)
        self.run_name = run
        self.label = label
        self.cases: list[FailureRow] = []
        self.at = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static("", id="case", markup=False)
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"{self.label} in {self.run_name}"
        self.load()

    def load(self) -> None:
        self.read(
            "the cases",
            lambda r: grades.cases_with_label(r, self.run_name, self.label),
            self.show,
            "gallery",
        )

    def show(self, cases: list[FailureRow]) -> None:
        self.cases, self.at = cases, 0
        self.render_case()

    def render_case(self) -> None:
        if not self.cases:
            self.query_one("#case", Static).update("")
            self.set_status(f"no case earned {self.label} in {self.run_name}")
            return
        self.query_one("#case", Static).update("\n".join(failure_text(self.cases[self.at])))
        self.set_status(f"case {self.at + 1} of {len(self.cases)} · n next · p previous")

    def action_step(self, by: int) -> None:
        if self.cases:
            self.at = (self.at + by) % len(self.cases)
            self.render_case()


class DiffScreen(StoreScreen):
    """A replay run's calls: recorded vs replayed tool and arguments, and the label."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("c", "changed", "Only changed"),
    ]

    def __init__(self, capture: Path, run: str) -> None:
        super().__init__(capture)
        self.run_name = run
        self.changed_only = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield RowTable(id="diffs")
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"replay {self.run_name}"
        table = self.query_one("#diffs", RowTable)
        table.add_columns(*DIFF_COLUMNS)
        table.focus()
        self.load()

    def load(self) -> None:
        self.read(
            "the diffs",
            lambda r: replays.diffs(r, self.run_name, [], self.changed_only),
            self.show,
            "diffs",
        )

    def show(self, diffs: list[dict[str, object]]) -> None:
        table = self.query_one("#diffs", RowTable)
        table.clear()
        for d in diffs:
            table.add_row(*diff_cells(d))
        which = "changed calls" if self.changed_only else "calls"
        self.set_status(f"{len(diffs)} {which} · c: only the changed ones / all")

    def action_changed(self) -> None:
        self.changed_only = not self.changed_only
        self.load()
