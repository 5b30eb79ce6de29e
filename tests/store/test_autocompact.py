from pathlib import Path

from tests.test_store import exchange_rows
from toolproxy import store
from toolproxy.catalog import pending_dir
from toolproxy.segments import SegmentWriter, list_segments
from toolproxy.store import compaction
from toolproxy.store.autocompact import AutoCompactor


def pending_files(cap: Path, table: str = "exchanges") -> list[Path]:
    return [p for p in (cap / pending_dir(table)).glob("*.parquet") if p.name[0] != "_"]


def count(cap: Path) -> int:
    return store.query(cap, "SELECT count(*) FROM exchanges")[1][0][0]


def test_compacts_only_when_due_and_readers_see_every_row_once(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    writer = SegmentWriter(cap, "p1")
    auto = AutoCompactor(cap, "p1", min_files=25, max_age_s=3600)  # 10 files a write
    writer.write(exchange_rows(2, prefix="a"))
    assert auto.run_once() is False  # one file, young: not due
    writer.write(exchange_rows(2, prefix="b"))
    writer.write(exchange_rows(2, prefix="c"))
    assert auto.run_once() is True
    assert not list_segments(cap)["exchanges"] and len(pending_files(cap)) == 1
    writer.write(exchange_rows(2, prefix="d"))
    assert count(cap) == 8  # pending Parquet + live segment, none twice
    store.compact(cap)
    assert count(cap) == 8 and not pending_files(cap)


def test_many_small_pending_files_are_merged(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    writer = SegmentWriter(cap, "p1")
    auto = AutoCompactor(cap, "p1")
    for i in range(compaction.MERGE_AT):
        writer.write(exchange_rows(2, prefix=f"r{i}-"))
        auto.run_once(force=True)
    assert len(pending_files(cap)) == 1
    assert count(cap) == 2 * compaction.MERGE_AT


def test_skips_a_round_while_another_process_compacts(tmp_path):
    cap = store.init_capture(tmp_path / "cap")
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    with compaction.compaction_lock(cap):
        assert AutoCompactor(cap, "p1").run_once(force=True) is False
    assert AutoCompactor(cap, "p1").run_once(force=True) is True
