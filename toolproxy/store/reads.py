"""Reading a capture: SQL over its views, its summary, its tables as JSON lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Final, TextIO

import duckdb

from toolproxy.errors import UserError
from toolproxy.store import catalog, gradewrites
from toolproxy.store.connection import (
    QueryError,
    _existing_root,
    open_capture,
)
from toolproxy.store.files import has_pending, rel
from toolproxy.store.filters import ExchangeFilter, where_sql
from toolproxy.store.reader import Reader
from toolproxy.store.segments import (
    TABLES,
    list_segments,
    placeholder,
)


def query(
    path: Path | str, sql: str, params: list[Any] | dict[str, Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run the user's own SQL statement (``toolproxy sql``) on a read-only connection:
    (column names, rows). The store's own queries are in ``toolproxy.store.queries``.

    DuckDB's errors come back as ``QueryError`` with DuckDB's message; a query that met a
    file compaction deleted under it is run again (`Reader`).
    """
    with closing(open_capture(path)) as con:
        try:
            _reads_only(con, sql)
        except duckdb.Error as e:
            raise QueryError(str(e)) from e
        return Reader(con, Path(path)).named(sql, params)


# What a read is: a query, or EXPLAIN of one. A read-only connection refuses to change the
# catalog, but COPY, EXPORT, PRAGMA profiling_output write files (the capture's own Parquet
# among them), ATTACH opens others, INSTALL fetches from the network, SET lifts limits.
READS: Final = frozenset((duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN))


def _reads_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise QueryError unless every statement in `sql` only reads."""
    for statement in con.extract_statements(sql):
        if statement.type not in READS:
            kind = statement.type.name.lower()
            raise QueryError(
                f"toolproxy sql only reads: a {kind} statement is refused (queries, and "
                f"EXPLAIN of them; `toolproxy export` writes files): {statement.query.strip()}"
            )


def summary(path: Path | str) -> dict[str, Any]:
    """Counts per table, pending segment files, sessions, time range and proxies."""
    root = _existing_root(path)
    with closing(open_capture(root)) as con:
        r = Reader(con, root)  # a query that meets a compaction of a live capture runs again
        done = {f for (f,) in r.rows("SELECT file FROM compacted_segments")}
        counts = {
            t: _grade_rows(r, root, done)
            if t == "grades"
            else r.scalar(f"SELECT count(*) FROM {catalog.quote(t)}")
            for t in TABLES
        }
        ((first, last),) = r.rows(
            "SELECT min(started_at), max(coalesce(ended_at, started_at)) FROM exchanges"
        )
        names, proxies = r.named('SELECT * FROM proxy_runs_latest ORDER BY "at"')
        return {
            "capture": str(root),
            "tables": counts,
            "segments_pending": sum(
                rel(root, p) not in done for files in list_segments(root).values() for p in files
            ),
            "sessions": r.scalar("SELECT count(*) FROM sessions"),
            "first": first,
            "last": last,
            "proxies": [dict(zip(names, row, strict=True)) for row in proxies],
            "warnings": [
                f"proxy {proxy}: its recorder worker died at {at}; recording went on "
                f"in-process, and up to {window} s of exchanges the worker held were lost"
                for proxy, at, window in r.rows(
                    'SELECT proxy_id, min("at"), max(flush_interval_s) FROM proxy_runs '
                    "WHERE event = 'fallback' GROUP BY 1 ORDER BY 2"
                )
            ],
        }


def _grade_rows(r: Reader, root: Path, done: set[str]) -> int:
    """count(*) of `grades`, a segment file's rows counted by the summary written with it
    (`gradewrites.rows_written`): counting parsed every grade, 6.5 s for ten runs of 90,818
    cases. A file compacted meanwhile is counted by the view, which leaves it out for its
    Parquet rows; so is every file while pending Parquet files are about (a background
    round may have just compacted one), or when the table's empty file is missing."""
    # without the table's empty file, `rows_of` of no file would read every file
    if has_pending(root) or not placeholder(root, "grades").exists():
        return int(r.scalar("SELECT count(*) FROM grades"))
    summed, other = 0, []
    for path in list_segments(root)["grades"]:
        rows = None if rel(root, path) in done else gradewrites.rows_written(path)
        if rows is None:
            other.append(path)
        else:
            summed += rows
    rest = r.scalar(f"SELECT count(*) FROM {r.rows_of('grades', other)}")
    if has_pending(root):  # one appeared meanwhile: its rows may be counted twice
        return int(r.scalar("SELECT count(*) FROM grades"))
    return summed + int(rest)


