"""toolproxy.store.merge: `compact --from` moves other captures' recorded files in; every
kind of file a capture holds (segments, pending Parquet, folded Parquet) lands exactly once,
across filesystems too, and a merge re-run after a crash counts nothing twice."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import duckdb
import pytest

from tests.store.helpers import exchange_rows
from toolproxy import store
from toolproxy.store import compaction
from toolproxy.store.catalog import cached_dir, pending_dir
from toolproxy.store.segments import SegmentWriter, read_high_water


def recorded(root: Path, proxy: str, batches: int, prefix: str) -> Path:
    """A host's capture: `batches` flushes of 2 exchanges by one proxy (no catalog)."""
    writer = SegmentWriter(root, proxy)
    for i in range(batches):
        writer.write(exchange_rows(2, session=proxy, prefix=f"{prefix}{i}-"))
    return root


def exchanges(cap: Path) -> int:
    return store.query(cap, "SELECT count(DISTINCT exchange_id), count(*) FROM exchanges")[1][0]


def parquet_files(cap: Path, folder: str) -> list[str]:
    return sorted(p.name for p in (cap / folder).glob("*.parquet") if not p.name.startswith("_"))


def test_segments_pending_and_folded_parquet_all_merge_once(tmp_path):
    a = recorded(tmp_path / "a", "host-a-1-aa", 2, "a")  # plain segments
    b = recorded(tmp_path / "b", "host-b-1-bb", 3, "b")
    with duckdb.connect() as con:  # b's worker compacted its flushes into a pending file
        compaction.compact_folder(con, b, b / "segments" / "host-b-1-bb", set())
    recorded(b, "host-b-2-bb", 1, "late")  # a second proxy of b, after that
    c = recorded(tmp_path / "c", "host-c-1-cc", 2, "c")
    store.compact(c)  # someone compacted c itself: folded Parquet owned by c's catalog
    assert parquet_files(c, cached_dir("exchanges"))

    central = tmp_path / "central"
    stats = store.compact(central, sources=[a, b, c])
    assert exchanges(central) == (4 + 6 + 2 + 4, 16)
    assert set(stats.merged) == {str(a), str(b), str(c)}
    assert "merged files in (" in stats.summary()
    # a and b are drained; c keeps its own (copied, not moved: its catalog lists them)
    assert not list((a / "segments" / "host-a-1-aa").glob("*.jsonl"))
    assert not parquet_files(b, pending_dir("exchanges"))
    assert exchanges(c) == (4, 4)
    # a proxy restarted at a continues after the files that left
    assert read_high_water(a / "segments" / "host-a-1-aa") == 2
    assert SegmentWriter(a, "host-a-1-aa").seq == 2

    again = store.compact(central, sources=[a, b, c])
    assert exchanges(central) == (16, 16) and sum(again.merged.values()) == 0


def test_new_rows_at_a_source_merge_on_the_next_run(tmp_path):
    a = recorded(tmp_path / "a", "host-a-1-aa", 1, "a")
    central = tmp_path / "central"
    store.compact(central, sources=[a])
    writer = SegmentWriter(a, "host-a-1-aa")  # the proxy restarted at a
    writer.write(exchange_rows(2, session="s", prefix="later-"))
    store.compact(central, sources=[a])
    assert exchanges(central) == (4, 4)


def test_a_crash_between_copy_and_delete_counts_nothing_twice(tmp_path):
    a = recorded(tmp_path / "a", "host-a-1-aa", 2, "a")
    saved = tmp_path / "saved"
    shutil.copytree(a, saved)
    central = tmp_path / "central"
    store.compact(central, sources=[a])
    shutil.rmtree(a)
    shutil.copytree(saved, a)  # as if the source's files had never been deleted
    store.compact(central, sources=[a])
    assert exchanges(central) == (4, 4)
    assert not list((a / "segments" / "host-a-1-aa").glob("*.jsonl"))


def test_across_filesystems(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir():  # every Linux has it; say so rather than pass silently elsewhere
        pytest.fail("/dev/shm (a second filesystem) is missing")
    src = Path(tempfile.mkdtemp(dir=shm, prefix="toolproxy-merge-"))
    try:
        a = recorded(src / "a", "host-a-1-aa", 2, "a")
        with duckdb.connect() as con:
            compaction.compact_folder(con, a, a / "segments" / "host-a-1-aa", set())
        recorded(a, "host-a-2-aa", 1, "b")
        central = tmp_path / "central"
        store.compact(central, sources=[a])
        assert exchanges(central) == (6, 6)
        assert not list(a.rglob("*.jsonl")) and not parquet_files(a, pending_dir("exchanges"))
        assert not list(central.rglob("*.tmp"))
    finally:
        shutil.rmtree(src, ignore_errors=True)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda tmp: tmp / "none", "is not a toolproxy capture"),
        (lambda tmp: (tmp / "f").write_text("x") and tmp / "f", "is a file, not a directory"),
        (lambda tmp: tmp / "central", "is the capture being compacted"),
    ],
)
def test_bad_sources_are_refused_before_anything_moves(tmp_path, make, says):
    central = recorded(tmp_path / "central", "p", 1, "x")
    store.compact(central)
    with pytest.raises(store.CaptureError, match=says):
        store.compact(central, sources=[make(tmp_path)])


@pytest.mark.parametrize("source_compacted", [False, True], ids=["segments", "folded"])
def test_a_source_holding_exchanges_already_here_is_refused_before_anything_moves(
    tmp_path, source_compacted
):
    # the same traffic imported (or a capture copied) into two captures: merged, each of
    # its exchanges was held twice, and grading saw every call of it twice
    shared = recorded(tmp_path / "a", "host-a-1-aa", 2, "same")
    copy = tmp_path / "copy"
    shutil.copytree(shared, copy)
    shutil.move(copy / "segments" / "host-a-1-aa", copy / "segments" / "host-b-1-bb")
    recorded(copy, "host-b-2-bb", 1, "new")  # and something of its own
    if source_compacted:
        store.compact(copy)
    central = tmp_path / "central"
    store.compact(central, sources=[shared])

    def held() -> list[Path]:  # its files but the lock the merge takes
        files = (p for p in copy.rglob("*") if p.is_file() and p.name != ".compact.lock")
        return sorted(p.relative_to(copy) for p in files)

    before = held()
    with pytest.raises(store.CaptureError) as info:
        store.compact(central, sources=[copy])
    message = str(info.value)
    ids = "same0--0, same0--1, same1--0, ..."
    assert f"{copy} holds 4 exchanges this capture already has ({ids})" in message
    assert "nothing was moved from it" in message
    assert held() == before
    assert exchanges(central) == (4, 4)
