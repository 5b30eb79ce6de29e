"""The capture store: a DuckDB catalog over the proxies' segment files.

The only module that imports duckdb. A capture is a directory::

    <capture>/capture.duckdb          catalog (its SQL: ``catalog``), tables, views, meta
    <capture>/segments/<proxy>/...    immutable JSONL files the proxies append (``segments``)
    <capture>/segments/_schema/       one empty file per table (views need a match)
    <capture>/rejected/<proxy>/...    segment files that had unreadable lines

Proxies never open the catalog, so any number of them record into one capture while
readers query it. ``compact()`` moves finished files into the ``*_compacted`` tables and
records their names in one transaction, and deletes them only afterwards: the views skip
recorded files, so a crash in between never counts a row twice.

Locking, as DuckDB 2.0 behaves across processes: any number of read-only connections, or
one read-write connection, per file. ``ATTACH ... (READ_ONLY)`` from an in-memory database
takes the same lock, so it buys nothing. Readers therefore block ``compact()`` and vice
versa; every open here retries for ``busy_timeout_s`` and then raises ``CaptureBusy``.

If the capture moved, ``open_capture`` rewrites the views' absolute paths when it can get
write access, and otherwise shadows them with temporary views on its own connection.
A segment line that is not a readable row is skipped, never fatal to a query;
``compact()`` keeps a file that had such lines under ``rejected/`` instead of deleting it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import duckdb

from toolproxy import catalog
from toolproxy.errors import UserError
from toolproxy.segments import (
    SCHEMA_DIR,
    SEGMENTS_DIR,
    TABLES,
    list_segments,
)
from toolproxy.store import compaction

CATALOG = "capture.duckdb"
BUSY_TIMEOUT_S = 5.0
STALE_TMP_S = 60.0


class CaptureError(UserError):
    """Base of the store's errors: each is something the user can act on."""


class NotACapture(CaptureError):
    """The path is not a toolproxy capture directory (or its catalog)."""


class CaptureBusy(CaptureError):
    """Another process holds the catalog in a mode that excludes this one."""


class CatalogDamaged(CaptureError):
    """The catalog file cannot be read (cut short, overwritten): rebuild it (``repair``)."""


class QueryError(CaptureError):
    """A query against the capture failed (bad SQL, unknown column, ...)."""


@dataclass(frozen=True)
class CompactStats:
    """What one ``compact()`` did."""

    files: int = 0  # segment files moved into the compacted tables
    rows: dict[str, int] = field(default_factory=dict)  # rows moved, per table
    deleted: int = 0  # segment files removed (includes leftovers of an earlier crash)
    rejected: list[str] = field(default_factory=list)  # files with unreadable lines
    tmp_removed: int = 0  # stale .tmp files of killed writers


def _root_of(path: Path | str) -> Path:
    p = Path(path).expanduser().resolve()
    return p.parent if p.name == CATALOG else p


def _rel(root: Path, path: Path) -> str:
    """``path`` relative to the capture, as ``compacted_segments`` records it."""
    return str(path)[len(str(root)) + 1 :]  # cheaper than relative_to for many files


