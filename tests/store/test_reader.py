"""toolproxy.store.reader: one connection per read batch, and a change signal that opens
nothing."""

from __future__ import annotations

import json
import os
import threading
import time
from contextlib import suppress
from pathlib import Path

import pytest

from tests.seeded import seed_capture
from toolproxy import store
from toolproxy.store.queries import exchanges
from toolproxy.store.segments import SegmentWriter


def test_a_batch_runs_several_queries_and_closes(seeded_capture):
    with store.reading(seeded_capture) as r:
        assert r.scalar("SELECT count(*) FROM exchanges") == 8
        assert r.typed(lambda x, y: (y, x), "SELECT 1, 2") == [(2, 1)]
    with pytest.raises(Exception, match="closed"):
        r.rows("SELECT 1")


def test_duckdb_errors_come_back_as_query_errors(seeded_capture):
    with store.reading(seeded_capture) as r, pytest.raises(store.QueryError, match="nope"):
        r.rows("SELECT * FROM nope")


def test_an_id_table_filters_several_queries_by_one_list(seeded_capture):
    with store.reading(seeded_capture) as r:
        ids = sorted(x[0] for x in r.rows("SELECT exchange_id FROM exchanges"))
        where = r.id_table("wanted", [ids[0], ids[-1], "nope", 'it\'s "odd"'])
        assert where == "IN (SELECT id FROM wanted)"
        found = r.rows(f"SELECT exchange_id FROM exchanges WHERE exchange_id {where} ORDER BY 1")
        assert [x[0] for x in found] == [ids[0], ids[-1]]
        assert r.scalar("SELECT count(*) FROM wanted") == 4
        r.id_table("wanted", [])  # a second list replaces the first
        assert r.scalar("SELECT count(*) FROM wanted") == 0
        with pytest.raises(ValueError, match="not a table name"):
            r.id_table("x; DROP TABLE exchanges", ids)
    with store.reading(seeded_capture) as r, pytest.raises(store.QueryError):
        r.scalar("SELECT count(*) FROM wanted")  # the table was the batch's own


