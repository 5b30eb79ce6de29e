"""What every TUI screen that reads the capture shares: a status line, reads that run in a
worker thread on one short read batch (a store error shown, never raised), following a live
capture, and copying or exporting what is shown."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from textual.screen import Screen
from textual.widgets import Static

from toolproxy import store
from toolproxy.store.reader import Reader
from toolproxy.tui.views import table_csv, table_jsonl


def why(exc: Exception) -> str:
    """An exception as one line for the status bar."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0]


LIVE_POLL_S = 1.0  # how often a screen that follows the capture looks for changes


class StoreScreen(Screen[None]):
    """A screen over `capture` with a `#status` line."""

    def __init__(self, capture: Path) -> None:
        super().__init__()
        self.capture = capture
        self.version = ""  # the capture's `store.version` when the data shown was read

    def follow(self, group: str, reload: Callable[[], None], when: Callable[[], bool]) -> None:
        """Live tail: every LIVE_POLL_S, `reload()` when the capture changed since the data
        shown was read (file stats only, no DuckDB opened), `when()` allows it and no read
        of `group` is running."""

        def poll() -> None:
            busy = any(w.group == group and w.is_running for w in self.workers)
            if not busy and when() and store.version(self.capture) != self.version:
                reload()

        self.set_interval(LIVE_POLL_S, poll)

    def set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    def read(
        self, what: str, fn: Callable[[Reader], Any], done: Callable[[Any], object], group: str
    ) -> None:
        """`fn` on a read batch in a worker thread (a newer read of the same `group` replaces
        it), then `done(result)` on the screen; a failure says it cannot read `what`."""
        self.work(f"read {what}", partial(_on_reader, self.capture, fn), done, group)

    def work(
        self, what: str, fn: Callable[[], Any], done: Callable[[Any], object], group: str
    ) -> None:
        """`fn()` in a worker thread (replacing the group's running one), then `done(result)`
        on the screen; a failure is a status line saying it cannot `what`."""
        self.run_worker(
            partial(self._work, what, fn, done), thread=True, exclusive=True, group=group
        )

    def _work(self, what: str, fn: Callable[[], Any], done: Callable[[Any], object]) -> None:
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 - shown in the app, never a traceback
            self.app.call_from_thread(self.set_status, f"cannot {what}: {why(exc)}")
            return
        self.app.call_from_thread(done, result)


def _on_reader(capture: Path, fn: Callable[[Reader], Any]) -> Any:
    with store.reading(capture) as r:
        return fn(r)


def copy(screen: Screen[None], text: str, what: str) -> None:
    """Put `text` on the terminal's clipboard (OSC 52) and say so."""
    screen.app.copy_to_clipboard(text)
    screen.notify(f"copied {what}")


def export(
    screen: Screen[None],
    name: str,
    columns: tuple[str, ...],
    rows: list[tuple[str, ...]],
    fmt: str = "csv",
) -> None:
    """Write the table shown as CSV (or `fmt` "jsonl": JSON lines) in the working directory
    and say where."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    path = Path(f"toolproxy-{name}-{stamp}.{fmt}")
    render = table_jsonl if fmt == "jsonl" else table_csv
    try:
        path.write_text(render(columns, rows), encoding="utf-8")
    except OSError as exc:
        screen.notify(f"could not write {path}: {exc}", severity="error")
        return
    screen.notify(f"wrote {len(rows)} row(s) to {path.resolve()}")
