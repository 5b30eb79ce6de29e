"""Keeping a capture in shape: ``compact`` (segments into Parquet, Parquet into the
catalog's cache; the steps are in ``compaction``; other captures' files first, with
``merge``) and ``repair`` (a new catalog from the files)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from toolproxy.store import catalog, compaction, files, merge
from toolproxy.store.connection import (
    BUSY_TIMEOUT_S,
    CATALOG,
    CaptureError,
    CatalogDamaged,
    NotACapture,
    _connect,
    _create_views,
    _existing_root,
    _init_lock,
    _meta,
    _not_a_file,
    _scalar,
    _set_aside,
    _writable,
    capture_root,
    init_capture,
    open_capture,
)
from toolproxy.store.segments import (
    SEGMENTS_DIR,
    TABLES,
)

STALE_TMP_S = 60.0


@dataclass(frozen=True)
class CompactStats:
    """What one ``compact()`` did."""

    files: int = 0  # segment files moved into the compacted tables
    rows: dict[str, int] = field(default_factory=dict)  # rows moved, per table
    deleted: int = 0  # segment files removed (includes leftovers of an earlier crash)
    rejected: list[str] = field(default_factory=list)  # files with unreadable lines
    tmp_removed: int = 0  # stale .tmp files of killed writers
    merged: dict[str, int] = field(default_factory=dict)  # source -> files moved in (--from)

    def summary(self) -> str:
        """One line in words: what was merged and compacted, per table, and what was set
        aside."""
        if not self.files:
            text = "nothing to compact"
        else:
            per = ", ".join(f"{t} {n}" for t, n in sorted(self.rows.items()) if n)
            text = f"compacted {self.files} segment files ({per or 'no rows'})"
        if self.merged:
            moved = ", ".join(f"{n} from {src}" for src, n in self.merged.items())
            text = f"merged files in ({moved}); {text}"
        if self.rejected:
            text += f"; {len(self.rejected)} with unreadable lines kept under rejected/"
        return text


def repair(path: Path | str, rebuild: bool = False) -> dict[str, Any]:
    """Rebuild the catalog from the capture's files when it is missing or damaged (or
    always, with `rebuild`): a damaged one is kept as ``capture.duckdb.damaged-*``. Then
    compact, so every segment and pending Parquet file is cached again."""
    root = capture_root(path)
    _not_a_file(root)
    if not any((root / d).is_dir() for d in (catalog.PARQUET_DIR, SEGMENTS_DIR)):
        raise NotACapture(f"{root} is not a toolproxy capture: no parquet/ or segments/")
    _writable(root, "repair")
    aside: Path | None = None
    with _init_lock(root):
        if (root / CATALOG).exists():
            try:
                with closing(_connect(root, False, 0)) as con:
                    for table in TABLES:
                        con.execute(
                            f"SELECT count(*) FROM {catalog.quote(catalog.compacted(table))}"
                        )
                    healthy = _meta(con) is not None
            except (CatalogDamaged, duckdb.Error, NotACapture):
                healthy = False
            if rebuild or not healthy:
                aside = _set_aside(root)
    init_capture(root)
    stats = compact(root)
    with closing(open_capture(root)) as con:
        counts = {t: _scalar(con, f"SELECT count(*) FROM {catalog.quote(t)}") for t in TABLES}
    return {
        "capture": str(root),
        "set_aside": aside and aside.name,
        "compacted": stats,
        "tables": counts,
    }


def compact(
    path: Path | str,
    busy_timeout_s: float = BUSY_TIMEOUT_S,
    sources: Sequence[Path | str] = (),
) -> CompactStats:
    """Compact every finished segment file into Parquet, and cache every pending Parquet
    file in the catalog (``compaction``). Idempotent; proxies may keep writing meanwhile
    (files that appear after the listing wait for the next compaction). `sources`: other
    captures whose recorded files are moved in first (``merge``); with them, `path` may be
    a new directory."""
    froms = _sources(path, sources)
    if froms and not capture_root(path).exists():
        init_capture(capture_root(path))
    root = _existing_root(path)
    _writable(root, "compact")
    merged: dict[str, int] = {}
    with (
        closing(open_capture(root, read_only=False, busy_timeout_s=busy_timeout_s)) as con,
        files.compaction_lock(root),
    ):
        for source in froms:
            got = merge.merge_from(con, root, source)
            merged[str(source)] = got.segments + got.parquet
        # Row order within a compacted file carries no meaning; keeping it costs here.
        con.execute("SET preserve_insertion_order = false")
        done = {f for (f,) in con.execute("SELECT file FROM compacted_segments").fetchall()}
        skip = done | compaction.held_segments(con, root)
        total = compaction.FolderStats()
        for folder in files.segment_folders(root):
            stats = compaction.compact_folder(con, root, folder, skip)
            total.files += stats.files
            total.deleted += stats.deleted
            total.rejected += stats.rejected
            for table, n in stats.rows.items():
                total.rows[table] = total.rows.get(table, 0) + n
        compaction.fold(con, root)
        if not files.has_pending(root) and not _running_proxies(con):
            _go_lean(con, root)
        con.execute("CHECKPOINT")
        stale = [
            p
            for p in (root / SEGMENTS_DIR).glob("*/*.jsonl.tmp")
            if time.time() - p.stat().st_mtime > STALE_TMP_S
        ]
        for p in stale:
            p.unlink(missing_ok=True)
    return CompactStats(
        files=total.files,
        rows=total.rows,
        deleted=total.deleted,
        rejected=total.rejected,
        tmp_removed=len(stale),
        merged=merged,
    )


def _sources(path: Path | str, sources: Sequence[Path | str]) -> list[Path]:
    """The `--from` captures, checked: each one a capture, none the target itself."""
    root = capture_root(path)
    found = []
    for source in sources:
        src = capture_root(source)
        _not_a_file(src)
        if not any((src / d).is_dir() for d in (catalog.PARQUET_DIR, SEGMENTS_DIR)):
            raise NotACapture(f"{src} is not a toolproxy capture: no parquet/ or segments/")
        if src == root:
            raise CaptureError(f"{src} is the capture being compacted: --from names another")
        _writable(src, "compact --from (files are moved out of it)")
        found.append(src)
    return found


def _running_proxies(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Proxies whose last word was not 'stop' and that may still run: on another host, or
    here with their process alive."""
    host = socket.gethostname()
    running = []
    for proxy_id, pid in con.execute(
        "SELECT proxy_id, pid FROM proxy_runs_latest WHERE event <> 'stop'"
    ).fetchall():
        if not proxy_id.startswith(f"{host}-"):
            running.append(proxy_id)
            continue
        try:
            os.kill(int(pid), 0)
        except (OSError, TypeError, ValueError):
            continue
        running.append(proxy_id)
    return running


def _go_lean(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Views without the pending-Parquet part, once nothing is pending and nobody records.
    Called with the compaction lock held, so no compactor writes meanwhile."""
    if (_meta(con) or {}).get("views") != "live":
        return
    con.execute("BEGIN")
    _create_views(con, root, temp=False, live=False)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('views', 'lean')")
    con.execute("COMMIT")
    (root / compaction.LIVE_MARKER).unlink(missing_ok=True)
