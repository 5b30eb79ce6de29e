"""The catalog's SQL in one place: the tables and views of a capture's ``capture.duckdb``.

Pure text built from ``segments.TABLES``; ``store`` and ``compaction`` run it. A view ``t``
is the union of three parts, each row in exactly one:

- ``t_compacted``: a cache, in DuckDB's own format, of the Parquet files under
  ``parquet/t/`` (listed in ``cached_parquet``), so reads are as fast as a native table;
- Parquet files under ``parquet/new/t/`` not cached yet (written by background compaction
  while recording), minus the files another one replaced (``toolproxy_replaces``);
- segment lines from ``segments/*/t.*.jsonl``, minus files already compacted: those in
  ``compacted_segments`` and those a pending Parquet file names (``toolproxy_segments``).

The Parquet files hold every compacted row, so the catalog can be lost and rebuilt.
Paths in views are absolute, so plain DuckDB can query them from any directory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from pathlib import Path

from toolproxy.store.segments import KEY_COLUMNS, MAX_LINE_BYTES, TABLES, segment_glob

# Bump when the layout changes in a way ADD COLUMN cannot follow; columns are tracked
# separately (columns_hash), so a new record field needs no bump. 2: Parquet files.
SCHEMA_VERSION = 2
PARQUET_DIR = "parquet"
PENDING_DIR = "new"  # parquet/new/<table>/: written while recording, not cached yet
PLACEHOLDER = "_schema.parquet"  # an empty file per pending folder, so its glob matches
SEGMENTS_KEY = "toolproxy_segments"  # Parquet key-value metadata: segment files it holds
REPLACES_KEY = "toolproxy_replaces"  # ... and the Parquet files it replaces (a merge)


def cached_dir(table: str) -> str:
    """Folder, relative to the capture, of a table's Parquet files the catalog caches."""
    return f"{PARQUET_DIR}/{table}"


def pending_dir(table: str) -> str:
    """Folder, relative to the capture, of a table's Parquet files not cached yet."""
    return f"{PARQUET_DIR}/{PENDING_DIR}/{table}"


DERIVED_VIEWS = (
    "sessions",
    "calls",
    "proxy_runs_latest",
    "mcp_tool_versions",
    "mcp_tools_latest",
    "mcp_calls",
    "call_results",
)

# A session's row, over the exchanges `e` of the session (the `sessions` view, and the
# store's filtered sessions pages, which aggregate only the exchanges a filter selects).
_MODEL = "coalesce(e.model_returned, e.model_requested)"
SESSION_COLUMNS = f"""e.session_id,
    min(e.started_at) AS first_seen,
    max(coalesce(e.ended_at, e.started_at)) AS last_seen,
    count(*) AS exchanges,
    list_sort(list(DISTINCT {_MODEL}) FILTER (WHERE {_MODEL} IS NOT NULL)) AS models,
    coalesce(sum(c.n), 0)::BIGINT AS tool_calls,
    count(*) FILTER (WHERE e.error_kind IS NOT NULL OR e.status_code >= 400) AS errors,
    count(*) FILTER (WHERE e.parse_status IN ('error', 'partial')) AS parse_failures,
    sum(e.input_tokens) AS input_tokens,
    sum(e.output_tokens) AS output_tokens,
    avg(e.latency_ms) AS mean_latency_ms"""
SESSION_CALLS = (
    "LEFT JOIN (SELECT exchange_id, count(*) AS n FROM tool_calls GROUP BY 1) c USING (exchange_id)"
)

BOOKKEEPING = [
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "CREATE TABLE IF NOT EXISTS compacted_segments (file VARCHAR PRIMARY KEY, "
    "table_name VARCHAR NOT NULL, rows BIGINT NOT NULL, compacted_at TIMESTAMPTZ NOT NULL)",
    "CREATE TABLE IF NOT EXISTS cached_parquet (file VARCHAR PRIMARY KEY, "
    "table_name VARCHAR NOT NULL, rows BIGINT NOT NULL, cached_at TIMESTAMPTZ NOT NULL)",
]