def test_a_reader_does_not_hold_the_capture_after_its_batch(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    with store.reading(capture) as r:
        exchanges.count_exchanges(r)
    assert store.compact(capture).files > 0  # compact does not wait for a closed reader


def test_version_changes_when_something_is_written_and_only_then(tmp_path):
    capture = seed_capture(tmp_path / "cap")
    first = store.version(capture)
    with store.reading(capture) as r:
        exchanges.count_exchanges(r)
    assert store.version(capture) == first  # reading changes nothing
    SegmentWriter(capture, "seed").write({"proxy_runs": []})  # nothing to write
    assert store.version(capture) == first
    SegmentWriter(capture, "another").write(
        {"grades": [{"run": "x", "case_id": "c", "graded_at": "t", "passed": True}]}
    )
    second = store.version(capture)
    assert second != first
    store.compact(capture)
    assert store.version(capture) != second


def test_version_of_a_folder_that_is_not_a_capture_is_stable(tmp_path):
    assert store.version(tmp_path / "nothing") == store.version(tmp_path / "nothing")


def compacted_mid_scan(root, big: Path) -> tuple[threading.Thread, list[bool]]:
    """Stage what a recording proxy's worker does while a reader reads: once the scan has
    opened `big` (the first segment file the view lists, large enough to take a while),
    `b-proxy`'s segment file (listed after it) is compacted into a pending Parquet file and
    deleted, so it is gone when the scan gets to it. Returns the thread and, once it is
    done, whether `big` was still open when the compaction ended (the stage was set)."""
    from toolproxy.store import compaction
    from toolproxy.store.connection import plain_connection

    staged: list[bool] = []

    def is_open() -> bool:
        for fd in os.listdir("/proc/self/fd"):
            with suppress(OSError):
                if os.readlink(f"/proc/self/fd/{fd}") == str(big):
                    return True
        return False

    def compact_when_opened() -> None:
        deadline = time.monotonic() + 30
        while not is_open():
            if time.monotonic() > deadline:
                return
        compaction.compact_folder(plain_connection(), root, root / "segments" / "b-proxy", set())
        staged.append(is_open())

    thread = threading.Thread(target=compact_when_opened, daemon=True)
    thread.start()
    return thread, staged


def live_capture_with_segments(root, n):
    """A capture whose views read pending Parquet (a proxy compacts in the background), with
    `n` exchanges segment files in one proxy folder; (root, that folder, the exchange ids)."""
    from datetime import UTC, datetime

    from tests.builders import chat_exchange
    from tests.seeded import CaptureRows

    store.init_capture(root, live=True)
    ids = []
    for i in range(n):
        rows = CaptureRows()
        rows.turn(chat_exchange(f"x{i}", "s", datetime(2026, 1, 1, tzinfo=UTC)))
        rows.write(root, "p1")
        ids.append(f"x{i}")
    (folder,) = [p for p in (root / "segments").iterdir() if p.name != "_schema"]
    return root, folder, ids


@pytest.mark.parametrize("call", ["rows", "named"])
def test_a_segment_compaction_deletes_in_the_middle_of_a_query_is_read_again(tmp_path, call):
    # CI saw it: a recording proxy's worker compacted segment files into a pending Parquet
    # file and deleted them while `store.query` (`named`) read its view, which had listed
    # them: `IO Error: Cannot open file ".../segments/<proxy>/exchanges.3.jsonl"`. The
    # query is run again: its view now skips those files and reads the Parquet file.
    from tests.builders import chat_exchange
    from tests.seeded import CaptureRows, at

    root = tmp_path / "cap"
    store.init_capture(root, live=True)
    rows = CaptureRows()
    rows.turn(chat_exchange("b0", "s", at(0)))
    rows.write(root, "b-proxy")
    big = root / "segments" / "a-proxy" / "exchanges.0000000001.jsonl"
    big.parent.mkdir()
    row = chat_exchange("a", "s", at(0), assistant_text="x" * 800).model_dump(mode="json")
    with big.open("w") as f:  # ~30 MB: the scan stays on it for a few hundred ms
        for i in range(20_000):
            f.write(json.dumps(row | {"exchange_id": f"a{i:05d}"}) + "\n")
    thread, staged = compacted_mid_scan(root, big)
    with store.reading(root) as r:
        r._con.execute("SET threads = 1")  # one file after the other
        got = getattr(r, call)("SELECT exchange_id FROM exchanges")
    thread.join(30)
    assert staged == [True]  # b-proxy's file went while the scan was on the first one
    assert not list((root / "segments" / "b-proxy").glob("exchanges.*"))
    ids = sorted(x for (x,) in (got if call == "rows" else got[1]))
    assert (len(ids), ids[0], ids[-1]) == (20_001, "a00000", "b0")


def test_only_a_capture_file_no_longer_there_is_worth_a_second_read(tmp_path):
    import duckdb

    from toolproxy.store.reader import vanished

    root = tmp_path / "cap"
    (root / "segments" / "p").mkdir(parents=True)
    kept = root / "segments" / "p" / "exchanges.0000000001.jsonl"
    kept.write_text("{}\n")

    def error(path, kind=duckdb.IOException):
        return kind(f'IO Error: Cannot open file "{path}": No such file or directory')

    assert vanished(error(root / "segments" / "p" / "exchanges.0000000002.jsonl"), root)
    assert vanished(error(root / "parquet" / "new" / "exchanges" / "p.1.parquet"), root)
    assert not vanished(error(kept), root)  # there: something else is wrong
    assert not vanished(error(tmp_path / "elsewhere.jsonl"), root)  # not the capture's
    assert not vanished(error(root / "x.jsonl", duckdb.BinderException), root)
    assert not vanished(duckdb.IOException("IO Error: No files found that match"), root)
