"""A read batch: one read-only connection for several queries, closed at the end.

``with reading(capture) as r:`` opens the catalog once; the query modules
(``toolproxy.store.queries``) take the `Reader` and return typed rows. Keep a batch short:
while a reader is open, ``compact()`` waits for it (a live view reads in one batch per
refresh, and ``version()`` tells it whether to refresh at all, without opening DuckDB).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import duckdb

from toolproxy.store import catalog
from toolproxy.store.connection import (
    CATALOG,
    QueryError,
    capture_root,
    open_capture,
    table_rows_sql,
)
from toolproxy.store.segments import SEGMENTS_DIR, placeholder, segment_glob

Params = Sequence[Any] | dict[str, Any] | None
VANISHED_TRIES = 5  # runs of a query whose files compaction keeps deleting under it
_CANNOT_OPEN = re.compile(r'Cannot open file "([^"]+)"')


def vanished(error: duckdb.Error, root: Path) -> bool:
    """Whether `error` is a scan that could not open a file of the capture at `root` that
    is no longer there: a recording proxy's worker compacted it into a pending Parquet file
    and deleted it after the view had listed it (`compaction.compact_folder`), or merged a
    pending file away. Run again, the query's views skip it and read what holds its rows."""
    found = _CANNOT_OPEN.search(str(error))
    if not isinstance(error, duckdb.IOException) or found is None:
        return False
    path = Path(found.group(1))
    return path.is_relative_to(root) and not os.path.lexists(path)


class Reader:
    """Runs the store's own SQL on one connection; DuckDB errors become `QueryError`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, capture: Path) -> None:
        self._con = con
        self.capture = capture
        self.root = capture_root(capture)  # the directory the views' paths name

    def rows_of(self, table: str, segment_files: Sequence[Path]) -> str:
        """A subquery of `table`'s rows as its view has them, reading only these of its
        segment files (and the table's empty placeholder, so the list is never empty): for a
        query that knows which files may hold its rows. The files must be this capture's,
        under `root`."""
        empty = placeholder(self.root, table)
        files = [*([empty] if empty.exists() else []), *segment_files]
        listed = ", ".join(catalog.literal(str(f)) for f in files)
        # none at all (a read-only copy without placeholders): the view's own glob
        source = f"[{listed}]" if files else catalog.literal(f"{self.root}/{segment_glob(table)}")
        try:
            return f"({table_rows_sql(self._con, self.root, table, source)})"
        except duckdb.Error as e:
            raise QueryError(str(e)) from e

    def rows(self, sql: str, params: Params = None) -> list[tuple[Any, ...]]:
        return self.read(sql, params, lambda cur: cur.fetchall())

    def read[T](self, sql: str, params: Params, fetch: Callable[[Any], T]) -> T:
        """`fetch(cursor)` of the query; run again when it failed only because a file its
        views had listed was deleted meanwhile (`vanished`); DuckDB's errors as `QueryError`."""
        for attempt in range(1, VANISHED_TRIES + 1):
            try:
                return fetch(self._con.execute(sql, params))
            except duckdb.Error as e:
                if attempt < VANISHED_TRIES and vanished(e, self.root):
                    continue
                raise QueryError(str(e)) from e
        raise AssertionError("unreachable: the last try returns or raises")

    def typed[R](self, make: Callable[..., R], sql: str, params: Params = None) -> list[R]:
        """Each row as `make(*row)` (a NamedTuple or dataclass with the columns' order)."""
        return [make(*row) for row in self.rows(sql, params)]

    def id_table(self, name: str, ids: Sequence[str]) -> str:
        """The ids as temporary table `name` (column `id`) of this batch, for several queries
        filtering by one long list: bound as a list parameter, the list is converted again for
        every query (45,000 ids: ~0.1 s a query). Returns the filter, `IN (SELECT id FROM
        name)`; `name` is the store's own identifier, never the user's."""
        if not name.isidentifier():
            raise ValueError(f"not a table name: {name!r}")
        try:
            self._con.execute(
                f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT unnest($ids::VARCHAR[]) AS id",
                {"ids": list(ids)},
            )
        except duckdb.Error as e:
            raise QueryError(str(e)) from e
        return f"IN (SELECT id FROM {name})"

    def scalar(self, sql: str, params: Params = None) -> Any:
        found = self.rows(sql, params)
        return found[0][0] if found else None

    def named(self, sql: str, params: Params = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column names, rows): for the user's own SQL (`toolproxy sql`), not the store's."""
        return self.read(
            sql, params, lambda cur: ([d[0] for d in cur.description or []], cur.fetchall())
        )


@contextmanager
def reading(capture: Path | str) -> Iterator[Reader]:
    """One read batch on `capture` (see the module doc)."""
    with closing(open_capture(capture)) as con:
        yield Reader(con, Path(capture))


def version(capture: Path | str) -> str:
    """A cheap change signal: it changes whenever a proxy, a run or `compact` writes.

    Built from the catalog file's and each proxy folder's size and modification time (a
    new segment file changes its folder), so a live view polls it without opening DuckDB
    or blocking anyone. Equal versions mean nothing a reader sees has changed.
    """
    root = Path(capture)
    parts: list[str] = []
    for path in (root / CATALOG, root / f"{CATALOG}.wal", root / SEGMENTS_DIR):
        parts.append(_stamp(path))
    segments = root / SEGMENTS_DIR
    if segments.is_dir():
        with os.scandir(segments) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir():
                    parts.append(f"{entry.name}:{_stamp(Path(entry.path))}")
    return "|".join(parts)


def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"