COMPACTED_COLUMNS = (
    "SELECT table_name, column_name, data_type FROM duckdb_columns() "
    "WHERE database_name = current_database() AND ends_with(table_name, '_compacted')"
)
"""(table, column, type) of every compacted table as it is now."""
# How DuckDB spells a type back (duckdb_columns, DESCRIBE) when it differs from TABLES.
_SPELLED = {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE"}


def quote(name: str) -> str:
    """A SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def compacted(table: str) -> str:
    """Name of the real table behind a view."""
    return f"{table}_compacted"


def columns_hash() -> str:
    """Fingerprint of ``TABLES`` and the session aggregate: a catalog with another one needs
    its columns migrated and its views made again."""
    shape = json.dumps([TABLES, SESSION_COLUMNS], sort_keys=True)
    return hashlib.sha256(shape.encode()).hexdigest()[:16]


def table_ddl() -> list[str]:
    """Statements creating every table, and adding columns the records gained since."""
    statements = list(BOOKKEEPING)
    for table, cols in TABLES.items():
        name = quote(compacted(table))
        spec = ", ".join(f"{quote(c)} {t}" for c, t in cols.items())
        statements.append(f"CREATE TABLE IF NOT EXISTS {name} ({spec})")
        statements += [
            f"ALTER TABLE {name} ADD COLUMN IF NOT EXISTS {quote(c)} {t}" for c, t in cols.items()
        ]
    return statements


def segment_rows(table: str, source: str, extra: str = "") -> str:
    """SELECT of ``table``'s rows from segment files ``source`` (glob literal or parameter).

    Lines are read as raw JSON and typed with ``from_json``: over many small files this is
    several times faster than ``read_json(columns=...)`` (bench/bench_store.py). Keys that
    are not columns are ignored, a value of the wrong type reads as NULL, and a line that
    is not a JSON object (or lacks the key column) is dropped: never an error.
    """
    cols = TABLES[table]
    # unnest(r) rather than r."a", r."b", ...: the same columns, ~2 ms less planning a view
    return (
        f"SELECT {extra}unnest(r) FROM (SELECT from_json(json, {literal(json.dumps(cols))}) AS r, "
        f"filename FROM read_ndjson_objects({source}, filename=true, ignore_errors=true, "
        f"hive_partitioning=false, maximum_object_size={MAX_LINE_BYTES})) "
        f"WHERE r.{quote(KEY_COLUMNS[table])} IS NOT NULL"
    )


def typed(table: str, present: Collection[str]) -> str:
    """Every column of ``table`` cast to its type; those not in ``present`` as NULL."""
    return ", ".join(
        f"CAST({quote(c) if c in present else 'NULL'} AS {t}) AS {quote(c)}"
        for c, t in TABLES[table].items()
    )


def as_stored(table: str, present: Mapping[str, str]) -> str:
    """Every column of ``table`` from a source whose columns and types are ``present``:
    as is when the type matches (cheaper to plan), cast when it differs, NULL when absent."""
    out = []
    for c, t in TABLES[table].items():
        if c not in present:
            out.append(f"CAST(NULL AS {t}) AS {quote(c)}")
        elif present[c] in (t, _SPELLED.get(t)):
            out.append(quote(c))
        else:
            out.append(f"CAST({quote(c)} AS {t}) AS {quote(c)}")
    return ", ".join(out)


def pending_glob(root: Path, table: str) -> str:
    """Glob literal matching every pending Parquet file of ``table`` (its placeholder too)."""
    return literal(f"{root}/{pending_dir(table)}/*.parquet")


def kv_files(root: Path, table: str, key: str) -> str:
    """SELECT of the absolute paths a pending Parquet file of ``table`` lists under ``key``."""
    glob = pending_glob(root, table)
    return (
        f"SELECT {literal(f'{root}/')} || unnest(from_json(decode(value), '[\"VARCHAR\"]')) "
        f"FROM parquet_kv_metadata({glob}) WHERE decode(key) = {literal(key)}"
    )


def pending_rows(root: Path, table: str, present: Mapping[str, str]) -> str:
    """SELECT of a table's rows in pending Parquet files (``present``: their columns)."""
    return (
        f"SELECT {as_stored(table, present)} FROM read_parquet({pending_glob(root, table)}, "
        "filename=true, "
        f"union_by_name=true) WHERE filename NOT IN ({kv_files(root, table, REPLACES_KEY)}) "
        "AND parse_filename(filename) NOT IN (SELECT file FROM cached_parquet)"
    )


def table_rows(
    root: Path,
    table: str,
    have: Mapping[str, Mapping[str, str]],
    pending: Mapping[str, Mapping[str, str]] | None,
    segments: str,
) -> str:
    """SELECT of ``table``'s rows as its view has them (``view_ddl``), with the segment
    part reading ``segments`` (a glob or list literal: a view reads every file, a query
    that knows which files may hold its rows passes only those)."""
    old = as_stored(table, have.get(compacted(table), {}))
    live = segment_rows(table, segments)
    fresh = (
        f"UNION ALL {pending_rows(root, table, pending[table])} "
        if pending is not None and table in pending
        else ""
    )
    held = f" AND filename NOT IN ({kv_files(root, table, SEGMENTS_KEY)})" if fresh else ""
    return (
        f"SELECT {old} FROM {quote(compacted(table))} "
        f"{fresh}UNION ALL {live} AND filename NOT IN "
        f"(SELECT {literal(f'{root}/')} || file FROM compacted_segments){held}"
    )


def view_ddl(
    root: Path,
    have: Mapping[str, Mapping[str, str]],
    temp: bool = False,
    pending: Mapping[str, Mapping[str, str]] | None = None,
) -> list[str]:
    """Statements (re)creating every view for a capture at ``root``.

    ``have`` maps each compacted table to its current columns and their types,
    ``pending`` each table to those of its pending Parquet placeholder: columns the records
    gained since read as NULL. ``temp`` views shadow the stored ones on one connection only.
    """
    create = f"CREATE OR REPLACE {'TEMP ' if temp else ''}VIEW"
    statements = []
    for table in TABLES:
        rows = table_rows(root, table, have, pending, literal(f"{root}/{segment_glob(table)}"))
        statements.append(f"{create} {quote(table)} AS {rows}")
    model = "coalesce(e.model_returned, e.model_requested)"
    statements.append(f"""{create} sessions AS
        SELECT {SESSION_COLUMNS} FROM exchanges e {SESSION_CALLS}
        GROUP BY e.session_id""")
    statements.append(f"""{create} calls AS
        SELECT c.*, {model} AS model, e.wire_format, e.proxy_id, e.status_code,
            e.finish_reason
        FROM tool_calls c LEFT JOIN exchanges e USING (exchange_id)""")
    statements.append(f"""{create} proxy_runs_latest AS
        SELECT * FROM proxy_runs
        QUALIFY row_number() OVER (PARTITION BY proxy_id ORDER BY "at" DESC) = 1""")
    # One row per distinct definition of a tool: a changed schema is a new version.
    statements.append(f"""{create} mcp_tool_versions AS
        SELECT server, name, schema_hash, definition_hash,
            min(pulled_at) AS first_seen, max(pulled_at) AS last_seen, count(*) AS pulls,
            arg_max(input_schema, pulled_at) AS input_schema,
            arg_max(description, pulled_at) AS description,
            arg_max(annotations, pulled_at) AS annotations
        FROM mcp_tools GROUP BY server, name, schema_hash, definition_hash""")
    # What each server exposed at its latest successful pull (tools it dropped vanish).
    statements.append(f"""{create} mcp_tools_latest AS
        SELECT t.* FROM mcp_tools t
        JOIN (SELECT server, max(pulled_at) AS pulled_at FROM mcp_tools GROUP BY server) l
            USING (server, pulled_at)""")
    # Each tool call with the one result that answers it: the first request that carried a
    # result linked to it (tool_results.call_exchange_id / call_index, set at capture). A
    # result without a link (a capture from before links, a call made before the proxy
    # started) answers the nearest earlier call with its id in the session.
    statements.append(f"""{create} call_results AS
        WITH unlinked AS (
            SELECT r.exchange_id AS result_exchange_id, r.started_at AS result_at,
                r.message_index, r.content, r.is_error,
                c.exchange_id AS call_exchange_id, c."index" AS call_index
            FROM (SELECT * FROM tool_results WHERE call_exchange_id IS NULL) r
            ASOF JOIN tool_calls c ON r.session_id = c.session_id
                AND r.call_id = c.call_id AND r.started_at > c.started_at
        ), answers AS (
            SELECT exchange_id AS result_exchange_id, started_at AS result_at, message_index,
                content, is_error, call_exchange_id, call_index
            FROM tool_results WHERE call_exchange_id IS NOT NULL
            UNION ALL SELECT * FROM unlinked
        ), first_answers AS (
            SELECT * FROM answers QUALIFY row_number() OVER (
                PARTITION BY call_exchange_id, call_index
                ORDER BY result_at, result_exchange_id, message_index) = 1
        )
        SELECT c.exchange_id, c.session_id, c.started_at, c."index", c.call_id, c.name,
            a.result_exchange_id, a.message_index AS result_message_index,
            a.content AS result, a.is_error AS result_is_error
        FROM tool_calls c LEFT JOIN first_answers a
            ON a.call_exchange_id = c.exchange_id AND a.call_index = c."index"
        """)
    statements.append(f"""{create} mcp_calls AS
        SELECT m.started_at, m.session_id, m.exchange_id, m.mcp_session_id, m.rpc_id,
            m.tool_name, m.arguments, m.result, m.is_error, m.error_code, m.error_message,
            m.linked_exchange_id, m.linked_call_id
        FROM mcp_messages m WHERE m.method = 'tools/call'""")
    return statements
