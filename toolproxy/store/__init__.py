"""The capture store: a DuckDB catalog over the proxies' segment files.

This package is the only place that imports duckdb. A capture is a directory::

    <capture>/capture.duckdb          catalog (its SQL: ``catalog``), tables, views, meta
    <capture>/segments/<proxy>/...    immutable JSONL files the proxies append (``segments``)
    <capture>/segments/_schema/       one empty file per table (views need a match)
    <capture>/rejected/<proxy>/...    segment files that had unreadable lines
    <capture>/parquet/<table>/...     compacted rows, immutable Parquet (``compaction``)

Proxies never open the catalog, so any number of them record into one capture while
readers query it. A segment line that is not a readable row is skipped, never fatal to a
query.

Writing: ``tables`` defines every column; ``segments`` writes the files; ``connection``
opens, creates, migrates the catalog (and rebuilds a lost one) whose SQL is ``catalog``;
``maintenance`` compacts and repairs, with ``compaction`` and ``autocompact`` its steps and
its background thread.

Reading: the rest of the code never writes SQL. ``with reading(capture) as r:`` is one read
batch on one connection (``reader``); the functions in ``queries`` take it and return typed
rows (``rows``), filtered by the one filter model (``filters.ExchangeFilter``) and
keyset-paged (``paging.Page``). ``version(capture)`` is a change signal that opens nothing.
``reads`` holds the summary, the export and ``query`` for the user's own SQL
(``toolproxy sql``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below, loaded on first use (`__getattr__`)
    from toolproxy.store.connection import (
        BUSY_TIMEOUT_S,
        CATALOG,
        CaptureBusy,
        CaptureError,
        CatalogDamaged,
        NotACapture,
        QueryError,
        init_capture,
        open_capture,
    )
    from toolproxy.store.filters import ExchangeFilter
    from toolproxy.store.maintenance import STALE_TMP_S, CompactStats, compact, repair
    from toolproxy.store.paging import Page
    from toolproxy.store.reader import Reader, reading, version
    from toolproxy.store.reads import export_file, export_jsonl, list_sessions, query, summary

# Importing a pure submodule (`tables`, `segments`, `filters`, ...) must not load DuckDB:
# the recorder imports `segments` inside mitmproxy's process. So this package's own names
# load their module on first use.
_HOME = {
    "BUSY_TIMEOUT_S": "connection",
    "CATALOG": "connection",
    "CaptureBusy": "connection",
    "CaptureError": "connection",
    "CatalogDamaged": "connection",
    "NotACapture": "connection",
    "QueryError": "connection",
    "init_capture": "connection",
    "open_capture": "connection",
    "STALE_TMP_S": "maintenance",
    "CompactStats": "maintenance",
    "compact": "maintenance",
    "repair": "maintenance",
    "ExchangeFilter": "filters",
    "Page": "paging",
    "Reader": "reader",
    "reading": "reader",
    "version": "reader",
    "export_file": "reads",
    "export_jsonl": "reads",
    "list_sessions": "reads",
    "query": "reads",
    "summary": "reads",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BUSY_TIMEOUT_S",
    "CATALOG",
    "STALE_TMP_S",
    "CaptureBusy",
    "CaptureError",
    "CatalogDamaged",
    "CompactStats",
    "ExchangeFilter",
    "NotACapture",
    "Page",
    "QueryError",
    "Reader",
    "compact",
    "export_file",
    "export_jsonl",
    "init_capture",
    "list_sessions",
    "open_capture",
    "query",
    "reading",
    "repair",
    "summary",
    "version",
]
