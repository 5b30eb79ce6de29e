"""The Textual application: `toolproxy tui [CAPTURE] [--session ID]`."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from toolproxy.tui.sessions import SessionsScreen

CASES = Path("expectations/cases.yaml")  # where labels go unless --cases says (as `label`)

HELP = """\
keys (every screen shows its own in the footer; ctrl+p: the command palette)
  q          quit from anywhere
  escape     back, or clear the filter
  /          filter sessions: model:… tool:… since:ISO until:ISO status:ok|failed
             run:RUN label:LABEL origin:captured|replayed session:… format:… words…
  enter      open the session, then a turn's exchange
  c          charts: latency / TTFB distributions, tokens per turn (a session or a run)
  t          open / fold the offered tools (schemas, drift against the MCP server)
  a / n / E  label the turn into the cases file (--cases, default expectations/cases.yaml):
             accept its calls as expected / expect no call / edit the case (ctrl+s saves)
  ] [        next / previous page
  o / O      sort sessions by the next column / reverse (or click a header)
  r          reload (the sessions list also follows a live capture by itself)
  g          runs: grading runs (enter: labels, then a label's cases, n / p) and
             replay runs (tab, enter: recorded vs replayed calls, c: only changed);
             space marks runs, b the baseline, m: the marked (or all) side by side;
             in a run: G re-grades it from the cases file, enter on a confusion cell
             lists its cases
  y / x      copy the turn's calls as JSON / the request as curl (secrets redacted)
  e / j      export the table shown as CSV / JSON lines (working directory)
  ?          this help
"""


class ToolproxyApp(App[None]):
    """Browse a capture: sessions, transcripts, exchanges."""

    TITLE = "toolproxy"
    CSS = """
    #status { height: 1; background: $boost; padding: 0 1; }
    Screen { layers: base overlay; }
    #filter { display: none; layer: overlay; position: absolute; offset: 0 1; width: 100%; }
    #turns { height: 40%; }
    #transcript-box { height: 1fr; }
    """
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Keys"),
        Binding("g", "runs", "Runs"),
    ]

    def __init__(
        self,
        capture: Path,
        session: str | None = None,
        run: str | None = None,
        cases: Path = CASES,
    ) -> None:
        super().__init__()
        self.capture = capture
        self.session = session
        self.run_name = run
        self.cases = cases

    def on_mount(self) -> None:
        # The sessions list is the first screen; the rest (and the grader they load) are
        # imported when first opened, so the first page shows sooner.
        self.push_screen(SessionsScreen(self.capture, self.cases))
        if self.run_name:
            from toolproxy.tui.runs import LabelsScreen

            self.action_runs()
            self.push_screen(LabelsScreen(self.capture, self.run_name, self.cases))
        if self.session:
            from toolproxy.tui.transcript import TranscriptScreen

            self.push_screen(TranscriptScreen(self.capture, self.session, self.cases))

    def action_runs(self) -> None:
        from toolproxy.tui.runs import RunsScreen

        if not isinstance(self.screen, RunsScreen):
            self.push_screen(RunsScreen(self.capture, self.cases))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette (ctrl+p) offers every action the screen and the app have a key for,
        with its key (even one a focused widget's own key shadows, like enter on a table),
        after Textual's own commands."""
        yield from super().get_system_commands(screen)
        for node in (screen, self):
            for bindings in node._bindings.key_to_bindings.values():
                for binding in bindings:
                    if binding.description and binding.show:
                        run = partial(self.run_action, binding.action, node)
                        key = self.get_key_display(binding)
                        yield SystemCommand(f"{binding.description} ({key})", binding.action, run)

    def action_help(self) -> None:
        self.notify(HELP, title="toolproxy tui", timeout=20)


def run(capture: Path, session: str | None, run: str | None, cases: Path | None) -> int:
    ToolproxyApp(capture, session, run, cases or CASES).run()
    return 0
