"""Background compaction while recording, so a live capture stays fast to read.

A recording proxy's worker runs one `AutoCompactor`: every few seconds it looks at its own
segment folder and, once it holds `min_files` finished files or the oldest is `max_age_s`
old, compacts them into a pending Parquet file (``compaction.compact_folder``) and merges
its small pending files. It never opens the catalog, so readers and the proxy never wait
for it; it skips a round when another process holds the compaction lock, or when the
catalog's views are lean (no ``parquet/new/.live`` marker: see ``store.init_capture``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from toolproxy.store import compaction, files
from toolproxy.store.connection import plain_connection
from toolproxy.store.segments import SEGMENTS_DIR

EVERY_S = 5.0
MIN_FILES = 32
MAX_AGE_S = 30.0


class AutoCompactor:
    """A daemon thread compacting one proxy's segment folder."""

    def __init__(
        self,
        capture_dir: Path,
        proxy_id: str,
        every_s: float = EVERY_S,
        min_files: int = MIN_FILES,
        max_age_s: float = MAX_AGE_S,
        log: Callable[[str], None] = lambda msg: None,
    ) -> None:
        self.root = Path(capture_dir).resolve()
        self.proxy_id = proxy_id
        self.folder = self.root / SEGMENTS_DIR / proxy_id
        self.every_s, self.min_files, self.max_age_s = every_s, min_files, max_age_s
        self._log = log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="toolproxy-compactor", daemon=True)
        self.rounds = 0  # compactions done
        self.failures = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.run_once()
            except Exception as exc:  # noqa: BLE001 - compaction is an optimisation
                self.failures += 1
                if self.failures == 1:
                    self._log(f"toolproxy: background compaction failed, will retry: {exc!r}")

    def run_once(self, force: bool = False) -> bool:
        """One round: compact when due (or `force`). True when it compacted."""
        waiting, age = files.folder_backlog(self.folder)
        if not waiting or (not force and waiting < self.min_files and age < self.max_age_s):
            return False
        with files.compaction_lock(self.root, wait=False) as got:
            if not got or not (self.root / compaction.LIVE_MARKER).exists():
                return False  # busy, or the views do not read pending files now
            with plain_connection() as con:
                con.execute("SET preserve_insertion_order = false")
                con.execute("SET threads = 1")  # a core stays free for the proxy
                held = compaction.held_segments(con, self.root)
                # Deferred deletion: a reader that listed files a moment ago still finds them.
                compaction.compact_folder(con, self.root, self.folder, held, defer=True)
                compaction.merge_pending(con, self.root, self.proxy_id, defer=True)
        self.rounds += 1
        return True
