"""Edit one expectation case as YAML, checked against the expectations format before it is
written into the cases file in place (`grade.caseedit`: the file's comments and order stay)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TextArea

from toolproxy.errors import UserError
from toolproxy.grade.caseedit import case_text, edited, parse_case_text, save_case
from toolproxy.grade.casefile import ExpectationError, Issue
from toolproxy.grade.labeling import now_iso, reviewer
from toolproxy.grade.model import Case
from toolproxy.tui.base import why


@dataclass
class CaseSaved(Message):
    """A case was written into the cases file ('added' or 'replaced')."""

    case: Case
    how: str


class CaseEditScreen(Screen[None]):
    """The case as YAML in an editor: ctrl+s checks and saves it, escape leaves unchanged."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "app.pop_screen", "Cancel"),
    ]

    def __init__(self, cases: Path, case: Case, replacing: str | None) -> None:
        super().__init__()
        self.cases = cases
        self.case = case
        self.replacing = replacing  # the id of the case this one replaces in the file

    def compose(self) -> ComposeResult:
        yield Header()
        yield TextArea(case_text(self.case), id="editor", language=None, soft_wrap=False)
        yield Static("", id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"case {self.case.id} → {self.cases}"
        self.query_one("#status", Static).update(
            "edit the case (matchers: docs/grading.md 'Expectations') · "
            "ctrl+s: check and save · escape: cancel"
        )
        self.query_one("#editor", TextArea).focus()

    def action_save(self) -> None:
        text = self.query_one("#editor", TextArea).text
        status = self.query_one("#status", Static)
        try:
            case = parse_case_text(text)
        except ExpectationError as exc:
            status.update("not saved: " + "; ".join(_line(i) for i in exc.issues))
            return
        case = edited(case, self.case, reviewer(), now_iso())
        self.run_worker(lambda: self._write(case), thread=True, exclusive=True, group="save")

    def _write(self, case: Case) -> None:
        try:
            how = save_case(self.cases, case, self.replacing)
        except (UserError, OSError) as exc:
            self.app.call_from_thread(
                self.query_one("#status", Static).update, f"not saved: {why(exc)}"
            )
            return
        self.app.call_from_thread(self._saved, case, how)

    def _saved(self, case: Case, how: str) -> None:
        self.app.pop_screen()
        self.app.screen.post_message(CaseSaved(case, how))


def _line(issue: Issue) -> str:
    where = f"line {issue.line} " if issue.line else ""
    return f"{where}{issue.path}: {issue.message}" if issue.path else where + issue.message
