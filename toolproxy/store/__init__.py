"""The capture store: a DuckDB catalog over the proxies' segment files.

This package is the only place that imports duckdb. A capture is a directory::

    <capture>/capture.duckdb          catalog (its SQL: ``catalog``), tables, views, meta
    <capture>/segments/<proxy>/...    immutable JSONL files the proxies append (``segments``)
    <capture>/segments/_schema/       one empty file per table (views need a match)
    <capture>/rejected/<proxy>/...    segment files that had unreadable lines
    <capture>/parquet/<table>/...     compacted rows, immutable Parquet (``compaction``)

Proxies never open the catalog, so any number of them record into one capture while
readers query it. Modules: ``catalogdb`` opens, creates, migrates the catalog (and rebuilds
a lost one); ``maintenance`` compacts and repairs; ``compaction`` and ``autocompact`` are
compaction's steps and its background thread; ``reads`` runs queries and exports. A
segment line that is not a readable row is skipped, never fatal to a query.
"""

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
from toolproxy.store.maintenance import STALE_TMP_S, CompactStats, compact, repair
from toolproxy.store.reads import export_jsonl, list_sessions, query, query_many, summary

__all__ = [
    "BUSY_TIMEOUT_S",
    "CATALOG",
    "STALE_TMP_S",
    "CaptureBusy",
    "CaptureError",
    "CatalogDamaged",
    "CompactStats",
    "NotACapture",
    "QueryError",
    "compact",
    "export_jsonl",
    "init_capture",
    "list_sessions",
    "open_capture",
    "query",
    "query_many",
    "repair",
    "summary",
]
