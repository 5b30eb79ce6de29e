"""The catalog file: open, create, migrate and repair a capture's ``capture.duckdb``.

Locking, as DuckDB 2.0 behaves across processes: any number of read-only connections, or
one read-write connection, per file. ``ATTACH ... (READ_ONLY)`` from an in-memory database
takes the same lock, so it buys nothing. Readers therefore block ``compact()`` and vice
versa; every open here retries for ``busy_timeout_s`` and then raises ``CaptureBusy``.

If the capture moved, ``open_capture`` rewrites the views' absolute paths when it can get
write access, and otherwise shadows them with temporary views on its own connection. A
catalog that is missing or damaged is rebuilt from the capture's files (``repair``).
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import duckdb

from toolproxy.errors import UserError
from toolproxy.store import catalog, compaction, files
from toolproxy.store.segments import SCHEMA_DIR, SEGMENTS_DIR, TABLES, placeholder

CATALOG = "capture.duckdb"


BUSY_TIMEOUT_S = 5.0


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


def capture_root(path: Path | str) -> Path:
    """The capture directory `path` names (itself, or the catalog file's folder), resolved
    as the views' paths have it."""
    p = Path(path).expanduser().resolve()
    return p.parent if p.name == CATALOG else p


def _not_a_file(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise NotACapture(f"{root} is a file, not a directory: a capture is a directory")


def _writable(root: Path, what: str) -> None:
    """Raise a one-line CaptureError when `what` could not write into the capture."""
    if not os.access(root, os.W_OK):
        raise CaptureError(f"{root} is read-only: {what} needs write access to the capture")


def _existing_root(path: Path | str) -> Path:
    root = capture_root(path)
    _not_a_file(root)
    if (root / CATALOG).is_file():
        return root
    if (root / catalog.PARQUET_DIR).is_dir() or (root / SEGMENTS_DIR).is_dir():
        return init_capture(root)  # the catalog was lost: rebuilt from the files
    raise NotACapture(f"{root} is not a toolproxy capture: no {CATALOG} in it")


@contextmanager
def _init_lock(root: Path) -> Iterator[None]:
    with files.file_lock(root / ".init.lock"):
        yield


def _connect(root: Path, read_only: bool, busy_timeout_s: float) -> duckdb.DuckDBPyConnection:
    db = root / CATALOG
    deadline = time.monotonic() + busy_timeout_s
    while True:
        try:
            return _configured(duckdb.connect(str(db), read_only=read_only))
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


def plain_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory connection set up as a capture's (UTC, no progress bar), for work on
    a capture's files without its catalog (background compaction)."""
    return _configured(duckdb.connect())


def _configured(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB draws a progress bar on the process's stdout for a query past 2 s: into
    # `report --json`, `export` and `sql --json` output, over the TUI, on the proxy's console
    con.execute("SET enable_progress_bar = false")
    con.execute("SET enable_progress_bar_print = false")  # setting progress_bar_time enables it
    return con


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
    return (root / compaction.LIVE_MARKER).exists() or files.has_pending(root)


def _ensure_placeholders(root: Path) -> None:
    """An empty file per table, so each view's glob matches even before any flush."""
    try:
        (root / SEGMENTS_DIR / SCHEMA_DIR).mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            if not (empty := placeholder(root, table)).exists():
                empty.touch()
    except OSError:
        pass  # a read-only copy of a capture: its placeholders are there or it has segments


def compacted_columns(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """Each cache table's columns and their types, as the catalog has them now."""
    have: dict[str, dict[str, str]] = {}
    for table, column, kind in con.execute(catalog.COMPACTED_COLUMNS).fetchall():
        have.setdefault(table, {})[column] = kind
    return have


def table_rows_sql(con: duckdb.DuckDBPyConnection, root: Path, table: str, segments: str) -> str:
    """SELECT of ``table``'s rows as its view reads them, the segment part from ``segments``
    (``catalog.table_rows``): the cache's columns as the catalog has them now, the pending
    Parquet files when there are some (the view's live part reads nothing else)."""
    pending = compaction.pending_columns(con, root) if _live_wanted(root) else None
    return catalog.table_rows(root, table, compacted_columns(con), pending, segments)


def _create_views(con: duckdb.DuckDBPyConnection, root: Path, temp: bool, live: bool) -> None:
    """Views over the cache, the segments and, when `live`, the pending Parquet files
    (the lean views, without that part, plan a few ms faster per query)."""
    pending = compaction.pending_columns(con, root) if live else None
    for statement in catalog.view_ddl(root, compacted_columns(con), temp, pending):
        con.execute(statement)


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    return row[0] if row else None


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
    root = capture_root(path)
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
                    if _is_current(meta, root, live or files.has_pending(root)):
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
        from toolproxy.store.maintenance import repair  # repair builds on this module

        repair(root)
        con, meta = _open_checked(root, read_only, busy_timeout_s)
    try:
        if meta is None:
            raise NotACapture(f"{root / CATALOG} was never initialised; run init_capture")
        # Pending files with lean views (a compactor of an older release, a lost marker)
        # would be invisible: such a catalog is not current either.
        if _is_current(meta, root, live=files.has_pending(root)):
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
