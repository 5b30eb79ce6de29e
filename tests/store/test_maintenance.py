"""toolproxy.store.maintenance: compacting and repairing, idempotent and safe to repeat."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.store.helpers import count, exchange_rows
from toolproxy import store
from toolproxy.store.segments import SegmentWriter


def test_compaction_is_idempotent_and_never_double_counts(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    (first,) = writer.write({"exchanges": exchange_rows(3)["exchanges"]})
    saved = first.read_bytes()
    stats = store.compact(cap)
    assert (stats.files, stats.rows, stats.deleted) == (1, {"exchanges": 3}, 1)
    assert not first.exists()
    assert store.compact(cap) == store.CompactStats()
    # As if compaction crashed after its commit but before deleting the file.
    first.write_bytes(saved)
    assert count(cap) == 3
    assert store.summary(cap)["segments_pending"] == 0
    stats = store.compact(cap)
    assert (stats.files, stats.deleted) == (0, 1)
    assert not first.exists()
    assert count(cap) == 3


def test_writes_after_compaction_and_restarted_writer(cap: Path) -> None:
    SegmentWriter(cap, "p1").write(exchange_rows(2))
    store.compact(cap)
    # The same proxy id after a restart must not reuse a compacted file name.
    again = SegmentWriter(cap, "p1")
    (path, *_) = again.write({"exchanges": exchange_rows(1, prefix="new")["exchanges"]})
    assert path.name == "exchanges.0000000002.jsonl"
    assert count(cap) == 3
    store.compact(cap)
    assert count(cap) == 3
    assert count(cap, "tool_calls") == 2


def test_compaction_removes_only_stale_tmp_files(cap: Path) -> None:
    writer = SegmentWriter(cap, "p1")
    stale = writer.dir / "exchanges.0000000005.jsonl.tmp"
    fresh = writer.dir / "exchanges.0000000006.jsonl.tmp"
    stale.write_text('{"exchange_id": "x"')
    fresh.write_text('{"exchange_id": "y"')
    old = time.time() - 2 * store.STALE_TMP_S
    os.utime(stale, (old, old))
    assert count(cap) == 0  # readers never see .tmp files
    assert store.compact(cap).tmp_removed == 1
    assert not stale.exists()
    assert fresh.exists()


def test_compact_stats_say_what_happened_in_words() -> None:
    assert store.CompactStats().summary() == "nothing to compact"
    stats = store.CompactStats(
        files=3,
        rows={"tool_calls": 2, "exchanges": 4, "grades": 0},
        rejected=["segments/p1/exchanges.0000000001.jsonl"],
    )
    assert stats.summary() == (
        "compacted 3 segment files (exchanges 4, tool_calls 2); "
        "1 with unreadable lines kept under rejected/"
    )
