"""A capture's files on disk: locks, durable publishing, relative names, segment folders."""

from __future__ import annotations

import os
import time

from toolproxy.store import files
from toolproxy.store.catalog import PARQUET_DIR, PENDING_DIR, PLACEHOLDER


def test_a_held_lock_is_refused_without_waiting_and_free_again_after(tmp_path):
    path = tmp_path / "x.lock"
    with files.file_lock(path) as got:
        assert got
        with files.file_lock(path, wait=False) as second:  # another open file: refused
            assert second is False
    with files.file_lock(path, wait=False) as again:
        assert again


def test_the_compaction_lock_lives_under_parquet(tmp_path):
    with files.compaction_lock(tmp_path) as got:
        assert got and (tmp_path / PARQUET_DIR / files.LOCK).exists()
        with files.compaction_lock(tmp_path, wait=False) as other:
            assert other is False


def test_publish_renames_the_written_file_into_place(tmp_path):
    tmp, final = tmp_path / "a.parquet.tmp", tmp_path / "a.parquet"
    tmp.write_bytes(b"rows")
    files.publish(tmp, final)
    assert final.read_bytes() == b"rows" and not tmp.exists()


def test_names_are_relative_to_the_capture(tmp_path):
    assert files.rel(tmp_path, tmp_path / "segments" / "p1" / "x.jsonl") == "segments/p1/x.jsonl"


def test_pending_means_a_parquet_file_other_than_the_placeholder(tmp_path):
    folder = tmp_path / PARQUET_DIR / PENDING_DIR / "exchanges"
    folder.mkdir(parents=True)
    (folder / PLACEHOLDER).write_bytes(b"")
    assert not files.has_pending(tmp_path)
    (folder / "p1.1.exchanges.parquet").write_bytes(b"")
    assert files.has_pending(tmp_path)


def test_segment_folders_and_their_backlog(tmp_path):
    assert files.segment_folders(tmp_path) == []
    base = tmp_path / "segments"
    for name in ("p2", "p1", "_schema"):
        (base / name).mkdir(parents=True)
    (base / "stray.txt").write_text("")
    assert [p.name for p in files.segment_folders(tmp_path)] == ["p1", "p2"]
    p1 = base / "p1"
    (p1 / "exchanges.0000000001.jsonl").write_text("{}\n")
    (p1 / "exchanges.0000000002.jsonl.tmp").write_text("")  # still being written
    (p1 / "notes.txt").write_text("")
    old = time.time() - 60
    os.utime(p1 / "exchanges.0000000001.jsonl", (old, old))
    count, age = files.folder_backlog(p1)
    assert count == 1 and 59 < age < 120
    assert files.folder_backlog(base / "gone") == (0, 0.0)
