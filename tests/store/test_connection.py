"""toolproxy.store.connection: creating, opening, migrating and repairing a capture's
catalog; who waits for whom."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.store.helpers import count, exchange_rows, finish, hold, python, release
from toolproxy import store
from toolproxy.store import catalog
from toolproxy.store.segments import TABLES, SegmentWriter


def test_init_creates_catalog_and_placeholders(cap: Path) -> None:
    assert (cap / store.CATALOG).is_file()
    assert sorted(p.name for p in (cap / "segments" / "_schema").iterdir()) == sorted(
        f"{t}.0000000000.jsonl" for t in TABLES
    )
    before = (cap / store.CATALOG).stat().st_mtime_ns
    assert store.init_capture(cap / store.CATALOG) == cap  # the catalog path works too
    assert (cap / store.CATALOG).stat().st_mtime_ns == before  # current: nothing rewritten


def test_views_work_with_zero_segments(cap: Path) -> None:
    for view in [*TABLES, *catalog.DERIVED_VIEWS]:
        assert count(cap, view) == 0
    shutil.rmtree(cap / "segments")  # open_capture puts the placeholders back
    assert count(cap) == 0


def test_capture_busy_when_another_process_writes(cap: Path) -> None:
    holder = hold(cap / store.CATALOG, read_only=False)
    try:
        with pytest.raises(store.CaptureBusy, match=re.escape(str(cap))):
            store.open_capture(cap, busy_timeout_s=0.2)
        with pytest.raises(store.CaptureBusy, match="read-write"):
            store.compact(cap, busy_timeout_s=0.2)
    finally:
        release(holder)
    assert count(cap) == 0


def test_readers_share_but_block_compaction(cap: Path) -> None:
    holder = hold(cap / store.CATALOG, read_only=True)
    try:
        assert count(cap) == 0
        with pytest.raises(store.CaptureBusy):
            store.compact(cap, busy_timeout_s=0.2)
    finally:
        release(holder)
    assert store.compact(cap).files == 0


def test_capture_busy_within_one_process(cap: Path) -> None:
    con = store.open_capture(cap, read_only=False)
    try:
        with pytest.raises(store.CaptureBusy):
            store.open_capture(cap, busy_timeout_s=0)
    finally:
        con.close()


def test_concurrent_init_calls(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    code = f"from toolproxy import store; print(store.init_capture({str(target)!r}))"
    procs = [python(code) for _ in range(3)]
    assert {finish(p).strip() for p in procs} == {str(target)}
    assert count(target) == 0


def test_not_a_capture(tmp_path: Path) -> None:
    with pytest.raises(store.NotACapture, match="no capture.duckdb"):
        store.open_capture(tmp_path / "missing")
    with pytest.raises(store.NotACapture):
        store.summary(tmp_path)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / store.CATALOG).write_text("not a database" * 100)
    with pytest.raises(store.NotACapture, match="not a DuckDB database"):
        store.open_capture(junk)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    duckdb.connect(str(foreign / store.CATALOG)).execute("CREATE TABLE t (a INT)").close()
    with pytest.raises(store.NotACapture, match="no toolproxy meta"):
        store.open_capture(foreign)
    with pytest.raises(store.NotACapture, match="no toolproxy meta"):
        store.init_capture(foreign)
    empty = tmp_path / "empty"
    empty.mkdir()
    duckdb.connect(str(empty / store.CATALOG)).close()
    with pytest.raises(store.NotACapture, match="never initialised"):
        store.open_capture(empty)
    assert count(store.init_capture(empty)) == 0


def test_glob_characters_in_the_path_are_refused(tmp_path: Path) -> None:
    with pytest.raises(store.CaptureError, match="cannot contain"):
        store.init_capture(tmp_path / "run[1]")


def test_newer_schema_is_refused(cap: Path) -> None:
    with store.open_capture(cap, read_only=False) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(store.CaptureError, match="upgrade toolproxy"):
        store.open_capture(cap)


def test_plain_duckdb_reads_views_from_any_directory(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    store.compact(cap)
    SegmentWriter(cap, "p2").write(exchange_rows(1, prefix="late"))
    code = f"""
        import duckdb
        con = duckdb.connect({str(cap / store.CATALOG)!r}, read_only=True)
        print(con.execute("SELECT count(*) FROM exchanges").fetchone()[0])
        """
    assert finish(python(code, cwd=tmp_path)).strip() == "3"


def test_moved_capture_is_repaired(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    store.compact(cap)
    SegmentWriter(cap, "p1").write(exchange_rows(1, prefix="late"))
    moved = tmp_path / "moved"
    shutil.move(cap, moved)
    assert count(moved) == 3  # repaired: the stored views now point at the new place
    plain = duckdb.connect(str(moved / store.CATALOG), read_only=True)
    assert plain.execute("SELECT count(*) FROM exchanges").fetchone() == (3,)
    plain.close()


def test_moved_capture_read_while_someone_else_reads(cap: Path, tmp_path: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    moved = tmp_path / "moved"
    shutil.move(cap, moved)
    holder = hold(moved / store.CATALOG, read_only=True)  # no write access for a repair
    try:
        assert count(moved) == 2  # temporary views on our own connection
    finally:
        release(holder)


def test_columns_added_to_the_records_are_migrated(cap: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(1))
    store.compact(cap)
    # Pretend this capture was made before `conversation_key` existed.
    with store.open_capture(cap, read_only=False) as con:
        con.execute("DROP VIEW sessions")
        con.execute("DROP VIEW calls")
        con.execute("DROP VIEW exchanges")
        con.execute("ALTER TABLE exchanges_compacted DROP COLUMN conversation_key")
        con.execute("UPDATE meta SET value = 'old' WHERE key = 'columns_hash'")
    holder = hold(cap / store.CATALOG, read_only=True)
    try:  # read-only: the missing column reads as NULL through temporary views
        assert store.query(cap, "SELECT conversation_key FROM exchanges")[1] == [(None,)]
    finally:
        release(holder)
    assert store.query(cap, "SELECT conversation_key FROM exchanges")[1] == [(None,)]
    with store.open_capture(cap) as con:
        names = {r[0] for r in con.execute("DESCRIBE exchanges_compacted").fetchall()}
    assert "conversation_key" in names


# A query that runs past DuckDB's progress-bar threshold (2 s by default; 0 here, so a short
# query shows the shape) printed a bar on the process's stdout: into `report --json`,
# `export` and `sql --json` output, over the TUI's screen, on the proxy's console.
SLOW = "SELECT sum(a * b) FROM range(300000) t(a), range(20) u(b)"


@pytest.mark.parametrize("read_only", [True, False])
def test_capture_connections_never_print_a_progress_bar(
    cap: Path, read_only: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    with store.open_capture(cap, read_only=read_only) as con:
        con.execute("SET progress_bar_time = 0")
        assert con.execute(SLOW).fetchall() == [(300000 * 299999 // 2 * 190,)]
    assert capfd.readouterr().out == ""


def test_plain_connections_never_print_a_progress_bar(capfd: pytest.CaptureFixture[str]) -> None:
    from toolproxy.store.connection import plain_connection

    with plain_connection() as con:  # what background compaction opens
        con.execute("SET progress_bar_time = 0")
        con.execute(SLOW).fetchall()
        assert con.execute("SELECT current_setting('TimeZone')").fetchone() == ("UTC",)
    assert capfd.readouterr().out == ""
