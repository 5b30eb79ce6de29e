"""A capture's files on disk, as every store module that writes them needs them: locks
across processes, durable publishing, names relative to the capture, the proxies' segment
folders and what waits in them. No DuckDB here.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toolproxy.store import catalog
from toolproxy.store.segments import SCHEMA_DIR, SEGMENTS_DIR, fsync_path, parse_segment_name

LOCK = ".compact.lock"


def rel(root: Path, path: Path) -> str:
    """``path`` relative to the capture, as ``compacted_segments`` records it."""
    return str(path)[len(str(root)) + 1 :]  # cheaper than relative_to for many files


@contextmanager
def file_lock(path: Path, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on `path` (created if needed) across processes; yields False
    (without it) when `wait` is False and another process holds it."""
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


@contextmanager
def compaction_lock(root: Path, wait: bool = True) -> Iterator[bool]:
    """Hold the capture's compaction lock (`file_lock`)."""
    folder = root / catalog.PARQUET_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / LOCK, wait) as got:
        yield got


def publish(tmp: Path, final: Path) -> None:
    """Make a written file durable and visible in one step."""
    fsync_path(tmp)
    os.replace(tmp, final)
    fsync_path(final.parent)


def has_pending(root: Path) -> bool:
    """Whether any pending Parquet file (not a placeholder) exists."""
    base = root / catalog.PARQUET_DIR / catalog.PENDING_DIR
    return any(p.name != catalog.PLACEHOLDER for p in base.glob("*/*.parquet"))


def segment_folders(root: Path) -> list[Path]:
    """Every proxy's segment folder."""
    base = root / SEGMENTS_DIR
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_dir() and p.name != SCHEMA_DIR)


def folder_backlog(folder: Path) -> tuple[int, float]:
    """(finished segment files in a proxy folder, age in seconds of the oldest)."""
    ages = []
    for p in folder.iterdir() if folder.is_dir() else ():
        if parse_segment_name(p.name) is not None:
            try:
                ages.append(time.time() - p.stat().st_mtime)
            except FileNotFoundError:
                continue
    return len(ages), max(ages, default=0.0)
