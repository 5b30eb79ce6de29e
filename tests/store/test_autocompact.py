from contextlib import closing
from pathlib import Path

from tests.store.helpers import exchange_rows
from toolproxy import store
from toolproxy.store import compaction, files
from toolproxy.store.autocompact import AutoCompactor
from toolproxy.store.catalog import pending_dir
from toolproxy.store.segments import SegmentWriter, list_segments


def duckdb_catalog(cap: Path):
    import duckdb

    return closing(duckdb.connect(str(cap / "capture.duckdb")))


def pending_files(cap: Path, table: str = "exchanges") -> list[Path]:
    return [p for p in (cap / pending_dir(table)).glob("*.parquet") if p.name[0] != "_"]


def count(cap: Path) -> int:
    return store.query(cap, "SELECT count(*) FROM exchanges")[1][0][0]


def test_compacts_only_when_due_and_readers_see_every_row_once(tmp_path):
    cap = store.init_capture(tmp_path / "cap", live=True)
    writer = SegmentWriter(cap, "p1")
    auto = AutoCompactor(cap, "p1", min_files=25, max_age_s=3600)  # 10 files a write
    writer.write(exchange_rows(2, prefix="a"))
    assert auto.run_once() is False  # one file, young: not due
    writer.write(exchange_rows(2, prefix="b"))
    writer.write(exchange_rows(2, prefix="c"))
    listed = list_segments(cap)["exchanges"]  # what a reader's glob found just before
    assert auto.run_once() is True
    assert len(pending_files(cap)) == 1 and count(cap) == 6  # held by Parquet, none twice
    # The round's segments stay until the next round: that reader can still open them.
    assert all(p.exists() for p in listed)
    writer.write(exchange_rows(2, prefix="d"))
    assert count(cap) == 8  # pending Parquet + live segment, none twice
    assert auto.run_once(force=True) is True
    assert not any(p.exists() for p in listed) and count(cap) == 8
    store.compact(cap)
    assert count(cap) == 8 and not pending_files(cap)


def test_many_small_pending_files_are_merged(tmp_path):
    cap = store.init_capture(tmp_path / "cap", live=True)
    writer = SegmentWriter(cap, "p1")
    auto = AutoCompactor(cap, "p1")
    for i in range(compaction.MERGE_AT):
        writer.write(exchange_rows(2, prefix=f"r{i}-"))
        auto.run_once(force=True)
        assert count(cap) == 2 * (i + 1)
    # The merged inputs stay one more round (replaced: skipped by the views).
    assert len(pending_files(cap)) == compaction.MERGE_AT + 1
    writer.write(exchange_rows(2, prefix="last-"))
    auto.run_once(force=True)
    assert len(pending_files(cap)) == 2  # the merged file and this round's
    assert count(cap) == 2 * compaction.MERGE_AT + 2


def test_skips_a_round_while_another_process_compacts(tmp_path):
    cap = store.init_capture(tmp_path / "cap", live=True)
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    with files.compaction_lock(cap):
        assert AutoCompactor(cap, "p1").run_once(force=True) is False
    assert AutoCompactor(cap, "p1").run_once(force=True) is True


def views(cap: Path) -> str:
    return dict(store.query(cap, "SELECT key, value FROM meta")[1])["views"]


def test_views_are_live_while_recording_and_lean_after_the_last_compaction(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    assert views(cap) == "lean"
    writer = SegmentWriter(cap, "p1")
    writer.write(exchange_rows(2, prefix="a"))
    # Lean views do not read pending files: the compactor waits for live ones.
    assert AutoCompactor(cap, "p1").run_once(force=True) is False
    store.init_capture(cap, live=True)  # what a recording proxy's addon does
    assert views(cap) == "live"
    assert AutoCompactor(cap, "p1").run_once(force=True) is True
    assert count(cap) == 2
    store.compact(cap)  # nothing pending, no proxy running: lean again
    assert views(cap) == "lean" and count(cap) == 2
    assert AutoCompactor(cap, "p1").run_once(force=True) is False


def test_a_running_proxy_keeps_the_views_live(tmp_path):
    import os
    import socket

    cap = store.init_capture(tmp_path / "cap", live=True)
    alive = f"{socket.gethostname()}-{os.getpid()}-abc"
    run = {"proxy_id": alive, "pid": os.getpid(), "event": "start", "at": "2026-01-01T00:00:00Z"}
    SegmentWriter(cap, alive).write({"proxy_runs": [run]})
    store.compact(cap)
    assert views(cap) == "live"


def test_pending_files_under_lean_views_are_never_invisible(tmp_path):
    cap = store.init_capture(tmp_path / "cap", live=True)
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    assert AutoCompactor(cap, "p1").run_once(force=True) is True
    (cap / compaction.LIVE_MARKER).unlink()
    with duckdb_catalog(cap) as con:  # as an older release would have left it
        con.execute("UPDATE meta SET value = 'lean' WHERE key = 'views'")
    assert count(cap) == 2
