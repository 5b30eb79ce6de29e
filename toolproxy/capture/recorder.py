"""The recorder: parses and writes exchanges in a background thread, off the request path.

The proxy's hooks only `submit()` raw material (a queue put). This thread turns it into rows
(rows.build_rows) and flushes them to segment files every `flush_interval` seconds, so
a `kill -9` loses at most the last flush window. Failures are fail-open: counted, logged
once per kind, and never raised back into the proxy.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproxy import __version__
from toolproxy.capture.link import Linker
from toolproxy.capture.redact import Redactor
from toolproxy.capture.rows import Rows, build_rows, fallback_rows
from toolproxy.capture.session import SessionTracker
from toolproxy.capture.tap import RawExchange
from toolproxy.store.segments import SegmentWriter

_STOP = object()
# Rows kept in memory while the disk refuses writes, before the oldest batch is given up.
MAX_PENDING_ROWS = 200_000
# A `stats` row in proxy_runs at most this often, when the counters moved.
STATS_INTERVAL_S = 60.0


class Recorder:
    """Background writer for one proxy process."""

    def __init__(
        self,
        capture_dir: Path,
        proxy_id: str,
        redactor: Redactor,
        sessions: SessionTracker,
        flush_interval: float = 0.5,
        run_info: dict[str, Any] | None = None,
        log: Callable[[str], None] = lambda msg: None,
        linker: Linker | None = None,
    ) -> None:
        self.capture_dir = Path(capture_dir)
        self.proxy_id = proxy_id
        self.redactor = redactor
        self.sessions = sessions
        # MCP linking state lives here with the sessions: both need every exchange, in order.
        self.linker = linker if linker is not None else Linker()
        self.flush_interval = flush_interval
        self.run_info = run_info or {}
        self._log = log
        self._logged: set[str] = set()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._writer: SegmentWriter | None = None  # made at first flush: may fail, then retried
        self._thread = threading.Thread(target=self._run, name="toolproxy-recorder", daemon=True)
        self._pending: Rows = defaultdict(list)
        self.exchanges = 0
        self.parse_failures = 0
        self.internal_errors = 0
        self.submitted = 0

    def start(self, event: str = "start") -> None:
        """Start the thread; `event` names the first proxy_runs row ('start', 'fallback')."""
        self._queue.put(self._run_row(event))
        self._thread.start()

    def submit(self, raw: RawExchange) -> None:
        """Hand one exchange to the background thread. Never blocks, never raises."""
        self.submitted += 1
        self._queue.put(raw)

    def close(self, timeout: float | None = 30.0) -> None:
        """Drain everything submitted, flush, and write the final run row."""
        if not self._thread.is_alive():
            return
        self._queue.put(_STOP)
        self._thread.join(timeout)

    def count_error(self, kind: str, message: str) -> None:
        """Count a failure reported from outside (e.g. an addon hook); log it once per kind."""
        self.internal_errors += 1
        self.warn_once(kind, message)

    def warn_once(self, kind: str, message: str) -> None:
        """Log the first occurrence of each kind of failure; later ones are only counted."""
        if kind not in self._logged:
            self._logged.add(kind)
            self._log(f"toolproxy: {message} (further '{kind}' errors are counted, not logged)")

    def _run_row(self, event: str) -> Rows:
        row = {
            "proxy_id": self.proxy_id,
            "pid": os.getpid(),
            "event": event,
            "at": datetime.now(UTC).isoformat(),
            "flush_interval_s": self.flush_interval,
            "exchanges": self.exchanges,
            "parse_failures": self.parse_failures,
            "internal_errors": self.internal_errors,
            "toolproxy_version": __version__,
            **self.run_info,
        }
        return {"proxy_runs": [row]}

    def _run(self) -> None:
        next_flush = time.monotonic() + self.flush_interval
        next_stats, last_counts = time.monotonic() + STATS_INTERVAL_S, (0, 0, 0)
        stopping = False
        while not stopping:
            try:
                item = self._queue.get(timeout=max(0.0, next_flush - time.monotonic()))
            except queue.Empty:
                item = None
            while item is not None:
                if item is _STOP:
                    stopping = True
                else:
                    self._take(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = None
            if stopping or time.monotonic() >= next_flush:
                counts = (self.exchanges, self.parse_failures, self.internal_errors)
                if time.monotonic() >= next_stats and counts != last_counts and not stopping:
                    self._add(self._run_row("stats"))
                    next_stats, last_counts = time.monotonic() + STATS_INTERVAL_S, counts
                self._flush()
                next_flush = time.monotonic() + self.flush_interval
        self._add(self._run_row("stop"))
        self._flush()
        lost = len(self._pending.get("exchanges", []))
        if lost:
            self._log(
                f"toolproxy: {lost} exchanges could not be written before stopping "
                "(see the write error above); they are not in the capture"
            )

    def _take(self, item: RawExchange | Rows) -> None:
        if isinstance(item, dict):
            self._add(item)
            return
        try:
            exchange, rows = build_rows(
                item, self.proxy_id, self.redactor, self.sessions, self.linker
            )
        except Exception as exc:  # noqa: BLE001 - a bug here must never stop recording
            self.internal_errors += 1
            self.warn_once("internal", f"could not process exchange {item.exchange_id}: {exc!r}")
            try:
                self._add(fallback_rows(item, self.proxy_id, self.redactor, repr(exc)))
            except Exception as again:  # noqa: BLE001
                self.warn_once(
                    "fallback", f"could not record exchange {item.exchange_id}: {again!r}"
                )
            return
        self.exchanges += 1
        if exchange.parse_status in ("error", "partial"):
            self.parse_failures += 1
            self.warn_once(
                f"parse:{exchange.parse_status}",
                f"exchange {exchange.exchange_id} {exchange.method} {exchange.path}: "
                f"parse {exchange.parse_status}, kept raw",
            )
        self._add(rows)

    def _add(self, rows: Rows) -> None:
        for table, table_rows in rows.items():
            self._pending[table].extend(table_rows)

    def _flush(self) -> None:
        if not any(self._pending.values()):
            return
        try:
            if self._writer is None:
                self._writer = SegmentWriter(self.capture_dir, self.proxy_id)
            self._writer.write(dict(self._pending))
        except OSError as exc:
            # Keep the rows and try again next window; only give up past a memory bound.
            self.internal_errors += 1
            self.warn_once("write", f"segment write failed, will retry: {exc}")
            if sum(len(v) for v in self._pending.values()) > MAX_PENDING_ROWS:
                self._pending.clear()
                self.warn_once("overflow", "dropped pending rows after repeated write failures")
            return
        self._pending = defaultdict(list)
