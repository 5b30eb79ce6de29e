"""Compaction: segment files become immutable Parquet files; the catalog caches them.

Runs DuckDB, like ``store`` (which owns the catalog); the SQL text is in ``catalog``.

- ``compact_folder``: one proxy's finished segment files, per table, into one Parquet file
  under ``parquet/new/<table>/`` whose key-value metadata names the segment files it holds
  (written as ``.tmp``, fsynced, renamed). The segments are then deleted. Needs no catalog:
  a recording proxy's worker runs it in the background, readers never wait for it.
- ``merge_pending``: a proxy's many small pending files of a table into one, which names
  the files it replaces; the views skip replaced files until they are deleted.
- ``fold``: pending files into the catalog's ``*_compacted`` tables (a cache of the Parquet
  rows, as fast to read as before) and into ``parquet/<table>/``. Needs the catalog open
  read-write, so only ``toolproxy compact`` (and ``record`` when it stops) folds.
- ``adopt``: Parquet files under ``parquet/<table>/`` the catalog does not list (it was
  deleted, damaged, or a crash came between a write and its registration) are cached.

Every step is ordered so that a crash between any two operations neither loses nor counts
twice a row (tests/store/test_compaction.py walks the crash points). One capture-wide lock,
``parquet/.compact.lock`` (``files.compaction_lock``), keeps compactors of several processes
from overlapping.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from toolproxy.store import catalog
from toolproxy.store.files import publish, rel
from toolproxy.store.segments import (
    TABLES,
    fsync_path,
    parse_segment_name,
    write_high_water,
)

# Present while the catalog's views read pending Parquet files (`store`); a background
# compactor writes pending files only then, so no row is ever out of every view.
LIVE_MARKER = f"{catalog.PARQUET_DIR}/{catalog.PENDING_DIR}/.live"
MERGE_AT = 8  # pending files of one proxy and table before they are merged into one
REJECTED_DIR = "rejected"


@dataclass
class FolderStats:
    """What compacting segment folders did."""

    files: int = 0  # segment files compacted
    rows: dict[str, int] = field(default_factory=dict)  # rows written, per table
    deleted: int = 0  # segment files removed
    rejected: list[str] = field(default_factory=list)  # files with unreadable lines


def _files_sql(paths: list[str]) -> str:
    return "[" + ", ".join(catalog.literal(p) for p in paths) + "]"


def _kv_sql(meta: dict[str, list[str]]) -> str:
    pairs = ", ".join(f"{k}: {catalog.literal(json.dumps(v))}" for k, v in meta.items())
    return f", KV_METADATA {{{pairs}}}" if pairs else ""


def copy_to_parquet(con: duckdb.DuckDBPyConnection, select: str, final: Path, meta: dict) -> int:
    """Write `select` as the Parquet file `final` (atomically); returns its row count."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(final.name + ".tmp")
    try:
        row = con.execute(
            f"COPY ({select}) TO {catalog.literal(str(tmp))} "
            f"(FORMAT parquet, COMPRESSION zstd{_kv_sql(meta)})"
        ).fetchone()
        publish(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return int(row[0]) if row else 0


def write_placeholders(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """An empty Parquet file with today's columns in every pending folder."""
    for table in TABLES:
        path = root / catalog.pending_dir(table) / catalog.PLACEHOLDER
        if path.exists() and set(placeholder_columns(con, path)) == set(TABLES[table]):
            continue
        empty = f"SELECT {catalog.typed(table, ())} WHERE false"
        copy_to_parquet(con, empty, path, {})


def placeholder_columns(con: duckdb.DuckDBPyConnection, path: Path) -> dict[str, str]:
    """Columns of a Parquet file and their types (empty when it cannot be read)."""
    try:
        rows = con.execute(
            f"DESCRIBE SELECT * FROM read_parquet({catalog.literal(str(path))})"
        ).fetchall()
    except duckdb.Error:
        return {}
    return {r[0]: r[1] for r in rows}


def pending_columns(con: duckdb.DuckDBPyConnection, root: Path) -> dict[str, dict[str, str]] | None:
    """Table -> columns of its pending placeholder; None when a placeholder is missing."""
    out = {}
    for table in TABLES:
        path = root / catalog.pending_dir(table) / catalog.PLACEHOLDER
        if not path.exists():
            return None
        out[table] = placeholder_columns(con, path)
    return out


@dataclass
class Pending:
    """A table's Parquet files in ``parquet/new/<table>/`` and what their metadata says."""

    files: dict[str, Path] = field(default_factory=dict)  # relative path -> file
    segments: dict[str, list[str]] = field(default_factory=dict)  # file -> segments it holds
    replaces: dict[str, list[str]] = field(default_factory=dict)  # file -> files it replaces

    def replaced(self) -> set[str]:
        return {f for files in self.replaces.values() for f in files}

    def live(self) -> list[str]:
        """Files whose rows count (not replaced by another)."""
        gone = self.replaced()
        return [f for f in self.files if f not in gone]


def read_pending(con: duckdb.DuckDBPyConnection, root: Path, table: str) -> Pending:
    folder = root / catalog.pending_dir(table)
    found = Pending()
    if not folder.is_dir():
        return found
    for p in sorted(folder.glob("*.parquet")):
        if p.name != catalog.PLACEHOLDER:
            found.files[rel(root, p)] = p
    if not found.files:
        return found
    rows = con.execute(
        "SELECT file_name, decode(key), decode(value) FROM parquet_kv_metadata("
        f"{_files_sql([str(p) for p in found.files.values()])})"
    ).fetchall()
    for name, key, value in rows:
        target = found.segments if key == catalog.SEGMENTS_KEY else found.replaces
        if key in (catalog.SEGMENTS_KEY, catalog.REPLACES_KEY):
            target[rel(root, Path(name))] = json.loads(value)
    return found


def _count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def _parquet_name(proxy: str, table: str) -> str:
    return f"{proxy}.{time.time_ns()}.{table}.parquet"


def compact_folder(
    con: duckdb.DuckDBPyConnection,
    root: Path,
    proxy_dir: Path,
    skip: set[str],
    defer: bool = False,
) -> FolderStats:
    """One proxy folder's finished segment files (minus `skip`, relative paths already
    compacted) into a pending Parquet file per table; then the segments are deleted.

    `defer` (background rounds, readers may be running): this round's segments stay until
    the next round, so a query that listed them a moment ago can still open them; the
    views already skip them (the pending file names them)."""
    stats = FolderStats()
    by_table: dict[str, list[Path]] = {}
    high = 0
    done: list[Path] = []  # compacted earlier (a crash, or a deferred round) or now
    for p in sorted(proxy_dir.iterdir()):
        parsed = parse_segment_name(p.name)
        if parsed is None:
            continue
        high = max(high, parsed[1])
        if rel(root, p) in skip:
            done.append(p)
        else:
            by_table.setdefault(parsed[0], []).append(p)
    for table, files in by_table.items():
        names = [str(p) for p in files]
        lines = {str(p): _count_lines(p) for p in files}
        final = root / catalog.pending_dir(table) / _parquet_name(proxy_dir.name, table)
        select = catalog.segment_rows(table, _files_sql(names))
        rows = copy_to_parquet(
            con, select, final, {catalog.SEGMENTS_KEY: [rel(root, p) for p in files]}
        )
        stats.rows[table] = stats.rows.get(table, 0) + rows
        stats.files += len(files)
        bad: list[Path] = []
        if rows != sum(lines.values()):  # rare: find the files that had unreadable lines
            per_file = catalog.segment_rows(table, _files_sql(names), extra="filename AS _f, ")
            kept = dict.fromkeys(names, 0) | dict(
                con.execute(f"SELECT _f, count(*) FROM ({per_file}) GROUP BY 1").fetchall()
            )
            bad = [p for p in files if kept[str(p)] != lines[str(p)]]
        for p in bad:
            dest = root / REJECTED_DIR / proxy_dir.name / p.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(p, dest)
            stats.rejected.append(rel(root, p))  # where it was; now under rejected/
        if not defer:
            done += [p for p in files if p not in bad]
    if high:
        write_high_water(proxy_dir, high)  # before deleting: names are never reused
    for p in done:
        p.unlink(missing_ok=True)
    stats.deleted = len(done)
    return stats


def _tier(path: Path) -> int:
    """Size class of a file: 0 up to 512 KiB, then one per factor of MERGE_AT. Only files
    of one tier are merged, so a row is rewritten about log(rows) times, not once per
    round (a recording of hours would otherwise rewrite its whole backlog again and again)."""
    size = max(path.stat().st_size, 1)
    return max(0, int(math.log(size / (64 * 1024), MERGE_AT)))


def merge_pending(
    con: duckdb.DuckDBPyConnection, root: Path, proxy: str, defer: bool = False
) -> int:
    """Merge `proxy`'s pending files of each table, MERGE_AT of a size tier at a time.
    Returns the files merged. Files replaced earlier are deleted first; with `defer`, the
    files merged now stay (skipped by the views) until the next call."""
    merged = 0
    for table in TABLES:
        pending = read_pending(con, root, table)
        _delete_replaced(root, pending)
        tiers: dict[int, list[str]] = {}
        for f in pending.live():
            if Path(f).name.startswith(f"{proxy}."):
                tiers.setdefault(_tier(pending.files[f]), []).append(f)
        for own in tiers.values():
            if len(own) >= MERGE_AT:
                merged += _merge(con, root, proxy, table, pending, own, defer)
    return merged


def _merge(
    con: duckdb.DuckDBPyConnection,
    root: Path,
    proxy: str,
    table: str,
    pending: Pending,
    own: list[str],
    defer: bool,
) -> int:
    """One merged file for `own`; its metadata names only what may still exist on disk
    (segments of a crash window, files replaced but not yet deleted), so it stays small."""
    held = {s for f in own for s in pending.segments.get(f, [])}
    segments = sorted(s for s in held if (root / s).exists())
    earlier = {r for f in own for r in pending.replaces.get(f, [])}
    replaces = sorted({*own, *(r for r in earlier if (root / r).exists())})
    files = _files_sql([str(pending.files[f]) for f in own])
    select = (
        f"SELECT {catalog.typed(table, TABLES[table])} "
        f"FROM read_parquet({files}, union_by_name=true)"
    )
    final = root / catalog.pending_dir(table) / _parquet_name(proxy, table)
    meta = {catalog.SEGMENTS_KEY: segments, catalog.REPLACES_KEY: replaces}
    copy_to_parquet(con, select, final, meta)
    if not defer:
        for f in own:
            pending.files[f].unlink(missing_ok=True)
    return len(own)


def _delete_replaced(root: Path, pending: Pending) -> None:
    for f in pending.replaced():
        if f in pending.files:
            pending.files[f].unlink(missing_ok=True)


def fold(con: duckdb.DuckDBPyConnection, root: Path) -> dict[str, int]:
    """Cache every pending file in the catalog and move it under ``parquet/<table>/``.
    `con` is the catalog, read-write. Returns rows cached per table."""
    cached = {f for (f,) in con.execute("SELECT file FROM cached_parquet").fetchall()}
    plan: dict[str, tuple[Pending, list[str]]] = {}
    for table in TABLES:
        pending = read_pending(con, root, table)
        plan[table] = (pending, [f for f in pending.live() if Path(f).name not in cached])
    rows: dict[str, int] = {}
    con.execute("BEGIN")
    for table, (pending, fresh) in plan.items():
        if fresh:
            rows[table] = _cache(con, root, table, fresh, pending.segments)
    con.execute("COMMIT")
    for table, (pending, _) in plan.items():
        # Replaced files go first: once their replacement leaves this folder, nothing
        # here would say they no longer count.
        _delete_replaced(root, pending)
        for f in pending.live():  # fresh ones, and any a crash left after its commit
            dest = root / catalog.cached_dir(table) / Path(f).name
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(pending.files[f], dest)
        if pending.files:
            fsync_path(root / catalog.pending_dir(table))
    return rows


def _cache(
    con: duckdb.DuckDBPyConnection,
    root: Path,
    table: str,
    files: list[str],
    segments: dict[str, list[str]],
) -> int:
    """Insert Parquet files' rows into the cache table and register them (in the caller's
    transaction). `files` are relative paths; they are registered by file name."""
    (inserted,) = con.execute(
        f"INSERT INTO {catalog.quote(catalog.compacted(table))} "
        f"SELECT {catalog.typed(table, TABLES[table])} FROM read_parquet("
        f"{_files_sql([str(root / f) for f in files])}, union_by_name=true)"
    ).fetchone() or (0,)
    counts = dict(
        con.execute(
            "SELECT parse_filename(file_name), num_rows FROM parquet_file_metadata("
            f"{_files_sql([str(root / f) for f in files])})"
        ).fetchall()
    )
    # One statement per list: executemany runs a statement per row (~3 ms each here).
    names = [Path(f).name for f in files]
    con.execute(
        "INSERT OR IGNORE INTO cached_parquet SELECT unnest($names), $table, unnest($rows), now()",
        {"names": names, "table": table, "rows": [counts.get(n, 0) for n in names]},
    )
    held = [s for f in files for s in segments.get(f, [])]
    if held:
        con.execute(
            "INSERT OR IGNORE INTO compacted_segments SELECT unnest($held), $table, 0, now()",
            {"held": held, "table": table},
        )
    return int(inserted)


def adopt(con: duckdb.DuckDBPyConnection, root: Path) -> dict[str, int]:
    """Cache files under ``parquet/<table>/`` the catalog does not list (a lost catalog's
    whole content). `con` is the catalog, read-write, in the caller's transaction."""
    cached = {f for (f,) in con.execute("SELECT file FROM cached_parquet").fetchall()}
    rows: dict[str, int] = {}
    for table in TABLES:
        folder = root / catalog.cached_dir(table)
        if not folder.is_dir():
            continue
        orphans = [rel(root, p) for p in sorted(folder.glob("*.parquet")) if p.name not in cached]
        if not orphans:
            continue
        kv = con.execute(
            "SELECT file_name, decode(value) FROM parquet_kv_metadata("
            f"{_files_sql([str(root / f) for f in orphans])}) "
            f"WHERE decode(key) = {catalog.literal(catalog.SEGMENTS_KEY)}"
        ).fetchall()
        segments = {rel(root, Path(name)): json.loads(value) for name, value in kv}
        rows[table] = _cache(con, root, table, orphans, segments)
    return rows


def held_segments(con: duckdb.DuckDBPyConnection, root: Path) -> set[str]:
    """Segment files (relative) that pending Parquet files already hold."""
    held: set[str] = set()
    for table in TABLES:
        pending = read_pending(con, root, table)
        for f in pending.live():
            held.update(pending.segments.get(f, []))
    return held
