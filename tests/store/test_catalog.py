"""The catalog's SQL, run on an in-memory DuckDB over real files in a temp dir."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from toolproxy.store import catalog
from toolproxy.store.connection import compacted_columns
from toolproxy.store.segments import TABLES, SegmentWriter


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for statement in catalog.table_ddl():
        con.execute(statement)
    return con


def placeholders(root: Path) -> None:
    schema = root / "segments" / "_schema"
    schema.mkdir(parents=True)
    for table in TABLES:
        (schema / f"{table}.0000000000.jsonl").touch()


def have(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    return compacted_columns(con)


def test_quoting() -> None:
    assert catalog.quote('we"ird') == '"we""ird"'
    assert catalog.literal("it's") == "'it''s'"
    assert catalog.compacted("exchanges") == "exchanges_compacted"


def test_columns_hash_is_a_stable_fingerprint() -> None:
    assert catalog.columns_hash() == catalog.columns_hash()
    assert len(catalog.columns_hash()) == 16
    int(catalog.columns_hash(), 16)


def test_table_ddl_is_idempotent_and_has_every_column(con: duckdb.DuckDBPyConnection) -> None:
    for statement in catalog.table_ddl():
        con.execute(statement)
    for table, cols in TABLES.items():
        got = con.execute(f"DESCRIBE {catalog.compacted(table)}").fetchall()
        assert [(r[0], r[1]) for r in got] == [
            (c, "TIMESTAMP WITH TIME ZONE" if t == "TIMESTAMPTZ" else t) for c, t in cols.items()
        ]
    assert have(con).keys() == {catalog.compacted(t) for t in TABLES}


def test_segment_rows_types_lines_and_drops_unreadable_ones(tmp_path: Path) -> None:
    path = tmp_path / "tool_calls.0000000001.jsonl"
    lines = [
        {"exchange_id": "a", "started_at": "2024-05-01T12:00:00Z", "index": 0, "extra": 1},
        {"exchange_id": "b", "index": "not a number", "arguments": {"x": [1]}},
        {"index": 3},  # no key column
        [1, 2],
    ]
    path.write_text("\n".join(map(json.dumps, lines)) + "\n{broken\n")
    sql = catalog.segment_rows("tool_calls", catalog.literal(str(path)))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    rows = con.execute(f"SELECT exchange_id, started_at::VARCHAR, index, arguments FROM ({sql})")
    assert rows.fetchall() == [
        ("a", "2024-05-01 12:00:00+00", 0, None),
        ("b", None, None, '{"x":[1]}'),
    ]


def test_views_cover_compacted_and_live_rows(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    placeholders(tmp_path)
    for statement in catalog.view_ddl(tmp_path, have(con)):
        con.execute(statement)
    assert con.execute("SELECT count(*) FROM exchanges").fetchone() == (0,)
    writer = SegmentWriter(tmp_path, "p1", sync=False)
    (done,) = writer.write({"exchanges": [{"exchange_id": "old"}]})
    writer.write({"exchanges": [{"exchange_id": "new", "model_requested": "m"}]})
    con.execute("INSERT INTO exchanges_compacted (exchange_id) VALUES ('old')")
    con.execute(
        "INSERT INTO compacted_segments VALUES (?, 'exchanges', 1, now())",
        [str(done.relative_to(tmp_path))],
    )
    assert sorted(con.execute("SELECT exchange_id FROM exchanges").fetchall()) == [
        ("new",),
        ("old",),
    ]
    assert con.execute("SELECT session_id, exchanges FROM sessions").fetchall() == [(None, 2)]
    assert (
        str(tmp_path)
        in con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'exchanges'").fetchone()[0]
    )


def test_temp_views_read_missing_columns_as_null(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    placeholders(tmp_path)
    con.execute("ALTER TABLE exchanges_compacted DROP COLUMN conversation_key")
    con.execute("INSERT INTO exchanges_compacted (exchange_id) VALUES ('x')")
    for statement in catalog.view_ddl(tmp_path, have(con), temp=True):
        con.execute(statement)
    assert con.execute("SELECT conversation_key FROM exchanges").fetchall() == [(None,)]
    temporary = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal"
    ).fetchall()
    assert {v for (v,) in temporary} == set(TABLES) | set(catalog.DERIVED_VIEWS)


def test_columns_are_taken_as_stored_when_their_type_matches() -> None:
    present = {
        "exchange_id": "VARCHAR",
        "started_at": "TIMESTAMP WITH TIME ZONE",
        "port": "INTEGER",
    }
    sql = catalog.as_stored("exchanges", present)
    assert '"exchange_id", ' in sql and '"started_at", ' in sql  # same type: as is
    assert 'CAST("port" AS BIGINT) AS "port"' in sql  # another type: cast
    assert 'CAST(NULL AS VARCHAR) AS "proxy_id"' in sql  # absent: NULL of its type
