"""toolproxy.store.reads: every table read back, the views, the summary, the export, the
user's SQL."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from tests.store.helpers import T0, count, exchange_rows, graded_rows, run_row, summed
from toolproxy import store
from toolproxy.errors import UserError
from toolproxy.store import compaction
from toolproxy.store.segments import TABLES, SegmentWriter, encode_plain_row, list_segments


@pytest.mark.parametrize("compacted", [False, True])
def test_round_trip_of_every_table(cap: Path, compacted: bool) -> None:
    writer = SegmentWriter(cap, "p1")
    batch = exchange_rows(2) | {"proxy_runs": [run_row("p1", "start", T0)]}
    writer.write(batch)
    if compacted:
        assert store.compact(cap).files == len(TABLES)
        assert not list_segments(cap)["exchanges"]
    for table, rows in batch.items():
        names, got = store.query(cap, f"SELECT * FROM {table}")
        assert names == list(TABLES[table])
        for want, values in zip(rows, sorted(got, key=str), strict=True):
            row = dict(zip(names, values, strict=True))
            for col, kind in TABLES[table].items():
                if kind == "JSON" and row[col] is not None:
                    row[col] = json.loads(row[col])
                elif kind == "TIMESTAMPTZ" and row[col] is not None:
                    row[col] = row[col].astimezone(UTC).isoformat().replace("+00:00", "Z")
                    want[col] = datetime.fromisoformat(want[col]).isoformat()
                    want[col] = want[col].replace("+00:00", "Z")
            assert row == want


def test_derived_views(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    writer.write(exchange_rows(3, session="a"))
    writer.write(exchange_rows(1, session="b", prefix="bx", error_kind="upstream"))
    writer.write(
        {"proxy_runs": [run_row("p1", "start", T0), run_row("p1", "stop", T0 + timedelta(1), 4)]}
    )
    names, rows = store.list_sessions(cap, limit=10)
    sessions = {r[0]: dict(zip(names, r, strict=True)) for r in rows}
    assert sessions["a"]["exchanges"] == 3
    assert sessions["a"]["tool_calls"] == 3
    assert sessions["a"]["models"] == ["gpt-a"]
    assert sessions["a"]["errors"] == 0
    assert sessions["b"]["errors"] == 1
    assert sessions["a"]["last_seen"] == T0 + timedelta(seconds=2, milliseconds=500)
    assert len(store.list_sessions(cap, limit=1)[1]) == 1
    names, rows = store.query(cap, "SELECT model, wire_format, proxy_id FROM calls")
    assert set(rows) == {("gpt-a", "openai_chat", "p1")}
    names, rows = store.query(cap, "SELECT event, exchanges FROM proxy_runs_latest")
    assert rows == [("stop", 4)]


def test_query_errors_are_user_errors(cap: Path) -> None:
    with pytest.raises(store.QueryError, match="nonsense") as info:
        store.query(cap, "SELECT nonsense FROM exchanges")
    assert isinstance(info.value, UserError)
    with pytest.raises(store.QueryError):
        store.query(cap, "DELETE FROM exchanges_compacted")  # readers are read-only


@pytest.mark.parametrize(
    "sql",
    [
        "COPY (SELECT 1 AS x) TO '{out}'",  # wrote any file, the capture's own Parquet too
        "SELECT 1; COPY exchanges TO '{out}'",
        "EXPORT DATABASE '{out}'",
        "ATTACH '{out}' AS other",
        "SET enable_external_access = true",
        "INSTALL httpfs",  # and went to the network for it
        "PRAGMA profiling_output = '{out}'",
    ],
)
def test_the_users_sql_only_reads(cap: Path, sql: str) -> None:
    for out in (cap.parent / "leak.csv", cap / "parquet" / "exchanges" / "over.parquet"):
        with pytest.raises(store.QueryError, match="toolproxy sql only reads"):
            store.query(cap, sql.format(out=out))
        assert not out.exists()


@pytest.mark.parametrize(
    "sql",
    [
        "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
        "FROM exchanges SELECT count(*)",
        "EXPLAIN SELECT * FROM exchanges",
        "DESCRIBE exchanges",
        "SHOW TABLES",
        "SELECT * FROM pragma_table_info('exchanges')",
        "SELECT 1; SELECT 2 AS last",
    ],
)
def test_every_kind_of_read_still_runs(cap: Path, sql: str) -> None:
    names, _ = store.query(cap, sql)
    assert names


def test_summary(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    writer.write(exchange_rows(2) | {"proxy_runs": [run_row("p1", "start", T0)]})
    info = store.summary(cap)
    assert info["capture"] == str(cap)
    assert info["tables"] == dict.fromkeys(TABLES, 2) | {"proxy_runs": 1}
    assert info["segments_pending"] == len(TABLES)
    assert info["sessions"] == 1
    assert info["first"] == T0
    assert info["last"] == T0 + timedelta(seconds=1, milliseconds=500)
    assert [p["proxy_id"] for p in info["proxies"]] == ["p1"]
    store.compact(cap)
    assert store.summary(cap)["segments_pending"] == 0
    assert store.summary(cap)["tables"]["exchanges"] == 2


def test_export_jsonl(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(3))
    buf = io.StringIO()
    assert store.export_jsonl(cap, "exchanges", buf) == 3
    rows = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert [r["exchange_id"] for r in rows] == ["ex-0", "ex-1", "ex-2"]
    assert rows[0]["request_params"] == {"temperature": 0.5, "n": [1, 2]}
    assert datetime.fromisoformat(rows[0]["started_at"]) == T0
    out = tmp_path / "calls.jsonl"
    assert store.export_jsonl(cap, "tool_calls", out) == 3
    assert json.loads(out.read_text().splitlines()[0])["arguments"] == {}
    with pytest.raises(UserError, match=r"cannot export 'sessions; DROP TABLE meta': tables and"):
        store.export_jsonl(cap, "sessions; DROP TABLE meta", buf)


def test_corrupt_lines_are_skipped_and_the_file_kept(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    (path,) = writer.write({"exchanges": exchange_rows(2)["exchanges"]})
    with open(path, "a") as f:
        f.write('{"exchange_id": "half\n')
        f.write("not json at all\n")
    writer.write({"exchanges": exchange_rows(1, prefix="ok")["exchanges"]})
    assert count(cap) == 3
    assert count(cap, "sessions") == 1
    stats = store.compact(cap)
    assert stats.rejected == ["segments/p1/exchanges.0000000001.jsonl"]
    assert stats.rows == {"exchanges": 3}
    assert (cap / "rejected" / "p1" / path.name).exists()
    assert not path.exists()
    assert count(cap) == 3


def test_rows_larger_than_duckdbs_default_limit_are_read(cap: Path) -> None:
    body = "x" * (20 * 1024 * 1024)  # DuckDB's default maximum_object_size is 16 MiB
    SegmentWriter(cap, "p1").write({"exchanges": [{"exchange_id": "big", "request_body": body}]})
    assert store.query(cap, "SELECT length(request_body) FROM exchanges")[1] == [(len(body),)]
    store.compact(cap)
    assert store.query(cap, "SELECT length(request_body) FROM exchanges")[1] == [(len(body),)]


def test_a_read_batch_answers_each_statement_on_one_connection(tmp_path):
    capture = store.init_capture(tmp_path / "cap")
    with store.reading(capture) as r:
        (a_names, a_rows), (b_names, b_rows) = (
            r.named("SELECT ? AS x", [1]),
            r.named("SELECT count(*) AS n FROM exchanges"),
        )
    assert (a_names, a_rows, b_names, b_rows) == (["x"], [(1,)], ["n"], [(0,)])
    with pytest.raises(store.QueryError, match="nope"), store.reading(capture) as r:
        r.named("SELECT 1")
        r.named("SELECT * FROM nope")


@pytest.mark.parametrize("compacted", [False, True])
def test_export_file_writes_parquet_and_csv_in_time_order(
    cap: Path, tmp_path: Path, compacted: bool
) -> None:
    import csv

    import duckdb

    SegmentWriter(cap, "p1").write(exchange_rows(3))
    if compacted:
        store.compact(cap)
    parquet = tmp_path / "it's.parquet"  # a quote in the name
    assert store.export_file(cap, "exchanges", parquet, "parquet") == 3
    got = duckdb.sql(
        f"SELECT exchange_id FROM read_parquet('{str(parquet).replace(chr(39), chr(39) * 2)}')"
    )
    assert [r[0] for r in got.fetchall()] == ["ex-0", "ex-1", "ex-2"]
    table = tmp_path / "calls.csv"
    assert store.export_file(cap, "tool_calls", table, "csv") == 3
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 3 and "arguments" in rows[0]
    with pytest.raises(UserError, match="jsonl, csv or parquet"):
        store.export_file(cap, "exchanges", table, "xlsx")
    with pytest.raises(UserError, match="cannot export 'nope'"):
        store.export_file(cap, "nope", table, "csv")


def _grades_counted(cap: Path) -> tuple[int, int]:
    """(the `grades` rows `summary` counts, the rows the view holds)."""
    _, ((rows,),) = store.query(cap, "SELECT count(*) FROM grades")
    return store.summary(cap)["tables"]["grades"], rows


def test_grades_are_counted_as_the_view_holds_them_however_they_were_written(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    summed(cap, "grade-1", graded_rows("compacted", 3))
    SegmentWriter(cap, "old").write({"grades": graded_rows("legacy", 2)})  # no summary
    store.compact(cap)
    summed(cap, "grade-2", graded_rows("summed", 4))
    summed(cap, "grade-3", graded_rows("summed", 4))  # graded again: counted again
    grown = summed(cap, "grade-4", graded_rows("grown", 3))
    with grown.open("ab") as f:
        f.write(encode_plain_row(graded_rows("grown", 1)[0]))
    lost = summed(cap, "grade-5", graded_rows("lost", 2))
    lost.with_name(lost.name.replace("grades.", "grade_writes.")).unlink()
    SegmentWriter(cap, "old").write({"grades": graded_rows("legacy-2", 2)})
    assert _grades_counted(cap) == (21, 21)
    SegmentWriter(cap, "pend").write({"grades": graded_rows("pending", 5)})
    with duckdb.connect() as con:  # a pending Parquet file, as a background round leaves
        compaction.compact_folder(con, cap, cap / "segments" / "pend", set())
    assert _grades_counted(cap) == (26, 26)


def test_a_grades_file_is_counted_by_its_summary_without_reading_it(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    path = summed(cap, "grade-1", graded_rows("summed", 6))
    lines = path.read_bytes().splitlines(keepends=True)
    # the middle lines edited to the same size, unreadable: only the summary can say 6
    middle = [line.replace(b'{"run":', b'{"nur":') for line in lines[1:-1]]
    path.write_bytes(b"".join([lines[0], *middle, lines[-1]]))
    assert _grades_counted(cap) == (6, 2)