def list_sessions(path: Path | str, limit: int = 50) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The most recently active sessions first: (column names, rows of ``sessions``)."""
    from toolproxy.store.queries.exchanges import recent_sessions
    from toolproxy.store.reader import reading

    with reading(path) as r:
        return recent_sessions(r, limit)


EXPORT_ORDER = ("started_at", "at", "graded_at", "pulled_at", "first_seen", "judged_at")


def _exportables() -> list[str]:
    return [*sorted(TABLES), *catalog.DERIVED_VIEWS]


def _exportable(table: str) -> None:
    known = _exportables()
    if table not in known:
        raise UserError(f"cannot export {table!r}: tables and views are {', '.join(known)}")


def _types_and_order(con: Any, table: str) -> tuple[dict[str, str], str]:
    """A table's column types, and its ORDER BY clause (time order where it has one)."""
    described = f"SELECT column_name, column_type FROM (DESCRIBE {catalog.quote(table)})"
    types = dict(con.execute(described).fetchall())
    order = next((c for c in EXPORT_ORDER if c in types), None)
    return types, f" ORDER BY {catalog.quote(order)}" if order else ""


def export_file(
    path: Path | str, table: str, out: Path, fmt: str, where: ExchangeFilter | None = None
) -> int:
    """Write a table's or a view's rows to `out` as Parquet or CSV (with a header), by
    DuckDB's COPY, in the order `export_jsonl` uses; returns the count. `where`: only the
    rows of the exchanges it selects (`_source`)."""
    _exportable(table)
    if fmt not in ("parquet", "csv"):
        raise UserError(f"cannot export as {fmt!r}: jsonl, csv or parquet")
    options = "FORMAT PARQUET" if fmt == "parquet" else "FORMAT CSV, HEADER"
    with closing(open_capture(path)) as con:
        types, by = _types_and_order(con, table)
        source = _source(con, table, types, where)
        target = str(out).replace("'", "''")
        rows = f"SELECT * FROM {source}"
        r = Reader(con, Path(path))  # COPY writes `out` anew if run again (`Reader.read`)
        try:
            r.read(f"COPY ({rows}{by}) TO '{target}' ({options})", None, lambda cur: None)
        except QueryError as e:  # 'IO Error: Cannot open file "…": the reason'
            if not isinstance(e.__cause__, duckdb.IOException):
                raise
            raise UserError(f"cannot write {out}: {str(e).rsplit(': ', 1)[-1]}") from None
        return int(r.scalar(f"SELECT count(*) FROM {source}"))


def export_jsonl(
    path: Path | str, table: str, out: Path | TextIO, where: ExchangeFilter | None = None
) -> int:
    """Write a table's or a view's rows as JSON lines (nested JSON kept nested), in time
    order where it has a time column; returns the count. An unknown name is a `UserError`
    listing what can be exported. `where`: only the rows of the exchanges it selects."""
    _exportable(table)
    with closing(open_capture(path)) as con:
        types, by = _types_and_order(con, table)
        source = _source(con, table, types, where)  # a bad filter is refused before writing
        json_cols = [c for c, t in types.items() if t == "JSON"]
        # the first rows read again if a compaction deleted a file under the query (in time
        # order, every file is read before the first row comes); what is written stays
        cur, chunk = Reader(con, Path(path)).read(
            f"SELECT * FROM {source}{by}", None, lambda c: (c, c.fetchmany(1000))
        )
        names = [d[0] for d in cur.description or []]
        count = 0
        with _text_out(out) as f:
            while chunk:
                for values in chunk:
                    row = dict(zip(names, values, strict=True))
                    for c in json_cols:
                        row[c] = None if row[c] is None else json.loads(row[c])
                    f.write(json.dumps(row, ensure_ascii=False, default=_iso) + "\n")
                count += len(chunk)
                chunk = cur.fetchmany(1000)
        return count


def _source(con: Any, table: str, types: dict[str, str], where: ExchangeFilter | None) -> str:
    """What to select `table`'s rows from: the table itself, or its rows of the exchanges
    `where` selects (the exchanges' ids go into a temporary table first: DuckDB's COPY
    takes no parameters). The `sessions` view becomes the sessions with a selected exchange,
    each aggregated over those (as `toolproxy sessions` counts them). Another table without
    exchange_id cannot be filtered: `UserError`."""
    params: dict[str, Any] = {}
    condition = "TRUE" if where is None else where_sql(where, params)
    if condition == "TRUE":
        return catalog.quote(table)
    if "exchange_id" not in types and table != "sessions":
        with_ids = [t for t in _exportables() if "exchange_id" in _types_and_order(con, t)[0]]
        raise UserError(
            f"{table} has no exchange_id: the filter options select exchanges, so they apply "
            f"to {', '.join(with_ids)} and sessions; leave them out to export all of {table}"
        )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE export_picked AS "
        f"SELECT e.exchange_id FROM exchanges e WHERE {condition}",
        params,
    )
    picked = "exchange_id IN (SELECT exchange_id FROM export_picked)"
    if table == "sessions":
        return (
            f"(SELECT {catalog.SESSION_COLUMNS} FROM exchanges e {catalog.SESSION_CALLS} "
            f"WHERE e.{picked} GROUP BY e.session_id)"
        )
    return f"(SELECT * FROM {catalog.quote(table)} WHERE {picked})"


def _iso(value: Any) -> str:
    return value.isoformat()


@contextmanager
def _text_out(out: Path | TextIO) -> Iterator[TextIO]:
    if isinstance(out, Path):
        with open(out, "w", encoding="utf-8") as f:
            yield f
    else:
        yield out