def _not_a_file(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise NotACapture(f"{root} is a file, not a directory: a capture is a directory")


def _writable(root: Path, what: str) -> None:
    """Raise a one-line CaptureError when `what` could not write into the capture."""
    if not os.access(root, os.W_OK):
        raise CaptureError(f"{root} is read-only: {what} needs write access to the capture")


def _existing_root(path: Path | str) -> Path:
    root = _root_of(path)
    _not_a_file(root)
    if (root / CATALOG).is_file():
        return root
    if (root / catalog.PARQUET_DIR).is_dir() or (root / SEGMENTS_DIR).is_dir():
        return init_capture(root)  # the catalog was lost: rebuilt from the files
    raise NotACapture(f"{root} is not a toolproxy capture: no {CATALOG} in it")


@contextmanager
def _init_lock(root: Path) -> Iterator[None]:
    with open(root / ".init.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _connect(root: Path, read_only: bool, busy_timeout_s: float) -> duckdb.DuckDBPyConnection:
    db = root / CATALOG
    deadline = time.monotonic() + busy_timeout_s
    while True:
        try:
            con = duckdb.connect(str(db), read_only=read_only)
            con.execute("SET TimeZone = 'UTC'")
            return con
        except duckdb.IOException as e:
            if "not a valid DuckDB database" in str(e):
                raise NotACapture(f"{db} is not a DuckDB database") from e
            if "lock" not in str(e):
                raise CatalogDamaged(
                    f"{db} is damaged ({e}); `toolproxy repair -c {root}` rebuilds it from "
                    "the Parquet and segment files"
                ) from e
            error: duckdb.Error = e
        except duckdb.ConnectionException as e:
            error = e  # this process already holds the file in the other mode
        if time.monotonic() >= deadline:
            mode = "read-only" if read_only else "read-write"
            raise CaptureBusy(
                f"cannot open {db} {mode}: another process has it open "
                f"({'compacting or initialising' if read_only else 'reading or compacting'}). "
                "Readers and compaction exclude each other: close other DuckDB sessions on "
                f"this capture or retry. DuckDB said: {error}"
            ) from error
        time.sleep(0.05)


def _meta(con: duckdb.DuckDBPyConnection) -> dict[str, str] | None:
    """The meta table, or None for a database that is empty (creation was interrupted)."""
    try:
        return dict(con.execute("SELECT key, value FROM meta").fetchall())
    except duckdb.CatalogException:
        if con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == (0,):
            return None
        raise NotACapture("the DuckDB file has no toolproxy meta table") from None


def _is_current(meta: dict[str, str] | None, root: Path, live: bool = False) -> bool:
    """Whether the catalog needs no migration (and, with `live`, has live views)."""
    if meta is None:
        return False
    version = int(meta.get("schema_version", 0))
    if version > catalog.SCHEMA_VERSION:
        raise CaptureError(f"{root} has store schema {version}; upgrade toolproxy")
    return (
        version == catalog.SCHEMA_VERSION
        and meta.get("columns_hash") == catalog.columns_hash()
        and meta.get("capture_dir") == str(root)
        and (not live or meta.get("views") == "live")
    )


def _live_wanted(root: Path) -> bool:
    """Views must read pending Parquet files: a background compactor may write them (the
    marker is there) or some are there."""
    return (root / compaction.LIVE_MARKER).exists() or compaction.has_pending(root)


def _ensure_placeholders(root: Path) -> None:
    """An empty file per table, so each view's glob matches even before any flush."""
    schema = root / SEGMENTS_DIR / SCHEMA_DIR
    try:
        schema.mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            if not (placeholder := schema / f"{table}.{0:010d}.jsonl").exists():
                placeholder.touch()
    except OSError:
        pass  # a read-only copy of a capture: its placeholders are there or it has segments


def _create_views(con: duckdb.DuckDBPyConnection, root: Path, temp: bool, live: bool) -> None:
    """Views over the cache, the segments and, when `live`, the pending Parquet files
    (the lean views, without that part, plan a few ms faster per query)."""
    have: dict[str, dict[str, str]] = {}
    for table, column, kind in con.execute(catalog.COMPACTED_COLUMNS).fetchall():
        have.setdefault(table, {})[column] = kind
    pending = compaction.pending_columns(con, root) if live else None
    for statement in catalog.view_ddl(root, have, temp, pending):
        con.execute(statement)


def _back_legacy_rows(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """A schema-1 catalog held compacted rows only in itself: write each table's rows to
    a Parquet file under parquet/<table>/ and register it, so they survive the catalog."""
    for table in TABLES:
        name = catalog.quote(catalog.compacted(table))
        if _scalar(con, f"SELECT count(*) FROM {name}") == 0:
            continue
        final = root / catalog.cached_dir(table) / f"legacy.{time.time_ns()}.{table}.parquet"
        rows = compaction.copy_to_parquet(con, f"SELECT * FROM {name}", final, {})
        con.execute("INSERT INTO cached_parquet VALUES (?, ?, ?, now())", [final.name, table, rows])


def _migrate(
    con: duckdb.DuckDBPyConnection, root: Path, meta: dict[str, str] | None, live: bool = False
) -> None:
    """Bring a read-write catalog to the current schema and location, in one transaction;
    Parquet files it does not list yet (a lost catalog's rows) are cached in it. The views
    are live when asked, or when they must be (`_live_wanted`)."""
    live = live or _live_wanted(root)
    compaction.write_placeholders(con, root)
    con.execute("BEGIN")
    for statement in catalog.table_ddl():
        con.execute(statement)
    if meta is not None and int(meta.get("schema_version", 0)) < 2:
        _back_legacy_rows(con, root)
    compaction.adopt(con, root)
    _create_views(con, root, temp=False, live=live)
    con.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [
            ("schema_version", str(catalog.SCHEMA_VERSION)),
            ("columns_hash", catalog.columns_hash()),
            ("capture_dir", str(root)),
            ("views", "live" if live else "lean"),
        ],
    )
    con.execute("COMMIT")
    if live:  # after the commit: a compactor may write pending files once views read them
        (root / compaction.LIVE_MARKER).parent.mkdir(parents=True, exist_ok=True)
        (root / compaction.LIVE_MARKER).touch()


def init_capture(
    path: Path | str, busy_timeout_s: float = BUSY_TIMEOUT_S, live: bool = False
) -> Path:
    """Create (or bring up to date) the capture directory and catalog; returns its path.

    `live`: a recording proxy that compacts in the background is about to start, so the
    views must read pending Parquet files (``compact`` makes them lean again when no proxy
    runs). Idempotent and safe when several processes call it at once (they serialise on
    ``<capture>/.init.lock``); a read-only check when the capture is already current.
    """
    root = _root_of(path)
    if any(ch in str(root) for ch in "*?["):
        raise CaptureError(f"{root}: a capture path cannot contain * ? [ (views glob it)")
    _not_a_file(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        place = next((p for p in root.parents if p.exists()), root)
        if exc.errno == errno.EROFS or not os.access(place, os.W_OK):
            raise CaptureError(f"{place} is read-only: cannot create the capture {root}") from None
        raise CaptureError(f"cannot create the capture {root}: {exc.strerror}") from None
    _writable(root, "recording")
    _ensure_placeholders(root)
    with _init_lock(root):
        db = root / CATALOG
        if db.exists() and db.stat().st_size == 0:
            db.unlink()  # a creator was killed before DuckDB wrote its header
        if db.exists():
            try:
                con, meta = _open_checked(root, True, busy_timeout_s)
                with closing(con):
                    if _is_current(meta, root, live or compaction.has_pending(root)):
                        return root
            except CatalogDamaged:
                _set_aside(root)
        with closing(_connect(root, False, busy_timeout_s)) as con:
            meta = _meta(con)
            _is_current(meta, root)  # refuses a newer schema or a foreign database
            _migrate(con, root, meta, live)
    return root


def _set_aside(root: Path) -> Path:
    """Rename a damaged catalog (and its WAL) out of the way, kept for inspection."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    aside = root / f"{CATALOG}.damaged-{stamp}-{os.getpid()}"
    os.replace(root / CATALOG, aside)
    wal = root / f"{CATALOG}.wal"
    if wal.exists():
        os.replace(wal, aside.with_name(aside.name + ".wal"))
    return aside


def repair(path: Path | str, rebuild: bool = False) -> dict[str, Any]:
    """Rebuild the catalog from the capture's files when it is missing or damaged (or
    always, with `rebuild`): a damaged one is kept as ``capture.duckdb.damaged-*``. Then
    compact, so every segment and pending Parquet file is cached again."""
    root = _root_of(path)
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


def _open_checked(
    root: Path, read_only: bool, busy_timeout_s: float
) -> tuple[duckdb.DuckDBPyConnection, dict[str, str] | None]:
    """A connection and the meta table; a catalog DuckDB cannot read is `CatalogDamaged`
    (the damage may show when opening or only at the first read)."""
    con = _connect(root, read_only, busy_timeout_s)
    try:
        return con, _meta(con)
    except duckdb.IOException as e:
        con.close()
        raise CatalogDamaged(
            f"{root / CATALOG} is damaged ({e}); `toolproxy repair -c {root}` rebuilds it "
            "from the Parquet and segment files"
        ) from e
    except BaseException:
        con.close()
        raise


def open_capture(
    path: Path | str, read_only: bool = True, busy_timeout_s: float = BUSY_TIMEOUT_S
) -> duckdb.DuckDBPyConnection:
    """A connection to a capture's catalog with every view ready; the caller closes it.

    Prefer short-lived read-only connections: while one is open, ``compact()`` waits.
    """
    root = _existing_root(path)
    _ensure_placeholders(root)
    try:
        con, meta = _open_checked(root, read_only, busy_timeout_s)
    except CatalogDamaged:
        if not os.access(root, os.W_OK):
            raise
        repair(root)
        con, meta = _open_checked(root, read_only, busy_timeout_s)
    try:
        if meta is None:
            raise NotACapture(f"{root / CATALOG} was never initialised; run init_capture")
        # Pending files with lean views (a compactor of an older release, a lost marker)
        # would be invisible: such a catalog is not current either.
        if _is_current(meta, root, live=compaction.has_pending(root)):
            return con
        if not read_only:
            _migrate(con, root, meta)
            return con
        con.close()
        try:
            init_capture(root, busy_timeout_s=0)
        except (CaptureBusy, OSError):  # someone is reading, or the directory is read-only
            con = _connect(root, True, busy_timeout_s)
            _create_views(con, root, temp=True, live=_live_wanted(root))
            return con
        return _connect(root, True, busy_timeout_s)
    except BaseException:
        con.close()
        raise


def compact(path: Path | str, busy_timeout_s: float = BUSY_TIMEOUT_S) -> CompactStats:
    """Compact every finished segment file into Parquet, and cache every pending Parquet
    file in the catalog (``compaction``). Idempotent; proxies may keep writing meanwhile
    (files that appear after the listing wait for the next compaction)."""
    root = _existing_root(path)
    _writable(root, "compact")
    with (
        closing(open_capture(root, read_only=False, busy_timeout_s=busy_timeout_s)) as con,
        compaction.compaction_lock(root),
    ):
        # Row order within a compacted file carries no meaning; keeping it costs here.
        con.execute("SET preserve_insertion_order = false")
        done = {f for (f,) in con.execute("SELECT file FROM compacted_segments").fetchall()}
        skip = done | compaction.held_segments(con, root)
        total = compaction.FolderStats()
        for folder in compaction.segment_folders(root):
            stats = compaction.compact_folder(con, root, folder, skip)
            total.files += stats.files
            total.deleted += stats.deleted
            total.rejected += stats.rejected
            for table, n in stats.rows.items():
                total.rows[table] = total.rows.get(table, 0) + n
        compaction.fold(con, root)
        if not compaction.has_pending(root) and not _running_proxies(con):
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
    )


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


def query(
    path: Path | str, sql: str, params: list[Any] | dict[str, Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one SQL statement on a read-only connection: (column names, rows).

    DuckDB's errors come back as ``QueryError`` with DuckDB's message.
    """
    with closing(open_capture(path)) as con:
        try:
            cur = con.execute(sql, params)
            names = [d[0] for d in cur.description or []]
            return names, cur.fetchall()
        except duckdb.Error as e:
            raise QueryError(str(e)) from e


def query_many(
    path: Path | str, statements: Sequence[tuple[str, list[Any] | dict[str, Any] | None]]
) -> list[tuple[list[str], list[tuple[Any, ...]]]]:
    """`query` for several statements on one read-only connection (one open, not many)."""
    with closing(open_capture(path)) as con:
        out = []
        for sql, params in statements:
            try:
                cur = con.execute(sql, params)
            except duckdb.Error as e:
                raise QueryError(str(e)) from e
            out.append(([d[0] for d in cur.description or []], cur.fetchall()))
        return out


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description or []]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def summary(path: Path | str) -> dict[str, Any]:
    """Counts per table, pending segment files, sessions, time range and proxies."""
    root = _existing_root(path)
    with closing(open_capture(root)) as con:
        counts = {t: _scalar(con, f"SELECT count(*) FROM {catalog.quote(t)}") for t in TABLES}
        done = {f for (f,) in con.execute("SELECT file FROM compacted_segments").fetchall()}
        first, last = con.execute(
            "SELECT min(started_at), max(coalesce(ended_at, started_at)) FROM exchanges"
        ).fetchone() or (None, None)
        return {
            "capture": str(root),
            "tables": counts,
            "segments_pending": sum(
                _rel(root, p) not in done for files in list_segments(root).values() for p in files
            ),
            "sessions": _scalar(con, "SELECT count(*) FROM sessions"),
            "first": first,
            "last": last,
            "proxies": _dicts(con.execute('SELECT * FROM proxy_runs_latest ORDER BY "at"')),
            "warnings": [
                f"proxy {proxy}: its recorder worker died at {at}; recording went on "
                f"in-process, and up to {window} s of exchanges the worker held were lost"
                for proxy, at, window in con.execute(
                    'SELECT proxy_id, min("at"), max(flush_interval_s) FROM proxy_runs '
                    "WHERE event = 'fallback' GROUP BY 1 ORDER BY 2"
                ).fetchall()
            ],
        }


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    return row[0] if row else None


def list_sessions(path: Path | str, limit: int = 50) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The most recently active sessions first: (column names, rows of ``sessions``)."""
    return query(path, "SELECT * FROM sessions ORDER BY last_seen DESC LIMIT ?", [limit])


def export_jsonl(path: Path | str, table: str, out: Path | TextIO) -> int:
    """Write a table's rows as JSON lines (nested JSON kept nested); returns the count."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; one of {sorted(TABLES)}")
    json_cols = [c for c, t in TABLES[table].items() if t == "JSON"]
    with closing(open_capture(path)) as con, _text_out(out) as f:
        order = "at" if table == "proxy_runs" else "started_at"
        cur = con.execute(f"SELECT * FROM {catalog.quote(table)} ORDER BY {catalog.quote(order)}")
        names = [d[0] for d in cur.description or []]
        count = 0
        while chunk := cur.fetchmany(1000):
            for values in chunk:
                row = dict(zip(names, values, strict=True))
                for c in json_cols:
                    row[c] = None if row[c] is None else json.loads(row[c])
                f.write(json.dumps(row, ensure_ascii=False, default=_iso) + "\n")
            count += len(chunk)
        return count


def _iso(value: Any) -> str:
    return value.isoformat()


@contextmanager
def _text_out(out: Path | TextIO) -> Iterator[TextIO]:
    if isinstance(out, Path):
        with open(out, "w", encoding="utf-8") as f:
            yield f
    else:
        yield out
